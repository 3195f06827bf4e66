package overlap

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/logit"
	"github.com/crosscluster/crosscluster/stats"
)

// shifted returns n source and n target rows of d Gaussian features, the
// target's first feature shifted by shift.
func shifted(n, d int, shift float64, seed uint64) (*mat.Dense, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(2*n, d, nil)
	y := make([]int, 2*n)
	for i := range 2 * n {
		if i >= n {
			y[i] = Target
		}
		for j := range d {
			v := rng.NormFloat64()
			if j == 0 && y[i] == Target {
				v += shift
			}
			x.Set(i, j, v)
		}
	}
	return x, y
}

func TestFitBadInput(t *testing.T) {
	x, y := shifted(50, 3, 0.5, 1)
	withNaN := mat.DenseCopyOf(x)
	withNaN.Set(7, 2, math.NaN())
	withInf := mat.DenseCopyOf(x)
	withInf.Set(60, 1, math.Inf(-1))
	// Finite values whose sum overflows: the column's mean is +Inf, so its
	// standardised values are not finite.
	huge := mat.DenseCopyOf(x)
	for i := range 3 {
		huge.Set(i, 0, []float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64}[i])
	}
	badY := slices.Clone(y)
	badY[9] = 2
	oneDomain := make([]int, len(y))

	cases := []struct {
		name    string
		x       mat.Matrix
		y       []int
		band    Band
		want    error
		inError string // the error must name the place
		result  bool   // a partial Result comes back with the error
	}{
		{"NaN feature", withNaN, y, Band{0.2, 0.8}, ErrNonFinite, `row 7 feature "c"`, false},
		{"Inf feature", withInf, y, Band{0.2, 0.8}, ErrNonFinite, `row 60 feature "b"`, false},
		{"overflowing feature", huge, y, Band{0.2, 0.8}, ErrNonFinite, `feature "a" standardises to ±Inf`, false},
		{"label 2", x, badY, Band{0.2, 0.8}, ErrLabel, "row 9", false},
		{"single domain", x, oneDomain, Band{0.2, 0.8}, ErrEmptyDomain, "target", true},
		{"lo >= hi", x, y, Band{0.8, 0.2}, ErrBand, "[0.8,0.2]", false},
		{"lo == hi", x, y, Band{0.5, 0.5}, ErrBand, "[0.5,0.5]", false},
		{"lo < 0", x, y, Band{-0.1, 0.9}, ErrBand, "", false},
		{"hi > 1", x, y, Band{0.1, 1.5}, ErrBand, "", false},
		{"NaN band", x, y, Band{math.NaN(), 0.9}, ErrBand, "", false},
		{"zero rows", &mat.Dense{}, nil, Band{0.2, 0.8}, ErrEmpty, "0 rows", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opts []Option
			if r, d := c.x.Dims(); r > 0 && d == 3 {
				opts = append(opts, WithFeatureNames("a", "b", "c"))
			}
			res, err := Fit(c.x, c.y, c.band, opts...)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.inError) {
				t.Errorf("error %q does not name %q", err, c.inError)
			}
			if (res != nil) != c.result {
				t.Fatalf("result %v, want one: %v", res, c.result)
			}
			if res != nil {
				var md bytes.Buffer
				if err := res.WriteMarkdown(&md, Meta{Source: "s", Target: "t", Regime: "proxy"}); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(md.String(), "Note: ") || !strings.Contains(md.String(), "AUC: n/a") {
					t.Errorf("empty report lacks a note or n/a AUC:\n%s", md.String())
				}
				if _, err := res.Sweep(); !errors.Is(err, ErrEmptyDomain) {
					t.Errorf("Sweep on an unfitted result: %v", err)
				}
			}
		})
	}
}

