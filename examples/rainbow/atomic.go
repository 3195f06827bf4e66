package main

import (
	"os"
	"path/filepath"
)

// outFile is an output being written under a temporary name beside its
// final one: commit renames it into place, abort removes it, so that an
// interrupted or failed run never leaves a truncated file under the final
// name.
type outFile struct {
	*os.File
	path string
}

func createOut(path string) (*outFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	return &outFile{File: f, path: path}, nil
}

// commit closes the file and moves it to its final name.
func (o *outFile) commit() error {
	if err := o.Close(); err != nil {
		os.Remove(o.Name())
		return err
	}
	if err := os.Rename(o.Name(), o.path); err != nil {
		os.Remove(o.Name())
		return err
	}
	return nil
}

// abort closes and removes the temporary file.
func (o *outFile) abort() {
	o.Close()
	os.Remove(o.Name())
}

// writeOut writes path through write, atomically.
func writeOut(path string, write func(f *os.File) error) error {
	o, err := createOut(path)
	if err != nil {
		return err
	}
	if err := write(o.File); err != nil {
		o.abort()
		return err
	}
	return o.commit()
}
