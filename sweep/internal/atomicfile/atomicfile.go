// Package atomicfile writes files through a temporary file and a rename, so
// readers see the old or the new content, never a part. It is shared by
// sweep and its backends.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Write writes b to path through a temporary file in the same directory
// and a rename; durable adds the fsyncs that make it survive a power
// failure (a crashed process needs only the rename). Files get mode 0666
// less the umask, as os.Create gives.
func Write(path string, b []byte, durable bool) error {
	dir := filepath.Dir(path)
	f, err := CreateTemp(dir, "."+filepath.Base(path)+".tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// CreateTemp creates a new file prefix<pid>-<n> in dir with mode 0666 less
// the umask, as os.Create would (os.CreateTemp uses 0600, which hides
// results from the group on a shared cluster).
func CreateTemp(dir, prefix string) (*os.File, error) {
	n := time.Now().UnixNano()
	for range 1000 {
		name := filepath.Join(dir, prefix+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(n, 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
		n++
	}
	return nil, fmt.Errorf("no free temporary name in %s", dir)
}
