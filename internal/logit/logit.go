// Package logit is the L2 logistic regression solver behind
// stats.LogisticRegression (documented there), with one thing stats does
// not offer: the probabilities of the solver's last pass over the data,
// which package overlap takes as its propensities instead of computing
// them again.
package logit

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/par"
	"github.com/crosscluster/crosscluster/internal/staterr"
	"github.com/crosscluster/crosscluster/internal/vmath"
)

// Config is stats.LogisticConfig (fields documented there), with
// ClassWeightBalanced as Balanced, and Finite: the caller has checked that
// every value of X is finite, so Fit does not scan X for NaN and ±Inf
// (a pass over the data).
//
// Center and Scale, when not nil (one per column, Scale positive), make Fit
// solve the problem on the standardised columns (x_j − Center[j]) /
// Scale[j] of a column-major X, computed block by block as the passes
// read them (the same bits as a standardised copy would hold), so that the
// caller need not keep that copy: on a million rows it is as much memory
// as X, whose first touch costs more than the divisions. Finite then says
// that the standardised values are finite too. Coefficients and
// probabilities are those of the standardised problem.
//
// Sample, when not nil, holds the raw values of the rows 0, k, 2k, … (k =
// SampleStride(rows of X), column-major: p columns of ⌈rows/k⌉ values)
// that the warm start would otherwise gather from X with strided reads,
// from a caller that met those rows anyway (overlap copies X block by
// block). Fit takes it only with Center and Scale, and standardises it in
// place. The result is the same as without it.
type Config struct {
	C, Tol                        float64
	SampleWeight                  []float64
	Balanced, NoIntercept, Finite bool
	MaxIter                       int
	Center, Scale                 []float64
	Sample                        []float64
	// Scratch, when not nil, lends Fit the buffers that grow with the
	// rows (the labels as bytes, the warm start's subsamples) and keeps
	// them for the next call; results are the same bit for bit.
	Scratch *Scratch
}

// Scratch keeps Fit's row-sized buffers from one call to the next, so that
// a caller fitting in a loop does not take fresh memory each time. Every
// buffer is overwritten before it is read. A Scratch is not safe for
// concurrent use.
type Scratch struct {
	lab  []uint8
	warm []warmScratch // one per level of the warm start's recursion
}

// warmScratch holds one level's buffers: the rows of the warm-start
// subsample the level's problem draws (level d holds the subsample of the
// problem at depth d), and the block memory of that problem's passes.
type warmScratch struct {
	y        []int
	lab      []uint8
	w, cx, x []float64
	blocks   []*logisticScratch // per worker
}

// level returns the buffers of warm-start level d.
func (s *Scratch) level(d int) *warmScratch {
	for len(s.warm) <= d {
		s.warm = append(s.warm, warmScratch{})
	}
	return &s.warm[d]
}

// grow returns (*p)[:n:c], reallocating *p when its capacity is under c;
// with p nil it allocates.
func grow[T any](p *[]T, n, c int) []T {
	if p == nil {
		return make([]T, n, c)
	}
	if cap(*p) < c {
		*p = make([]T, c)
	}
	return (*p)[:n:c]
}

// SampleStride returns the stride k of the rows Config.Sample holds for a
// problem of n rows, or 0 when Fit takes no Sample for n rows (the warm
// start then needs no subsample, or adds tail rows to it).
func SampleStride(n int) int {
	if k := n / logisticWarmRows; k > logisticWarmOutlierMaxK {
		return k
	}
	return 0
}

// Result is stats.LogisticResult (fields documented there), which
// converts to and from it.
type Result struct {
	Coef                 []float64
	Intercept            float64
	Iterations           int
	GradNorm             float64
	Converged, Separable bool
	Note                 string
}

const (
	logisticDefaultMaxIter = 100
	logisticDefaultTol     = 1e-12
	// logisticStepTol: a Newton step this small relative to the
	// coefficients means they are that close to the optimum, far within
	// the 1e-8 accuracy target.
	logisticStepTol = 1e-10
	// logisticChunk rows form one unit of parallel work; partial sums are
	// reduced in chunk order, so results do not depend on scheduling.
	logisticChunk = 4096
	// logisticSmallRows: problems with fewer rows (such as the warm
	// start's innermost subsample) are processed in chunks of
	// logisticBlock rows instead, so that they still spread over the
	// cores; the chunk size depends on the row count only.
	logisticSmallRows = 8 * logisticChunk
	// logisticSetupChunk rows form one unit of parallel work when the
	// labels and weights are checked.
	logisticSetupChunk = 1 << 16
	// logisticMaxHalvings bounds the step-halving line search.
	logisticMaxHalvings = 60
)

// Fit is stats.LogisticRegression (documented there: the objective,
// Newton's method, the warm start, the layouts of X), and in addition
// writes the probabilities into proba.
//
// proba, when not nil, must have one element per row of X; it receives
// P(y=1|x) at the returned coefficients, exactly as PredictProba computes
// them. The solver's last pass over the data evaluates them anyway (it is
// at the returned coefficients unless a line search failed), so this
// usually costs no extra pass.
//
// y must hold 0 or 1. Fit returns an error wrapping staterr.ErrEmpty for zero
// rows, staterr.ErrOneClass when only one class has positive weight,
// staterr.ErrNaN for NaN/Inf in X (naming row and column) and
// staterr.ErrWeight for a bad weight; a y value other than 0 or 1 is an error
// naming the row. The messages have no package prefix. Separable data
// terminate with Separable set and a Note. It panics if len(y),
// len(cfg.SampleWeight) or len(proba) differs from the number of rows, or
// if C is negative, NaN or infinite.
func Fit(X mat.Matrix, y []int, cfg Config, proba []float64) (*Result, error) {
	f, err := newLogisticProblem(X, y, cfg)
	if err != nil {
		return nil, err
	}
	maxIter := cfg.MaxIter
	if maxIter <= 0 {
		maxIter = logisticDefaultMaxIter
	}
	tol := cfg.Tol
	if tol <= 0 {
		tol = logisticDefaultTol
	}
	if proba != nil && len(proba) != len(y) {
		panic("logit: len(proba) differs from rows of X")
	}
	start := f.warmStart() // from subsamples, which have no proba
	f.proba = proba
	res, probaAt := f.solve(start, maxIter, tol)
	if proba != nil && !probaAt {
		if f.center != nil {
			res.probaCols(proba, f.cx, f.cstride, f.center, f.scale)
		} else {
			res.PredictProba(proba, X)
		}
	}
	return res, nil
}

