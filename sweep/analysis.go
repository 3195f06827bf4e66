package sweep

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/crosscluster/crosscluster/stats"
)

// CurveConfig names the trajectories and windows of the per-run curve
// metrics. The zero value means the study (see DefaultCurves).
type CurveConfig struct {
	X, Y             string  // curve names: x (epochs) and y (validation loss)
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
	ExtraMetrics  []string
	ParamColumns  []string // config keys exported as columns, in order
	ParamKinds    []Kind   // their kinds; empty means from the first run
}

// DefaultCurves returns the study's settings: x "epoch", y "val_loss",
// burn-in at loss ≤ 1.0, early slope over epochs 5–15, H1 R² ≥ 0.98 for more
// than 90% of runs, H2 ρ ≥ 0.7, knee ΔAIC ≥ 2.
func DefaultCurves() CurveConfig {
	return CurveConfig{X: "epoch", Y: "val_loss", BurnIn: 1.0, EarlyLo: 5, EarlyHi: 15,
		PowerLawR2: 0.98, H1Fraction: 0.90, H2Rho: 0.7, KneeDelta: stats.DefaultKneeAICDelta}
}

// Dataset columns computed by CurveDataset, after id, slug, variant and the
// parameter columns.
var CurveColumns = []string{"powerlaw_a", "powerlaw_b", "powerlaw_r2", "knee_epoch", "burnin_epoch", "burnin_loss", "slope_early", "slope_burnin_end", "best_val_loss"}

// CurveDataset builds one row per completed run from its result: the
// power-law fit of Y on X from burn-in to the end (whole curve with
// PowerLawWhole; log–log OLS with stats' Huber fallback; R² in log space), the AIC knee, burn-in epoch and loss, the OLS slopes over
// [EarlyLo, EarlyHi] and from burn-in to the end, and the best Y. A metric
// that cannot be computed for a run (too few points, non-positive loss, no
// burn-in) is NaN, which the export writes as an empty cell.
func CurveDataset(runs []Run, results map[string]*Result, cfg CurveConfig) *Dataset {
	d := &Dataset{Columns: []Column{{"run_id", String}, {"slug", String}, {"variant", String}, {"attempt", Int}}}
	params := cfg.ParamColumns
	kinds := cfg.ParamKinds
	for i, p := range params {
		k := Float
		if i < len(kinds) {
			k = kinds[i]
		} else if len(runs) > 0 {
			if v, ok := runs[0].Config[p]; ok {
				k = v.Kind
			}
		}
		d.Columns = append(d.Columns, Column{p, k})
	}
	for _, c := range CurveColumns {
		d.Columns = append(d.Columns, Column{c, Float})
	}
	for _, m := range cfg.ExtraMetrics {
		d.Columns = append(d.Columns, Column{m, Float})
	}
	for _, r := range runs {
		res, ok := results[r.ID]
		if !ok || r.State != Completed {
			continue
		}
		row := []any{r.ID, r.Slug, r.Variant, int64(r.Attempt)}
		pr := r.Params()
		for i, p := range params {
			v, ok := pr[p]
			switch {
			case !ok:
				row = append(row, nil)
			case d.Columns[4+i].Kind == String:
				row = append(row, v.Lit)
			case d.Columns[4+i].Kind == Int:
				row = append(row, v.Int())
			case d.Columns[4+i].Kind == Bool:
				row = append(row, v.Bool())
			default:
				row = append(row, v.Float())
			}
		}
		m := curveMetrics(res.Curves[cfg.X], res.Curves[cfg.Y], cfg)
		for _, c := range CurveColumns {
			row = append(row, m[c])
		}
		for _, e := range cfg.ExtraMetrics {
			v, ok := res.Metrics[e]
			if !ok {
				v = math.NaN()
			}
			row = append(row, v)
		}
		d.Rows = append(d.Rows, row)
	}
	return d
}

func curveMetrics(x, y []float64, cfg CurveConfig) map[string]float64 {
	nan := math.NaN()
	m := map[string]float64{}
	for _, c := range CurveColumns {
		m[c] = nan
	}
	if len(x) != len(y) || len(x) == 0 {
		return m
	}
	best := math.Inf(1)
	for _, v := range y {
		if v < best {
			best = v
		}
	}
	if !math.IsInf(best, 1) {
		m["best_val_loss"] = best
	}
	b := stats.BurnIn(y, cfg.BurnIn)
	fx, fy := x, y
	if b > 0 && !cfg.PowerLawWhole {
		fx, fy = x[b:], y[b:]
	}
	if pl, err := stats.FitPowerLaw(fx, fy); err == nil {
		m["powerlaw_a"], m["powerlaw_b"], m["powerlaw_r2"] = pl.A, pl.B, pl.R2
	}
	if k, err := stats.KneeAIC(x, y, cfg.KneeDelta); err == nil && k >= 0 {
		m["knee_epoch"] = x[k]
	}
	if b >= 0 {
		m["burnin_epoch"], m["burnin_loss"] = x[b], y[b]
		if s, err := stats.Slope(x, y, x[b], x[len(x)-1]); err == nil {
			m["slope_burnin_end"] = s
		}
	}
	if s, err := stats.Slope(x, y, cfg.EarlyLo, cfg.EarlyHi); err == nil {
		m["slope_early"] = s
	}
	return m
}

// HypothesisRow is H1 and H2 evaluated on one group of runs.
type HypothesisRow struct {
	Group     string
	N         int     // runs with a power-law fit
	FracR2    float64 // fraction with R² ≥ threshold
	H1        bool
	Rho, P    float64 // Spearman ρ(early slope, best loss) and its p-value
	NRho      int     // runs with both values finite
	H2        bool
	H2Problem string // why ρ could not be computed, if so
}

// Hypotheses evaluates H1 (more than H1Fraction of the runs have power-law
// R² ≥ PowerLawR2) and H2 (Spearman ρ between slope_early and best_val_loss
// ≥ H2Rho) on all runs and then on each variant, in order of first
// appearance. Runs with a NaN in the columns used are left out of that
// hypothesis.
func Hypotheses(d *Dataset, cfg CurveConfig) []HypothesisRow {
	variants := []string{}
	vcol := d.Col("variant")
	for _, r := range d.Rows {
		if v := r[vcol].(string); !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
	}
	r2, slope, best := d.Floats("powerlaw_r2"), d.Floats("slope_early"), d.Floats("best_val_loss")
	eval := func(group string, keep func(i int) bool) HypothesisRow {
		h := HypothesisRow{Group: group, Rho: math.NaN(), P: math.NaN()}
		pass := 0
		var xs, ys []float64
		for i := range d.Rows {
			if !keep(i) {
				continue
			}
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
func WriteHypotheses(w io.Writer, rows []HypothesisRow, cfg CurveConfig) error {
	var b strings.Builder
	fmt.Fprintf(&b, "H1: more than %.0f%% of runs follow a power law with R² ≥ %.2f\n", 100*cfg.H1Fraction, cfg.PowerLawR2)
	fmt.Fprintf(&b, "H2: Spearman ρ(slope over epochs %g–%g, best validation loss) ≥ %.2f\n\n", cfg.EarlyLo, cfg.EarlyHi, cfg.H2Rho)
	b.WriteString("| group | runs | R² ≥ thr | H1 | ρ | p | H2 |\n|---|---:|---:|---|---:|---:|---|\n")
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
		fmt.Fprintf(&b, "| %s | %d | %.1f%% | %s | %.3f | %.3g | %s |\n", r.Group, r.N, 100*r.FracR2, yes(r.H1), r.Rho, r.P, h2)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
