package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// traceTestMatrix returns a random symmetric n×n matrix Q·diag(eig)·Qᵀ
// with Q a Haar-like orthogonal matrix from the QR of a Gaussian matrix.
func traceTestMatrix(n int, eig []float64, rng *rand.Rand) *mat.SymDense {
	g := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	var qd mat.Dense
	qd.Mul(&q, mat.NewDiagDense(n, eig))
	var a mat.Dense
	a.Mul(&qd, q.T())
	s := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			s.SetSym(i, j, (a.At(i, j)+a.At(j, i))/2)
		}
	}
	return s
}

func traceMatVec(a mat.Matrix, calls *int) func(dst, v []float64) {
	return func(dst, v []float64) {
		*calls++
		d := mat.NewVecDense(len(dst), dst)
		d.MulVec(a, mat.NewVecDense(len(v), v))
	}
}

func traceExact(a *mat.SymDense) (tr, hutchVar float64) {
	n := a.SymmetricDim()
	var fro, diag float64
	for i := range n {
		for j := range n {
			fro += a.At(i, j) * a.At(i, j)
		}
		diag += a.At(i, i) * a.At(i, i)
		tr += a.At(i, i)
	}
	// Var of one Rademacher sample: 2(‖A‖_F² − Σ a_ii²).
	return tr, 2 * (fro - diag)
}

func TestHutchinsonUnbiased(t *testing.T) {
	const n, samples, reps = 60, 20, 300
	rng := rand.New(rand.NewPCG(1, 2))
	eig := make([]float64, n)
	for i := range eig {
		eig[i] = 10 / float64(i+1)
	}
	a := traceTestMatrix(n, eig, rng)
	tr, v1 := traceExact(a)
	sd := math.Sqrt(v1 / samples)
	var calls int
	mv := traceMatVec(a, &calls)
	var sum, sum2 float64
	for range reps {
		e := Hutchinson(mv, n, samples, rng)
		sum += e
		sum2 += (e - tr) * (e - tr)
	}
	if calls != samples*reps {
		t.Errorf("matvec called %d times, want %d", calls, samples*reps)
	}
	mean := sum / reps
	// traceZ: 4 standard errors of the mean of reps estimates; a biased
	// estimator (e.g. Gaussian vectors normalised wrongly) fails it.
	const traceZ = 4
	if math.Abs(mean-tr) > traceZ*sd/math.Sqrt(reps) {
		t.Errorf("mean estimate %v, exact trace %v (sd of one estimate %v)", mean, tr, sd)
	}
	// The empirical variance matches the Rademacher formula: the ratio of
	// a mean of 300 squared errors to its expectation has sd ≈ √(2/300)
	// ≈ 0.08 for Gaussian-like errors; ±0.35 is over 4 of them.
	const traceVarBand = 0.35
	if r := sum2 / reps / (sd * sd); math.Abs(r-1) > traceVarBand {
		t.Errorf("empirical/theoretical variance = %v", r)
	}
}

func TestHutchinsonDiagonalExact(t *testing.T) {
	// vᵀDv = Σ d_i for every ±1 vector: the estimator is exact.
	d := []float64{1, -2, 3.5, 4, 0.25}
	mv := func(dst, v []float64) {
		for i := range v {
			dst[i] = d[i] * v[i]
		}
	}
	got := Hutchinson(mv, len(d), 3, rand.New(rand.NewPCG(3, 4)))
	if math.Abs(got-6.75) > curveTolRound {
		t.Errorf("Hutchinson on a diagonal = %v, want 6.75", got)
	}
}

func TestHutchPP(t *testing.T) {
	const n, samples, reps = 60, 30, 200
	rng := rand.New(rand.NewPCG(5, 6))
	eig := make([]float64, n)
	for i := range eig {
		eig[i] = 10 / math.Pow(float64(i+1), 2)
	}
	a := traceTestMatrix(n, eig, rng)
	tr, _ := traceExact(a)
	var calls int
	mv := traceMatVec(a, &calls)
	var msePP, mseH, sumPP float64
	for range reps {
		calls = 0
		e := HutchPP(mv, n, samples, rng)
		if calls != samples {
			t.Fatalf("HutchPP called matvec %d times, want %d", calls, samples)
		}
		sumPP += e
		msePP += (e - tr) * (e - tr)
		h := Hutchinson(mv, n, samples, rng)
		mseH += (h - tr) * (h - tr)
	}
	// With a spectrum decaying like 1/i², deflating the top 10
	// directions removes almost all of the variance: Meyer et al. show
	// an O(1/m²) against O(1/m) error. Demand a tenfold smaller MSE.
	const tracePPGain = 10
	if msePP*tracePPGain > mseH {
		t.Errorf("Hutch++ MSE %v not %d× below Hutchinson's %v", msePP/reps, tracePPGain, mseH/reps)
	}
	sdPP := math.Sqrt(msePP / reps)
	if bias := sumPP/reps - tr; math.Abs(bias) > 4*sdPP/math.Sqrt(reps) {
		t.Errorf("Hutch++ mean off by %v (sd %v)", bias, sdPP)
	}
}