// newLogisticProblem validates the inputs and folds C, sample and class
// weights into one weight per row.
func newLogisticProblem(X mat.Matrix, y []int, cfg Config) (*logisticProblem, error) {
	r, p := X.Dims()
	if len(y) != r {
		panic("logit: len(y) differs from rows of X")
	}
	if cfg.SampleWeight != nil && len(cfg.SampleWeight) != r {
		panic("logit: len(SampleWeight) differs from rows of X")
	}
	if (cfg.Center == nil) != (cfg.Scale == nil) || cfg.Center != nil && (len(cfg.Center) != p || len(cfg.Scale) != p) {
		panic("logit: Center and Scale need one value per column")
	}
	if cfg.Center != nil {
		if _, _, ok := ColMajor(X); !ok {
			panic("logit: Center and Scale need column-major X")
		}
	}
	if cfg.Sample != nil {
		k := SampleStride(r)
		if k == 0 || cfg.Center == nil || len(cfg.Sample) != p*((r+k-1)/k) {
			panic("logit: Sample needs Center and Scale and p·⌈rows/SampleStride⌉ values")
		}
	}
	if cfg.C < 0 || math.IsNaN(cfg.C) || math.IsInf(cfg.C, 1) {
		panic("logit: C negative, NaN or infinite")
	}
	if r == 0 {
		return nil, fmt.Errorf("no rows: %w", staterr.ErrEmpty)
	}
	C := cfg.C
	if C == 0 {
		C = 1
	}
	// The labels and weights are checked and the weights filled in
	// chunks on all cores; each chunk records its first bad row, so the
	// error names the first one overall, as a serial loop would.
	nChunks := (r + logisticSetupChunk - 1) / logisticSetupChunk
	type chunkSums struct {
		nc  [2]int
		wc  [2]float64
		bad int // first bad row in the chunk, or -1
	}
	sums := make([]chunkSums, nChunks)
	var labBuf *[]uint8
	if cfg.Scratch != nil {
		labBuf = &cfg.Scratch.lab
	}
	lab := grow(labBuf, r, r)
	par.For(nChunks, 0, func(_, c int) {
		s := &sums[c]
		s.bad = -1
		for i := c * logisticSetupChunk; i < min((c+1)*logisticSetupChunk, r); i++ {
			v := y[i]
			if v != 0 && v != 1 {
				s.bad = i
				return
			}
			s.nc[v]++
			lab[i] = uint8(v)
		}
	})
	var nc [2]int
	for _, s := range sums {
		if s.bad >= 0 {
			return nil, fmt.Errorf("y[%d] = %d, want 0 or 1", s.bad, y[s.bad])
		}
		nc[0] += s.nc[0]
		nc[1] += s.nc[1]
	}
	if nc[0] == 0 || nc[1] == 0 {
		return nil, fmt.Errorf("%d rows of class 0 and %d of class 1: %w", nc[0], nc[1], staterr.ErrOneClass)
	}
	// Per-row weights, with C folded in: without sample weights, one per
	// class (the same products as per row), which spares the passes
	// reading a weight per row.
	cw := [2]float64{1, 1}
	if cfg.Balanced {
		cw[0] = float64(r) / (2 * float64(nc[0]))
		cw[1] = float64(r) / (2 * float64(nc[1]))
	}
	f := &logisticProblem{p: p, y: y, lab: lab, intercept: !cfg.NoIntercept, scratch: cfg.Scratch}
	if cfg.SampleWeight == nil {
		const sw = 1.0
		f.wClass = [2]float64{C * sw * cw[0], C * sw * cw[1]}
		if f.wClass[0] == 0 || f.wClass[1] == 0 {
			return nil, fmt.Errorf("a class has zero total weight: %w", staterr.ErrOneClass)
		}
		return f.setX(X, r, p, cfg.Finite, cfg.Center, cfg.Scale, cfg.Sample)
	}
	w := make([]float64, r)
	f.w = w
	par.For(nChunks, 0, func(_, c int) {
		s := &sums[c]
		for i := c * logisticSetupChunk; i < min((c+1)*logisticSetupChunk, r); i++ {
			sw := 1.0
			if cfg.SampleWeight != nil {
				sw = cfg.SampleWeight[i]
				if !(sw >= 0) || math.IsInf(sw, 1) {
					s.bad = i
					return
				}
			}
			w[i] = C * sw * cw[y[i]]
			s.wc[y[i]] += w[i]
		}
	})
	// The class totals are only tested for zero, which does not depend
	// on the order of the (non-negative) terms.
	var wc [2]float64
	for _, s := range sums {
		if s.bad >= 0 {
			sw := cfg.SampleWeight[s.bad]
			return nil, fmt.Errorf("sample weight %d is %v: %w", s.bad, sw, staterr.ErrWeight)
		}
		wc[0] += s.wc[0]
		wc[1] += s.wc[1]
	}
	if wc[0] == 0 || wc[1] == 0 {
		return nil, fmt.Errorf("a class has zero total weight: %w", staterr.ErrOneClass)
	}
	return f.setX(X, r, p, cfg.Finite, cfg.Center, cfg.Scale, cfg.Sample)
}