// TestFitImputeLarge: on enough rows that the solver's warm-start rows are
// taken during the column copy, an imputed value (here in one of those
// rows, row 0) reaches the classifier as the median, exactly as if X had
// held the median: the same coefficients and propensities.
func TestFitImputeLarge(t *testing.T) {
	x, y := benchData(400_000)
	if logit.SampleStride(400_000) == 0 {
		t.Fatal("400,000 rows take no warm-start sample; the test needs more rows")
	}
	withNaN := mat.DenseCopyOf(x)
	withNaN.Set(0, 3, math.NaN())
	got, err := Fit(withNaN, y, Band{0.2, 0.8}, WithImpute())
	if err != nil {
		t.Fatal(err)
	}
	filled := mat.DenseCopyOf(x)
	filled.Set(0, 3, got.cols[3][0]) // the median Fit imputed
	want, err := Fit(filled, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Solver.Coef, want.Solver.Coef) || got.Solver.Intercept != want.Solver.Intercept ||
		!slices.Equal(got.Propensity, want.Propensity) {
		t.Errorf("imputed fit %v %v, fit of the filled matrix %v %v", got.Solver.Coef, got.Solver.Intercept, want.Solver.Coef, want.Solver.Intercept)
	}
}

// atOnly hides a matrix's raw storage, so that Fit reads it through At.
type atOnly struct{ mat.Matrix }

// TestFitLargeInputs: on enough rows that the warm-start rows are taken
// during the copy, a matrix read through At gives the raw matrix's fit bit
// for bit, and a constant column is noted and gets no weight.
func TestFitLargeInputs(t *testing.T) {
	x, y := benchData(300_000)
	want, err := Fit(x, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Fit(atOnly{x}, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Solver.Coef, want.Solver.Coef) || !slices.Equal(got.Propensity, want.Propensity) || got.AUC != want.AUC {
		t.Errorf("through At: %v AUC %v, raw: %v AUC %v", got.Solver.Coef, got.AUC, want.Solver.Coef, want.AUC)
	}
	flat := mat.DenseCopyOf(x)
	for i := range 300_000 {
		flat.Set(i, 2, 7200)
	}
	res, err := Fit(flat, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if res.Solver.Coef[2] != 0 || !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "is constant") }) {
		t.Errorf("constant column: coefficient %v, notes %q", res.Solver.Coef[2], res.Notes)
	}
}

