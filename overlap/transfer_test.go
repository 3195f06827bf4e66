package overlap

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestDeLongGolden: overlap.DeLong (Sun and Xu's midrank algorithm)
// against the O(m·n) definition computed by testdata/gen_delong.py (NumPy
// 1.24.2), ties included, to 1e-9.
func TestDeLongGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/delong.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Name     string
			Pos, Neg []float64
			AUC, SE  float64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 5 {
		t.Fatalf("%d golden cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		scores := append(append([]float64(nil), c.Pos...), c.Neg...)
		pos := make([]bool, len(scores))
		for i := range c.Pos {
			pos[i] = true
		}
		got, err := delong(scores, pos)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if math.Abs(got.AUC-c.AUC) > 1e-9 || math.Abs(got.SE-c.SE) > 1e-9 {
			t.Errorf("%s: AUC %.12g SE %.12g, NumPy %.12g %.12g", c.Name, got.AUC, got.SE, c.AUC, c.SE)
		}
		if !(got.Lo <= got.AUC && got.AUC <= got.Hi) || got.Lo < 0 || got.Hi > 1 {
			t.Errorf("%s: interval [%v, %v] around %v", c.Name, got.Lo, got.Hi, got.AUC)
		}
	}
	// The fitted result's interval is around the AUC Fit reports.
	x, y := shifted(300, 2, 0.7, 3)
	res, err := Fit(x, y, Band{0.2, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	iv, err := res.AUCInterval()
	if err != nil || math.Abs(iv.AUC-res.AUC) > 1e-12 || !(iv.SE > 0) {
		t.Errorf("AUCInterval %+v (%v), Fit's AUC %v", iv, err, res.AUC)
	}
	if _, err := delong([]float64{1, 2}, []bool{true, true}); !errors.Is(err, ErrOneClass) {
		t.Errorf("one class: %v", err)
	}
	if _, err := delong([]float64{1, 2, 3}, []bool{true, false, false}); !errors.Is(err, ErrOneClass) {
		t.Errorf("one positive: %v", err)
	}
	if _, err := delong([]float64{1, math.NaN(), 3, 4}, []bool{true, false, true, false}); !errors.Is(err, errScores) {
		t.Errorf("NaN score: %v", err)
	}
	if _, err := delong([]float64{1, 2, 3}, []bool{true, false}); !errors.Is(err, errScores) {
		t.Errorf("length mismatch: %v", err)
	}
}

// transferData returns n target jobs, the first nIn in band: truth 0/1,
// and scores that separate them better in band.
func transferData(seed uint64, nIn, nOut int) (truth, pred []float64, band []bool) {
	rng := rand.New(rand.NewPCG(seed, 9))
	for i := range nIn + nOut {
		in := i < nIn
		y := float64(rng.IntN(2))
		shift := 0.6
		if in {
			shift = 1.5
		}
		truth = append(truth, y)
		pred = append(pred, rng.NormFloat64()+shift*y)
		band = append(band, in)
	}
	return
}

func TestEvaluateTransfer(t *testing.T) {
	truth, pred, band := transferData(1, 300, 200)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, err := EvaluateTransfer(context.Background(), truth, pred, band, AUCMetric, 300, 0.95, 4)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(4)
	many, err := EvaluateTransfer(context.Background(), truth, pred, band, AUCMetric, 300, 0.95, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !(one.All == many.All && one.InBand == many.InBand && one.OutOfBand == many.OutOfBand && one.Diff == many.Diff) {
		t.Errorf("workers change the result:\n%+v\n%+v", one, many)
	}
	r := one
	for name, e := range map[string]Estimate{"all": r.All, "in": r.InBand, "out": r.OutOfBand, "diff": r.Diff} {
		if !(e.Lo <= e.Value && e.Value <= e.Hi) {
			t.Errorf("%s: %v not inside [%v, %v]", name, e.Value, e.Lo, e.Hi)
		}
	}
	if !(r.InBand.Value > r.All.Value && r.All.Value > r.OutOfBand.Value && r.Diff.Lo > 0) {
		t.Errorf("in band the model separates better: %+v", r)
	}
	if r.All.N != 500 || r.InBand.N != 300 || r.OutOfBand.N != 200 {
		t.Errorf("counts %d %d %d", r.All.N, r.InBand.N, r.OutOfBand.N)
	}
}

// TestTransferBadInput: clear typed errors, never a panic; resamples that
// draw one class are counted, not fatal.
func TestTransferBadInput(t *testing.T) {
	truth, pred, band := transferData(2, 20, 10)
	cases := map[string]func() error{
		"length": func() error {
			_, err := EvaluateTransfer(context.Background(), truth, pred[:5], band, MAEMetric, 1000, 0.95, 0)
			return err
		},
		"NaN": func() error {
			p := append([]float64(nil), pred...)
			p[3] = math.NaN()
			_, err := EvaluateTransfer(context.Background(), truth, p, band, MAEMetric, 1000, 0.95, 0)
			return err
		},
		"empty band": func() error {
			_, err := EvaluateTransfer(context.Background(), truth, pred, make([]bool, len(truth)), MAEMetric, 1000, 0.95, 0)
			return err
		},
		"no jobs": func() error {
			_, err := EvaluateTransfer(context.Background(), nil, nil, nil, MAEMetric, 1000, 0.95, 0)
			return err
		},
		"no metric": func() error {
			_, err := EvaluateTransfer(context.Background(), truth, pred, band, Metric{Name: "none"}, 1000, 0.95, 0)
			return err
		},
		"NaN level": func() error {
			_, err := EvaluateTransfer(context.Background(), truth, pred, band, MAEMetric, 1000, math.NaN(), 0)
			return err
		},
		"level 1": func() error {
			_, err := EvaluateTransfer(context.Background(), truth, pred, band, MAEMetric, 1000, 1, 0)
			return err
		},
		"negative resamples": func() error {
			_, err := EvaluateTransfer(context.Background(), truth, pred, band, MAEMetric, -5, 0.95, 0)
			return err
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrTransferInput) {
			t.Errorf("%s: %v, want ErrTransferInput", name, err)
		}
	}
	ones := make([]float64, len(truth))
	for i := range ones {
		ones[i] = 1
	}
	if _, err := EvaluateTransfer(context.Background(), ones, pred, band, AUCMetric, 1000, 0.95, 0); err == nil {
		t.Error("AUC on one class accepted")
	}
	// Three positives among 30: many resamples of the 10 out-of-band jobs
	// draw no positive.
	y := make([]float64, 30)
	y[0], y[1], y[25] = 1, 1, 1
	r, err := EvaluateTransfer(context.Background(), y, pred, band, AUCMetric, 200, 0.95, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Unscored[2] == 0 || len(r.Notes) == 0 || !strings.Contains(strings.Join(r.Notes, " "), "could not be scored") {
		t.Errorf("unscored %v, notes %q", r.Unscored, r.Notes)
	}
	// Every job in band: no out-of-band estimate, said in a note.
	all := make([]bool, len(truth))
	for i := range all {
		all[i] = true
	}
	r, err = EvaluateTransfer(context.Background(), truth, pred, all, MAEMetric, 50, 0.95, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.OutOfBand.Value) || r.OutOfBand.N != 0 || !strings.Contains(strings.Join(r.Notes, " "), "no out-of-band") {
		t.Errorf("all in band: out of band %+v, notes %q", r.OutOfBand, r.Notes)
	}
	// An infinite score is an ordinary value for an AUC.
	p := append([]float64(nil), pred...)
	p[0] = math.Inf(1)
	if _, err := EvaluateTransfer(context.Background(), truth, p, band, AUCMetric, 50, 0.95, 0); err != nil {
		t.Errorf("+Inf score: %v", err)
	}
}

// TestTransferCoverage: the 95% percentile interval of the MAE covers the
// true MAE in 93–97% of 1,000 simulated data sets (errors N(0, 1): true MAE
// √(2/π); 250 jobs, 150 in band, 400 resamples each).
func TestTransferCoverage(t *testing.T) {
	sets := 1000
	if testing.Short() {
		sets = 300
	}
	want := math.Sqrt(2 / math.Pi)
	covered := 0
	for s := range sets {
		rng := rand.New(rand.NewPCG(uint64(s), 77))
		n := 250
		truth, pred, band := make([]float64, n), make([]float64, n), make([]bool, n)
		for i := range n {
			pred[i] = rng.NormFloat64()
			band[i] = i < 150
		}
		r, err := EvaluateTransfer(context.Background(), truth, pred, band, MAEMetric, 400, 0.95, uint64(s))
		if err != nil {
			t.Fatal(err)
		}
		if r.All.Lo <= want && want <= r.All.Hi {
			covered++
		}
	}
	c := float64(covered) / float64(sets)
	t.Logf("coverage %.3f over %d data sets", c, sets)
	lo, hi := 0.93, 0.97
	if testing.Short() {
		lo, hi = 0.91, 0.99 // 300 sets: two standard errors of 1.3%
	}
	if c < lo || c > hi {
		t.Errorf("95%% intervals covered the truth in %.1f%% of %d data sets, want %g–%g%%", 100*c, sets, 100*lo, 100*hi)
	}
}

// FuzzEvaluateTransfer: arbitrary truth, predictions (NaN, ±Inf, ties,
// one class), band flags and lengths never panic EvaluateTransfer or
// DeLong; every error is typed or comes from the metric.
func FuzzEvaluateTransfer(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(0))
	f.Add([]byte{0, 0, 0, 255, 255, 17}, uint8(3))
	alphabet := []float64{0, 1, 1, 0.5, -1, 2, math.Inf(1), math.Inf(-1), math.NaN(), 1e300, 0.25, 0.75, 3, 0, 1, 0.1}
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		n := len(data)
		truth, pred, band := make([]float64, n), make([]float64, n), make([]bool, n)
		for i, c := range data {
			truth[i] = float64(c >> 7)
			pred[i] = alphabet[c&15]
			band[i] = c&16 != 0
		}
		if int(cut) < n && cut%5 == 0 {
			pred = pred[:cut] // a length mismatch
		}
		for _, m := range []Metric{AUCMetric, MAEMetric} {
			r, err := EvaluateTransfer(context.Background(), truth, pred, band, m, 20, 0.95, 0)
			if err == nil && r.InBand.N == 0 {
				t.Fatalf("%s: no error with an empty band", m.Name)
			}
		}
		if _, err := delong(pred, band); err != nil && !errors.Is(err, errScores) && !errors.Is(err, ErrOneClass) {
			t.Fatalf("DeLong: untyped error %v", err)
		}
	})
}

// MAEMetric is the mean absolute error, a metric for a regression model's
// predictions; the tests use it beside AUCMetric.
var MAEMetric = Metric{"MAE", false, func(truth, pred []float64) (float64, error) {
	s := 0.0
	for i, t := range truth {
		s += math.Abs(pred[i] - t)
	}
	return s / float64(len(truth)), nil
}}
