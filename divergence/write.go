package divergence

import (
	"fmt"
	"io"
	"strings"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// Writer writes a run's archive: a NumPy .npz with one array per key, laid
// out as numpy.savez writes it (members stored, not compressed), which
// numpy.load and [Open] read. A Go program whose runs are compared writes
// its results with it, as a Python one calls numpy.savez.
//
// The name follows archive/zip.Writer and encoding/csv.Writer: NewWriter
// over an io.Writer, Add one member at a time (so a large array need not be
// held twice), Close to finish.
type Writer struct {
	z    *npy.ZipWriter
	keys map[string]bool
}

// NewWriter returns a Writer writing an archive to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{z: npy.NewZipWriter(w, false), keys: map[string]bool{}}
}

// Add writes data under key with the given shape in C order (the last axis
// varies fastest; axis 0 is the step axis the comparison runs along). data
// is a []float64, []float32, []int (written as int64), []int8, []int16,
// []int32, []int64, []uint8, []uint16, []uint32, []uint64 or []bool; a
// shape of length 0 is a scalar. An empty key, a key holding "/", a key
// already added, another data type, a negative dimension or a shape whose
// product is not len(data) is an error, and nothing is written for it.
// data is not modified.
func (w *Writer) Add(key string, shape []int, data any) error {
	switch {
	case key == "" || strings.Contains(key, "/"):
		return fmt.Errorf("divergence: Writer.Add: key %q: want a non-empty name without /", key)
	case w.keys[key]:
		return fmt.Errorf("divergence: Writer.Add: key %q added twice", key)
	}
	if err := npy.Check(shape, data); err != nil {
		return fmt.Errorf("divergence: Writer.Add: key %q: %v", key, err)
	}
	w.keys[key] = true
	if err := w.z.Add(key, shape, data); err != nil {
		return fmt.Errorf("divergence: Writer.Add: key %q: %w", key, err)
	}
	return nil
}

// Close finishes the archive. It does not close the underlying writer.
func (w *Writer) Close() error {
	if err := w.z.Close(); err != nil {
		return fmt.Errorf("divergence: Writer.Close: %w", err)
	}
	return nil
}
