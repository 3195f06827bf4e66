package divergence

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// ErrShape is wrapped by Series errors for arrays of different shapes.
var ErrShape = errors.New("shape mismatch")

// Series returns the per-step divergence of key between runs a and b:
// element t is ‖a_t − b_t‖ over the axes after the first (L2 or L∞), or
// |a_t − b_t| for one-dimensional arrays; a scalar gives one element. A step
// holding a NaN difference is NaN. Unlike Compare, problems are errors:
// ErrKey, ErrShape or ErrFormat, naming the file and key.
func Series(a, b *Run, key string, norm Norm) ([]float64, error) {
	const chunk = 1 << 16
	ma, err := openMember(a, key, chunk)
	if err != nil {
		return nil, err
	}
	defer ma.src.stop()
	mb, err := openMember(b, key, chunk)
	if err != nil {
		return nil, err
	}
	defer mb.src.stop()
	if !slices.Equal(ma.shape, mb.shape) {
		return nil, fmt.Errorf("divergence: %w: key %q: %s %v vs %s %v", ErrShape, key, a.Path, ma.shape, b.Path, mb.shape)
	}
	nsteps, rowLen := steps(ma.shape)
	out := make([]float64, 0, nsteps)
	p := acc{series: &out}
	for {
		xa, errA := ma.src.next()
		xb, errB := mb.src.next()
		if errA != nil || errB != nil {
			if errA == errB { // both io.EOF: both members verified
				break
			}
			if errA == nil || errA == io.EOF {
				return nil, fmt.Errorf("divergence: %w: %s: key %q: %v", ErrFormat, b.Path, key, errB)
			}
			return nil, fmt.Errorf("divergence: %w: %s: key %q: %v", ErrFormat, a.Path, key, errA)
		}
		n := min(len(xa), len(xb))
		p.add(xa[:n], xb[:n], rowLen, norm)
		ma.src.release(xa)
		mb.src.release(xb)
	}
	if len(out) != nsteps {
		return nil, fmt.Errorf("divergence: %w: key %q: %d of %d steps read", ErrFormat, key, len(out), nsteps)
	}
	return out, nil
}
