package logit

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gonum.org/v1/gonum/mat"
)

// heavyTailData returns n rows of p heavy-tailed features (Student-t with
// two degrees of freedom, so a few rows lie many standard deviations out)
// with labels drawn from a logistic model.
func heavyTailData(n, p int, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	X := mat.NewDense(n, p, nil)
	y := make([]int, n)
	for i := range n {
		eta := -0.2
		for j := range p {
			z := rng.NormFloat64()
			chi2 := rng.ExpFloat64() * 2 // χ² with two degrees of freedom
			v := z / math.Sqrt(chi2/2)
			X.Set(i, j, v)
			eta += 0.3 * math.Pow(-1, float64(j)) * v / float64(j+1)
		}
		if rng.Float64() < sigmoid(eta) {
			y[i] = 1
		}
	}
	return X, y
}

// TestLogisticWarmOutliers: with a dense warm-start grid the subsample
// takes exactly the off-grid rows beyond logisticWarmOutlier standard
// deviations (computed here independently) at their own weight, after the
// grid rows, in both layouts; and the fit equals the cold start to well
// within the 1e-8 accuracy target, bit for bit in both layouts.
func TestLogisticWarmOutliers(t *testing.T) {
	const k = 3
	n, p := 3*logisticWarmRows+1234, 4
	X, y := heavyTailData(n, p, 11)
	raw := X.RawMatrix().Data

	// The tail rows, from the grid rows' means and (population) SDs.
	m := (n + k - 1) / k
	var want []int
	mean, sd := make([]float64, p), make([]float64, p)
	for j := range p {
		for i := 0; i < n; i += k {
			mean[j] += raw[i*p+j]
		}
		mean[j] /= float64(m)
		for i := 0; i < n; i += k {
			sd[j] += (raw[i*p+j] - mean[j]) * (raw[i*p+j] - mean[j])
		}
		sd[j] = math.Sqrt(sd[j] / float64(m))
	}
	for i := range n {
		if i%k == 0 {
			continue
		}
		for j := range p {
			if math.Abs(raw[i*p+j]-mean[j]) > logisticWarmOutlier*sd[j] {
				want = append(want, i)
				break
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("test data have no tail rows")
	}

	for _, layout := range []struct {
		name  string
		X     mat.Matrix
		spare int // room after the grid rows; none makes a copy
	}{{"rows", X, m / 4}, {"columns", mat.DenseCopyOf(X.T()).T(), m / 4}, {"columns without room", mat.DenseCopyOf(X.T()).T(), 0}} {
		f, err := newLogisticProblem(layout.X, y, Config{})
		if err != nil {
			t.Fatal(err)
		}
		// The grid subsample as warmStartRows builds it.
		sub := &logisticProblem{p: p, intercept: true}
		spare := layout.spare
		if f.cx != nil {
			sub.cx, sub.cstride = make([]float64, p*(m+spare)), m+spare
		}
		for r, i := 0, 0; i < n; r, i = r+1, i+k {
			sub.y, sub.lab, sub.w = append(sub.y, y[i]), append(sub.lab, uint8(y[i])), append(sub.w, float64(k))
			for j := range p {
				if f.cx != nil {
					sub.cx[j*sub.cstride+r] = raw[i*p+j]
				} else {
					sub.x = append(sub.x, raw[i*p+j])
				}
			}
		}
		sub.stride = p
		got := f.withOutliers(sub, k)
		if len(got.y) != m+len(want) {
			t.Fatalf("%s: %d subsample rows, want %d grid + %d tail rows", layout.name, len(got.y), m, len(want))
		}
		at := func(i, j int) float64 {
			if got.cx != nil {
				return got.cx[j*got.cstride+i]
			}
			return got.x[i*got.stride+j]
		}
		for r, i := range want {
			if got.y[m+r] != y[i] || got.w[m+r] != 1 {
				t.Fatalf("%s: tail row %d (data row %d): y %d weight %v, want %d and 1", layout.name, r, i, got.y[m+r], got.w[m+r], y[i])
			}
			for j := range p {
				if at(m+r, j) != raw[i*p+j] {
					t.Fatalf("%s: tail row %d column %d is %v, want %v", layout.name, r, j, at(m+r, j), raw[i*p+j])
				}
			}
		}
		for r := 0; r < m; r += 97 {
			if at(r, p-1) != raw[r*k*p+p-1] || got.w[r] != k {
				t.Fatalf("%s: grid row %d changed", layout.name, r)
			}
		}
	}

	warm, err := Fit(X, y, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	warmCols, err := Fit(mat.DenseCopyOf(X.T()).T(), y, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(warm, warmCols); d != "" {
		t.Errorf("rows vs columns (-rows +columns):\n%s", d)
	}
	f, err := newLogisticProblem(X, y, Config{})
	if err != nil {
		t.Fatal(err)
	}
	cold, _ := f.solve(make([]float64, f.q()), logisticDefaultMaxIter, logisticDefaultTol)
	if !warm.Converged || !cold.Converged {
		t.Fatalf("converged: warm %v, cold %v", warm.Converged, cold.Converged)
	}
	// Both are within 1e-10 relative of the optimum (the step rule), so
	// they agree to twice that.
	const coefTol = 2e-10
	if d := cmp.Diff(cold.Coef, warm.Coef, cmpopts.EquateApprox(0, coefTol)); d != "" {
		t.Errorf("warm vs cold start (-cold +warm):\n%s", d)
	}
	if math.Abs(cold.Intercept-warm.Intercept) > coefTol {
		t.Errorf("intercepts %v vs %v", cold.Intercept, warm.Intercept)
	}
	// At the optimum the objective is flat: coefficients 2e-10 apart give
	// objectives equal to rounding of the sum (about 1e-15 relative).
	const objTol = 1e-13
	ow := f.evaluate(append(warm.Coef, warm.Intercept), false).obj
	oc := f.evaluate(append(cold.Coef, cold.Intercept), false).obj
	if math.Abs(ow-oc) > objTol*math.Abs(oc) {
		t.Errorf("objectives: warm %.17g, cold %.17g", ow, oc)
	}
}
