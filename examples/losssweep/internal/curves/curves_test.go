package curves

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/sweep"
)

// exactTol is for values computed from exact synthetic curves: only
// floating-point rounding separates them from the closed form.
const exactTol = 1e-9

func TestCurveDatasetAndHypotheses(t *testing.T) {
	var runs []sweep.Run
	results := map[string]*sweep.Result{}
	x := make([]float64, 200)
	for i := range x {
		x[i] = 0.25 * float64(i+1) // validation every quarter epoch, 50 epochs
	}
	for i := range 8 {
		variant := "pow"
		amp := 2 + 0.5*float64(i)
		y := make([]float64, len(x))
		for j, e := range x {
			if i >= 4 {
				variant = "exp"
				y[j] = amp*math.Exp(-e/4) + 0.3
			} else {
				y[j] = amp * math.Pow(e, -0.6)
			}
		}
		id := string(rune('a' + i))
		runs = append(runs, sweep.Run{ID: id, Slug: "s" + id, Variant: variant, State: sweep.Completed, Attempt: 1,
			Config: map[string]sweep.Value{"lr": sweep.ValueOf(amp), "variant": sweep.ValueOf(variant)}})
		results[id] = &sweep.Result{RunID: id, Curves: map[string][]float64{"epoch": x, "val_loss": y}}
	}
	cfg := Default()
	d := Table(runs, results, cfg)
	if len(d.Rows) != 8 {
		t.Fatalf("%d rows", len(d.Rows))
	}
	r2, b, best := floats(d, "r_squared"), floats(d, "powerlaw_b"), floats(d, "best_val_ce")
	burn := floats(d, "burn_in_epoch")
	for i := range 4 {
		if math.Abs(r2[i]-1) > exactTol || math.Abs(b[i]+0.6) > exactTol {
			t.Errorf("run %d: R² %v, B %v; want 1 and -0.6", i, r2[i], b[i])
		}
		amp := 2 + 0.5*float64(i)
		if want := amp * math.Pow(50, -0.6); math.Abs(best[i]-want) > exactTol {
			t.Errorf("run %d: best %v, want %v", i, best[i], want)
		}
		// Burn-in: first x with amp·x^-0.6 ≤ 1, i.e. x ≥ amp^(1/0.6), on the quarter grid.
		want := math.Ceil(4*math.Pow(amp, 1/0.6)-exactTol) / 4
		if math.Abs(burn[i]-want) > exactTol {
			t.Errorf("run %d: burn-in epoch %v, want %v", i, burn[i], want)
		}
	}
	for i := 4; i < 8; i++ {
		if r2[i] >= cfg.PowerLawR2 {
			t.Errorf("exponential run %d has power-law R² %v", i, r2[i])
		}
	}
	h := Hypotheses(d, cfg)
	if len(h) != 3 || h[0].Group != "all" || h[1].Group != "pow" || h[2].Group != "exp" {
		t.Fatalf("groups %+v", h)
	}
	if !h[1].H1 || h[1].FracR2 != 1 || h[2].H1 || h[2].FracR2 != 0 || h[0].H1 {
		t.Errorf("H1: %+v", h)
	}
	// Within "pow", a larger amplitude gives a steeper (more negative) early
	// slope and a higher best loss: ρ = -1 exactly, so H2 fails.
	if math.Abs(h[1].Rho+1) > exactTol || h[1].H2 || h[1].NRho != 4 {
		t.Errorf("H2 pow: %+v", h[1])
	}
	var sb strings.Builder
	if err := WriteHypotheses(&sb, h, cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "| pow | 4 | 4 | 4 | 100.0% | holds | -1.000 |") {
		t.Errorf("report:\n%s", sb.String())
	}
}

// A curve that sits on a plateau before it starts to learn and then decays
// as an exact power law: fitted from burn-in the power law is exact, fitted
// whole the plateau spoils it.
func TestPowerLawFromBurnIn(t *testing.T) {
	var x, y []float64
	for i := 1; i <= 200; i++ {
		e := float64(i) / 4
		x = append(x, e)
		if e < 5 {
			y = append(y, 1.6) // chance-level plateau
		} else {
			y = append(y, 0.9*math.Pow(e/5, -0.5))
		}
	}
	cfg := Default()
	m := curveMetrics(x, y, cfg)
	if r2 := m["r_squared"]; math.Abs(r2-1) > 1e-9 {
		t.Errorf("R² from burn-in = %v, want 1", r2)
	}
	if b := m["powerlaw_b"]; math.Abs(b+0.5) > 1e-9 {
		t.Errorf("exponent from burn-in = %v, want -0.5", b)
	}
	cfg.PowerLawWhole = true
	if r2 := curveMetrics(x, y, cfg)["r_squared"]; r2 > 0.98 {
		t.Errorf("R² of the whole curve = %v, want the plateau to pull it below 0.98", r2)
	}
}

