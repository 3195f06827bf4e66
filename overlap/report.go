package overlap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Meta describes an experiment for its report and log row.
type Meta struct {
	// Experiment is the log's EXP identifier, e.g. "E1".
	Experiment string
	// Source and Target name the two clusters (or months).
	Source, Target string
	// Regime is the workload regime compared, e.g. "cpu_standard"; "all"
	// when every regime was pooled (the comparison is then not
	// regime-matched); empty when no regime was used.
	Regime string
	// LabelsAuthoritative and LabelsProxy count the compared jobs whose
	// regime label came from a hardware table and from the telemetry proxy
	// rule (regime.Bases gives both from labelled jobs).
	LabelsAuthoritative, LabelsProxy int
	// FeatureSet names the feature set, e.g. "safe".
	FeatureSet string
	// Warnings are printed with the report, e.g. a forbidden feature that
	// was asked for by name.
	Warnings []string
	// Dropped lists the candidate features left out of the set, with why.
	Dropped []DroppedFeature
	// Transfer, when set, is a transfer model's evaluation on the target
	// jobs (EvaluateTransfer), reported after the comparison with
	// TransferModel saying which model predicted what.
	Transfer      *TransferResult
	TransferModel string
	// Command and Inputs, when either is set, are written with the
	// library and Go versions and every setting Fit used as report.json's
	// "provenance" and as the footer of the Markdown report, so that a run
	// can be repeated.
	Command []string
	Inputs  []Input
}

// transferReport is report.json's "transfer".
type transferReport struct {
	Model  string          `json:"model"`
	Result *TransferResult `json:"result"`
}

// DroppedFeature is a candidate feature left out of a comparison.
type DroppedFeature struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Basis returns how the compared jobs' regimes were labelled:
// "authoritative" (every label from hardware tables), "proxy" (every
// label from the telemetry rule), "mixed", or "none" when no label counts
// were given.
func (m Meta) Basis() string {
	switch {
	case m.LabelsAuthoritative == 0 && m.LabelsProxy == 0:
		return "none"
	case m.LabelsProxy == 0:
		return "authoritative"
	case m.LabelsAuthoritative == 0:
		return "proxy"
	}
	return "mixed"
}

// proxyOnly reports whether any label used came from the proxy rule; the
// procedure then marks every result "proxy-only".
func (m Meta) proxyOnly() bool { return m.LabelsProxy > 0 }

// regimeMatched reports whether the two clusters were compared within one
// regime.
func (m Meta) regimeMatched() bool { return m.Regime != "" && m.Regime != "all" }

// regimeDefinition returns the report's regime line, e.g.
// "cpu_standard (proxy)", "cpu_standard (authoritative)",
// "gpu_standard (mixed: 120 authoritative, 30 proxy)" or
// "all regimes pooled (not regime-matched; proxy)".
func (m Meta) regimeDefinition() string {
	basis := m.Basis()
	if basis == "mixed" {
		basis = fmt.Sprintf("mixed: %d authoritative, %d proxy", m.LabelsAuthoritative, m.LabelsProxy)
	}
	switch m.Regime {
	case "":
		if basis == "none" {
			return "not stated"
		}
		return "not stated (" + basis + ")"
	case "all":
		return "all regimes pooled (not regime-matched; " + basis + ")"
	}
	return m.Regime + " (" + basis + ")"
}

// WriteRegime writes the report's regime lines as Markdown list items: the
// regime definition, then the procedure's "proxy-only" and "not
// regime-matched" marks where they apply.
func (m Meta) WriteRegime(w io.Writer) {
	fmt.Fprintf(w, "- Regime definition: %s\n", m.regimeDefinition())
	if m.proxyOnly() {
		fmt.Fprintf(w, "- **proxy-only**: %d of %d compared jobs were labelled by the telemetry proxy rule, not from hardware tables\n",
			m.LabelsProxy, m.LabelsProxy+m.LabelsAuthoritative)
	}
	if m.Regime == "all" {
		fmt.Fprintf(w, "- **not regime-matched**: jobs of every regime are pooled; differences may be differences of workload mix\n")
	}
}