// setX points f at X's data (r rows, p columns) and checks that every
// value is finite, unless finite says the caller has.
func (f *logisticProblem) setX(X mat.Matrix, r, p int, finite bool, center, scale, sample []float64) (*logisticProblem, error) {
	if data, stride, ok := ColMajor(X); ok {
		f.cx, f.cstride = data, stride
		f.center, f.scale, f.sample = center, scale, sample
		if finite {
			return f, nil
		}
		// Report the first non-finite value in row order, as for rows.
		first := make([]int, p)
		par.For(p, 0, func(_, j int) {
			first[j] = -1
			col := data[j*stride : j*stride+r]
			// Blocks are tested without a branch per value (a non-finite
			// value has all exponent bits set, so adding one to the
			// exponent field carries into the top bit); only a block
			// that fails is searched for its first bad value.
			const expMask, block = 0x7ff << 52, 1024
			for b := 0; b < r; b += block {
				blk := col[b:min(b+block, r)]
				var bad uint64
				for _, v := range blk {
					bad |= math.Float64bits(v)&expMask + 1<<52
				}
				if bad>>63 == 0 {
					continue
				}
				for i, v := range blk {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						first[j] = b + i
						return
					}
				}
			}
		})
		bi, bj := -1, -1
		for j, i := range first {
			if i >= 0 && (bi < 0 || i < bi) {
				bi, bj = i, j
			}
		}
		if bi >= 0 {
			return nil, fmt.Errorf("row %d, column %d of X is %v: %w", bi, bj, data[bj*stride+bi], staterr.ErrNaN)
		}
		return f, nil
	}
	f.x, f.stride = denseRows(X)
	if finite {
		return f, nil
	}
	for i := 0; i < r; i++ {
		for j, v := range f.x[i*f.stride : i*f.stride+p] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("row %d, column %d of X is %v: %w", i, j, v, staterr.ErrNaN)
			}
		}
	}
	return f, nil
}

// denseRows returns X's rows as a row-major slice, without copying for
// *mat.Dense.
func denseRows(X mat.Matrix) ([]float64, int) {
	if d, ok := X.(mat.RawMatrixer); ok {
		raw := d.RawMatrix()
		return raw.Data, raw.Stride
	}
	r, c := X.Dims()
	out := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[i*c+j] = X.At(i, j)
		}
	}
	return out, c
}

// logisticProblem holds the rows either row-major (x, stride: row i is
// x[i*stride:][:p]) or column-major (cx, cstride: column j is
// cx[j*cstride:][:n], when X is the transpose of a raw matrix).
type logisticProblem struct {
	x         []float64
	stride, p int
	cx        []float64
	cstride   int
	// center and scale, when not nil, standardise cx's columns as the
	// blocks are read (Config.Center); sample is Config.Sample.
	center, scale, sample []float64
	y                     []int
	lab                   []uint8 // y as bytes, which the passes read
	// w holds per-row weights, or is nil when the weight depends on the
	// class only: wClass[label].
	w         []float64
	wClass    [2]float64
	intercept bool
	// proba, when not nil, receives σ(η) of every row at each point
	// evaluated with the gradient only (only the caller's full problem
	// has it): the solver's last pass is such a pass but when a Newton
	// step with the Hessian already lands within the tolerance, and
	// writing 8 bytes a row in the passes before would only add memory
	// traffic.
	proba []float64
	// scratch, when not nil, lends the warm start its subsamples' buffers
	// (Config.Scratch); depth is this problem's level in the warm start's
	// recursion (0 for the caller's problem).
	scratch *Scratch
	depth   int
}

// weight returns row i's weight.
func (f *logisticProblem) weight(i int) float64 {
	if f.w != nil {
		return f.w[i]
	}
	return f.wClass[f.lab[i]]
}

// q is the number of parameters.
func (f *logisticProblem) q() int {
	if f.intercept {
		return f.p + 1
	}
	return f.p
}

// eval holds the objective (when asked for), or the gradient and, when
// asked for, the packed upper Hessian, at one point.
type logisticEval struct {
	obj  float64
	grad []float64
	hess []float64 // packed upper triangle, row-major; nil when not computed
	// separated: every weighted row is on its class's side with margin > 0.
	separated bool
}

// What evaluateMode computes at a point.
const (
	evalObj      = iota // objective only
	evalGrad            // gradient only
	evalGradHess        // gradient and Hessian
)

// evaluate computes the gradient and Hessian at beta (intercept last) when
// withDerivs, and otherwise the objective.
func (f *logisticProblem) evaluate(beta []float64, withDerivs bool) logisticEval {
	if withDerivs {
		return f.evaluateMode(beta, evalGradHess)
	}
	return f.evaluateMode(beta, evalObj)
}

// evaluateMode computes the objective, the gradient, or the gradient and
// Hessian at beta. The solver never needs the objective, which saves a
// logarithm per row; the Hessian (most of the arithmetic per row) only
// while steps are large (see solve).
func (f *logisticProblem) evaluateMode(beta []float64, mode int) logisticEval {
	e, _ := f.evaluateModeG0(beta, mode, false)
	return e
}

// evaluateModeG0 is evaluateMode, and when withG0 it also returns
// the gradient at β = 0 (see gradAtZeroChunk), computed in the same pass over the data (with the
// same sums in the same order, so it is identical).
func (f *logisticProblem) evaluateModeG0(beta []float64, mode int, withG0 bool) (logisticEval, []float64) {
	q := f.q()
	nh := 0
	if mode == evalGradHess {
		nh = q * (q + 1) / 2
	}
	width := 2 + q + nh // obj, separated flag, grad, hess
	extra := 0
	if withG0 {
		extra = q // then the gradient at zero
	}
	f.blockScratches(runtime.GOMAXPROCS(0))
	partial := f.parallelChunks(width+extra, func(w int) func(acc []float64, lo, hi int) {
		sc := f.blockScratch(w)
		var g0 func(acc []float64, lo, hi int, cols [][]float64)
		if withG0 {
			g0 = f.gradAtZeroChunk()
		}
		return func(acc []float64, lo, hi int) {
			for b := lo; b < hi; b += logisticBlock {
				e := min(b+logisticBlock, hi)
				f.block(acc[:width], sc, beta, b, e, mode)
				if withG0 {
					g0(acc[width:], b, e, sc.cols)
				}
			}
		}
	})
	var g0 []float64
	if withG0 {
		g0 = make([]float64, q)
		for c := 0; c < len(partial)/(width+extra); c++ {
			for k, v := range partial[c*(width+extra)+width : (c+1)*(width+extra)] {
				g0[k] += v
			}
		}
	}
	e := f.reduceEval(partial, width, extra, q, nh, beta)
	return e, g0
}