func TestColumnKindFromAllValues(t *testing.T) {
	tests := []struct {
		vals []sweep.Value
		want sweep.Kind
	}{
		{[]sweep.Value{sweep.ValueOf(0), sweep.ParseValue("1e-3"), sweep.ParseValue("1e-2")}, sweep.Float},
		{[]sweep.Value{sweep.ParseValue("1"), sweep.ParseValue("0.1"), sweep.ParseValue("0.01")}, sweep.Float},
		{[]sweep.Value{sweep.ValueOf(1), sweep.ValueOf(2)}, sweep.Int},
		{[]sweep.Value{sweep.ValueOf(true), sweep.ValueOf(false)}, sweep.Bool},
		{[]sweep.Value{sweep.ValueOf(1), sweep.ValueOf("x")}, sweep.String},
		{[]sweep.Value{sweep.ValueOf(true), sweep.ValueOf(1)}, sweep.String},
		{nil, sweep.String},
	}
	for _, tc := range tests {
		if got := columnKind(tc.vals); got != tc.want {
			t.Errorf("columnKind(%v) = %v, want %v", tc.vals, got, tc.want)
		}
	}
}

func TestCheckSchema(t *testing.T) {
	csv := "slug,n,x,ok\na,1,0.5,true\n"
	if err := CheckSchema(strings.NewReader(csv), []string{"slug", "x"}); err != nil {
		t.Errorf("schema: %v", err)
	}
	err := CheckSchema(strings.NewReader(csv), []string{"slug", "r_squared", "best_val_ce"})
	var se *SchemaError
	if !errors.As(err, &se) || !slices.Equal(se.Missing, []string{"r_squared", "best_val_ce"}) || !strings.Contains(err.Error(), "r_squared, best_val_ce") {
		t.Errorf("schema error %v", err)
	}
}

// TestEveryRunExported: pruned, failed and completed runs each have a row
// with their state and reason; the hypotheses cover the completed runs only
// and say how many of how many.
func TestEveryRunExported(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	curve := func(a float64, n int) map[string]sweep.Series {
		y := make([]float64, n)
		for i := range y {
			y[i] = a * math.Pow(x[i], -0.5)
		}
		return map[string]sweep.Series{"val_loss": {Step: x[:n], Value: y}}
	}
	runs := []sweep.Run{
		{ID: "a", Slug: "sa", Variant: "v", State: sweep.Completed, Attempt: 1},
		{ID: "b", Slug: "sb", Variant: "v", State: sweep.Completed, Attempt: 1},
		{ID: "c", Slug: "sc", Variant: "v", State: sweep.Pruned, Attempt: 1, ErrorText: "ASHA: loss 3 at step 1 ..."},
		{ID: "d", Slug: "sd", Variant: "v", State: sweep.Failed, Attempt: 2, ErrorText: "exit 3"},
	}
	results := map[string]*sweep.Result{"a": {Series: curve(1, 8)}, "b": {Series: curve(2, 8)}, "c": {Series: curve(3, 2)}}
	d := Table(runs, results, Default())
	if len(d.Rows) != 4 {
		t.Fatalf("%d rows, want one per run (4)", len(d.Rows))
	}
	sc, rc := col(d, "state"), col(d, "reason")
	if sc < 0 || rc < 0 {
		t.Fatalf("no state or reason column: %v", d.Columns)
	}
	for i, r := range runs {
		if d.Rows[i][sc] != string(r.State) || d.Rows[i][rc] != r.ErrorText {
			t.Errorf("run %s: state %v, reason %v", r.ID, d.Rows[i][sc], d.Rows[i][rc])
		}
	}
	h := Hypotheses(d, Default())
	if h[0].Runs != 4 || h[0].Completed != 2 {
		t.Errorf("hypotheses cover %d of %d runs, want 2 of 4", h[0].Completed, h[0].Runs)
	}
	var b strings.Builder
	if err := WriteHypotheses(&b, h, Default()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 of the 4 runs") {
		t.Errorf("report does not say how many runs it covers:\n%s", b.String())
	}
	dir := t.TempDir()
	if err := sweep.Export(context.Background(), dir, "x", d, sweep.ExportConfig{}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "x_metadata.json"))
	if !strings.Contains(string(md), `"total_runs": 4`) {
		t.Errorf("metadata does not count every run:\n%s", md)
	}
}
