package divergence

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// formatMax prints a divergence with 6 significant digits, or NaN/+Inf.
func formatMax(v float64) string { return strconv.FormatFloat(v, 'e', 6, 64) }

// full prints a float with every digit (17 significant), NaN or ±Inf.
func full(v float64) string { return strconv.FormatFloat(v, 'g', 17, 64) }

// verdict returns "PASS", "FAIL" or "" for an unbounded row.
func (r Row) verdict() string {
	switch {
	case !r.bounded:
		return ""
	case r.Pass:
		return "PASS"
	}
	return "FAIL"
}

// index prints an element index as NumPy does, "(4, 1)"; "()" for a scalar.
func index(at []int) string {
	s := make([]string, len(at))
	for i, v := range at {
		s[i] = strconv.Itoa(v)
	}
	if len(at) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// String returns the row's console line:
//
//	box1 vs box2  z_b  max=1.234568e-12 at step 17  PASS tol=1.000000e-09
//
// followed, when a Closeness applies, by the element-wise comparison:
//
//	allclose(rtol=1e-07, atol=0): 3 of 200 elements differ, max abs 4.615261e-08 at (4, 1), max rel 2.957478e-08 at (4, 1)
//
// and by a warning when there is one.
func (r Row) String() string {
	s := fmt.Sprintf("%s vs %s  %s  max=%s", r.A, r.B, r.Key, formatMax(r.Max))
	if r.MaxStep >= 0 {
		s += fmt.Sprintf(" at step %d", r.MaxStep)
	}
	if r.exact {
		s += " (integers, exact)"
	}
	if r.bounded {
		s += "  " + r.verdict()
		if r.hasTolerance {
			s += " tol=" + formatMax(r.tolerance)
		}
	}
	if r.closeness != nil && r.Elements > 0 {
		s += fmt.Sprintf("  allclose(rtol=%g, atol=%g): %d of %d elements differ", r.closeness.RTol, r.closeness.ATol, r.Mismatched, r.Elements)
		if r.MaxAbsAt != nil {
			s += fmt.Sprintf(", max abs %s at %s", formatMax(r.MaxAbs), index(r.MaxAbsAt))
		}
		if r.MaxRelAt != nil {
			s += fmt.Sprintf(", max rel %s at %s", formatMax(r.MaxRel), index(r.MaxRelAt))
		} else if math.IsInf(r.MaxRel, 1) {
			s += ", max rel +Inf (every b is 0)"
		}
		if r.nanBoth > 0 {
			s += fmt.Sprintf(", %d NaN on both sides", r.nanBoth)
		}
	}
	if r.Warning != "" {
		s += "  warning: " + r.Warning
	}
	if r.note != "" {
		s += "  note: " + r.note
	}
	return s
}

// writeText writes one console line per row.
func writeText(w io.Writer, rows []Row) error {
	for _, r := range rows {
		if _, err := fmt.Fprintln(w, r.String()); err != nil {
			return err
		}
	}
	return nil
}

type jsonRow struct {
	A          string   `json:"a"`
	B          string   `json:"b"`
	Key        string   `json:"key"`
	Max        *float64 `json:"max"`
	MaxText    string   `json:"max_text"`
	MaxStep    *int     `json:"max_step"`
	Steps      int      `json:"steps"`
	Exact      bool     `json:"exact"`
	Elements   int      `json:"elements"`
	MaxAbs     *float64 `json:"max_abs"`
	MaxAbsText string   `json:"max_abs_text"`
	MaxAbsAt   []int    `json:"max_abs_at"`
	MaxRel     *float64 `json:"max_rel"`
	MaxRelText string   `json:"max_rel_text"`
	MaxRelAt   []int    `json:"max_rel_at"`
	NaNBoth    int      `json:"nan_both"`
	Tolerance  *float64 `json:"tolerance,omitempty"`
	RTol       *float64 `json:"rtol,omitempty"`
	ATol       *float64 `json:"atol,omitempty"`
	Mismatched *int     `json:"mismatched,omitempty"`
	Verdict    string   `json:"verdict,omitempty"`
	Warning    string   `json:"warning,omitempty"`
	Note       string   `json:"note,omitempty"`
}

// finite returns &v, or nil for NaN and ±Inf, which JSON cannot hold.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteJSON writes the rows as a JSON array of objects with fields a, b,
// key, max (null when NaN or infinite, since JSON has no such numbers),
// max_text (always set: the value with 17 significant digits, "NaN",
// "+Inf"), max_step (null when every step agrees), steps, exact, elements,
// max_abs and max_rel (with their _text and _at: the index, null when
// there is none), nan_both, tolerance, rtol, atol and mismatched (when
// bounded), verdict ("PASS"/"FAIL", when bounded), warning and note (when
// set).
func WriteJSON(w io.Writer, rows []Row) error {
	out := make([]jsonRow, len(rows))
	for i, r := range rows {
		j := jsonRow{A: r.A, B: r.B, Key: r.Key, Steps: r.steps, Warning: r.Warning, Note: r.note, Verdict: r.verdict(),
			Max: finite(r.Max), MaxText: full(r.Max), Exact: r.exact, Elements: r.Elements,
			MaxAbs: finite(r.MaxAbs), MaxAbsText: full(r.MaxAbs), MaxAbsAt: r.MaxAbsAt,
			MaxRel: finite(r.MaxRel), MaxRelText: full(r.MaxRel), MaxRelAt: r.MaxRelAt, NaNBoth: r.nanBoth}
		if r.MaxStep >= 0 {
			s := r.MaxStep
			j.MaxStep = &s
		}
		if r.hasTolerance {
			t := r.tolerance
			j.Tolerance = &t
		}
		if r.closeness != nil {
			c, m := *r.closeness, r.Mismatched
			j.RTol, j.ATol, j.Mismatched = &c.RTol, &c.ATol, &m
		}
		out[i] = j
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteCSV writes a header line and one record per row with columns a, b,
// key, max (17 significant digits, NaN, +Inf), steps, tolerance (empty when
// no tolerance applies), verdict, warning, then max_step (empty when every
// step agrees), exact, elements, max_abs, max_abs_at and max_rel,
// max_rel_at (the index as "4 1"), nan_both, and rtol, atol, mismatched
// (empty without a Closeness), and note.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"a", "b", "key", "max", "steps", "tolerance", "verdict", "warning",
		"max_step", "exact", "elements", "max_abs", "max_abs_at", "max_rel", "max_rel_at", "nan_both", "rtol", "atol", "mismatched", "note"})
	at := func(idx []int) string {
		s := make([]string, len(idx))
		for i, v := range idx {
			s[i] = strconv.Itoa(v)
		}
		return strings.Join(s, " ")
	}
	for _, r := range rows {
		tol, step, rtol, atol, mism := "", "", "", "", ""
		if r.hasTolerance {
			tol = full(r.tolerance)
		}
		if r.MaxStep >= 0 {
			step = strconv.Itoa(r.MaxStep)
		}
		if r.closeness != nil {
			rtol, atol, mism = full(r.closeness.RTol), full(r.closeness.ATol), strconv.Itoa(r.Mismatched)
		}
		cw.Write([]string{r.A, r.B, r.Key, full(r.Max), strconv.Itoa(r.steps), tol, r.verdict(), r.Warning,
			step, strconv.FormatBool(r.exact), strconv.Itoa(r.Elements), full(r.MaxAbs), at(r.MaxAbsAt),
			full(r.MaxRel), at(r.MaxRelAt), strconv.Itoa(r.nanBoth), rtol, atol, mism, r.note})
	}
	cw.Flush()
	return cw.Error()
}
