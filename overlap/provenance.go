package overlap

import (
	"runtime"

	"github.com/crosscluster/crosscluster/internal/buildinfo"
)

// settings are every setting Fit used, as a report records them so that a
// run can be repeated exactly.
type settings struct {
	C              float64   `json:"C"`
	ClassWeight    string    `json:"class_weight"` // none or balanced
	Solver         string    `json:"solver"`
	Tolerance      float64   `json:"tolerance"`
	MaxIterations  int       `json:"max_iterations"`
	Standardize    string    `json:"standardize"`
	Band           Band      `json:"band"`
	CrossFitFolds  int       `json:"crossfit_folds"`
	CrossFitSeed   uint64    `json:"crossfit_seed"`
	KSAlternative  string    `json:"ks_alternative"`
	KSMethod       string    `json:"ks_method"`
	Impute         bool      `json:"impute"`
	HistogramBins  int       `json:"histogram_bins"`
	QuantileLevels []float64 `json:"quantile_levels"`
}

// settings returns the settings the result was fitted with.
func (r *Result) settings() settings {
	cw := "none"
	if r.cfg.cw != 0 {
		cw = "balanced"
	}
	return settings{
		C: r.cfg.c, ClassWeight: cw,
		Solver:    "exact L2-penalised Newton (stats.LogisticRegression), intercept unpenalised",
		Tolerance: 1e-12, MaxIterations: 100,
		Standardize:   "each feature to mean 0 and population sd 1 over both domains (stats.FitStandardizer)",
		Band:          r.Band,
		CrossFitFolds: r.cfg.folds, CrossFitSeed: r.cfg.seed,
		KSAlternative: r.cfg.alt.String(), KSMethod: r.cfg.method.String(),
		Impute: r.cfg.impute, HistogramBins: r.cfg.bins, QuantileLevels: r.cfg.levels,
	}
}

// Input is one input file of a comparison, for the provenance record.
type Input struct {
	Role   string `json:"role"` // source or target
	Name   string `json:"name"` // the path given, or a description of generated data
	SHA256 string `json:"sha256,omitempty"`
	Rows   int    `json:"rows"`           // jobs read
	Kept   int    `json:"rows_in_regime"` // jobs left after the regime filter
	// Samples is the number of table rows the jobs were aggregated from
	// (telemetry samples; equal to Rows for one row per job), 0 when not
	// counted.
	Samples int `json:"table_rows,omitempty"`
}

// provenance records what a report needs to be reproduced: the library and
// Go versions, the inputs with their checksums and row counts, the command
// and every setting.
type provenance struct {
	Library   string   `json:"library"`
	GoVersion string   `json:"go_version"`
	Command   []string `json:"command,omitempty"`
	Inputs    []Input  `json:"inputs"`
	Settings  settings `json:"settings"`
}

// libraryVersion returns this module's version as the running binary
// records it: the module version, or the VCS revision (with "+dirty" for
// uncommitted changes) when built from a checkout, or "(devel)".
func libraryVersion() string {
	const mod = "github.com/crosscluster/crosscluster"
	v := buildinfo.ModuleVersion(mod)
	if rev, dirty, ok := buildinfo.Revision(); v == "" && ok {
		v = rev
		if dirty {
			v += "+dirty"
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return mod + " " + v
}

// provenanceOf returns the record of r with the running library and Go
// versions and m's command and inputs, or nil when m has neither.
func (r *Result) provenanceOf(m Meta) *provenance {
	if m.Command == nil && m.Inputs == nil {
		return nil
	}
	return &provenance{Library: libraryVersion(), GoVersion: runtime.Version(), Command: m.Command, Inputs: m.Inputs, Settings: r.settings()}
}
