// Package dashboard serves a live, read-only view of a parameter sweep: an
// http.Handler over a sweep ledger opened read-only while a controller runs
// (sweep.OpenLedgerReadOnly), in the spirit of a Weights & Biases sweep
// page, with nothing sent off the machine.
//
// The pages are server-rendered HTML with inline SVG figures and refresh
// themselves (no JavaScript): the overview (/) shows the runs by state,
// every run's validation curve with the best highlighted, each numeric
// hyper-parameter against the final metric, a sortable and filterable runs
// table with every hyper-parameter and the latest value of every series,
// and the log tail of failed runs; /run/<id> shows one run's curves,
// parameters and log. Everything shown is escaped (html/template), and the
// handler serves no files: run logs come through the ledger, and any other
// path is 404.
//
//	l, _ := sweep.OpenLedgerReadOnly("out/losssweep/ledger.db")
//	http.ListenAndServe("127.0.0.1:8080", dashboard.New(l, dashboard.Options{Metric: "val_loss"}))
package dashboard

import (
	"cmp"
	"context"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// Options configure the dashboard. The zero value ranks runs by the first
// series name in sorted order, lower is better, refreshing every 5 s.
type Options struct {
	// Metric is the series (and completed runs' metric of the same name)
	// that ranks runs, e.g. "val_loss".
	Metric string
	// HigherIsBetter ranks by the largest Metric instead of the smallest.
	HigherIsBetter bool
	// Refresh is the pages' reload interval; 0 means 5 s, negative none.
	Refresh time.Duration
	// Title heads the pages; empty means the sweep's name.
	Title string
	// LogLines is the length of the log tails shown; 0 means 20.
	LogLines int
}

// New returns the dashboard's handler over l.
func New(l *sweep.Ledger, opt Options) http.Handler {
	if opt.Refresh == 0 {
		opt.Refresh = 5 * time.Second
	}
	if opt.LogLines <= 0 {
		opt.LogLines = 20
	}
	d := &dash{l: l, opt: opt}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.overview)
	mux.HandleFunc("GET /run/{id}", d.run)
	return mux
}

type dash struct {
	l   *sweep.Ledger
	opt Options
}

