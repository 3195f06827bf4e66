package divergence

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// elem is what members are compared as: float64, or int64 when every
// member of a key holds integers (compared exactly, beyond 2^53 too).
type elem interface{ float64 | int64 }

// source yields a member's elements in C order, chunk by chunk.
type source[T elem] interface {
	// next returns the next chunk (nil, io.EOF after the last one, once the
	// member's end has been verified). The chunk is valid until release.
	next() ([]T, error)
	release([]T)
	stop()
}

// memSource serves an array already in memory.
type memSource[T elem] struct {
	data []T
	//lint:ignore U1000 advanced by next, which staticcheck takes for unused
	off   int
	chunk int
}

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (m *memSource[T]) next() ([]T, error) {
	if m.off >= len(m.data) {
		return nil, io.EOF
	}
	n := min(m.chunk, len(m.data)-m.off)
	c := m.data[m.off : m.off+n]
	m.off += n
	return c, nil
}

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (m *memSource[T]) release([]T) {}

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (m *memSource[T]) stop() {}

// streamSource decodes a member in its own goroutine, one chunk ahead of
// the consumer, so that decompression of several runs overlaps.
type streamSource[T elem] struct {
	full   chan filled[T]
	free   chan []T
	quit   chan struct{}
	exited chan struct{}
	r      *npy.Reader
}

type filled[T elem] struct {
	buf []T
	err error
}

// buffersPerStream: one being consumed, one being filled, one queued.
const buffersPerStream = 3

func readFloats(r *npy.Reader, dst []float64) (int, error) { return r.ReadFloat64(dst) }
func readInts(r *npy.Reader, dst []int64) (int, error)     { return r.ReadInt64(dst) }

