// Package curves is the loss-curve study's analysis: one row per run with
// the per-run curve metrics (power-law fit, knee, burn-in, slopes, best
// loss) and the hypotheses H1 and H2 over them. It belongs to
// examples/losssweep, its only user, so that the sweep library links no
// numerical code.
package curves

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/crosscluster/crosscluster/stats"
	"github.com/crosscluster/crosscluster/sweep"
)

// Config names the series and windows of the per-run curve metrics.
// The zero value is not useful; start from Default.
type Config struct {
	// Y names the series analysed (validation loss); its steps are the x
	// axis (epochs). A run without a Series of that name is read from its
	// Curves: Y against the curve named X.
	X, Y             string
	BurnIn           float64 // burn-in: first point with loss ≤ BurnIn
	EarlyLo, EarlyHi float64 // window of the early slope, in x units
	PowerLawR2       float64 // H1's R² threshold
	H1Fraction       float64 // H1 holds when more than this fraction of runs pass
	H2Rho            float64 // H2 holds when ρ ≥ this
	KneeDelta        float64 // ΔAIC for KneeAIC
	// PowerLawWhole fits the power law to the whole curve. By default the
	// fit starts at burn-in, because the plateau before a model starts to
	// learn is a transient, not part of the power-law regime (curves that
	// never reach burn-in are fitted whole).
	PowerLawWhole bool
}

// Default returns the study's settings: series "val_loss" (x "epoch"
// for Curves), burn-in at loss ≤ 1.0, early slope over epochs 5–15, H1 R²
// ≥ 0.98 for more than 90% of runs, H2 ρ ≥ 0.7, knee ΔAIC ≥ 2.
func Default() Config {
	return Config{X: "epoch", Y: "val_loss", BurnIn: 1.0, EarlyLo: 5, EarlyHi: 15,
		PowerLawR2: 0.98, H1Fraction: 0.90, H2Rho: 0.7, KneeDelta: stats.DefaultKneeAICDelta}
}

// OutputColumns returns the columns a study export starts with, in this
// order (the study plan's OUTPUT_COLUMNS; docs/losssweep.md has the data
// dictionary). The parameters seed, lr and weight_decay come from the runs'
// parameters of those names.
func OutputColumns() []string {
	return []string{"run_id", "variant", "seed", "lr", "weight_decay", "r_squared", "knee_epoch", "burn_in_loss",
		"alpha_early", "alpha_full", "best_val_ce", "best_val_epoch"}
}

// curveCols are the computed columns, with their docs; the first seven are
// in OutputColumns.
var curveCols = [...]sweep.Column{
	{Name: "r_squared", Kind: sweep.Float, Doc: "R² in log–log space of the power-law fit of Y on the steps, from burn-in to the end"},
	{Name: "knee_epoch", Kind: sweep.Float, Doc: "first step where a power law beats an exponential on the rest of the curve by ΔAIC ≥ KneeDelta (stats.KneeAIC)"},
	{Name: "burn_in_loss", Kind: sweep.Float, Doc: "Y at burn-in, the first step with Y ≤ BurnIn"},
	{Name: "alpha_early", Kind: sweep.Float, Doc: "OLS slope of Y on the step over [EarlyLo, EarlyHi] (loss per epoch; negative while the loss falls)"},
	{Name: "alpha_full", Kind: sweep.Float, Doc: "OLS slope of Y on the step from burn-in to the last step"},
	{Name: "best_val_ce", Kind: sweep.Float, Doc: "lowest Y (validation cross-entropy)"},
	{Name: "best_val_epoch", Kind: sweep.Float, Doc: "step of the lowest Y (the first, on ties)"},
	{Name: "powerlaw_a", Kind: sweep.Float, Doc: "A of the power-law fit Y = A·step^B"},
	{Name: "powerlaw_b", Kind: sweep.Float, Doc: "B (the exponent) of the power-law fit"},
	{Name: "burn_in_epoch", Kind: sweep.Float, Doc: "step of burn-in"},
}

