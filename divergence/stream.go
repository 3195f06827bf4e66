package divergence

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// source yields a member's elements in C order, chunk by chunk.
type source interface {
	// next returns the next chunk (nil, io.EOF after the last one, once the
	// member's end has been verified). The chunk is valid until release.
	next() ([]float64, error)
	release([]float64)
	stop()
}

// memSource serves an array already in memory.
type memSource struct {
	data  []float64
	off   int
	chunk int
}

func (m *memSource) next() ([]float64, error) {
	if m.off >= len(m.data) {
		return nil, io.EOF
	}
	n := min(m.chunk, len(m.data)-m.off)
	c := m.data[m.off : m.off+n]
	m.off += n
	return c, nil
}

func (m *memSource) release([]float64) {}
func (m *memSource) stop()             {}

// streamSource decodes a member in its own goroutine, one chunk ahead of
// the consumer, so that decompression of several runs overlaps.
type streamSource struct {
	full   chan filled
	free   chan []float64
	quit   chan struct{}
	exited chan struct{}
	r      *npy.Reader
}

type filled struct {
	buf []float64
	err error
}

// buffersPerStream: one being consumed, one being filled, one queued.
const buffersPerStream = 3

func startStream(r *npy.Reader, chunk int) *streamSource {
	s := &streamSource{
		full:   make(chan filled, buffersPerStream),
		free:   make(chan []float64, buffersPerStream),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
		r:      r,
	}
	n := min(chunk, max(r.Len(), 1))
	for range buffersPerStream {
		s.free <- make([]float64, n)
	}
	go func() {
		defer close(s.exited)
		for {
			var buf []float64
			select {
			case buf = <-s.free:
			case <-s.quit:
				return
			}
			n, err := r.ReadFloat64(buf[:cap(buf)])
			select {
			case s.full <- filled{buf[:n], err}:
			case <-s.quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *streamSource) next() ([]float64, error) {
	f := <-s.full
	return f.buf, f.err
}

func (s *streamSource) release(b []float64) { s.free <- b }

func (s *streamSource) stop() {
	close(s.quit)
	<-s.exited
	s.r.Close()
}

// pairResult is the outcome for one pair of runs and one key.
type pairResult struct {
	max   float64
	steps int
	warn  string
}

// acc accumulates one pair's divergence.
type acc struct {
	max  float64 // over completed steps
	nan  bool
	inf  bool    // the current step holds an infinite difference
	ssq  float64 // scaled sum of squares of the current step (L2)
	inv  float64 // 1/scale for the current step; 0 before the first nonzero
	smax float64 // scale (L2) or running max (LInf) of the current step
	pos  int     // elements of the current step seen
	// series receives each step's norm when non-nil.
	series *[]float64
}

// absDiff is |a − b|, and 0 when a == b, so that equal infinities on both
// hosts agree (∞ − ∞ would be NaN), as numpy.testing.assert_allclose
// treats them. NaN on either side stays NaN.
func absDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a - b)
}

// addMaxAbs is the fast path when each step's norm is the largest absolute
// difference (L∞, or one element per step) and no series is wanted.
func (p *acc) addMaxAbs(a, b []float64) {
	b = b[:len(a)]
	m := p.max
	nan := false
	for i := range a {
		d := absDiff(a[i], b[i])
		if d > m {
			m = d
		} else if d != d {
			nan = true
		}
	}
	p.max = m
	p.nan = p.nan || nan
}

// add accumulates a chunk whose first element is at step position p.pos.
func (p *acc) add(a, b []float64, rowLen int, norm Norm) {
	b = b[:len(a)]
	for len(a) > 0 {
		n := min(len(a), rowLen-p.pos)
		if norm == LInf {
			m := p.smax
			for i := range n {
				d := absDiff(a[i], b[i])
				if d > m {
					m = d
				} else if d != d {
					p.nan = true
				}
			}
			p.smax = m
		} else {
			p.addSquares(a[:n], b[:n])
		}
		a, b = a[n:], b[n:]
		p.pos += n
		if p.pos == rowLen {
			p.endStep(norm)
		}
	}
}

// addSquares updates a scaled sum of squares, as LAPACK's dnrm2 does, so
// that steps with differences near the float64 limits neither overflow nor
// underflow.
func (p *acc) addSquares(a, b []float64) {
	for i := range a {
		d := absDiff(a[i], b[i])
		switch {
		case d == 0:
		case d != d:
			p.nan = true
		case d > math.MaxFloat64:
			p.inf = true
		case d > p.smax:
			r := p.smax / d
			p.ssq = 1 + p.ssq*r*r
			p.smax, p.inv = d, 1/d
		default:
			r := d * p.inv
			p.ssq += r * r
		}
	}
}

func (p *acc) endStep(norm Norm) {
	v := p.smax
	if norm == L2 {
		v = p.smax * math.Sqrt(p.ssq)
		if p.inf {
			v = math.Inf(1)
		}
	}
	if p.series != nil {
		if p.nan {
			*p.series = append(*p.series, math.NaN())
		} else {
			*p.series = append(*p.series, v)
		}
	}
	if v > p.max {
		p.max = v
	}
	p.ssq, p.inv, p.smax, p.inf, p.pos = 0, 0, 0, false, 0
	if p.series != nil {
		p.nan = false
	}
}

// streamGroup compares every pair of runs in group (all of one shape),
// streaming their members in lockstep, and stores the results in res.
//
// It checks ctx between chunks; once ctx is done every pair of the group
// gets NaN and a warning that the comparison stopped.
func streamGroup(ctx context.Context, ms []member, group []int, norm Norm, chunk int, res map[[2]int]pairResult, runs []NamedRun) {
	nsteps, rowLen := steps(ms[group[0]].shape)
	total := nsteps * rowLen
	for _, g := range group {
		if m, ok := ms[g].src.(*memSource); ok {
			m.chunk = chunk
		}
	}
	type pairAcc struct {
		i, j int // indices into group
		acc
	}
	var pairs []*pairAcc
	for a := range group {
		for b := a + 1; b < len(group); b++ {
			pairs = append(pairs, &pairAcc{i: a, j: b})
		}
	}
	failed := make([]string, len(group))
	bufs := make([][]float64, len(group))
	fast := norm == LInf || rowLen == 1
	var stopped error
	for seen := 0; seen < total; {
		if stopped = ctx.Err(); stopped != nil {
			break
		}
		n := -1
		for gi, g := range group {
			if failed[gi] != "" {
				continue
			}
			buf, err := ms[g].src.next()
			if err == nil && len(buf) == 0 {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				failed[gi] = fmt.Sprintf("%s: reading %s: %v", runs[g].Name, runPath(runs[g]), err)
				continue
			}
			bufs[gi] = buf
			if n < 0 || len(buf) < n {
				n = len(buf)
			}
		}
		if n < 0 {
			break // every member failed
		}
		for _, p := range pairs {
			if failed[p.i] != "" || failed[p.j] != "" {
				continue
			}
			if fast {
				p.addMaxAbs(bufs[p.i][:n], bufs[p.j][:n])
			} else {
				p.add(bufs[p.i][:n], bufs[p.j][:n], rowLen, norm)
			}
		}
		for gi, g := range group {
			if failed[gi] == "" {
				ms[g].src.release(bufs[gi])
			}
		}
		seen += n
	}
	// Reading past the end verifies each member's checksum and length.
	for gi, g := range group {
		if failed[gi] != "" || stopped != nil {
			continue
		}
		if _, err := ms[g].src.next(); err != io.EOF {
			if err == nil {
				err = fmt.Errorf("more data than shape %v", ms[g].shape)
			}
			failed[gi] = fmt.Sprintf("%s: reading %s: %v", runs[g].Name, runPath(runs[g]), err)
		}
	}
	for _, p := range pairs {
		pr := pairResult{max: p.max, steps: nsteps}
		switch {
		case stopped != nil:
			pr.max = math.NaN()
			pr.warn = joinWarn(joinWarn(failed[p.i], failed[p.j]), stoppedWarning(stopped))
		case failed[p.i] != "" || failed[p.j] != "":
			pr.max = math.NaN()
			pr.warn = joinWarn(failed[p.i], failed[p.j])
		case total == 0:
			pr.max = math.NaN()
			pr.warn = fmt.Sprintf("no elements (shape %v)", ms[group[0]].shape)
		case p.nan:
			pr.max = math.NaN()
			pr.warn = "NaN in the data"
		}
		res[[2]int{group[p.i], group[p.j]}] = pr
	}
}

func joinWarn(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func runPath(r NamedRun) string {
	if r.Run != nil {
		return r.Run.Path
	}
	return r.Path
}