// reduceEval sums the chunks' partial results (each width+extra long, the
// last extra not evaluateMode's) in chunk order and adds the penalty.
func (f *logisticProblem) reduceEval(partial []float64, width, extra, q, nh int, beta []float64) logisticEval {
	e := logisticEval{grad: make([]float64, q), separated: true}
	if nh > 0 {
		e.hess = make([]float64, nh)
	}
	for c := 0; c < len(partial)/(width+extra); c++ {
		out := partial[c*(width+extra) : c*(width+extra)+width]
		e.obj += out[0]
		if out[1] != 0 {
			e.separated = false
		}
		for k := range e.grad {
			e.grad[k] += out[2+k]
		}
		for k := range e.hess {
			e.hess[k] += out[2+q+k]
		}
	}
	// Penalty ½‖β‖² on the coefficients only.
	k := 0
	for a := 0; a < q; a++ {
		if a < f.p {
			e.obj += 0.5 * beta[a] * beta[a]
			e.grad[a] += beta[a]
			if e.hess != nil {
				e.hess[k] += 1
			}
		}
		k += q - a
	}
	return e
}

// parallelChunks runs the rows in chunks of logisticChunk (logisticBlock
// below logisticSmallRows rows) on up to
// GOMAXPROCS goroutines, each with its own function from mk (so that it can
// keep scratch memory); the function adds chunk [lo, hi)'s sums into acc
// (zeroed, of length width). It returns the chunks' sums one after another,
// so the caller reduces them in chunk order and results do not depend on
// scheduling.
func (f *logisticProblem) parallelChunks(width int, mk func(w int) func(acc []float64, lo, hi int)) []float64 {
	rows := len(f.y)
	chunk := logisticChunk
	if rows < logisticSmallRows {
		chunk = logisticBlock
	}
	nChunks := (rows + chunk - 1) / chunk
	partial := make([]float64, nChunks*width)
	workers := min(runtime.GOMAXPROCS(0), nChunks)
	run := func(w int, next *atomic.Int64) {
		fn := mk(w)
		// Accumulate in a goroutine-local buffer so that neighbouring
		// chunks' partial sums never share a cache line while being written.
		acc := make([]float64, width)
		for {
			c := int(next.Add(1) - 1)
			if c >= nChunks {
				return
			}
			clear(acc)
			fn(acc, c*chunk, min((c+1)*chunk, rows))
			copy(partial[c*width:(c+1)*width], acc)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w, &next)
		}()
	}
	run(0, &next)
	wg.Wait()
	return partial
}

// logisticBlock rows are processed column by column: per-row values go
// through short vectors that stay in the first-level cache, and the sums
// over rows are dot products (internal/vmath's AVX2 kernels) instead of a
// dependency chain per row.
const logisticBlock = 512

// logisticScratch is one goroutine's block memory.
type logisticScratch struct {
	cols         [][]float64 // the block's columns, gathered from rows
	eta, g, h, u []float64
	// p and owned say for which problems cols was made: p columns, held
	// in cols's own memory (owned) or viewing the problem's (see
	// blockCols); a problem of another kind starts afresh.
	p     int
	owned bool
}

// blockScratches makes room in f.scratch for the block memory of n
// workers; it runs before the workers start, which then only read the
// slice (blockScratch).
func (f *logisticProblem) blockScratches(n int) {
	if f.scratch == nil {
		return
	}
	ws := f.scratch.level(f.depth)
	for len(ws.blocks) < n {
		ws.blocks = append(ws.blocks, new(logisticScratch))
	}
}

// blockScratch returns worker w's block memory: fresh, or kept in
// f.scratch for this level of the warm start (Config.Scratch, made room
// for by blockScratches), reset when it was made for a problem of another
// kind.
func (f *logisticProblem) blockScratch(w int) *logisticScratch {
	owned := f.cx == nil || f.center != nil
	if f.scratch == nil || w >= len(f.scratch.warm[f.depth].blocks) { // GOMAXPROCS grew meanwhile
		return &logisticScratch{p: f.p, owned: owned}
	}
	sc := f.scratch.warm[f.depth].blocks[w]
	if sc.p != f.p || sc.owned != owned {
		*sc = logisticScratch{p: f.p, owned: owned}
	}
	return sc
}

// blockCols returns the columns of rows [lo, hi): views of column-major
// data, or copies of row-major rows in sc.
func (f *logisticProblem) blockCols(sc *logisticScratch, lo, hi int) [][]float64 {
	p, m := f.p, hi-lo
	if sc.cols == nil {
		sc.cols = make([][]float64, p)
		if f.cx == nil || f.center != nil {
			buf := make([]float64, p*logisticBlock)
			for j := range sc.cols {
				sc.cols[j] = buf[j*logisticBlock : (j+1)*logisticBlock]
			}
		}
	}
	if f.cx != nil {
		// The next block's rows, asked for now so that memory delivers
		// them while this block computes.
		ahead := min(hi+m, len(f.y))
		for j := range sc.cols {
			col := f.cx[j*f.cstride : j*f.cstride+len(f.y)]
			vmath.Prefetch(col[hi:ahead])
			if f.center == nil {
				sc.cols[j] = col[lo:hi]
				continue
			}
			sc.cols[j] = sc.cols[j][:m]
			vmath.Standardize(sc.cols[j], col[lo:hi], f.center[j], f.scale[j])
		}
		return sc.cols
	}
	for j := range sc.cols {
		sc.cols[j] = sc.cols[j][:m]
	}
	for i := range m {
		row := f.x[(lo+i)*f.stride : (lo+i)*f.stride+p]
		for j, v := range row {
			sc.cols[j][i] = v
		}
	}
	return sc.cols
}

