package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/crosscluster/crosscluster/overlap"
)

// marks are the log row's warnings: "proxy-only" when any compared job's
// regime label came from the proxy rule, "not regime-matched" when every
// regime was pooled (as overlap's reports mark them).
func marks(m overlap.Meta) []string {
	var out []string
	if m.LabelsProxy > 0 {
		out = append(out, "proxy-only")
	}
	if m.Regime == "all" {
		out = append(out, "not regime-matched")
	}
	return out
}

// entry is one row of the experiment log.
type entry struct {
	Exp    string `json:"exp"`
	Source string `json:"source"`
	Target string `json:"target"`
	Regime string `json:"regime,omitempty"`
	Basis  string `json:"regime_basis,omitempty"`
	// Marks holds "proxy-only" and "not regime-matched" where they apply.
	Marks      []string     `json:"marks,omitempty"`
	FeatureSet string       `json:"feature_set"`
	Band       overlap.Band `json:"band"`
	AUC        float64      `json:"auc"`
	Coverage   float64      `json:"coverage"`
	NInBand    int          `json:"n_target_in_band"`
	NTarget    int          `json:"n_target"`
}

// entryOf returns the log row of a result. Non-finite AUC or coverage (an
// empty domain) are recorded as -1.
func entryOf(r *overlap.Result, m overlap.Meta) entry {
	fin := func(v float64) float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return -1
		}
		return v
	}
	return entry{Exp: m.Experiment, Source: m.Source, Target: m.Target, Regime: m.Regime, Basis: m.Basis(), Marks: marks(m),
		FeatureSet: m.FeatureSet, Band: r.Band,
		AUC: fin(r.AUC), Coverage: fin(r.Coverage), NInBand: r.NTargetInBand, NTarget: r.NTarget}
}

// expLog is an experiment log: entries stored one JSON object per line, so
// a run appends a line to the file without rewriting it.
type expLog struct {
	Entries []entry
}

// errLog: a log line is not a valid entry.
var errLog = errors.New("bad experiment log line")

// readExpLog reads a log written by append. Blank lines are skipped; a bad
// line is an error wrapping errLog that names its line number.
func readExpLog(r io.Reader) (*expLog, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	l := &expLog{}
	line := 0
	for sc.Scan() {
		line++
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var e entry
		if err := json.Unmarshal([]byte(b), &e); err != nil {
			return nil, fmt.Errorf("%w %d: %w", errLog, line, err)
		}
		l.Entries = append(l.Entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w %d: %w", errLog, line+1, err)
	}
	return l, nil
}

// append adds e to the log and writes it as one JSON line to w (typically
// the log file opened with os.O_APPEND); a nil w only adds it in memory.
func (l *expLog) append(w io.Writer, e entry) error {
	l.Entries = append(l.Entries, e)
	if w == nil {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeTable renders the log as the Markdown table
// | EXP | Source→Target | Regime | Feature set | Band | AUC | Coverage |
// with AUC at 4 decimals, coverage as "v (n=k of N)" and the regime as
// "cpu_standard (proxy) proxy-only" (the basis in parentheses, then the
// row's marks; "n/a" for rows logged without a regime).
func (l *expLog) writeTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "| EXP | Source→Target | Regime | Feature set | Band | AUC | Coverage |")
	fmt.Fprintln(bw, "|---|---|---|---|---|---|---|")
	for _, e := range l.Entries {
		auc := fmt.Sprintf("%.4f", e.AUC)
		cov := fmt.Sprintf("%.4f (n=%d of %d)", e.Coverage, e.NInBand, e.NTarget)
		if e.NTarget == 0 {
			cov = "n/a (n=0 of 0)"
		}
		if e.AUC < 0 {
			auc = "n/a"
		}
		if e.Coverage < 0 {
			cov = fmt.Sprintf("n/a (n=%d of %d)", e.NInBand, e.NTarget)
		}
		reg := "n/a"
		if e.Regime != "" {
			reg = e.Regime
			if e.Basis != "" {
				reg += " (" + e.Basis + ")"
			}
		}
		for _, mk := range e.Marks {
			reg += " " + mk
		}
		fmt.Fprintf(bw, "| %s | %s→%s | %s | %s | %v | %s | %s |\n", e.Exp, e.Source, e.Target, reg, e.FeatureSet, e.Band, auc, cov)
	}
	return bw.Flush()
}