// marks returns the labels a log row carries: "proxy-only" and
// "not regime-matched" where they apply.
func (m Meta) marks() []string {
	var out []string
	if m.proxyOnly() {
		out = append(out, "proxy-only")
	}
	if m.Regime == "all" {
		out = append(out, "not regime-matched")
	}
	return out
}

// coverageText formats "v (n=k of N)".
func coverageText(v float64, k, n int) string {
	if n == 0 {
		return "n/a (n=0 of 0)"
	}
	return fmt.Sprintf("%.4f (n=%d of %d)", v, k, n)
}

func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// pval formats a p-value; one that underflowed to 0 prints as "< 1e-300"
// (the smallest normal float64 is 2.2e-308).
func pval(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	if v == 0 {
		return "< 1e-300"
	}
	return fmt.Sprintf("%.3g", v)
}

// WriteMarkdown writes the report block a reviewer asks for: regime
// definition, feature set, band, domain classifier AUC, target overlap
// coverage "v (n=k of N)" and the KS table (statistic and p-value per
// feature, all jobs and in-band jobs), followed by the notes, if any. A
// Result from an empty domain gives the same block with n/a values.
func (r *Result) WriteMarkdown(w io.Writer, m Meta) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "### Overlap: %s → %s\n\n", m.Source, m.Target)
	m.WriteRegime(bw)
	fs := m.FeatureSet
	if fs == "" {
		fs = "features"
	}
	fmt.Fprintf(bw, "- Feature set: %s (%s)\n", fs, strings.Join(r.features, ", "))
	fmt.Fprintf(bw, "- Band: %v\n", r.Band)
	auc := num(r.AUC, 4) + " (in-sample"
	if iv, err := r.AUCInterval(); err == nil {
		auc += fmt.Sprintf(", 95%% CI %.4f–%.4f, DeLong SE %.4f", iv.Lo, iv.Hi, iv.SE)
	}
	auc += ")"
	if r.CrossFitFolds > 0 {
		auc += fmt.Sprintf("; cross-fitted over %d folds: %s", r.CrossFitFolds, num(r.CrossFitAUC, 4))
	}
	if math.IsNaN(r.AUC) {
		auc = "n/a"
	}
	fmt.Fprintf(bw, "- Domain classifier AUC: %s\n", auc)
	fmt.Fprintf(bw, "- Target overlap coverage: %s\n\n", coverageText(r.Coverage, r.NTargetInBand, r.NTarget))
	fmt.Fprintf(bw, "| feature | KS D (all) | p (all) | KS D (in band) | p (in band) |\n")
	fmt.Fprintf(bw, "|---|---|---|---|---|\n")
	for _, f := range r.KS {
		all, in := f.All, f.InBand
		if r.Propensity == nil {
			all.Statistic, all.PValue, in.Statistic, in.PValue = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		}
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s |\n", f.Name, num(all.Statistic, 4), pval(all.PValue), num(in.Statistic, 4), pval(in.PValue))
	}
	if len(r.KS) == 0 {
		for _, name := range r.features {
			fmt.Fprintf(bw, "| %s | n/a | n/a | n/a | n/a |\n", name)
		}
	}
	if t := m.Transfer; t != nil {
		fmt.Fprintf(bw, "\n#### Transfer: %s\n\n", m.TransferModel)
		fmt.Fprintf(bw, "%s on the target's jobs, %.0f%% bootstrap intervals (%d stratified resamples, seed %d):\n\n", t.Metric, 100*t.Level, t.Resamples, t.Seed)
		fmt.Fprintf(bw, "| target jobs | n | %s | interval |\n|---|---|---|---|\n", t.Metric)
		row := func(name string, e Estimate) {
			fmt.Fprintf(bw, "| %s | %d | %s | %s–%s |\n", name, e.N, num(e.Value, 4), num(e.Lo, 4), num(e.Hi, 4))
		}
		row("all", t.All)
		row("in band (the defensible comparison)", t.InBand)
		row("out of band", t.OutOfBand)
		fmt.Fprintf(bw, "| in band minus all | | %s | %s–%s |\n", num(t.Diff.Value, 4), num(t.Diff.Lo, 4), num(t.Diff.Hi, 4))
		for _, n := range t.Notes {
			fmt.Fprintf(bw, "\nNote: %s\n", n)
		}
	}
	for _, d := range m.Dropped {
		fmt.Fprintf(bw, "\nDropped feature %s: %s\n", d.Name, d.Reason)
	}
	for _, wn := range m.Warnings {
		fmt.Fprintf(bw, "\nWarning: %s\n", wn)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "\nNote: %s\n", n)
	}
	if r.Propensity != nil {
		// Why in-band columns read n/a (the same reason for every feature
		// when the band holds too few jobs of a domain).
		var seen []string
		for _, f := range r.KS {
			if f.InBandNote != "" && !slices.Contains(seen, f.InBandNote) {
				seen = append(seen, f.InBandNote)
				fmt.Fprintf(bw, "\nNote: KS in band n/a: %s\n", f.InBandNote)
			}
		}
	}
	if pv := r.provenanceOf(m); pv != nil {
		st := pv.Settings
		fmt.Fprintf(bw, "\n---\n\n<small>Provenance: %s, %s.", pv.Library, pv.GoVersion)
		for _, in := range pv.Inputs {
			fmt.Fprintf(bw, " %s: %s", in.Role, in.Name)
			if in.SHA256 != "" {
				fmt.Fprintf(bw, " (sha256 %s)", in.SHA256)
			}
			if in.Samples > 0 && in.Samples != in.Rows {
				fmt.Fprintf(bw, ", %d table rows", in.Samples)
			}
			fmt.Fprintf(bw, ", %d jobs, %d in the regime.", in.Rows, in.Kept)
		}
		fmt.Fprintf(bw, " Classifier: %s, C=%g, class weight %s, tolerance %g, at most %d iterations; %s. Band %v; cross-fit %d folds, seed %d; KS %s, %s; impute %v.",
			st.Solver, st.C, st.ClassWeight, st.Tolerance, st.MaxIterations, st.Standardize, st.Band, st.CrossFitFolds, st.CrossFitSeed, st.KSAlternative, st.KSMethod, st.Impute)
		if len(pv.Command) > 0 {
			fmt.Fprintf(bw, " Command: `%s`.", strings.Join(pv.Command, " "))
		}
		fmt.Fprintf(bw, "</small>\n")
	}
	return bw.Flush()
}