func startStream[T elem](r *npy.Reader, chunk int, read func(*npy.Reader, []T) (int, error)) *streamSource[T] {
	s := &streamSource[T]{
		full:   make(chan filled[T], buffersPerStream),
		free:   make(chan []T, buffersPerStream),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
		r:      r,
	}
	n := min(chunk, max(r.Len(), 1))
	for range buffersPerStream {
		s.free <- make([]T, n)
	}
	go func() {
		defer close(s.exited)
		for {
			var buf []T
			select {
			case buf = <-s.free:
			case <-s.quit:
				return
			}
			n, err := read(r, buf[:cap(buf)])
			select {
			case s.full <- filled[T]{buf[:n], err}:
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

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (s *streamSource[T]) next() ([]T, error) {
	f := <-s.full
	return f.buf, f.err
}

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (s *streamSource[T]) release(b []T) { s.free <- b }

//lint:ignore U1000 used through the generic source interface, which staticcheck does not follow
func (s *streamSource[T]) stop() {
	close(s.quit)
	<-s.exited
	s.r.Close()
}

// pairResult is the outcome for one pair of runs and one key.
type pairResult struct {
	max     float64
	maxStep int
	steps   int
	warn    string
	note    string
	exact   bool
	el      elementStats
}

// elementStats is the element-wise part of a Row.
type elementStats struct {
	n              int
	maxAbs, maxRel float64
	absAt, relAt   int // flat C-order index; -1: none
	mismatched     int
	nanBoth        int
}

// acc accumulates one pair's divergence: the per-step norm and its
// maximum over steps, and the element-wise statistics of
// numpy.testing.assert_allclose.
type acc struct {
	max     float64 // over completed steps
	maxStep int     // step of max; -1 while every step is 0
	nan     bool    // the current step holds a NaN on one side
	nanStep int     // first step holding NaN; -1 if none
	inf     bool    // the current step holds an infinite difference
	ssq     float64 // scaled sum of squares of the current step (L2)
	inv     float64 // 1/scale for the current step; 0 before the first nonzero
	smax    float64 // scale (L2) or running max (LInf) of the current step
	pos     int     // elements of the current step seen
	step    int     // steps completed
	idx     int     // elements seen
	// series receives each step's norm when non-nil.
	series *[]float64

	// Element-wise, over the elements not equal on both sides; only
	// maxAbs, absAt and firstNaN unless elementwise (the rest costs about
	// three times the norm's CPU time per element, so it is computed only
	// when a Closeness asks for it).
	elementwise    bool
	maxAbs, maxRel float64
	absAt, relAt   int     // -1: none yet
	relCut         float64 // a little below maxRel; see newRel
	nzb            bool    // some finite b ≠ 0 (the relative difference is defined)
	nanBoth        int     // elements NaN on both sides
	firstNaN       int     // first element with a NaN on one side only; -1: none
	bounded        bool    // count mismatches against atol + rtol·|b|
	ua, ub         bool    // integer elements of a (b) are uint64 bits
	rtol, atol     float64
	mismatched     int
}

func newAcc() acc {
	return acc{maxStep: -1, nanStep: -1, absAt: -1, relAt: -1, firstNaN: -1}
}

// differ records an element whose values differ (or are not both NaN): d
// is |a − b| (NaN when one side is NaN, +Inf when one is infinite), ay is
// |b|, i the element's flat index. It is what numpy.testing.assert_allclose
// computes: max |a − b| and max |a − b|/|b| over b ≠ 0, the first index of
// each (np.argmax; a NaN is the maximum), and the elements outside
// atol + rtol·|b| (a non-finite difference never is inside). The common
// case, an element that changes no maximum, takes no division.
func (p *acc) differ(d, ay float64, i int) {
	if d > p.maxAbs || d != d {
		p.newAbs(d, i)
	}
	if ay != 0 {
		p.nzb = true
		if !(d < p.relCut*ay) {
			p.newRel(d, ay, i)
		}
	}
	if p.bounded && !(d <= p.atol+p.rtol*ay && d <= math.MaxFloat64) {
		p.mismatched++
	}
}

func (p *acc) newAbs(d float64, i int) {
	if d > p.maxAbs || d != d && p.maxAbs == p.maxAbs {
		p.maxAbs, p.absAt = d, i
		if d != d && p.firstNaN < 0 {
			p.firstNaN = i
		}
	}
}

// relShrink makes relCut a little below maxRel, so that d < relCut·|b|
// (one rounded product) proves the rounded d/|b| below maxRel: the margin
// 2^-48 exceeds the two roundings' 2^-52.
const relShrink = 1 - 0x1p-48

func (p *acc) newRel(d, ay float64, i int) {
	if r := d / ay; r > p.maxRel || r != r && p.maxRel == p.maxRel {
		p.maxRel, p.relAt = r, i
		if r != r {
			p.relCut = math.Inf(1) // nothing exceeds NaN
		} else {
			p.relCut = r * relShrink
		}
	}
}

// bothNaN records an element that is NaN on both sides: equal, as
// numpy.testing.assert_allclose's default equal_nan=True has it, so it is
// left out of the differences and the step's norm, and counted.
func (p *acc) bothNaN() { p.nanBoth++ }

// nanWarning is the warning of a row whose data hold a NaN on one side
// only.
const nanWarning = "NaN on one side only"

// addFast is the path when each step's norm is the largest absolute
// difference (L∞, or one element per step) and no series is wanted: the
// norm's maximum is then the element-wise maximum.
func (p *acc) addFast(a, b []float64) {
	if p.elementwise {
		p.addFastElementwise(a, b)
		return
	}
	b = b[:len(a)]
	m, at := p.maxAbs, p.absAt
	for i := range a {
		d := math.Abs(a[i] - b[i])
		if d > m {
			m, at = d, p.idx+i
		} else if d != d && a[i] != b[i] {
			// A NaN on either side (equal infinities give ∞ − ∞ = NaN
			// but agree); on both sides the values agree too.
			if a[i] != a[i] && b[i] != b[i] {
				p.bothNaN()
			} else if p.firstNaN < 0 {
				p.firstNaN = p.idx + i
			}
		}
	}
	p.maxAbs, p.absAt = m, at
	p.idx += len(a)
}

// addFastElementwise is addFast with every element-wise statistic: differ
// written out over a chunk, with the running maxima in locals.
func (p *acc) addFastElementwise(a, b []float64) {
	b = b[:len(a)]
	maxAbs, relCut, nzb, mism := p.maxAbs, p.relCut, false, 0
	bounded, atol, rtol := p.bounded, p.atol, p.rtol
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			// Equal infinities are left out, as NumPy does before
			// its relative difference: they do not make it defined.
			if !nzb && y != 0 && !math.IsInf(y, 0) {
				nzb = true
			}
			continue
		}
		if x != x && y != y {
			p.bothNaN()
			continue
		}
		d, ay := math.Abs(x-y), math.Abs(y)
		if d > maxAbs || d != d {
			p.newAbs(d, p.idx+i)
			maxAbs = p.maxAbs
		}
		if ay != 0 {
			nzb = true
			if !(d < relCut*ay) {
				p.newRel(d, ay, p.idx+i)
				relCut = p.relCut
			}
		}
		if bounded && !(d <= atol+rtol*ay && d <= math.MaxFloat64) {
			mism++
		}
	}
	p.nzb = p.nzb || nzb
	p.mismatched += mism
	p.idx += len(a)
}

// addFastInt is addFast for integers, exactly: the difference's magnitude
// is computed in uint64, where it cannot overflow, and only then rounded
// to float64 (exact below 2^53).
func (p *acc) addFastInt(a, b []int64) {
	b = b[:len(a)]
	for i := range a {
		x, y := a[i], b[i]
		if p.equal(x, y) {
			if y != 0 {
				p.nzb = true
			}
			continue
		}
		d := p.diff(x, y)
		if p.elementwise {
			p.differ(d, p.absB(y), p.idx+i)
		} else if d > p.maxAbs {
			p.maxAbs, p.absAt = d, p.idx+i
		}
	}
	p.idx += len(a)
}

func intDiff(x, y int64) float64 {
	if x > y {
		return float64(uint64(x) - uint64(y))
	}
	return float64(uint64(y) - uint64(x))
}

// Integer elements are int64 bits; a member of uint64 dtype (ua for a, ub
// for b) holds each value's uint64 bits instead, so that values above
// MaxInt64 are compared exactly too.

// equal reports whether the elements x (of a) and y (of b) hold equal
// values: equal bits do, unless one side is unsigned and the bits are a
// negative int64 on the other.
func (p *acc) equal(x, y int64) bool { return x == y && (p.ua == p.ub || x >= 0) }

// diff returns |x − y|, computed exactly and rounded once to float64.
func (p *acc) diff(x, y int64) float64 {
	if !p.ua && !p.ub {
		return intDiff(x, y)
	}
	return unsignedDiff(x, y, p.ua, p.ub)
}

// absB returns |y| for an element of b.
func (p *acc) absB(y int64) float64 {
	if p.ub {
		return float64(uint64(y))
	}
	return math.Abs(float64(y))
}

// unsignedDiff is |x − y| when x (ux) or y (uy) holds uint64 bits: sign
// and magnitude apart. Values of one sign differ by at most 2^64 − 1, as
// uint64 (two's complement keeps negative int64s in order); of opposite
// signs by |x| + |y|, up to 2^64 + 2^63 − 1, added with a carry.
func unsignedDiff(x, y int64, ux, uy bool) float64 {
	xneg, yneg := !ux && x < 0, !uy && y < 0
	if xneg == yneg {
		a, b := uint64(x), uint64(y)
		if a > b {
			return float64(a - b)
		}
		return float64(b - a)
	}
	pos, neg := uint64(x), y
	if xneg {
		pos, neg = uint64(y), x
	}
	s, carry := bits.Add64(pos, uint64(-neg), 0) // -MinInt64 wraps to 2^63, its magnitude
	if carry == 0 {
		return float64(s)
	}
	// 2^64 + s, rounded once: halved, the bit shifted out kept as a
	// sticky bit far below float64's precision.
	return float64(1<<63|s>>1|s&1) * 2
}

// add accumulates a chunk whose first element is at step position p.pos:
// the element-wise statistics through addFastElementwise when asked for,
// then each step's norm.
func (p *acc) add(a, b []float64, rowLen int, norm Norm) {
	b = b[:len(a)]
	for len(a) > 0 {
		n := min(len(a), rowLen-p.pos)
		if p.elementwise {
			p.addFastElementwise(a[:n], b[:n])
		} else {
			p.idx += n
		}
		for i := range n {
			if x, y := a[i], b[i]; x != y {
				d := math.Abs(x - y)
				if d != d && x != x && y != y {
					// NaN on both sides: equal (counted above when
					// elementwise).
					if !p.elementwise {
						p.bothNaN()
					}
					continue
				}
				p.norm(d, norm)
			}
		}
		p.endStep(n, rowLen, norm)
		a, b = a[n:], b[n:]
	}
}

// addInt is add for integers, exactly.
func (p *acc) addInt(a, b []int64, rowLen int, norm Norm) {
	b = b[:len(a)]
	for len(a) > 0 {
		n := min(len(a), rowLen-p.pos)
		if p.elementwise {
			p.addFastInt(a[:n], b[:n])
		} else {
			p.idx += n
		}
		for i := range n {
			if x, y := a[i], b[i]; !p.equal(x, y) {
				p.norm(p.diff(x, y), norm)
			}
		}
		p.endStep(n, rowLen, norm)
		a, b = a[n:], b[n:]
	}
}

// norm adds one element's difference d to the current step's norm.
func (p *acc) norm(d float64, norm Norm) {
	if norm == LInf {
		p.normInf(d)
	} else {
		p.addSquare(d)
	}
}

// normInf adds one element's difference d to the current step's L∞ norm.
func (p *acc) normInf(d float64) {
	if d > p.smax {
		p.smax = d
	} else if d != d {
		p.nan = true
	}
}

// addSquare updates a scaled sum of squares, as LAPACK's dnrm2 does, so
// that steps with differences near the float64 limits neither overflow nor
// underflow.
func (p *acc) addSquare(d float64) {
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

// endStep counts n more elements of the current step and closes it when
// it is complete.
func (p *acc) endStep(n, rowLen int, norm Norm) {
	p.pos += n
	if p.pos == rowLen {
		p.closeStep(norm)
	}
}

func (p *acc) closeStep(norm Norm) {
	v := p.smax
	if norm == L2 {
		v = p.smax * math.Sqrt(p.ssq)
		if p.inf {
			v = math.Inf(1)
		}
	}
	if p.nan {
		v = math.NaN()
		if p.nanStep < 0 {
			p.nanStep = p.step
		}
	}
	if p.series != nil {
		*p.series = append(*p.series, v)
	}
	if v > p.max {
		p.max, p.maxStep = v, p.step
	}
	p.ssq, p.inv, p.smax, p.inf, p.pos, p.nan = 0, 0, 0, false, 0, false
	p.step++
}

// result turns the accumulated pair into a pairResult; fast says which
// path accumulated it.
func (p *acc) result(nsteps, rowLen int, fast bool) pairResult {
	pr := pairResult{max: p.max, maxStep: p.maxStep, steps: nsteps}
	if fast {
		// Each step's norm is its largest |a − b|: the maximum over steps
		// is the element-wise maximum, in the step that holds it.
		pr.max, pr.maxStep = p.maxAbs, -1
		if p.absAt >= 0 {
			pr.maxStep = p.absAt / rowLen
		}
		if p.firstNaN >= 0 {
			// A NaN on one side makes the norm NaN.
			pr.max, pr.maxStep = math.NaN(), p.firstNaN/rowLen
		}
	} else if p.nanStep >= 0 {
		pr.max, pr.maxStep = math.NaN(), p.nanStep
	}
	if pr.max == 0 {
		pr.maxStep = -1
	}
	rel := p.maxRel
	if !p.nzb && p.absAt >= 0 {
		// Every b is 0 (or NaN on both sides) and some element differs:
		// NumPy reports an infinite relative difference.
		rel = math.Inf(1)
	}
	pr.el = elementStats{n: p.idx, maxAbs: p.maxAbs, maxRel: rel, absAt: p.absAt, relAt: p.relAt,
		mismatched: p.mismatched, nanBoth: p.nanBoth}
	return pr
}

// groupStream compares the pairs of runs in group (all of one shape) that
// want accepts (nil: every pair), streaming their members in lockstep as
// T, and returns the results indexed by the pair's positions in srcs.
//
// It checks ctx between chunks; once ctx is done every pair of the group
// gets NaN and a warning that the comparison stopped.
//
// unsigned, when non-nil, says which members' integer elements are uint64
// bits.
func groupStream[T elem](ctx context.Context, srcs []source[T], names, paths []string, shape []int, norm Norm,
	bound *Closeness, want func(a, b int) bool, unsigned []bool, add func(p *acc, a, b []T, rowLen int, norm Norm, fast bool)) [][]pairResult {
	nsteps, rowLen := steps(shape)
	total := nsteps * rowLen
	type pairAcc struct {
		i, j int
		acc
	}
	var pairs []*pairAcc
	for a := range srcs {
		for b := a + 1; b < len(srcs); b++ {
			if want != nil && !want(a, b) {
				continue
			}
			pa := &pairAcc{i: a, j: b, acc: newAcc()}
			if unsigned != nil {
				pa.ua, pa.ub = unsigned[a], unsigned[b]
			}
			if bound != nil {
				pa.elementwise, pa.bounded, pa.rtol, pa.atol = true, true, bound.RTol, bound.ATol
			}
			pairs = append(pairs, pa)
		}
	}
	failed := make([]string, len(srcs))
	bufs := make([][]T, len(srcs))
	fast := norm == LInf || rowLen == 1
	var stopped error
	for seen := 0; seen < total; {
		if stopped = ctx.Err(); stopped != nil {
			break
		}
		n := -1
		for g, src := range srcs {
			if failed[g] != "" {
				continue
			}
			buf, err := src.next()
			if err == nil && len(buf) == 0 {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				failed[g] = fmt.Sprintf("%s: reading %s: %v", names[g], paths[g], err)
				continue
			}
			bufs[g] = buf
			if n < 0 || len(buf) < n {
				n = len(buf)
			}
		}
		if n < 0 {
			break // every member failed
		}
		for _, p := range pairs {
			if failed[p.i] == "" && failed[p.j] == "" {
				add(&p.acc, bufs[p.i][:n], bufs[p.j][:n], rowLen, norm, fast)
			}
		}
		for g, src := range srcs {
			if failed[g] == "" {
				src.release(bufs[g])
			}
		}
		seen += n
	}
	// Reading past the end verifies each member's checksum and length.
	for g, src := range srcs {
		if failed[g] != "" || stopped != nil {
			continue
		}
		if _, err := src.next(); err != io.EOF {
			if err == nil {
				err = fmt.Errorf("more data than shape %v", shape)
			}
			failed[g] = fmt.Sprintf("%s: reading %s: %v", names[g], paths[g], err)
		}
	}
	res := make([][]pairResult, len(srcs))
	for i := range res {
		res[i] = make([]pairResult, len(srcs))
	}
	for _, p := range pairs {
		pr := p.result(nsteps, rowLen, fast)
		switch {
		case stopped != nil:
			pr = pairResult{max: math.NaN(), maxStep: -1, steps: nsteps,
				warn: joinWarn(joinWarn(failed[p.i], failed[p.j]), stoppedWarning(stopped))}
		case failed[p.i] != "" || failed[p.j] != "":
			pr = pairResult{max: math.NaN(), maxStep: -1, steps: nsteps, warn: joinWarn(failed[p.i], failed[p.j])}
		case total == 0:
			// Equal shapes without elements agree, as assert_allclose
			// has it; the note says nothing was compared.
			pr.max, pr.maxStep = 0, -1
			pr.note = fmt.Sprintf("no elements (shape %v): nothing to compare", shape)
		case math.IsNaN(pr.max):
			pr.warn = nanWarning
		}
		res[p.i][p.j] = pr
	}
	return res
}

func addFloats(p *acc, a, b []float64, rowLen int, norm Norm, fast bool) {
	if fast {
		p.addFast(a, b)
	} else {
		p.add(a, b, rowLen, norm)
	}
}

func addInts(p *acc, a, b []int64, rowLen int, norm Norm, fast bool) {
	if fast {
		p.addFastInt(a, b)
	} else {
		p.addInt(a, b, rowLen, norm)
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
	if r.run != nil {
		return r.run.Path
	}
	return r.Path
}
