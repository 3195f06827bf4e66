package stats

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// curveFloats reads null as NaN, as stdFloats.
type curveFloats = stdFloats

// Tolerances of the golden comparisons against
// testdata/curves_golden.json (written by testdata/gen_curves.py with
// NumPy 1.24.2, SciPy 1.10.1, pandas 1.5.3, Python 3.11.2).
const (
	// curveTolClosedForm: OLS and correlation are closed forms; only the
	// summation order differs from NumPy.
	curveTolClosedForm = 1e-11
	// curveTolIRLS: both sides stop Huber IRLS at a 1e-12 relative step
	// but solve each weighted fit differently (centred sums vs lstsq).
	curveTolIRLS = 1e-8
	// curveTolExpParam: the exponential optimum is located by different
	// optimisers (profile golden section vs Levenberg–Marquardt); in the
	// flat valley parameters agree to about √ε of the RSS.
	curveTolExpParam = 1e-5
	// curveTolPValue: gonum's regularised incomplete beta against
	// Cephes' (SciPy), relative.
	curveTolPValue = 1e-9
	// curveTolPValueAbs: p-values below this are compared absolutely (a
	// rank correlation of 1−1e−16 in NumPy is exactly 1 here, p 0 vs 1e−64).
	curveTolPValueAbs = 1e-14
)

// curveGolden is the part of testdata/curves_golden.json these tests
// read; the file's other sections are ignored.
type curveGolden struct {
	Versions map[string]string
	PowerLaw []struct {
		Name string
		X, Y curveFloats
		Want PowerLaw
	} `json:"power_law"`
	Slope []struct {
		Name   string
		X, Y   curveFloats
		Lo, Hi float64
		Want   float64
	}
	Exponential []struct {
		Name string
		X, Y curveFloats
		Want Exponential
	}
	KneeAIC []struct {
		Name  string
		X, Y  curveFloats
		Delta float64
		Want  int
	} `json:"knee_aic"`
	Corr []struct {
		Name        string
		X, Y        curveFloats
		PearsonR    float64  `json:"pearson_r"`
		PearsonP    float64  `json:"pearson_p"`
		SpearmanRho *float64 `json:"spearman_rho"`
		SpearmanP   *float64 `json:"spearman_p"`
	}
}

func loadCurveGolden(t *testing.T) *curveGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/curves_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g curveGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

func curveApprox(tol float64) cmp.Option {
	return cmp.Options{cmpopts.EquateApprox(tol, 0), cmpopts.EquateNaNs()}
}

// curveUnchanged fails t when got differs from want bit for bit (NaN
// equal to NaN): the check that a function did not mutate its input.
func curveUnchanged(t *testing.T, name string, want, got []float64) {
	t.Helper()
	if !slices.EqualFunc(want, got, func(a, b float64) bool {
		return a == b || (math.IsNaN(a) && math.IsNaN(b))
	}) {
		t.Errorf("%s modified its input", name)
	}
}

func TestGoldenPowerLaw(t *testing.T) {
	g := loadCurveGolden(t)
	for _, c := range g.PowerLaw {
		t.Run(c.Name, func(t *testing.T) {
			x0, y0 := slices.Clone(c.X), slices.Clone(c.Y)
			got, err := FitPowerLaw(c.X, c.Y)
			if err != nil {
				t.Fatal(err)
			}
			curveUnchanged(t, "FitPowerLaw", x0, c.X)
			curveUnchanged(t, "FitPowerLaw", y0, c.Y)
			tol := curveTolClosedForm
			if c.Want.Robust {
				tol = curveTolIRLS
			}
			if d := cmp.Diff(c.Want, got, curveApprox(tol)); d != "" {
				t.Errorf("FitPowerLaw mismatch (-numpy +go):\n%s", d)
			}
		})
	}
}

func TestGoldenSlope(t *testing.T) {
	g := loadCurveGolden(t)
	for _, c := range g.Slope {
		t.Run(c.Name, func(t *testing.T) {
			got, err := Slope(c.X, c.Y, c.Lo, c.Hi)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.Want, got, curveApprox(curveTolClosedForm)); d != "" {
				t.Errorf("Slope mismatch (-scipy.stats.linregress +go):\n%s", d)
			}
		})
	}
}

func TestGoldenExponential(t *testing.T) {
	g := loadCurveGolden(t)
	for _, c := range g.Exponential {
		t.Run(c.Name, func(t *testing.T) {
			got, err := FitExponential(c.X, c.Y)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.Want, got, curveApprox(curveTolExpParam)); d != "" {
				t.Errorf("FitExponential mismatch (-scipy curve_fit +go):\n%s", d)
			}
		})
	}
}

func TestGoldenKneeAIC(t *testing.T) {
	g := loadCurveGolden(t)
	for _, c := range g.KneeAIC {
		t.Run(c.Name, func(t *testing.T) {
			got, err := KneeAIC(c.X, c.Y, c.Delta)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.Want {
				t.Errorf("KneeAIC = %d, NumPy/SciPy re-implementation %d", got, c.Want)
			}
		})
	}
}

func TestGoldenCorrelation(t *testing.T) {
	g := loadCurveGolden(t)
	pv := cmp.Options{cmpopts.EquateApprox(curveTolPValue, curveTolPValueAbs)}
	for _, c := range g.Corr {
		t.Run(c.Name, func(t *testing.T) {
			x0, y0 := slices.Clone(c.X), slices.Clone(c.Y)
			r, p, err := Pearson(c.X, c.Y)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.PearsonR, r, curveApprox(curveTolClosedForm)); d != "" {
				t.Errorf("Pearson r (-scipy +go):\n%s", d)
			}
			if d := cmp.Diff(c.PearsonP, p, pv); d != "" {
				t.Errorf("Pearson p (-scipy +go):\n%s", d)
			}
			if c.SpearmanRho != nil {
				rho, p, err := Spearman(c.X, c.Y)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(*c.SpearmanRho, rho, curveApprox(curveTolClosedForm)); d != "" {
					t.Errorf("Spearman rho (-scipy +go):\n%s", d)
				}
				if d := cmp.Diff(*c.SpearmanP, p, pv); d != "" {
					t.Errorf("Spearman p (-scipy +go):\n%s", d)
				}
			}
			curveUnchanged(t, "Pearson/Spearman", x0, c.X)
			curveUnchanged(t, "Pearson/Spearman", y0, c.Y)
		})
	}
}