// report is the JSON form of a Result: the summary without per-row arrays.
type report struct {
	Experiment      string           `json:"experiment,omitempty"`
	Source          string           `json:"source"`
	Target          string           `json:"target"`
	Regime          string           `json:"regime"`
	RegimeBasis     string           `json:"regime_basis"`
	RegimeDef       string           `json:"regime_definition"`
	LabelsAuth      int              `json:"labels_authoritative"`
	LabelsProxy     int              `json:"labels_proxy"`
	ProxyOnly       bool             `json:"proxy_only"`
	RegimeMatched   bool             `json:"regime_matched"`
	Marks           []string         `json:"marks,omitempty"`
	FeatureSet      string           `json:"feature_set"`
	Features        []string         `json:"features"`
	Dropped         []DroppedFeature `json:"dropped_features,omitempty"`
	Transfer        *transferReport  `json:"transfer,omitempty"`
	Provenance      *provenance      `json:"provenance,omitempty"`
	Warnings        []string         `json:"warnings,omitempty"`
	Band            [2]float64       `json:"band"`
	AUC             *float64         `json:"auc"`
	AUCSE           *float64         `json:"auc_se_delong,omitempty"`
	AUCCI           *[2]float64      `json:"auc_ci95_delong,omitempty"`
	CrossFitAUC     *float64         `json:"crossfit_auc,omitempty"`
	CrossFitFolds   int              `json:"crossfit_folds,omitempty"`
	Coverage        *float64         `json:"target_coverage"`
	SourceCoverage  *float64         `json:"source_coverage"`
	NSource         int              `json:"n_source"`
	NTarget         int              `json:"n_target"`
	NSourceInBand   int              `json:"n_source_in_band"`
	NTargetInBand   int              `json:"n_target_in_band"`
	KS              []featureJSON    `json:"features_ks"`
	QuantileLevels  []float64        `json:"quantile_levels"`
	SourceQuantiles []float64        `json:"source_propensity_quantiles"`
	TargetQuantiles []float64        `json:"target_propensity_quantiles"`
	HistEdges       []float64        `json:"hist_edges"`
	SourceHist      []int            `json:"source_hist"`
	TargetHist      []int            `json:"target_hist"`
	ESS             *float64         `json:"kish_ess_source_odds"`
	ESSInBand       *float64         `json:"kish_ess_source_odds_in_band"`
	Solver          Solver           `json:"solver"`
	Notes           []string         `json:"notes,omitempty"`
}