// Table builds one row per run, whatever its state, from its result when
// results has one (a pruned run's result holds the series it streamed;
// a run without one has NaN metrics). Columns: OutputColumns first, then
// slug, attempt, state, reason, the other parameters (in name
// order), powerlaw_a, powerlaw_b, burn_in_epoch and every scalar metric any
// result has (in name order; "metric_" is prefixed to a name that another
// column has). Each parameter column's kind comes from all its values (a
// column with 1 and 0.5 is a float column). The curve metrics are those of
// stats: the power-law fit of Y on the steps from burn-in to the end (the
// whole curve with PowerLawWhole; log–log OLS with stats' Huber fallback;
// R² in log space), the AIC knee, burn-in, the OLS slopes over [EarlyLo,
// EarlyHi] and from burn-in to the end, and the best Y. A metric that
// cannot be computed for a run (too few points, non-positive loss, no
// burn-in) is NaN, which the export writes as an empty cell.
func Table(runs []sweep.Run, results map[string]*sweep.Result, cfg Config) *sweep.Dataset {
	done := make([]*sweep.Run, len(runs))
	for i := range runs {
		done[i] = &runs[i]
	}
	taken := map[string]bool{}
	for _, c := range OutputColumns() {
		taken[c] = true
	}
	for _, c := range curveCols {
		taken[c.Name] = true
	}
	taken["slug"], taken["attempt"], taken["state"], taken["reason"] = true, true, true, true
	params := map[string][]sweep.Value{}
	for _, r := range done {
		for k, v := range r.Params() {
			params[k] = append(params[k], v)
		}
	}
	paramCol := func(name string) sweep.Column {
		return sweep.Column{Name: name, Kind: columnKind(params[name]), Doc: "parameter " + name}
	}
	d := &sweep.Dataset{Columns: []sweep.Column{{Name: "run_id", Kind: sweep.String, Doc: "run id: SHA-256 of the canonical parameters (first 16 hex digits)"},
		{Name: "variant", Kind: sweep.String, Doc: "variant name"}}}
	for _, p := range []string{"seed", "lr", "weight_decay"} {
		d.Columns = append(d.Columns, paramCol(p))
	}
	d.Columns = append(d.Columns, curveCols[:7]...)
	d.Columns = append(d.Columns, sweep.Column{Name: "slug", Kind: sweep.String, Doc: "readable run name"}, sweep.Column{Name: "attempt", Kind: sweep.Int, Doc: "attempt that produced the result"},
		sweep.Column{Name: "state", Kind: sweep.String, Doc: "the run's state in the ledger: completed, pruned, failed, cancelled, running or queued"},
		sweep.Column{Name: "reason", Kind: sweep.String, Doc: "why the run did not complete (the pruner's reason, the failure), empty for a completed run"})
	var otherParams []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !taken[k] && k != "variant" {
			otherParams = append(otherParams, k)
			d.Columns = append(d.Columns, paramCol(k))
		}
	}
	for _, k := range otherParams {
		taken[k] = true
	}
	d.Columns = append(d.Columns, curveCols[7:]...)
	metricSet := map[string]bool{}
	for _, r := range done {
		if res := results[r.ID]; res != nil {
			for k := range res.Metrics {
				metricSet[k] = true
			}
		}
	}
	metrics := slices.Sorted(maps.Keys(metricSet))
	for _, k := range metrics {
		name := k
		if taken[name] || name == "variant" {
			name = "metric_" + k
		}
		d.Columns = append(d.Columns, sweep.Column{Name: name, Kind: sweep.Float, Doc: "metric " + k + " reported by the run"})
	}
	for _, r := range done {
		res := results[r.ID]
		if res == nil {
			res = &sweep.Result{}
		}
		pr := r.Params()
		x, y := runCurve(res, cfg)
		m := curveMetrics(x, y, cfg)
		row := []any{r.ID, r.Variant}
		for _, c := range d.Columns[2:5] {
			row = append(row, paramCell(pr, c))
		}
		for _, c := range curveCols[:7] {
			row = append(row, m[c.Name])
		}
		row = append(row, r.Slug, int64(r.Attempt), string(r.State), r.ErrorText)
		for _, k := range otherParams {
			row = append(row, paramCell(pr, d.Columns[col(d, k)]))
		}
		for _, c := range curveCols[7:] {
			row = append(row, m[c.Name])
		}
		for _, k := range metrics {
			v, ok := res.Metrics[k]
			if !ok {
				v = math.NaN()
			}
			row = append(row, v)
		}
		d.Rows = append(d.Rows, row)
	}
	return d
}

func paramCell(p map[string]sweep.Value, c sweep.Column) any {
	v, ok := p[c.Name]
	if !ok {
		return nil
	}
	return cell(v, c.Kind)
}

