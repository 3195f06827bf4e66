package npy

import (
	"bytes"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/crosscluster/crosscluster/internal/errtest"
)

// TestErrors checks every sentinel this package documents, produced by a
// real bad file (the testdata fixtures of testdata/gen.py) or a refused
// conversion: errors.Is names it, an archive member's error is a *KeyError
// naming the key, and the message says "npy: " once, at its start (the
// packages above wrap it, so a second prefix would show there).
func TestErrors(t *testing.T) {
	read := func(name string) func(*testing.T) error {
		return func(t *testing.T) error {
			b, err := os.ReadFile("testdata/" + name + ".npy")
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read(bytes.NewReader(b))
			return err
		}
	}
	open := func(name string) func(*testing.T) error {
		return func(t *testing.T) error {
			b, err := os.ReadFile("testdata/" + name + ".npz")
			if err != nil {
				t.Fatal(err)
			}
			_, err = OpenArchive(bytes.NewReader(b), int64(len(b)))
			return err
		}
	}
	member := func(name, key string) func(*testing.T) error {
		return func(t *testing.T) error {
			_, err := openArchive(t, "testdata/"+name+".npz").Array(key)
			return err
		}
	}
	stream := func(name, key string) func(*testing.T) error {
		return func(t *testing.T) error {
			r, err := openArchive(t, "testdata/"+name+".npz").Reader(key)
			if err != nil {
				return err
			}
			defer r.Close()
			for err == nil {
				_, err = r.ReadFloat64(make([]float64, 3))
			}
			return err
		}
	}
	convert := func(shape []int, data any, f func(*Array) error) func(*testing.T) error {
		return func(t *testing.T) error {
			var buf bytes.Buffer
			if err := Write(&buf, shape, data); err != nil {
				t.Fatal(err)
			}
			a, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			return f(a)
		}
	}
	int64Of := func(a *Array) error { _, err := a.Int64(); return err }
	uint64Of := func(a *Array) error { _, err := a.Uint64(); return err }
	tests := []struct {
		name  string
		err   func(*testing.T) error
		is    error
		key   string // the *KeyError's Key; "" when none is promised
		place []string
	}{
		{"magic", read("bad_magic"), ErrMagic, "", nil},
		{"version", read("bad_version"), ErrVersion, "", nil},
		{"header: extra key", read("bad_extra_key"), ErrHeader, "", nil},
		{"header: missing key", read("bad_missing_key"), ErrHeader, "", nil},
		{"dtype: structured", read("bad_structured"), ErrDType, "", nil},
		{"dtype: complex", read("bad_complex"), ErrDType, "", []string{"c16", "np.real, np.imag"}},
		{"dtype: object", read("bad_object"), ErrDType, "", []string{`object arrays ("|O") need pickle`}},
		{"truncated data", read("bad_truncated_data"), ErrTruncated, "", nil},
		{"truncated header", read("bad_truncated_header"), ErrTruncated, "", nil},
		{"shape larger than the data", read("bad_shape_lies"), ErrTruncated, "", nil},
		{"not a zip", open("bad_not_zip"), ErrArchive, "", nil},
		{"truncated archive", open("bad_truncated"), ErrArchive, "", nil},
		{"member shorter than its shape", member("bad_members", "lies"), ErrTruncated, "lies", []string{`key "lies"`}},
		{"member longer than its shape", member("bad_members", "extra"), ErrSize, "extra", []string{`key "extra"`}},
		{"no such key", member("bad_members", "absent"), ErrNoKey, "absent", []string{`key "absent"`}},
		{"corrupt member", member("bad_corrupt", "x"), ErrArchive, "x", []string{`key "x"`}},
		{"member that is no npy", member("mixed", "notes.txt"), ErrMagic, "notes.txt", []string{`key "notes.txt"`}},
		{"streamed member shorter than its shape", stream("bad_members", "lies"), ErrTruncated, "lies", []string{`key "lies"`}},
		{"Int64 of floats", convert([]int{2}, []float64{1, 2}, int64Of), ErrDType, "", []string{"<f8"}},
		{"Int64 of a large uint64", convert([]int{2}, []uint64{1, math.MaxUint64}, int64Of), ErrDType, "", []string{"element 1"}},
		{"Uint64 of floats", convert([]int{2}, []float64{1, 2}, uint64Of), ErrDType, "", []string{"<f8"}},
		{"Uint64 of a negative int", convert([]int{2}, []int16{1, -3}, uint64Of), ErrDType, "", []string{"element 1", "-3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err(t)
			if !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
			}
			var ke *KeyError
			switch {
			case tc.key == "" && errors.As(err, &ke):
				t.Errorf("%v is a *KeyError; none is documented", err)
			case tc.key != "" && (!errors.As(err, &ke) || ke.Key != tc.key):
				t.Errorf("%v is not a *KeyError for %q", err, tc.key)
			}
			errtest.Check(t, err, "npy: ", tc.place...)
		})
	}
}
