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
// holding a NaN on one side only is NaN; elements NaN on both sides are
// equal (left out), as in [Compare]. Integers on both sides are compared exactly, as in
// [Compare]. Unlike Compare, problems are errors: ErrKey, ErrShape or
// ErrFormat, naming the file and key.
func Series(a, b *Run, key string, norm Norm) ([]float64, error) {
	const chunk = 1 << 16
	ma, err := openMember(a, key)
	if err != nil {
		return nil, err
	}
	defer ma.close()
	mb, err := openMember(b, key)
	if err != nil {
		return nil, err
	}
	defer mb.close()
	if !slices.Equal(ma.shape, mb.shape) {
		return nil, fmt.Errorf("divergence: %w: key %q: %s %v vs %s %v", ErrShape, key, a.Path, ma.shape, b.Path, mb.shape)
	}
	nsteps, rowLen := steps(ma.shape)
	out := make([]float64, 0, nsteps)
	p := newAcc()
	p.series = &out
	if ma.integer && mb.integer {
		p.ua, p.ub = ma.unsigned, mb.unsigned
		err = seriesOf(&p, &ma, &mb, a, b, key, rowLen, norm, chunk, (*member).ints, (*acc).addInt)
	} else {
		err = seriesOf(&p, &ma, &mb, a, b, key, rowLen, norm, chunk, (*member).floats, (*acc).add)
	}
	if err != nil {
		return nil, err
	}
	if rowLen == 0 {
		// Steps without elements (shape (n, 0)) agree.
		out = make([]float64, nsteps)
	}
	if len(out) != nsteps {
		return nil, fmt.Errorf("divergence: %w: key %q: %d of %d steps read", ErrFormat, key, len(out), nsteps)
	}
	return out, nil
}

func seriesOf[T elem](p *acc, ma, mb *member, a, b *Run, key string, rowLen int, norm Norm, chunk int,
	start func(*member, int) (source[T], error), add func(*acc, []T, []T, int, Norm)) error {
	sa, err := start(ma, chunk)
	if err != nil {
		return fmt.Errorf("divergence: %w: %s: key %q: %v", ErrFormat, a.Path, key, err)
	}
	defer sa.stop()
	sb, err := start(mb, chunk)
	if err != nil {
		return fmt.Errorf("divergence: %w: %s: key %q: %v", ErrFormat, b.Path, key, err)
	}
	defer sb.stop()
	for {
		xa, errA := sa.next()
		xb, errB := sb.next()
		if errA != nil || errB != nil {
			if errA == errB { // both io.EOF: both members verified
				return nil
			}
			if errA == nil || errA == io.EOF {
				return fmt.Errorf("divergence: %w: %s: key %q: %v", ErrFormat, b.Path, key, errB)
			}
			return fmt.Errorf("divergence: %w: %s: key %q: %v", ErrFormat, a.Path, key, errA)
		}
		n := min(len(xa), len(xb))
		add(p, xa[:n], xb[:n], rowLen, norm)
		sa.release(xa)
		sb.release(xb)
	}
}
