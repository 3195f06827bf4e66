package divergence

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// formatMax prints a divergence with 6 significant digits, or NaN/+Inf.
func formatMax(v float64) string { return strconv.FormatFloat(v, 'e', 6, 64) }

// verdict returns "PASS", "FAIL" or "" for an unbounded row.
func (r Row) verdict() string {
	switch {
	case !r.Bounded:
		return ""
	case r.Pass:
		return "PASS"
	}
	return "FAIL"
}

// String returns the row's console line:
//
//	box1 vs box2  z_b  max=1.234568e-12  PASS tol=1.000000e-09  warning: ...
func (r Row) String() string {
	s := fmt.Sprintf("%s vs %s  %s  max=%s", r.A, r.B, r.Key, formatMax(r.Max))
	if r.Bounded {
		s += fmt.Sprintf("  %s tol=%s", r.verdict(), formatMax(r.Tolerance))
	}
	if r.Warning != "" {
		s += "  warning: " + r.Warning
	}
	return s
}

// WriteText writes one console line per row.
func WriteText(w io.Writer, rows []Row) error {
	for _, r := range rows {
		if _, err := fmt.Fprintln(w, r.String()); err != nil {
			return err
		}
	}
	return nil
}

type jsonRow struct {
	A         string   `json:"a"`
	B         string   `json:"b"`
	Key       string   `json:"key"`
	Max       *float64 `json:"max"`
	MaxText   string   `json:"max_text"`
	Steps     int      `json:"steps"`
	Tolerance *float64 `json:"tolerance,omitempty"`
	Verdict   string   `json:"verdict,omitempty"`
	Warning   string   `json:"warning,omitempty"`
}

// WriteJSON writes the rows as a JSON array of objects with fields a, b,
// key, max (null when NaN or infinite, since JSON has no such numbers),
// max_text (always set: the value with 17 significant digits, "NaN",
// "+Inf"), steps, tolerance and verdict ("PASS"/"FAIL", when bounded) and
// warning (when set).
func WriteJSON(w io.Writer, rows []Row) error {
	out := make([]jsonRow, len(rows))
	for i, r := range rows {
		j := jsonRow{A: r.A, B: r.B, Key: r.Key, Steps: r.Steps, Warning: r.Warning, Verdict: r.verdict(),
			MaxText: strconv.FormatFloat(r.Max, 'g', 17, 64)}
		if !math.IsNaN(r.Max) && !math.IsInf(r.Max, 0) {
			m := r.Max
			j.Max = &m
		}
		if r.Bounded {
			t := r.Tolerance
			j.Tolerance = &t
		}
		out[i] = j
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteCSV writes a header line and one record per row with columns a, b,
// key, max (17 significant digits, NaN, +Inf), steps, tolerance (empty when
// unbounded), verdict and warning.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"a", "b", "key", "max", "steps", "tolerance", "verdict", "warning"})
	for _, r := range rows {
		tol := ""
		if r.Bounded {
			tol = strconv.FormatFloat(r.Tolerance, 'g', 17, 64)
		}
		cw.Write([]string{r.A, r.B, r.Key, strconv.FormatFloat(r.Max, 'g', 17, 64), strconv.Itoa(r.Steps), tol, r.verdict(), r.Warning})
	}
	cw.Flush()
	return cw.Error()
}