// runCurve returns the analysed curve of a result: the Series named Y, or
// the Curves X and Y.
func runCurve(res *sweep.Result, cfg Config) (x, y []float64) {
	if s, ok := res.Series[cfg.Y]; ok {
		return s.Step, s.Value
	}
	x, y = res.Curves[cfg.X], res.Curves[cfg.Y]
	if len(x) != len(y) {
		return nil, nil
	}
	return x, y
}

func curveMetrics(x, y []float64, cfg Config) map[string]float64 {
	nan := math.NaN()
	m := map[string]float64{}
	for _, c := range curveCols {
		m[c.Name] = nan
	}
	if len(x) != len(y) || len(x) == 0 {
		return m
	}
	best, bi := math.Inf(1), -1
	for i, v := range y {
		if v < best {
			best, bi = v, i
		}
	}
	if bi >= 0 {
		m["best_val_ce"], m["best_val_epoch"] = best, x[bi]
	}
	b := stats.BurnIn(y, cfg.BurnIn)
	fx, fy := x, y
	if b > 0 && !cfg.PowerLawWhole {
		fx, fy = x[b:], y[b:]
	}
	if pl, err := stats.FitPowerLaw(fx, fy); err == nil {
		m["powerlaw_a"], m["powerlaw_b"], m["r_squared"] = pl.A, pl.B, pl.R2
	}
	if k, err := stats.KneeAIC(x, y, cfg.KneeDelta); err == nil && k >= 0 {
		m["knee_epoch"] = x[k]
	}
	if b >= 0 {
		m["burn_in_epoch"], m["burn_in_loss"] = x[b], y[b]
		if s, err := stats.Slope(x, y, x[b], x[len(x)-1]); err == nil {
			m["alpha_full"] = s
		}
	}
	if s, err := stats.Slope(x, y, cfg.EarlyLo, cfg.EarlyHi); err == nil {
		m["alpha_early"] = s
	}
	return m
}

// HypothesisRow is H1 and H2 evaluated on one group of runs.
type HypothesisRow struct {
	Group     string
	Runs      int     // runs of the group in the table, whatever their state
	Completed int     // completed runs: the runs the hypotheses cover
	N         int     // completed runs with a power-law fit
	FracR2    float64 // fraction with R² ≥ threshold
	H1        bool
	Rho, P    float64 // Spearman ρ(early slope, best loss) and its p-value
	NRho      int     // runs with both values finite
	H2        bool
	H2Problem string // why ρ could not be computed, if so
}

// Hypotheses evaluates H1 (more than H1Fraction of the runs have power-law
// R² ≥ PowerLawR2) and H2 (Spearman ρ between alpha_early and best_val_ce
// ≥ H2Rho) on all runs and then on each variant, in order of first
// appearance. Runs with a NaN in the columns used are left out of that
// hypothesis. Only completed runs count: a pruned run's curve stops early
// and a failed run has none; Runs and Completed say how many runs the
// group has and how many the hypotheses cover.
func Hypotheses(d *sweep.Dataset, cfg Config) []HypothesisRow {
	variants := []string{}
	vcol := col(d, "variant")
	for _, r := range d.Rows {
		if v := r[vcol].(string); !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
	}
	r2, slope, best := floats(d, "r_squared"), floats(d, "alpha_early"), floats(d, "best_val_ce")
	scol := col(d, "state")
	eval := func(group string, keep func(i int) bool) HypothesisRow {
		h := HypothesisRow{Group: group, Rho: math.NaN(), P: math.NaN()}
		pass := 0
		var xs, ys []float64
		for i := range d.Rows {
			if !keep(i) {
				continue
			}
			h.Runs++
			if d.Rows[i][scol] != string(sweep.Completed) {
				continue
			}
			h.Completed++
			if !math.IsNaN(r2[i]) {
				h.N++
				if r2[i] >= cfg.PowerLawR2 {
					pass++
				}
			}
			if !math.IsNaN(slope[i]) && !math.IsNaN(best[i]) && !math.IsInf(best[i], 0) {
				xs, ys = append(xs, slope[i]), append(ys, best[i])
			}
		}
		if h.N > 0 {
			h.FracR2 = float64(pass) / float64(h.N)
			h.H1 = h.FracR2 > cfg.H1Fraction
		}
		h.NRho = len(xs)
		rho, p, err := stats.Spearman(xs, ys)
		if err != nil {
			h.H2Problem = err.Error()
		} else {
			h.Rho, h.P = rho, p
			h.H2 = rho >= cfg.H2Rho
		}
		return h
	}
	out := []HypothesisRow{eval("all", func(int) bool { return true })}
	for _, v := range variants {
		out = append(out, eval(v, func(i int) bool { return d.Rows[i][vcol].(string) == v }))
	}
	return out
}