// featureJSON is one feature's comparison in a report. Non-finite numbers
// are null.
type featureJSON struct {
	Name           string   `json:"name"`
	KSAll          *float64 `json:"ks_all"`
	PAll           *float64 `json:"p_all"`
	MethodAll      string   `json:"method_all"`
	KSInBand       *float64 `json:"ks_in_band"`
	PInBand        *float64 `json:"p_in_band"`
	SMD            *float64 `json:"smd"`
	VarianceRatio  *float64 `json:"variance_ratio"`
	SMDInBand      *float64 `json:"smd_in_band"`
	VarRatioInBand *float64 `json:"variance_ratio_in_band"`
	InBandNote     string   `json:"in_band_note,omitempty"`
	ImputedValues  int      `json:"imputed_values,omitempty"`
}

// fp returns a pointer to v, or nil when v is not finite (JSON has no NaN).
func fp(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// report returns the JSON form of the result.
func (r *Result) report(m Meta) report {
	rep := report{Experiment: m.Experiment, Source: m.Source, Target: m.Target, Regime: m.Regime, RegimeBasis: m.Basis(),
		RegimeDef: m.regimeDefinition(), LabelsAuth: m.LabelsAuthoritative, LabelsProxy: m.LabelsProxy,
		ProxyOnly: m.proxyOnly(), RegimeMatched: m.regimeMatched(), Marks: m.marks(), Dropped: m.Dropped, Provenance: r.provenanceOf(m), Warnings: m.Warnings, FeatureSet: m.FeatureSet,
		Features: r.features, Band: [2]float64{r.Band.Lo, r.Band.Hi}, AUC: fp(r.AUC), Coverage: fp(r.Coverage),
		SourceCoverage: fp(r.SourceCoverage), NSource: r.NSource, NTarget: r.NTarget,
		NSourceInBand: r.NSourceInBand, NTargetInBand: r.NTargetInBand, QuantileLevels: r.quantileLevels,
		SourceQuantiles: r.SourceQuantiles, TargetQuantiles: r.TargetQuantiles, HistEdges: r.HistEdges,
		SourceHist: r.SourceHist, TargetHist: r.TargetHist, ESS: fp(r.ESS), ESSInBand: fp(r.ESSInBand),
		Solver: r.Solver, Notes: r.Notes}
	if r.CrossFitFolds > 0 {
		rep.CrossFitAUC, rep.CrossFitFolds = fp(r.CrossFitAUC), r.CrossFitFolds
	}
	if iv, err := r.AUCInterval(); err == nil {
		rep.AUCSE, rep.AUCCI = fp(iv.SE), &[2]float64{iv.Lo, iv.Hi}
	}
	if math.IsNaN(rep.Solver.GradNorm) || math.IsInf(rep.Solver.GradNorm, 0) {
		rep.Solver.GradNorm = -1
	}
	if m.Transfer != nil {
		rep.Transfer = &transferReport{m.TransferModel, m.Transfer}
	}
	rep.KS = make([]featureJSON, 0, len(r.KS))
	if r.Propensity != nil {
		for _, f := range r.KS {
			rep.KS = append(rep.KS, featureJSON{Name: f.Name, KSAll: fp(f.All.Statistic), PAll: fp(f.All.PValue),
				MethodAll: f.All.Method.String(), KSInBand: fp(f.InBand.Statistic), PInBand: fp(f.InBand.PValue),
				SMD: fp(f.SMD), VarianceRatio: fp(f.VarianceRatio), SMDInBand: fp(f.SMDInBand),
				VarRatioInBand: fp(f.VarRatioInBand), InBandNote: f.InBandNote, ImputedValues: f.Imputed})
		}
	}
	return rep
}

// WriteJSON writes the report as indented JSON.
func (r *Result) WriteJSON(w io.Writer, m Meta) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.report(m))
}