// block accumulates rows [lo, hi) into out = [obj, notSeparated, grad…, hess…]
// (grad for evalGrad and evalGradHess, hess for the latter only). The
// packed Hessian is laid out for β = (coef…, intercept): the intercept's
// row and column come last.
func (f *logisticProblem) block(out []float64, sc *logisticScratch, beta []float64, lo, hi int, mode int) {
	q, p, m := f.q(), f.p, hi-lo
	if sc.eta == nil {
		buf := make([]float64, 4*logisticBlock)
		sc.eta, sc.g, sc.h, sc.u = buf[:logisticBlock], buf[logisticBlock:2*logisticBlock],
			buf[2*logisticBlock:3*logisticBlock], buf[3*logisticBlock:]
	}
	cols := f.blockCols(sc, lo, hi)
	eta, g, h, u := sc.eta[:m], sc.g[:m], sc.h[:m], sc.u[:m]
	icpt := 0.0
	if f.intercept {
		icpt = beta[p]
	}
	for i := range eta {
		eta[i] = icpt
	}
	for j, c := range cols {
		vmath.Axpy(beta[j], c, eta)
	}
	lab := f.lab[lo:hi]
	lab = lab[:m]
	var w []float64
	if f.w != nil {
		w = f.w[lo:hi]
		w = w[:m]
	}
	wClass := f.wClass
	var obj float64
	// Rows on the wrong side of the boundary (or on it), counted without
	// a branch: on overlapping domains they come in no predictable order.
	var wrongSide int
	if mode == evalObj {
		for i, et := range eta {
			li := lab[i] & 1
			wi := wClass[li]
			if w != nil {
				wi = w[i]
			}
			if wi == 0 {
				continue
			}
			yi := float64(li)
			if (2*yi-1)*et <= 0 {
				wrongSide = 1
			}
			// log(1+exp(η)) stably, with one exponential.
			sp := math.Log1p(math.Exp(-math.Abs(et)))
			if et > 0 {
				sp += et
			}
			obj += wi * (sp - yi*et)
		}
	} else {
		// σ(η) for the whole block, four rows at a time (internal/vmath;
		// within a few ulps relative), into the caller's Proba if asked
		// for: η accumulates as in probaCols, so they are PredictProba's.
		mu := u
		if f.proba != nil && mode == evalGrad {
			mu = f.proba[lo:hi]
		}
		copy(mu, eta)
		vmath.Sigmoid(mu)
		if rowTerms(g, h, eta, mu, lab, w, wClass) {
			wrongSide = 1
		}
	}
	out[0] += obj
	if wrongSide != 0 {
		out[1] = 1
	}
	if mode == evalObj {
		return
	}
	grad := out[2 : 2+q]
	for j, c := range cols {
		grad[j] += vmath.Dot(g, c)
	}
	if f.intercept {
		grad[p] += floats.Sum(g)
	}
	if mode != evalGradHess {
		return
	}
	hess := out[2+q:]
	k := 0
	for a, ca := range cols {
		vmath.Mul(u, h, ca)
		for _, cb := range cols[a:] {
			hess[k] += vmath.Dot(u, cb)
			k++
		}
		if f.intercept {
			hess[k] += floats.Sum(u)
			k++
		}
	}
	if f.intercept {
		hess[k] += floats.Sum(h)
	}
}

