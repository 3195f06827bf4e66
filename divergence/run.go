package divergence

import (
	"errors"
	"fmt"
	"os"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// ErrKey is wrapped by errors for a key an archive does not hold.
var ErrKey = errors.New("no such key")

// ErrFormat is wrapped by errors for a file or member that is not a readable
// NumPy archive or array (an unsupported dtype, say: the archive's other
// keys may still be read).
var ErrFormat = errors.New("unreadable archive or array")

// Run is one opened .npz archive. It keeps its file open; call Close.
type Run struct {
	// Path is the file the run was opened from.
	Path string

	f    *os.File
	arch *npy.Archive
}

// array is one key's data as float64 in C order.
type array struct {
	Shape []int
	Data  []float64
}

// Open opens the NumPy archive at path. Only the archive's directory is read;
// arrays are read on demand.
func Open(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("divergence: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("divergence: %w", err)
	}
	a, err := npy.OpenArchive(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("divergence: %w: %s: %v", ErrFormat, path, err)
	}
	return &Run{Path: path, f: f, arch: a}, nil
}

// Close closes the archive's file.
func (r *Run) Close() error { return r.f.Close() }

// Keys returns the archive's keys in archive order.
func (r *Run) Keys() []string { return r.arch.Keys() }

// array reads one key whole, converted to float64.
func (r *Run) array(key string) (*array, error) {
	a, err := r.arch.Array(key)
	if err != nil {
		return nil, r.wrap(key, err)
	}
	x, err := a.Float64()
	if err != nil {
		return nil, r.wrap(key, err)
	}
	return &array{Shape: a.Shape, Data: x}, nil
}

func (r *Run) wrap(key string, err error) error {
	if errors.Is(err, npy.ErrNoKey) {
		return fmt.Errorf("divergence: %w: %s has no key %q", ErrKey, r.Path, key)
	}
	return fmt.Errorf("divergence: %w: %s: %v", ErrFormat, r.Path, err)
}
