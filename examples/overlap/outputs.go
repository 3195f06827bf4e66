package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// staged holds a run's outputs in a temporary directory inside the output
// directory until they are all written, then moves them into place
// together (commit), so that a run that fails leaves the previous run's
// outputs whole and consistent: a failure before commit touches nothing in
// out, and a failure during commit puts back every file it had replaced.
// Outputs are regular files named without a directory.
type staged struct {
	out, dir string
	names    []string // in the order written, moved in this order
	// rename moves a file (os.Rename; tests make it fail).
	rename func(oldpath, newpath string) error
}

// newStaged makes the staging directory inside out; the caller defers
// remove.
func newStaged(out string) (*staged, error) {
	dir, err := os.MkdirTemp(out, ".staging-")
	if err != nil {
		return nil, err
	}
	return &staged{out: out, dir: dir, rename: os.Rename}, nil
}

// remove deletes the staging directory and what is left in it (outputs
// not committed, the files commit replaced).
func (s *staged) remove() { os.RemoveAll(s.dir) }

// path returns where the output name is to be written, and records it.
func (s *staged) path(name string) string {
	s.names = append(s.names, name)
	return filepath.Join(s.dir, name)
}

// write writes the output name through f.
func (s *staged) write(name string, f func(io.Writer) error) error {
	return writeFile(s.path(name), f)
}

// final returns the outputs' paths in out, in the order written.
func (s *staged) final() []string {
	paths := make([]string, len(s.names))
	for i, name := range s.names {
		paths[i] = filepath.Join(s.out, name)
	}
	return paths
}

// commit moves every output into out, in the order written, then calls
// last (when not nil: the experiment log's append, done only once
// everything else is in place). If a move or last fails, the outputs
// already moved are taken back out, the files they replaced are put back,
// and the error says so.
func (s *staged) commit(last func() error) error {
	// A directory where an output goes (nothing this command writes) would
	// fail its move half-way: refuse before anything moves.
	for _, name := range s.names {
		dst := filepath.Join(s.out, name)
		fi, err := os.Lstat(dst)
		if err == nil && fi.IsDir() {
			return fmt.Errorf("%s is a directory, not an output of this command: nothing in %s was replaced", dst, s.out)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	old, err := os.MkdirTemp(s.dir, ".replaced-")
	if err != nil {
		return err
	}
	type moved struct {
		name     string
		replaced bool // a previous file was moved to old
	}
	var done []moved
	undo := func(cause error) error {
		var errs []error
		for i := len(done) - 1; i >= 0; i-- {
			dst := filepath.Join(s.out, done[i].name)
			if done[i].replaced {
				errs = append(errs, s.rename(filepath.Join(old, done[i].name), dst))
			} else {
				errs = append(errs, os.Remove(dst))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%w; putting the previous outputs in %s back failed too: %w", cause, s.out, err)
		}
		return fmt.Errorf("%w (the previous outputs in %s are as they were)", cause, s.out)
	}
	for _, name := range s.names {
		dst, keep := filepath.Join(s.out, name), filepath.Join(old, name)
		replaced := false
		if _, err := os.Lstat(dst); err == nil {
			if err := s.rename(dst, keep); err != nil {
				return undo(err)
			}
			replaced = true
		}
		if err := s.rename(filepath.Join(s.dir, name), dst); err != nil {
			if replaced {
				done = append(done, moved{name, true}) // to be put back
			}
			return undo(err)
		}
		done = append(done, moved{name, replaced})
	}
	if last != nil {
		if err := last(); err != nil {
			return undo(err)
		}
	}
	return nil
}

// appendFile appends b to path (made if absent) in one write; if the write
// fails, the file is cut back to its previous length.
func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Truncate(fi.Size())
		f.Close()
		return err
	}
	return f.Close()
}