func norm2(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func normInf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// newtonStep solves H·d = g by Cholesky, adding a growing ridge when H is
// not numerically positive definite (saturated rows on separable data).
func newtonStep(hess, grad []float64, q int) []float64 {
	sym := mat.NewSymDense(q, nil)
	k := 0
	for a := 0; a < q; a++ {
		for b := a; b < q; b++ {
			sym.SetSym(a, b, hess[k])
			k++
		}
	}
	var ch mat.Cholesky
	d := mat.NewVecDense(q, nil)
	g := mat.NewVecDense(q, grad)
	ridge := 0.0
	scale := 0.0
	for a := 0; a < q; a++ {
		scale = math.Max(scale, sym.At(a, a))
	}
	for try := 0; try < 20; try++ {
		m := sym
		if ridge > 0 {
			m = mat.NewSymDense(q, nil)
			m.CopySym(sym)
			for a := 0; a < q; a++ {
				m.SetSym(a, a, m.At(a, a)+ridge)
			}
		}
		if ch.Factorize(m) {
			if err := ch.SolveVecTo(d, g); err == nil {
				return d.RawVector().Data
			}
		}
		if ridge == 0 {
			ridge = math.Max(scale, 1) * 1e-12
		} else {
			ridge *= 100
		}
	}
	// Fall back to a gradient step.
	out := make([]float64, q)
	copy(out, grad)
	return out
}

// logisticWarmRows: above twice this many rows, Newton starts from the
// optimum of a deterministic every-k-th-row subsample (weights scaled by k),
// which leaves two or three full-data iterations instead of five or six.
const logisticWarmRows = 32768

// logisticWarmTol is the relative gradient tolerance of the subsample fit:
// the subsample optimum differs from the full one by sampling noise
// (about 2% of the gradient scale on heavy-tailed job features), so
// solving it more precisely buys nothing.
const logisticWarmTol = 1e-3

// logisticWarmMin: each subsample of at least 8× this many rows starts
// from the optimum of a subsample an eighth its size, recursively, which
// leaves it two or three iterations instead of ten (on overlap's 2e5-job
// benchmark: 536 rows take ten cheap iterations, then 4242 rows two and
// 33510 one, instead of ten at 4242 rows).
const logisticWarmMin = 512

// logisticChordStep: once a Newton step is this small relative to the
// coefficients, the next point is evaluated without its Hessian and the
// next step reuses the current one. The Hessian then differs from the
// exact one by O(step), so each such step still shrinks the error by that
// factor (≤ 1e-4), while the Hessian is most of the arithmetic of a pass.
const logisticChordStep = 1e-4

// warmStart returns the starting coefficients: zeros (scikit-learn's
// start), or the subsample optimum for large problems.
func (f *logisticProblem) warmStart() []float64 {
	return f.warmStartRows(logisticWarmRows)
}

// warmStartRows is warmStart with a subsample of about rows rows (every
// k-th row with k = n/rows ≥ 2).
func (f *logisticProblem) warmStartRows(rows int) []float64 {
	q := f.q()
	n := len(f.y)
	k := n / rows
	if k < 2 {
		return make([]float64, q)
	}
	m := (n + k - 1) / k
	// Room for the tail rows withOutliers adds, so that they need no copy
	// of the subsample (whose fresh pages cost more than its arithmetic).
	spare := 0
	if k <= logisticWarmOutlierMaxK {
		spare = m / 4
	}
	var ws warmScratch
	wsp := &ws
	if f.scratch != nil {
		wsp = f.scratch.level(f.depth)
	}
	sub := &logisticProblem{p: f.p, y: grow(&wsp.y, m, m+spare), lab: grow(&wsp.lab, m, m+spare),
		w: grow(&wsp.w, m, m+spare), intercept: f.intercept, scratch: f.scratch, depth: f.depth + 1}
	var wc [2]float64
	if f.cx != nil {
		// Column-major like f, each column (and the labels and weights)
		// gathered on its own goroutine: the strided reads miss the cache
		// at every row, and several streams hide the latency.
		// The top level's rows may have been handed over (Config.Sample).
		given := f.sample != nil && rows == logisticWarmRows && spare == 0
		sub.cx, sub.cstride = f.sample, m
		if !given {
			sub.cx, sub.cstride = grow(&wsp.cx, f.p*(m+spare), f.p*(m+spare)), m+spare
		}
		par.For(f.p+1, 0, func(_, j int) {
			if j == f.p {
				for r, i := 0, 0; i < n; r, i = r+1, i+k {
					wi := f.weight(i)
					sub.y[r], sub.lab[r] = f.y[i], f.lab[i]
					sub.w[r] = wi * float64(k)
					wc[f.y[i]] += wi
				}
				return
			}
			dst, col := sub.cx[j*sub.cstride:j*sub.cstride+m], f.cx[j*f.cstride:j*f.cstride+n]
			if !given {
				for r, i := 0, 0; i < n; r, i = r+1, i+k {
					dst[r] = col[i]
				}
			}
			if f.center != nil {
				vmath.Standardize(dst, dst, f.center[j], f.scale[j])
			}
		})
	} else {
		sub.x, sub.stride = grow(&wsp.x, 0, (m+spare)*f.p), f.p
		for r, i := 0, 0; i < n; r, i = r+1, i+k {
			sub.x = append(sub.x, f.x[i*f.stride:i*f.stride+f.p]...)
			wi := f.weight(i)
			sub.y[r], sub.lab[r] = f.y[i], f.lab[i]
			sub.w[r] = wi * float64(k)
			wc[f.y[i]] += wi
		}
	}
	if wc[0] == 0 || wc[1] == 0 {
		return make([]float64, q)
	}
	if k <= logisticWarmOutlierMaxK {
		sub = f.withOutliers(sub, k)
	}
	start := make([]float64, q)
	if rows/8 >= logisticWarmMin {
		start = sub.warmStartRows(rows / 8)
	}
	res, _ := sub.solve(start, logisticDefaultMaxIter, logisticWarmTol)
	beta := append(res.Coef, res.Intercept)
	if !f.intercept {
		beta = beta[:f.p]
	}
	for _, v := range beta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return make([]float64, q)
		}
	}
	return beta
}

// logisticWarmOutlier: when the warm-start grid is dense (every k-th row
// with k ≤ logisticWarmOutlierMaxK), the subsample also takes, at their own
// weight, the rows off the grid with a value more than this many of the
// subsample's standard deviations from its column mean. On heavy-tailed
// features these few rows move the optimum most, and grid sampling weighs
// each k times or not at all; taking them all keeps the subsample's
// objective an unbiased estimate of the full one with less variance, so the
// first full Newton step from its optimum is accepted at full length. On
// overlap's 2e5-job benchmark data (229 extra rows) the full fit takes
// two passes with the Hessian and two without instead of five and two
// (the first step is accepted, gradient norm 520 → 0.6, instead of
// 799 → 1133, rejected, → 323 at half length).
const logisticWarmOutlier = 12

// logisticWarmOutlierMaxK: on sparser grids the subsample's noise comes
// from the bulk of the rows, not the tails (on the 1e6-job benchmark data,
// k = 30, the extra rows leave the first step's gain unchanged), and the
// scan for tail rows, a pass over all the data, does not pay.
const logisticWarmOutlierMaxK = 8