func TestHutchPPLowRankExact(t *testing.T) {
	// Rank 3: Q captures the range, the deflated part is zero.
	const n = 40
	rng := rand.New(rand.NewPCG(7, 8))
	eig := make([]float64, n)
	eig[0], eig[1], eig[2] = 5, -2, 1.5
	a := traceTestMatrix(n, eig, rng)
	var calls int
	got := HutchPP(traceMatVec(a, &calls), n, 12, rng)
	// traceTolLowRank: rounding of the Gram–Schmidt basis and of the
	// products on an O(5) matrix.
	const traceTolLowRank = 1e-10
	if math.Abs(got-4.5) > traceTolLowRank {
		t.Errorf("HutchPP on rank 3 = %v, want 4.5", got)
	}
	if calls != 12 {
		t.Errorf("matvec called %d times, want 12", calls)
	}
}

func TestTraceDeterministic(t *testing.T) {
	d := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	mv := func(dst, v []float64) {
		for i := range v {
			dst[i] = d[i]*v[i] + 0.5*v[(i+1)%len(v)]
		}
	}
	for name, f := range map[string]func(*rand.Rand) float64{
		"Hutchinson": func(r *rand.Rand) float64 { return Hutchinson(mv, 8, 9, r) },
		"HutchPP":    func(r *rand.Rand) float64 { return HutchPP(mv, 8, 9, r) },
	} {
		a := f(rand.New(rand.NewPCG(9, 9)))
		b := f(rand.New(rand.NewPCG(9, 9)))
		if a != b {
			t.Errorf("%s: same seed gave %v and %v", name, a, b)
		}
	}
}

func TestPowerIteration(t *testing.T) {
	const n = 50
	tests := []struct {
		name string
		top  float64
	}{
		{"positive", 9},
		{"negative", -9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(10, 11))
			eig := make([]float64, n)
			for i := range eig {
				eig[i] = 6 * math.Pow(0.9, float64(i))
			}
			eig[7] = tc.top
			a := traceTestMatrix(n, eig, rng)
			var es mat.EigenSym
			if !es.Factorize(a, true) {
				t.Fatal("EigenSym failed")
			}
			vals := es.Values(nil)
			var vecs mat.Dense
			es.VectorsTo(&vecs)
			top := 0
			for i, v := range vals {
				if math.Abs(v) > math.Abs(vals[top]) {
					top = i
				}
			}
			var calls int
			lambda, v, err := PowerIteration(traceMatVec(a, &calls), n, 1000, 1e-10, rng)
			if err != nil {
				t.Fatal(err)
			}
			// tol 1e-10 on the residual bounds the eigenvalue error by
			// ≈ tol²·|λ|·(gap factor) for a symmetric matrix; 1e-9 is loose.
			const traceTolEig = 1e-9
			if math.Abs(lambda-vals[top]) > traceTolEig*math.Abs(vals[top]) {
				t.Errorf("λ = %v, gonum EigenSym %v", lambda, vals[top])
			}
			var dot float64
			for i := range v {
				dot += v[i] * vecs.At(i, top)
			}
			// The residual tol 1e-10 and gap 3 bound the angle to ≈3e-11.
			const traceTolVec = 1e-9
			if math.Abs(math.Abs(dot)-1) > traceTolVec {
				t.Errorf("|v·u| = %v, want 1", math.Abs(dot))
			}
		})
	}
}

func TestPowerIterationEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	zero := func(dst, v []float64) { clear(dst) }
	if l, _, err := PowerIteration(zero, 4, 10, 1e-8, rng); err != nil || l != 0 {
		t.Errorf("zero operator: %v, %v", l, err)
	}
	// Two eigenvalues of equal magnitude and opposite sign never settle.
	flip := func(dst, v []float64) {
		dst[0], dst[1] = v[0], -v[1]
	}
	_, _, err := PowerIteration(flip, 2, 20, 1e-12, rng)
	if !errors.Is(err, ErrCurveNoConvergence) {
		t.Errorf("±1 operator: error %v, want no convergence", err)
	}
	nan := func(dst, v []float64) {
		for i := range dst {
			dst[i] = math.NaN()
		}
	}
	_, _, err = PowerIteration(nan, 3, 5, 1e-8, rng)
	if !errors.Is(err, ErrNaN) {
		t.Errorf("NaN operator: error %v", err)
	}
	id := func(dst, v []float64) { copy(dst, v) }
	curveWantPanic(t, "nil rng", func() { PowerIteration(id, 3, 5, 1e-8, nil) })
	curveWantPanic(t, "nil matvec", func() { Hutchinson(nil, 3, 5, rng) })
	curveWantPanic(t, "n 0", func() { Hutchinson(id, 0, 5, rng) })
	curveWantPanic(t, "samples 0", func() { Hutchinson(id, 3, 0, rng) })
	curveWantPanic(t, "HutchPP 2 samples", func() { HutchPP(id, 3, 2, rng) })
	curveWantPanic(t, "negative tol", func() { PowerIteration(id, 3, 5, -1, rng) })
}
