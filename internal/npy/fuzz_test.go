package npy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var sentinels = []error{ErrMagic, ErrVersion, ErrHeader, ErrDType, ErrTruncated, ErrSize, ErrArchive, ErrNoKey}

func typed(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func seed(f *testing.F, pattern string) {
	paths, _ := filepath.Glob(pattern)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
}

func FuzzRead(f *testing.F) {
	seed(f, "testdata/*.npy")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bytes.NewReader(b))
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, conv := range []func() error{
			func() error { _, err := a.Float64(); return err },
			func() error { _, err := a.Float32(); return err },
			func() error { _, err := a.Int64(); return err },
			func() error { _, err := a.Uint64(); return err },
		} {
			if err := conv(); err != nil && !typed(err) {
				t.Fatalf("untyped conversion error %v", err)
			}
		}
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("Read accepted what NewReader refuses: %v", err)
		}
		buf := make([]float64, 3)
		for err == nil {
			_, err = r.ReadFloat64(buf)
		}
		if err != io.EOF {
			t.Fatalf("stream: %v", err)
		}
		// The exact integer stream decodes what Int64 does, or refuses
		// with a typed error.
		r, _ = NewReader(bytes.NewReader(b))
		ibuf := make([]int64, 3)
		for err = nil; err == nil; {
			_, err = r.ReadInt64(ibuf)
		}
		if err != io.EOF && !typed(err) {
			t.Fatalf("int stream: %v", err)
		}
		if _, ierr := a.Int64(); (ierr == nil) != (err == io.EOF) {
			t.Fatalf("Int64 says %v, ReadInt64 %v", ierr, err)
		}
		r, _ = NewReader(bytes.NewReader(b))
		ubuf := make([]uint64, 3)
		for err = nil; err == nil; {
			_, err = r.ReadUint64(ubuf)
		}
		if err != io.EOF && !typed(err) {
			t.Fatalf("uint stream: %v", err)
		}
		if _, uerr := a.Uint64(); (uerr == nil) != (err == io.EOF) {
			t.Fatalf("Uint64 says %v, ReadUint64 %v", uerr, err)
		}
	})
}

func FuzzOpenArchive(f *testing.F) {
	seed(f, "testdata/*.npz")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := OpenArchive(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, k := range a.Keys() {
			if arr, err := a.Array(k); err != nil {
				if !typed(err) || !errors.As(err, new(*KeyError)) {
					t.Fatalf("key %q: error %v is untyped or not a *KeyError", k, err)
				}
			} else if _, err := arr.Float64(); err != nil && !typed(err) {
				t.Fatalf("key %q: untyped conversion error %v", k, err)
			}
			r, err := a.Reader(k)
			if err != nil {
				if !typed(err) || !errors.As(err, new(*KeyError)) {
					t.Fatalf("key %q: error %v is untyped or not a *KeyError", k, err)
				}
				continue
			}
			buf := make([]float64, 5)
			ibuf := make([]int64, 5)
			integer := r.Integer()
			for err == nil {
				if integer {
					_, err = r.ReadInt64(ibuf)
				} else {
					_, err = r.ReadFloat64(buf)
				}
			}
			r.Close()
			if err != io.EOF && (!typed(err) || !errors.As(err, new(*KeyError))) {
				t.Fatalf("key %q: stream error %v is untyped or not a *KeyError", k, err)
			}
		}
	})
}