// withOutliers extends sub, f's every-k-th rows with weights scaled by k,
// by f's other rows beyond logisticWarmOutlier standard deviations (see
// there) at their own weight, in row order after sub's rows, and returns
// it. Column-major rows go into the room after sub's columns when there is
// enough (see warmStartRows).
func (f *logisticProblem) withOutliers(sub *logisticProblem, k int) *logisticProblem {
	p, m, n := f.p, len(sub.y), len(f.y)
	mid, rad := make([]float64, p), make([]float64, p)
	var col []float64
	if sub.cx == nil {
		col = make([]float64, m)
	}
	for j := range p {
		if sub.cx != nil {
			col = sub.cx[j*sub.cstride : j*sub.cstride+m]
		} else {
			for i := range col {
				col[i] = sub.x[i*sub.stride+j]
			}
		}
		mean := floats.Sum(col) / float64(m)
		var ss float64
		for _, v := range col {
			ss += (v - mean) * (v - mean)
		}
		mid[j], rad[j] = mean, logisticWarmOutlier*math.Sqrt(ss/float64(m))
	}
	const chunk = 4 * logisticChunk
	nChunks := (n + chunk - 1) / chunk
	found := make([][]int, nChunks)
	par.For(nChunks, 0, func(_, c int) {
		a, b := c*chunk, min((c+1)*chunk, n)
		// Tail rows are rare: the branch is predicted, and the scan
		// only reads.
		out := make([]bool, b-a)
		for j := range p {
			mj, rj := mid[j], rad[j]
			if f.cx != nil {
				// The scan compares standardised values, as the subsample
				// holds them; without Center, (v-0)/1 is v exactly.
				cj, sj := 0.0, 1.0
				if f.center != nil {
					cj, sj = f.center[j], f.scale[j]
				}
				for i, v := range f.cx[j*f.cstride+a : j*f.cstride+b] {
					if math.Abs((v-cj)/sj-mj) > rj {
						out[i] = true
					}
				}
				continue
			}
			for i := range out {
				if math.Abs(f.x[(a+i)*f.stride+j]-mj) > rj {
					out[i] = true
				}
			}
		}
		for i, o := range out {
			if o && (a+i)%k != 0 && f.weight(a+i) != 0 {
				found[c] = append(found[c], a+i)
			}
		}
	})
	var extra []int
	for _, e := range found {
		extra = append(extra, e...)
	}
	if len(extra) == 0 {
		return sub
	}
	for _, i := range extra {
		sub.y, sub.lab, sub.w = append(sub.y, f.y[i]), append(sub.lab, f.lab[i]), append(sub.w, f.weight(i))
		if sub.cx == nil {
			sub.x = append(sub.x, f.x[i*f.stride:i*f.stride+p]...)
		}
	}
	if sub.cx == nil {
		return sub
	}
	m2 := m + len(extra)
	if m2 > sub.cstride {
		// No room after the grid rows (warmStartRows leaves some): copy.
		cx := make([]float64, p*m2)
		for j := range p {
			copy(cx[j*m2:j*m2+m], sub.cx[j*sub.cstride:j*sub.cstride+m])
		}
		sub.cx, sub.cstride = cx, m2
	}
	for j := range p {
		dst := sub.cx[j*sub.cstride+m : j*sub.cstride+m2]
		for r, i := range extra {
			dst[r] = f.cx[j*f.cstride+i]
		}
		if f.center != nil {
			vmath.Standardize(dst, dst, f.center[j], f.scale[j])
		}
	}
	return sub
}

// gradAtZeroChunk returns a function adding the gradient at β = 0 of rows
// [lo, hi) (at most logisticBlock) into acc, with its own buffer.
// Where every σ is ½ the gradient costs no exponentials; it scales the
// relative gradient tolerance.
//
// cols are the block's columns as f.block just read them (blockCols),
// which are not read or standardised a second time.
func (f *logisticProblem) gradAtZeroChunk() func(acc []float64, lo, hi int, cols [][]float64) {
	r := make([]float64, logisticBlock)
	// Without per-row weights a row's term depends on its class only.
	byClass := [2]float64{f.wClass[0] * 0.5, f.wClass[1] * -0.5}
	return func(acc []float64, b, e int, cols [][]float64) {
		rb := r[:e-b]
		if f.w == nil {
			lab := f.lab[b:e]
			lab = lab[:len(rb)]
			for i := range rb {
				rb[i] = byClass[lab[i]&1]
			}
		} else {
			for i := range rb {
				rb[i] = f.w[b+i] * (0.5 - float64(f.lab[b+i]))
			}
		}
		for j, c := range cols {
			acc[j] += vmath.Dot(rb, c)
		}
		if f.intercept {
			acc[f.p] += floats.Sum(rb)
		}
	}
}