func TestFitImpute(t *testing.T) {
	x, y := shifted(40, 2, 1, 2)
	x.Set(3, 1, math.NaN())
	x.Set(50, 1, math.Inf(1))
	before := mat.DenseCopyOf(x)
	res, err := Fit(x, y, Band{0.1, 0.9}, WithImpute())
	if err != nil {
		t.Fatal(err)
	}
	if res.KS[1].Imputed != 2 || res.KS[0].Imputed != 0 {
		t.Errorf("imputed counts %d %d, want 0 2", res.KS[0].Imputed, res.KS[1].Imputed)
	}
	col := mat.Col(nil, 1, before)
	finite := slices.DeleteFunc(col, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
	med := stats.Median(finite)
	if res.cols[1][3] != med || res.cols[1][50] != med {
		t.Errorf("imputed values %v %v, want the median %v", res.cols[1][3], res.cols[1][50], med)
	}
	if !math.IsNaN(x.At(3, 1)) || !math.IsInf(x.At(50, 1), 1) {
		t.Error("Fit modified X")
	}
}

func TestFitConstantFeature(t *testing.T) {
	x, y := shifted(60, 2, 0.8, 3)
	for i := range len(y) {
		x.Set(i, 1, 4)
	}
	res, err := Fit(x, y, Band{0.2, 0.8}, WithFeatureNames("moving", "constant"))
	if err != nil {
		t.Fatal(err)
	}
	if res.KS[1].All.Statistic != 0 || res.KS[1].All.PValue != 1 {
		t.Errorf("constant feature KS = %+v, want D 0 and p 1", res.KS[1].All)
	}
	if res.Solver.Coef[1] != 0 {
		t.Errorf("constant feature coefficient %v, want 0", res.Solver.Coef[1])
	}
	if !slices.ContainsFunc(res.Notes, func(s string) bool { return strings.Contains(s, `"constant" is constant`) }) {
		t.Errorf("no note on the constant feature: %q", res.Notes)
	}
}

func TestFitSeparable(t *testing.T) {
	x, y := shifted(50, 2, 0, 4)
	for i := range len(y) {
		v := -5.0
		if y[i] == Target {
			v = 5
		}
		x.Set(i, 0, v+0.1*x.At(i, 0))
	}
	res, err := Fit(x, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if res.AUC != 1 || res.Coverage != 0 || res.NTargetInBand != 0 {
		t.Errorf("separable: AUC %v, coverage %v (%d in band); want 1, 0", res.AUC, res.Coverage, res.NTargetInBand)
	}
	if !res.Solver.Separable || !slices.ContainsFunc(res.Notes, func(s string) bool { return strings.Contains(s, "separable") }) {
		t.Errorf("separable data without a note: %+v, %q", res.Solver, res.Notes)
	}
	for _, f := range res.KS {
		if f.InBandNote == "" {
			t.Errorf("feature %s: empty band without a note", f.Name)
		}
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md, Meta{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "0.0000 (n=0 of 50)") {
		t.Errorf("markdown coverage:\n%s", md.String())
	}
}

func TestFitDoesNotModifyInputs(t *testing.T) {
	x, y := shifted(30, 3, 0.3, 5)
	xc, yc := mat.DenseCopyOf(x), slices.Clone(y)
	if _, err := Fit(x, y, Band{0.2, 0.8}, WithCrossFit(3, 1)); err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(x, xc) || !slices.Equal(y, yc) {
		t.Error("Fit modified its inputs")
	}
}

func TestFitPanics(t *testing.T) {
	x, y := shifted(5, 2, 0, 6)
	for name, f := range map[string]func(){
		"len(y)":     func() { Fit(x, y[1:], Band{0.2, 0.8}) },
		"names":      func() { Fit(x, y, Band{0.2, 0.8}, WithFeatureNames("one")) },
		"mask":       func() { Rows(nil, x, []bool{true}) },
		"bad domain": func() { (&Result{}).Mask(2) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

// TestFitOptionErrors: an option given an invalid argument makes Fit
// return ErrOption before any work, never a panic (an undefined KS
// alternative used to panic inside a worker goroutine, where no recover
// of the caller's could reach it).
func TestFitOptionErrors(t *testing.T) {
	x, y := shifted(20, 2, 0, 6)
	for name, opt := range map[string]Option{
		"folds":        WithCrossFit(1, 0),
		"alternative":  WithKS(stats.Alternative(7), stats.KSAuto),
		"method":       WithKS(stats.TwoSided, stats.KSMethod(-1)),
		"class weight": WithClassWeight(stats.ClassWeight(9)),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := Fit(x, y, Band{0.2, 0.8}, opt)
			if !errors.Is(err, ErrOption) || res != nil {
				t.Errorf("Fit = %v, %v; want nil and an error wrapping ErrOption", res, err)
			}
		})
	}
}

func TestSweepMasksAndCrossFit(t *testing.T) {
	x, y := shifted(300, 3, 1, 7)
	res, err := Fit(x, y, Band{0.2, 0.8}, WithCrossFit(5, 42))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := res.Sweep()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d sweep rows, want 3", len(rows))
	}
	last := rows[2] // [0.2, 0.8], the fitted band
	if last.Band != res.Band || last.NTargetInBand != res.NTargetInBand || last.NSourceInBand != res.NSourceInBand {
		t.Errorf("sweep row %+v disagrees with the fit (%d, %d)", last.Band, res.NTargetInBand, res.NSourceInBand)
	}
	for j := range res.KS {
		if last.KS[j] != res.KS[j].InBand {
			t.Errorf("feature %d: sweep KS %+v, fit %+v", j, last.KS[j], res.KS[j].InBand)
		}
	}
	if !(rows[0].NTargetInBand >= rows[1].NTargetInBand && rows[1].NTargetInBand >= rows[2].NTargetInBand) {
		t.Error("wider bands cover fewer target jobs")
	}
	if _, err := res.Sweep(Band{0.9, 0.1}); !errors.Is(err, ErrBand) {
		t.Errorf("invalid sweep band: %v", err)
	}

	mask := res.Mask(Target)
	in := Rows(nil, x, mask)
	if r, _ := in.Dims(); r != res.NTargetInBand {
		t.Errorf("Rows gave %d target rows, want %d", r, res.NTargetInBand)
	}
	for k, i := range indices(mask) {
		if y[i] != Target || !res.InBand[i] || in.At(k, 0) != x.At(i, 0) {
			t.Fatalf("masked row %d (row %d of X) is wrong", k, i)
		}
	}

	// Cross-fitting is reproducible and, out of fold, slightly below the
	// in-sample AUC on this well-specified model.
	again, err := Fit(x, y, Band{0.2, 0.8}, WithCrossFit(5, 42))
	if err != nil {
		t.Fatal(err)
	}
	if again.CrossFitAUC != res.CrossFitAUC || res.CrossFitFolds != 5 {
		t.Errorf("cross-fit AUC %v then %v", res.CrossFitAUC, again.CrossFitAUC)
	}
	if !(res.CrossFitAUC > 0.6 && res.CrossFitAUC <= res.AUC+0.01) {
		t.Errorf("cross-fit AUC %v against in-sample %v", res.CrossFitAUC, res.AUC)
	}
	if len(res.Propensity) != len(y) || res.SourceHist == nil || sum(res.SourceHist) != res.NSource || sum(res.TargetHist) != res.NTarget {
		t.Error("histograms do not count every job")
	}
	src, _ := res.split(res.Propensity, nil)
	for k, q := range res.quantileLevels {
		if got, want := res.SourceQuantiles[k], stats.Quantile(src, q); got != want {
			t.Errorf("source propensity quantile %v = %v, stats.Quantile gives %v", q, got, want)
		}
	}
	if !(res.ESS > 0 && res.ESS <= float64(res.NSource)) {
		t.Errorf("Kish ESS %v outside (0, %d]", res.ESS, res.NSource)
	}
}

func sum(h []int) int {
	s := 0
	for _, v := range h {
		s += v
	}
	return s
}

func TestReports(t *testing.T) {
	x, y := shifted(200, 2, 0.7, 8)
	res, err := Fit(x, y, Band{0.1, 0.9}, WithFeatureNames("ncores", "runtime_sec"))
	if err != nil {
		t.Fatal(err)
	}
	meta := Meta{Experiment: "E1", Source: "anvil", Target: "conte", Regime: "cpu_standard", LabelsAuthoritative: 400, FeatureSet: "safe"}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md, meta); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- Regime definition: cpu_standard (authoritative)\n",
		"- Feature set: safe (ncores, runtime_sec)\n",
		"- Band: [0.1,0.9]\n",
		"- Domain classifier AUC: ",
		"- Target overlap coverage: ",
		"| feature | KS D (all) | p (all) | KS D (in band) | p (in band) |\n",
		"| ncores | ",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var js bytes.Buffer
	if err := res.WriteJSON(&js, meta); err != nil {
		t.Fatal(err)
	}
	var back report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.NTargetInBand != res.NTargetInBand || *back.AUC != res.AUC || len(back.KS) != 2 || back.Regime != "cpu_standard" ||
		back.RegimeBasis != "authoritative" || back.ProxyOnly || !back.RegimeMatched {
		t.Errorf("JSON round trip: %+v", back)
	}

}

// TestProxyOnlyInEveryOutput: whenever a label came from the proxy rule,
// the Markdown report and the JSON report say "proxy-only"; a pooled comparison says "not regime-matched" in each;
// an authoritative one says neither (issue 13).
func TestProxyOnlyInEveryOutput(t *testing.T) {
	x, y := shifted(50, 2, 0.7, 8)
	res, err := Fit(x, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		meta              Meta
		def               string
		proxy, notMatched bool
	}{
		{Meta{Regime: "cpu_standard", LabelsProxy: 100}, "cpu_standard (proxy)", true, false},
		{Meta{Regime: "cpu_standard", LabelsAuthoritative: 100}, "cpu_standard (authoritative)", false, false},
		{Meta{Regime: "gpu_standard", LabelsAuthoritative: 70, LabelsProxy: 30}, "gpu_standard (mixed: 70 authoritative, 30 proxy)", true, false},
		{Meta{Regime: "all", LabelsAuthoritative: 100}, "all regimes pooled (not regime-matched; authoritative)", false, true},
		{Meta{Regime: "all", LabelsProxy: 100}, "all regimes pooled (not regime-matched; proxy)", true, true},
		{Meta{}, "not stated", false, false},
	} {
		var md, js bytes.Buffer
		if err := res.WriteMarkdown(&md, c.meta); err != nil {
			t.Fatal(err)
		}
		if err := res.WriteJSON(&js, c.meta); err != nil {
			t.Fatal(err)
		}
		var rep report
		if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "- Regime definition: "+c.def+"\n") || rep.RegimeDef != c.def {
			t.Errorf("%+v: definition %q in JSON, markdown:\n%s\nwant %q", c.meta, rep.RegimeDef, md.String(), c.def)
		}
		for _, o := range []struct {
			name, text string
		}{{"report.md", md.String()}, {"report.json", js.String()}} {
			if got := strings.Contains(o.text, "proxy-only"); got != c.proxy {
				t.Errorf("%+v: %s says proxy-only = %v, want %v:\n%s", c.meta, o.name, got, c.proxy, o.text)
			}
			if got := strings.Contains(o.text, "not regime-matched") || strings.Contains(o.text, `"regime_matched": false`); got != c.notMatched && c.meta.Regime != "" {
				t.Errorf("%+v: %s says not regime-matched = %v, want %v:\n%s", c.meta, o.name, got, c.notMatched, o.text)
			}
		}
		if rep.ProxyOnly != c.proxy {
			t.Errorf("%+v: report.json proxy_only = %v", c.meta, rep.ProxyOnly)
		}
	}
}

func TestCrossFitFolds(t *testing.T) {
	// More folds than a domain has rows is an error naming the counts, not
	// a panic (issue 13: 6 folds on 5 rows, 50 folds on 20 rows).
	for _, c := range []struct{ rows, folds int }{{5, 6}, {20, 50}, {40, 4}} {
		x, y := shifted(c.rows/2, 2, 1, 9)
		if c.rows == 40 {
			// One target row among 40: 4 folds cannot each hold a target.
			x, y = shifted(20, 2, 1, 9)
			for i := range y {
				y[i] = Source
			}
			y[len(y)-1] = Target
		}
		res, err := Fit(x, y, Band{0.1, 0.9}, WithCrossFit(c.folds, 3))
		if !errors.Is(err, ErrFolds) || res != nil {
			t.Errorf("%d rows, %d folds: res %v, err %v; want ErrFolds", len(y), c.folds, res != nil, err)
		}
		// One target row: no number of folds works, and the error says so
		// rather than "use at most 1 folds".
		if want := "cross-fitting needs at least 2 rows of each; use none"; c.rows == 40 && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("one target row: err %v, want it to say %q", err, want)
		}
	}
	// As many folds as the smaller domain has rows: stratified folds each
	// hold one row of it, and every fold can be fitted.
	x, y := shifted(6, 2, 1, 9)
	res, err := Fit(x, y, Band{0.1, 0.9}, WithCrossFit(6, 3))
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(res.CrossFitAUC) || res.CrossFitFolds != 6 {
		t.Errorf("cross-fit AUC %v over %d folds, notes %q", res.CrossFitAUC, res.CrossFitFolds, res.Notes)
	}
}

