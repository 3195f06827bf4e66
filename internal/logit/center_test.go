package logit

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCenterScale: Fit with Center and Scale on raw columns gives the
// coefficients and probabilities of Fit on the standardised copy, bit for
// bit: on few rows (no warm start), on a dense warm-start grid (which takes
// the tail rows), on a sparse one (also with the warm-start rows handed
// over in Config.Sample), with weights, with one iteration (whose
// probabilities come from a separate pass), and with offsets and scales
// far from 0 and 1.
func TestCenterScale(t *testing.T) {
	for _, c := range []struct {
		name   string
		n      int
		offset float64
		cfg    Config
		sample bool
	}{
		{"few rows", 900, 0, Config{}, false},
		{"dense grid", 3*logisticWarmRows + 777, 3, Config{}, false},
		{"sparse grid", 40*logisticWarmRows + 5, -2, Config{}, false},
		{"sparse grid, sample given", 40*logisticWarmRows + 5, -2, Config{}, true},
		{"balanced", 5000, 1e6, Config{Balanced: true, C: 0.1}, false},
		{"one iteration", 70000, 0, Config{MaxIter: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			X, y := heavyTailData(c.n, 4, 21)
			n, p := X.Dims()
			raw := mat.NewDense(p, n, nil) // column-major raw data
			center, scale := make([]float64, p), make([]float64, p)
			for j := range p {
				center[j] = c.offset*float64(j+1) + 0.3
				scale[j] = math.Pow(7, float64(j)-1.5)
				for i := range n {
					// raw such that (raw − center)/scale is the
					// standardised value z (up to rounding, which the
					// copy below takes as it is).
					raw.Set(j, i, X.At(i, j)*scale[j]+center[j])
				}
			}
			z := mat.NewDense(p, n, nil)
			for j := range p {
				for i := range n {
					z.Set(j, i, (raw.At(j, i)-center[j])/scale[j])
				}
			}
			pz, pr := make([]float64, n), make([]float64, n)
			want, err := Fit(z.T(), y, c.cfg, pz)
			if err != nil {
				t.Fatal(err)
			}
			cfg := c.cfg
			cfg.Center, cfg.Scale = center, scale
			if c.sample {
				k := SampleStride(n)
				m := (n + k - 1) / k
				cfg.Sample = make([]float64, p*m)
				for j := range p {
					for i := 0; i < n; i += k {
						cfg.Sample[j*m+i/k] = raw.At(j, i)
					}
				}
			}
			got, err := Fit(raw.T(), y, cfg, pr)
			if err != nil {
				t.Fatal(err)
			}
			if c.sample {
				// Taken, not gathered again: standardised in place.
				k := SampleStride(n)
				m := (n + k - 1) / k
				for j := range p {
					if w := (raw.At(j, k) - center[j]) / scale[j]; cfg.Sample[j*m+1] != w {
						t.Fatalf("Sample column %d row 1 is %v, want it standardised to %v", j, cfg.Sample[j*m+1], w)
					}
				}
			}
			for j := range want.Coef {
				if got.Coef[j] != want.Coef[j] {
					t.Errorf("coefficient %d: %v, standardised copy %v", j, got.Coef[j], want.Coef[j])
				}
			}
			if got.Intercept != want.Intercept || got.Iterations != want.Iterations {
				t.Errorf("intercept %v after %d iterations, standardised copy %v after %d",
					got.Intercept, got.Iterations, want.Intercept, want.Iterations)
			}
			for i := range pz {
				if pr[i] != pz[i] {
					t.Fatalf("row %d: probability %v, standardised copy %v", i, pr[i], pz[i])
				}
			}
		})
	}
}

// TestCenterScalePanics: Center and Scale need each other, one value per
// column and column-major data.
func TestCenterScalePanics(t *testing.T) {
	X, y := heavyTailData(100, 2, 3)
	cm := mat.DenseCopyOf(X.T())
	for name, fn := range map[string]func(){
		"center alone": func() { Fit(cm.T(), y, Config{Center: []float64{0, 0}}, nil) },
		"short":        func() { Fit(cm.T(), y, Config{Center: []float64{0}, Scale: []float64{1}}, nil) },
		"row-major":    func() { Fit(X, y, Config{Center: []float64{0, 0}, Scale: []float64{1, 1}}, nil) },
		"sample, few rows": func() {
			Fit(cm.T(), y, Config{Center: []float64{0, 0}, Scale: []float64{1, 1}, Sample: make([]float64, 2)}, nil)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			fn()
		}()
	}
}