// solve runs damped Newton from beta. Newton's direction d = H⁻¹∇ is a
// descent direction both for the (strictly convex) objective and for the
// merit function ‖∇‖², whose minimiser is the same optimum; the step-halving
// line search uses ‖∇‖² (Armijo condition), which needs no logarithms and
// keeps resolving progress where objective differences fall below rounding.
//
// Near the optimum (steps below logisticChordStep) the Hessian is not
// recomputed: the step reuses the last one (a chord step), and the point
// is evaluated for its gradient only, which also makes the final check of
// the stopping rule a gradient-only pass. A chord step that fails the line
// search at full length is retried with a fresh Hessian.
//
// It also reports whether f.proba holds the probabilities at the point
// returned: when that point was the last evaluated, by a gradient-only
// pass (see logisticProblem.proba); not when a line search gave up on its
// last candidate or the last pass had the Hessian.
func (f *logisticProblem) solve(beta []float64, maxIter int, tol float64) (*Result, bool) {
	q := f.q()
	// The gradient at zero scales the tolerance; it comes with the first
	// pass over the data.
	cur, g0 := f.evaluateModeG0(beta, evalGradHess, true)
	atBeta := true   // the last point evaluated is beta
	wrote := false   // the last pass wrote f.proba
	hess := cur.hess // the Hessian steps use: at beta when fresh
	fresh := true
	gScale := math.Max(1, norm2(g0))
	res := &Result{}
	cand := make([]float64, q)
	for {
		gn := norm2(cur.grad)
		if gn <= tol*gScale {
			res.Converged = true
			break
		}
		if res.Iterations >= maxIter {
			break
		}
		d := newtonStep(hess, cur.grad, q)
		res.Iterations++
		scale := 1 + normInf(beta)
		if normInf(d) <= logisticStepTol*scale {
			// The Newton step estimates the distance to the optimum (to
			// within the Hessian's staleness, ≤ logisticChordStep): beta
			// is already as close as asked, and its gradient is known.
			res.Converged = true
			break
		}
		mode := evalGrad
		if normInf(d) > logisticChordStep*scale {
			mode = evalGradHess
		}
		t := 1.0
		accepted := false
		var next logisticEval
		for h := 0; h < logisticMaxHalvings; h++ {
			for k := range cand {
				cand[k] = beta[k] - t*d[k]
			}
			next = f.evaluateMode(cand, mode)
			atBeta, wrote = false, mode == evalGrad
			if ng := norm2(next.grad); ng*ng <= (1-2e-4*t)*gn*gn {
				accepted = true
				break
			}
			if !fresh {
				break // retry from beta with a fresh Hessian
			}
			t /= 2
		}
		if !accepted && !fresh {
			cur = f.evaluateMode(beta, evalGradHess)
			hess, fresh, atBeta, wrote = cur.hess, true, true, false
			continue
		}
		if accepted {
			copy(beta, cand)
			atBeta = true
			cur = next
			if cur.hess != nil {
				hess = cur.hess
			}
			fresh = cur.hess != nil
		}
		if !accepted {
			// The gradient no longer decreases in floating point: the
			// optimum is reached to rounding if it is small.
			res.Converged = gn <= math.Sqrt(epsilon)*gScale
			if !res.Converged {
				res.Note = "line search failed to decrease the gradient norm"
			}
			break
		}
	}
	res.GradNorm = norm2(cur.grad)
	res.Coef = append([]float64(nil), beta[:f.p]...)
	if f.intercept {
		res.Intercept = beta[f.p]
	}
	if cur.separated {
		res.Separable = true
		res.Note = joinNote(res.Note, "training data are linearly separable: the finite optimum exists only through the L2 penalty and grows with C")
	}
	if !res.Converged && res.Note == "" {
		res.Note = fmt.Sprintf("stopped after MaxIter = %d Newton iterations", maxIter)
	}
	return res, atBeta && wrote
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// PredictProba writes P(y=1|x) for each row of X into dst and returns it;
// a nil dst is allocated. Raw and transposed raw matrices (column-major
// data, see LogisticRegression) are read directly, large ones on all
// cores. The sigmoid is internal/vmath's (AVX2 where available, within a
// few ulps of package math and the same function for every row, so rows
// with equal η get equal probabilities). It panics if X's column count
// differs from len(r.Coef) or dst's length from X's rows.
func (r *Result) PredictProba(dst []float64, X mat.Matrix) []float64 {
	n, c := X.Dims()
	if c != len(r.Coef) {
		panic("logit: PredictProba: column count mismatch")
	}
	if dst == nil {
		dst = make([]float64, n)
	} else if len(dst) != n {
		panic("logit: PredictProba: dst length mismatch")
	}
	if data, stride, ok := ColMajor(X); ok {
		r.probaCols(dst, data, stride, nil, nil)
		return dst
	}
	raw, ok := X.(mat.RawMatrixer)
	if !ok || n < 2*logisticChunk {
		at := Rows(X)
		for i := 0; i < n; i++ {
			dst[i] = r.eta(at(i))
		}
		vmath.Sigmoid(dst)
		return dst
	}
	// Rows are independent: share them out in chunks.
	m := raw.RawMatrix()
	nChunks := (n + logisticChunk - 1) / logisticChunk
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), nChunks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(1)-1) * logisticChunk
				if lo >= n {
					return
				}
				hi := min(lo+logisticChunk, n)
				for i := lo; i < hi; i++ {
					dst[i] = r.eta(m.Data[i*m.Stride : i*m.Stride+c])
				}
				vmath.Sigmoid(dst[lo:hi])
			}
		}()
	}
	wg.Wait()
	return dst
}

// probaCols is PredictProba for column-major data (column j is
// data[j*stride:][:len(dst)]), in blocks shared out among goroutines; η
// accumulates in the same order as for rows, so the results are identical.
// With center and scale (not nil) the columns are first standardised block
// by block, as the solver's passes standardise them (Config.Center), so
// the probabilities are the ones a standardised copy would give.
func (r *Result) probaCols(dst, data []float64, stride int, center, scale []float64) {
	n := len(dst)
	nBlocks := (n + logisticBlock - 1) / logisticBlock
	par.For(nBlocks, 0, func(_, b int) {
		lo, hi := b*logisticBlock, min((b+1)*logisticBlock, n)
		var z [logisticBlock]float64
		eta := dst[lo:hi]
		for i := range eta {
			eta[i] = r.Intercept
		}
		for j, c := range r.Coef {
			col := data[j*stride+lo : j*stride+hi]
			if center != nil {
				vmath.Standardize(z[:hi-lo], col, center[j], scale[j])
				col = z[:hi-lo]
			}
			vmath.Axpy(c, col, eta)
		}
		vmath.Sigmoid(eta)
	})
}

// eta returns row·Coef + Intercept, accumulated as probaCols and the
// solver do: fused multiply-adds in column order.
func (r *Result) eta(row []float64) float64 {
	eta := r.Intercept
	for j, v := range row {
		eta = math.FMA(r.Coef[j], v, eta)
	}
	return eta
}

// epsilon is the float64 machine epsilon, 2⁻⁵².
const epsilon = 0x1p-52

// ColMajor returns the storage of X when X is the transpose of a raw
// matrix, that is column-major data: column j of X is data[j*stride:].
// Callers holding columns pass them as m.T() of a features × rows
// *mat.Dense, without a copy.
func ColMajor(X mat.Matrix) (data []float64, stride int, ok bool) {
	t, ok := X.(mat.Untransposer)
	if !ok {
		return nil, 0, false
	}
	raw, ok := t.Untranspose().(mat.RawMatrixer)
	if !ok {
		return nil, 0, false
	}
	m := raw.RawMatrix()
	return m.Data, m.Stride, true
}

// Rows returns a function giving row i of X. For a raw matrix it returns
// views of the backing array; otherwise it copies into one buffer that is
// overwritten by the next call.
func Rows(X mat.Matrix) func(i int) []float64 {
	_, c := X.Dims()
	if d, ok := X.(mat.RawMatrixer); ok {
		raw := d.RawMatrix()
		return func(i int) []float64 { return raw.Data[i*raw.Stride : i*raw.Stride+c] }
	}
	buf := make([]float64, c)
	return func(i int) []float64 {
		for j := range buf {
			buf[j] = X.At(i, j)
		}
		return buf
	}
}