// WriteHypotheses writes the H1/H2 report as a Markdown table.
func WriteHypotheses(w io.Writer, rows []HypothesisRow, cfg Config) error {
	var b strings.Builder
	fmt.Fprintf(&b, "H1: more than %.0f%% of runs follow a power law with R² ≥ %.2f\n", 100*cfg.H1Fraction, cfg.PowerLawR2)
	fmt.Fprintf(&b, "H2: Spearman ρ(slope over epochs %g–%g, best validation loss) ≥ %.2f\n\n", cfg.EarlyLo, cfg.EarlyHi, cfg.H2Rho)
	if len(rows) > 0 {
		fmt.Fprintf(&b, "They cover the completed runs: %d of the %d runs (pruned, failed and cancelled runs are left out); \"fitted\" counts those with a power-law fit.\n\n", rows[0].Completed, rows[0].Runs)
	}
	b.WriteString("| group | runs | completed | fitted | R² ≥ thr | H1 | ρ | p | H2 |\n|---|---:|---:|---:|---:|---|---:|---:|---|\n")
	yes := func(ok bool) string {
		if ok {
			return "holds"
		}
		return "fails"
	}
	for _, r := range rows {
		h2 := yes(r.H2)
		if r.H2Problem != "" {
			h2 = "n/a (" + r.H2Problem + ")"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.1f%% | %s | %.3f | %.3g | %s |\n", r.Group, r.Runs, r.Completed, r.N, 100*r.FracR2, yes(r.H1), r.Rho, r.P, h2)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// col returns the index of the named column, or -1.
func col(d *sweep.Dataset, name string) int {
	return slices.IndexFunc(d.Columns, func(c sweep.Column) bool { return c.Name == name })
}

// floats returns the named numeric column (NaN for missing cells). It
// panics if there is no such column.
func floats(d *sweep.Dataset, name string) []float64 {
	j := col(d, name)
	if j < 0 {
		panic("curves: no such column")
	}
	out := make([]float64, len(d.Rows))
	for i, r := range d.Rows {
		switch x := r[j].(type) {
		case float64:
			out[i] = x
		case int64:
			out[i] = float64(x)
		default:
			out[i] = math.NaN()
		}
	}
	return out
}

// columnKind is the kind of a column that holds vals, decided by all of
// them (not the first): integers only → sweep.Int; integers and floats → sweep.Float;
// booleans only → sweep.Bool; anything else → sweep.String (numbers and booleans then
// keep their literal text).
func columnKind(vals []sweep.Value) sweep.Kind {
	k, first := sweep.String, true
	for _, v := range vals {
		switch {
		case first:
			k, first = v.Kind, false
		case k == v.Kind:
		case (k == sweep.Int || k == sweep.Float) && (v.Kind == sweep.Int || v.Kind == sweep.Float):
			k = sweep.Float
		default:
			return sweep.String
		}
	}
	return k
}

// cell converts a value to a cell of a column of kind k.
func cell(v sweep.Value, k sweep.Kind) any {
	switch k {
	case sweep.Int:
		return v.Int()
	case sweep.Float:
		return v.Float()
	case sweep.Bool:
		return v.Bool()
	}
	return v.Lit
}

// SchemaError reports columns a CSV lacks.
type SchemaError struct {
	Missing []string
}

func (e *SchemaError) Error() string {
	return "curves: export is missing columns: " + strings.Join(e.Missing, ", ")
}

// CheckSchema reads the header of a CSV export and returns a *SchemaError
// naming every required column it lacks (OutputColumns are the study's).
func CheckSchema(r io.Reader, required []string) error {
	header, err := csv.NewReader(r).Read()
	if err != nil {
		return fmt.Errorf("curves: reading export header: %w", err)
	}
	var missing []string
	for _, c := range required {
		if !slices.Contains(header, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return &SchemaError{Missing: missing}
	}
	return nil
}