// TestFitMatchesStats: every per-feature comparison Fit returns equals the
// stats function on the explicitly split rows: KS2Samp bit for bit, SMD
// and VarianceRatio to 1e-12 relative (their sums run in another order),
// on all rows and on in-band rows, on the benchmark's job features
// (discrete and heavy-tailed) with the domains interleaved.
func TestFitMatchesStats(t *testing.T) {
	x, y := benchData(30000)
	// Interleave the domains so that groups alternate row by row.
	rng := rand.New(rand.NewPCG(8, 9))
	perm := rng.Perm(len(y))
	n, d := x.Dims()
	xs := mat.NewDense(n, d, nil)
	ys := make([]int, n)
	for i, p := range perm {
		xs.SetRow(i, x.RawRowView(p))
		ys[i] = y[p]
	}
	res, err := Fit(xs, ys, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if res.NSourceInBand < 1000 || res.NTargetInBand < 1000 {
		t.Fatalf("only %d source and %d target jobs in band", res.NSourceInBand, res.NTargetInBand)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	// The propensity summaries, from the propensities directly.
	var ps, pt, w, wIn []float64
	positive := make([]bool, n)
	hist := [2][]int{make([]int, 20), make([]int, 20)}
	for i, p := range res.Propensity {
		positive[i] = ys[i] == Target
		hist[ys[i]][min(int(p*20), 19)]++
		if ys[i] == Target {
			pt = append(pt, p)
			continue
		}
		ps = append(ps, p)
		w = append(w, p/(1-p))
		if res.InBand[i] {
			wIn = append(wIn, p/(1-p))
		}
	}
	if auc, err := stats.AUC(res.Propensity, positive, nil); err != nil || auc != res.AUC {
		t.Errorf("AUC %v, stats.AUC %v (%v)", res.AUC, auc, err)
	}
	if !slices.Equal(hist[Source], res.SourceHist) || !slices.Equal(hist[Target], res.TargetHist) {
		t.Errorf("histograms %v %v, counted %v %v", res.SourceHist, res.TargetHist, hist[Source], hist[Target])
	}
	for k, q := range res.quantileLevels {
		if a, b := stats.Quantile(ps, q), stats.Quantile(pt, q); a != res.SourceQuantiles[k] || b != res.TargetQuantiles[k] {
			t.Errorf("quantile %v: %v %v, stats.Quantile %v %v", q, res.SourceQuantiles[k], res.TargetQuantiles[k], a, b)
		}
	}
	if e, ei := stats.KishESS(w), stats.KishESS(wIn); !near(res.ESS, e) || !near(res.ESSInBand, ei) {
		t.Errorf("ESS %v and %v in band, stats.KishESS %v and %v", res.ESS, res.ESSInBand, e, ei)
	}
	for j := range d {
		col := mat.Col(nil, j, xs)
		for _, in := range []bool{false, true} {
			var src, tgt []float64
			for i, v := range col {
				if in && !res.InBand[i] {
					continue
				}
				if ys[i] == Target {
					tgt = append(tgt, v)
				} else {
					src = append(src, v)
				}
			}
			got, smd, vr := res.KS[j].All, res.KS[j].SMD, res.KS[j].VarianceRatio
			if in {
				got, smd, vr = res.KS[j].InBand, res.KS[j].SMDInBand, res.KS[j].VarRatioInBand
			}
			want, err := stats.KS2Samp(src, tgt, stats.TwoSided, stats.KSAuto)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("feature %d in-band %v: KS %+v, stats.KS2Samp %+v", j, in, got, want)
			}
			if w := stats.SMD(tgt, src); !near(smd, w) {
				t.Errorf("feature %d in-band %v: SMD %v, stats.SMD %v", j, in, smd, w)
			}
			if w := stats.VarianceRatio(tgt, src); !near(vr, w) {
				t.Errorf("feature %d in-band %v: variance ratio %v, stats.VarianceRatio %v", j, in, vr, w)
			}
		}
	}
}

// TestCoveragesPropensities: coverages counts as Sweep does; Propensities
// splits the propensities by domain in row order.
func TestCoveragesPropensities(t *testing.T) {
	x, y := shifted(200, 2, 1, 9)
	res, err := Fit(x, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	bands := []Band{{0.1, 0.9}, {0.3, 0.35}, {0, 1}}
	sw, err := res.Sweep(bands...)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := res.coverages(bands...)
	if err != nil {
		t.Fatal(err)
	}
	for k := range bands {
		a, b := sw[k], cv[k]
		if a.Coverage != b.Coverage || a.SourceCoverage != b.SourceCoverage || a.NTargetInBand != b.NTargetInBand ||
			a.NSourceInBand != b.NSourceInBand || b.KS != nil {
			t.Errorf("band %v: Sweep %+v, coverages %+v", bands[k], a, b)
		}
	}
	if cv[2].Coverage != 1 || cv[2].SourceCoverage != 1 {
		t.Errorf("[0,1] covers %v and %v", cv[2].Coverage, cv[2].SourceCoverage)
	}
	if _, err := res.coverages(Band{0.5, 0.4}); !errors.Is(err, ErrBand) {
		t.Errorf("bad band: %v", err)
	}
	src, tgt := res.Propensities(Source), res.Propensities(Target)
	if len(src) != res.NSource || len(tgt) != res.NTarget || src[0] != res.Propensity[0] || tgt[0] != res.Propensity[res.NSource] {
		t.Errorf("Propensities: %d and %d values", len(src), len(tgt))
	}
	if _, err := (&Result{}).coverages(Band{0.2, 0.8}); !errors.Is(err, ErrEmptyDomain) {
		t.Errorf("no fit: %v", err)
	}
}

// TestFillColumns: the copy into columns gives X's values column by column
// and the warm start's sample, for 1 to 9 columns (four at a time and the
// rest one at a time) of a matrix and of a view with a longer row stride,
// and reports a NaN or ±Inf in any column and row.
func TestFillColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 300_001 // enough rows for a warm-start sample, and a last block part full
	if logit.SampleStride(n) == 0 {
		t.Fatal("no warm-start sample at this size")
	}
	for d := 1; d <= 9; d++ {
		full := mat.NewDense(n, d+3, nil)
		for i := range n {
			for j := range d + 3 {
				full.Set(i, j, rng.NormFloat64())
			}
		}
		for _, x := range []*mat.Dense{mat.DenseCopyOf(full.Slice(0, n, 0, d)), full.Slice(0, n, 2, d+2).(*mat.Dense)} {
			cols := make([][]float64, d)
			for j := range cols {
				cols[j] = make([]float64, n)
			}
			k := logit.SampleStride(n)
			sample := make([]float64, d*((n+k-1)/k))
			if !fillColumns(cols, x, sample) {
				t.Fatalf("d=%d: finite data reported non-finite", d)
			}
			for j := range d {
				if !slices.Equal(cols[j], mat.Col(nil, j, x)) {
					t.Fatalf("d=%d column %d differs", d, j)
				}
				for s := range (n + k - 1) / k {
					if sample[j*((n+k-1)/k)+s] != x.At(s*k, j) {
						t.Fatalf("d=%d column %d: sample %d differs", d, j, s)
					}
				}
			}
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				i, j := rng.IntN(n), rng.IntN(d)
				old := x.At(i, j)
				x.Set(i, j, bad)
				if fillColumns(cols, x, nil) {
					t.Errorf("d=%d: %v at row %d column %d not reported", d, bad, i, j)
				}
				x.Set(i, j, old)
			}
		}
	}
}