// metric returns the ranking series, the one set or the first seen.
func (d *dash) metric(runs []sweep.RunSummary) string {
	if d.opt.Metric != "" {
		return d.opt.Metric
	}
	var names []string
	for _, r := range runs {
		for k := range r.Latest {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// final is a run's value of the ranking metric: its result's metric when
// completed, else the latest streamed value.
func final(r *sweep.RunSummary, metric string) (float64, bool) {
	if v, ok := r.Metrics[metric]; ok && !math.IsNaN(v) {
		return v, true
	}
	if v, ok := r.Latest[metric]; ok && !math.IsNaN(v) {
		return v, true
	}
	return 0, false
}

type stateCount struct {
	State   string
	N       int
	Percent float64
	Color   string
}

type cell struct {
	Text  string
	Right bool
}

type row struct {
	ID, Slug, State, Color string
	Cells                  []cell
	Best                   bool
}

type failure struct {
	ID, Slug, Error, Log string
}

type overviewPage struct {
	Title, Line, Metric string
	Refresh             int
	Counts              []stateCount
	Total               int
	Columns             []string
	Sort                string
	Desc                bool
	State, Query        string
	States              []string
	Rows                []row
	Shown               int
	Curves              template.HTML
	Scatters            []template.HTML
	Failures            []failure
	Updated             string
}

var stateColors = map[sweep.State]string{
	sweep.Queued: "#999999", sweep.Running: "#0072b2", sweep.Completed: "#009e73",
	sweep.Failed: "#d55e00", sweep.Pruned: "#e69f00", sweep.Cancelled: "#cc79a7",
}

func (d *dash) overview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	runs, err := d.l.Summaries(ctx)
	if err != nil {
		http.Error(w, "reading the ledger: "+err.Error(), http.StatusInternalServerError)
		return
	}
	st, err := d.l.Status(ctx, 1)
	if err != nil {
		http.Error(w, "reading the ledger: "+err.Error(), http.StatusInternalServerError)
		return
	}
	name, _ := d.l.Name(ctx)
	p := overviewPage{Title: cmp.Or(d.opt.Title, name, "sweep"), Line: st.Line(), Total: st.Total,
		Refresh: int(d.opt.Refresh / time.Second), Updated: time.Now().Format("15:04:05")}
	for _, s := range sweep.States() {
		p.States = append(p.States, string(s))
		if n := st.Counts[s]; n > 0 {
			p.Counts = append(p.Counts, stateCount{string(s), n, 100 * float64(n) / float64(max(st.Total, 1)), stateColors[s]})
		}
	}
	metric := d.metric(runs)
	p.Metric = metric

	// Columns: state, every parameter, every series' latest value.
	params := map[string]bool{}
	series := map[string]bool{}
	for _, r := range runs {
		for k := range r.Params() {
			params[k] = true
		}
		for k := range r.Latest {
			series[k] = true
		}
	}
	pcols := slices.Sorted(mapsKeys(params))
	scols := slices.Sorted(mapsKeys(series))
	p.Columns = append(append([]string{"run", "state", "attempt"}, pcols...), scols...)

	best := d.best(runs, metric)
	q := r.URL.Query()
	p.State, p.Query = q.Get("state"), q.Get("q")
	p.Sort, p.Desc = q.Get("sort"), q.Get("desc") == "1"
	if !slices.Contains(p.Columns, p.Sort) {
		p.Sort = ""
	}
	for i := range runs {
		rs := &runs[i]
		if p.State != "" && string(rs.State) != p.State {
			continue
		}
		if p.Query != "" && !strings.Contains(strings.ToLower(rs.Slug), strings.ToLower(p.Query)) {
			continue
		}
		rw := row{ID: rs.ID, Slug: rs.Slug, State: string(rs.State), Color: stateColors[rs.State], Best: rs.ID == best}
		rw.Cells = append(rw.Cells, cell{Text: rs.Slug}, cell{Text: string(rs.State)}, cell{Text: strconv.Itoa(rs.Attempt), Right: true})
		prm := rs.Params()
		for _, k := range pcols {
			v, ok := prm[k]
			text := ""
			if ok {
				text = v.Lit
			}
			rw.Cells = append(rw.Cells, cell{Text: text, Right: ok && v.Kind != sweep.String})
		}
		for _, k := range scols {
			text := ""
			if v, ok := rs.Latest[k]; ok {
				text = strconv.FormatFloat(v, 'g', 5, 64)
				if s, ok := rs.LatestStep[k]; ok {
					text += " @" + strconv.FormatFloat(s, 'g', 4, 64)
				}
			}
			rw.Cells = append(rw.Cells, cell{Text: text, Right: true})
		}
		p.Rows = append(p.Rows, rw)
	}
	if p.Sort != "" {
		k := slices.Index(p.Columns, p.Sort)
		slices.SortStableFunc(p.Rows, func(a, b row) int {
			c := compareCells(a.Cells[k].Text, b.Cells[k].Text)
			if p.Desc {
				return -c
			}
			return c
		})
	}
	p.Shown = len(p.Rows)

	// Figures: every run's curve of the metric, the best highlighted;
	// each numeric parameter against the final metric.
	curves := map[string]sweep.Series{}
	for i := range runs {
		if runs[i].State == sweep.Queued {
			continue
		}
		s, err := d.l.Series(ctx, runs[i].ID)
		if err == nil {
			if c, ok := s[metric]; ok && len(c.Step) > 0 {
				curves[runs[i].ID] = c
			}
		}
	}
	p.Curves = curvesSVG(runs, curves, best, metric)
	for _, k := range pcols {
		if svg, ok := scatterSVG(runs, k, metric, best); ok {
			p.Scatters = append(p.Scatters, svg)
		}
	}
	for i := range runs {
		if runs[i].State != sweep.Failed {
			continue
		}
		tail, err := d.l.LogTail(ctx, runs[i].ID, d.opt.LogLines)
		if err != nil {
			tail = "(no log: " + err.Error() + ")"
		}
		p.Failures = append(p.Failures, failure{runs[i].ID, runs[i].Slug, runs[i].ErrorText, tail})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	if err := pages.ExecuteTemplate(w, "overview", p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// best returns the id of the run with the best final metric, or "".
func (d *dash) best(runs []sweep.RunSummary, metric string) string {
	id, bv := "", 0.0
	for i := range runs {
		v, ok := final(&runs[i], metric)
		if !ok {
			continue
		}
		if id == "" || (d.opt.HigherIsBetter && v > bv) || (!d.opt.HigherIsBetter && v < bv) {
			id, bv = runs[i].ID, v
		}
	}
	return id
}

// compareCells orders numbers numerically (a trailing " @step" ignored),
// empty cells last, other text as strings.
func compareCells(a, b string) int {
	if a == "" || b == "" {
		return cmp.Compare(len(b), len(a)) // empty last
	}
	fa, ea := strconv.ParseFloat(strings.Fields(a)[0], 64)
	fb, eb := strconv.ParseFloat(strings.Fields(b)[0], 64)
	if ea == nil && eb == nil {
		return cmp.Compare(fa, fb)
	}
	return strings.Compare(a, b)
}

type runPage struct {
	Title, Slug, State, Error, Log string
	Refresh                        int
	Params                         [][2]string
	Curves                         []template.HTML
	// Attempts: number, state, backend id, start, duration, error class
	// and text of each attempt, oldest first.
	Attempts [][7]string
}

func (d *dash) run(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	id := r.PathValue("id")
	runs, err := d.l.Summaries(ctx)
	if err != nil {
		http.Error(w, "reading the ledger: "+err.Error(), http.StatusInternalServerError)
		return
	}
	i := slices.IndexFunc(runs, func(s sweep.RunSummary) bool { return s.ID == id || s.Slug == id })
	if i < 0 {
		http.NotFound(w, r)
		return
	}
	rs := &runs[i]
	p := runPage{Title: rs.Slug, Slug: rs.Slug, State: string(rs.State), Error: rs.ErrorText, Refresh: int(d.opt.Refresh / time.Second)}
	prm := rs.Params()
	for _, k := range slices.Sorted(mapsKeys(prm)) {
		p.Params = append(p.Params, [2]string{k, prm[k].Lit})
	}
	for _, k := range slices.Sorted(mapsKeys(rs.Metrics)) {
		p.Params = append(p.Params, [2]string{"result: " + k, strconv.FormatFloat(rs.Metrics[k], 'g', 6, 64)})
	}
	if s, err := d.l.Series(ctx, rs.ID); err == nil {
		for _, k := range slices.Sorted(mapsKeys(s)) {
			p.Curves = append(p.Curves, seriesSVG(k, s[k]))
		}
	}
	if as, err := d.l.Attempts(ctx, rs.ID); err == nil {
		for _, a := range as {
			row := [7]string{strconv.Itoa(a.N), string(a.State), a.BackendID, "", "", string(a.ErrorClass), a.ErrorText}
			if !a.StartedAt.IsZero() {
				row[3] = a.StartedAt.UTC().Format("2006-01-02 15:04:05Z")
				if !a.FinishedAt.IsZero() {
					row[4] = a.FinishedAt.Sub(a.StartedAt).Round(time.Millisecond).String()
				}
			}
			p.Attempts = append(p.Attempts, row)
		}
	}
	if rs.State != sweep.Queued {
		if tail, err := d.l.LogTail(ctx, rs.ID, d.opt.LogLines); err == nil {
			p.Log = tail
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	if err := pages.ExecuteTemplate(w, "run", p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func mapsKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// fmtf formats an axis number briefly.
func fmtf(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