// TestRowTerms: the AVX2 kernel gives the Go loop's gradient and Hessian
// weights bit for bit and the same wrong-side verdict, with class and row
// weights, zero and NaN weights, NaN and ±0 linear predictors, at every
// length mod 4.
func TestRowTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 41 {
		for _, perRow := range []bool{false, true} {
			for trial := range 20 {
				eta, mu, w := make([]float64, n), make([]float64, n), make([]float64, n)
				lab := make([]uint8, n)
				for i := range n {
					eta[i] = rng.NormFloat64() * 3
					switch rng.IntN(12) {
					case 0:
						eta[i] = math.NaN()
					case 1:
						eta[i] = math.Copysign(0, -1)
					case 2:
						eta[i] = 0
					}
					mu[i] = sigmoid(eta[i])
					lab[i] = uint8(rng.IntN(256)) // only the low bit is the label
					w[i] = rng.ExpFloat64()
					if rng.IntN(8) == 0 {
						w[i] = 0
					}
					if rng.IntN(20) == 0 {
						w[i] = math.NaN()
					}
				}
				wClass := [2]float64{rng.ExpFloat64(), rng.ExpFloat64()}
				if trial%3 == 0 {
					wClass[trial%2] = 0
				}
				var rw []float64
				if perRow {
					rw = w
				}
				g1, h1 := make([]float64, n), make([]float64, n)
				g2, h2 := make([]float64, n), make([]float64, n)
				bad1 := rowTerms(g1, h1, eta, mu, lab, rw, wClass)
				bad2 := rowTermsGo(g2, h2, eta, mu, lab, rw, wClass)
				if bad1 != bad2 {
					t.Fatalf("n=%d: wrong side %v, Go loop %v", n, bad1, bad2)
				}
				for i := range n {
					if math.Float64bits(g1[i]) != math.Float64bits(g2[i]) || math.Float64bits(h1[i]) != math.Float64bits(h2[i]) {
						t.Fatalf("n=%d row %d: g %v h %v, Go loop g %v h %v", n, i, g1[i], h1[i], g2[i], h2[i])
					}
				}
			}
		}
	}
}

// TestRowTermsWrongSide: one row on the wrong side decides the verdict by
// its weight alone (0: no; NaN or positive: yes), wherever it sits.
func TestRowTermsWrongSide(t *testing.T) {
	for n := 1; n <= 13; n++ {
		for at := range n {
			for _, wi := range []float64{0, math.NaN(), 0.5} {
				for _, perRow := range []bool{false, true} {
					eta, mu, w := make([]float64, n), make([]float64, n), make([]float64, n)
					lab := make([]uint8, n)
					for i := range n {
						lab[i] = uint8(i % 2)
						eta[i] = 2*float64(lab[i]) - 1 // the right side
						w[i] = 1
					}
					eta[at] = -eta[at]
					wClass := [2]float64{1, 1}
					var rw []float64
					if perRow {
						w[at] = wi
						rw = w
					} else {
						wClass[lab[at]] = wi
						// Rows of the same class stay on the right side.
					}
					for i := range n {
						mu[i] = sigmoid(eta[i])
					}
					want := !(wi == 0)
					g, h := make([]float64, n), make([]float64, n)
					if got := rowTerms(g, h, eta, mu, lab, rw, wClass); got != want {
						t.Errorf("n=%d row %d weight %v (per row %v): wrong side %v, want %v", n, at, wi, perRow, got, want)
					}
				}
			}
		}
	}
}

// rowTermsGo is rowTerms's Go loop on every row.
func rowTermsGo(g, h, eta, mu []float64, lab []uint8, w []float64, wClass [2]float64) bool {
	var wrong bool
	for i := range g {
		li := lab[i] & 1
		wi := wClass[li]
		if w != nil {
			wi = w[i]
		}
		yi := float64(li)
		if (2*yi-1)*eta[i] <= 0 && wi != 0 {
			wrong = true
		}
		m := mu[i]
		g[i] = wi * (m - yi)
		h[i] = wi * m * (1 - m)
	}
	return wrong
}
