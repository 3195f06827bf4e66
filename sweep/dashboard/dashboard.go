// Package dashboard serves a live, read-only view of a parameter sweep: an
// http.Handler over a sweep ledger opened read-only while a controller runs
// (sweep.OpenLedgerReadOnly), in the spirit of a Weights & Biases sweep
// page, with nothing sent off the machine.
//
// The pages are server-rendered HTML with inline SVG figures and refresh
// themselves until the sweep has finished (no JavaScript). The overview (/)
// shows the runs by state, the curves of the best runs, how the final
// metric is distributed, each numeric hyper-parameter against the final
// metric (one dot per run, or summaries of bins of the parameter when there
// are many runs), the runs table a page at a time, sortable and filterable,
// with every hyper-parameter and the latest value of every series, and the
// most recent failed runs with their log tails. Wherever only part of
// something is shown the page says how much ("20 best of 9,232"). /run/<id>
// shows one run's curves, parameters, attempts and log; a run's slug works
// in place of its id.
//
// The overview is built from one read of the ledger that concurrent
// requests share and that is reused until the ledger's files change; a run
// page reads its run by id. Everything shown is escaped (html/template).
// The handler serves no files: run logs are read from the work directory
// the ledger records, inside it only, never through a symbolic link or
// from anything but a regular file. It answers only requests addressed to
// a loopback name, the address it was reached on, or Options.Hosts, so
// that a web page elsewhere cannot read it through DNS rebinding.
//
//	l, _ := sweep.OpenLedgerReadOnly("out/losssweep/ledger.db")
//	http.ListenAndServe("127.0.0.1:8080", dashboard.New(l, dashboard.Options{Metric: "val_loss"}))
package dashboard

import (
	"cmp"
	"context"
	"errors"
	"html/template"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
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
	// Refresh is the pages' reload interval while the sweep runs; 0 means
	// 5 s, negative none.
	Refresh time.Duration
	// Hosts are the host names, besides loopback names and addresses and
	// the address a request came in on, that requests may name in their
	// Host header, e.g. the machine's name when the dashboard listens on
	// every interface. Others are refused (421).
	Hosts []string
}

const (
	// pageSize is the runs table's rows per page.
	pageSize = 100
	// logLines is the length of the log tails shown.
	logLines = 20
	// maxQuery bounds a request's query string, in bytes.
	maxQuery = 1024
	// maxFilter bounds the name filter, in bytes.
	maxFilter = 200
	// requestTimeout bounds the work of one request.
	requestTimeout = 20 * time.Second
)

// New returns the dashboard's handler over l.
func New(l *sweep.Ledger, opt Options) http.Handler {
	if opt.Refresh == 0 {
		opt.Refresh = 5 * time.Second
	}
	d := &dash{l: l, opt: opt, mux: http.NewServeMux()}
	d.mux.HandleFunc("GET /{$}", d.overview)
	d.mux.HandleFunc("GET /run/{id}", d.run)
	return d
}

type dash struct {
	l   *sweep.Ledger
	opt Options
	mux *http.ServeMux
	c   cache
}

func (d *dash) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !d.hostAllowed(r) {
		http.Error(w, "dashboard: this dashboard does not serve host "+strconv.Quote(trimTo(r.Host, 100))+
			" (loopback names and addresses and the address it listens on are served; Options.Hosts adds names)", http.StatusMisdirectedRequest)
		return
	}
	if len(r.URL.RawQuery) > maxQuery || len(r.URL.Path) > maxQuery {
		http.Error(w, "dashboard: request URL too long", http.StatusRequestURITooLong)
		return
	}
	d.mux.ServeHTTP(w, r)
}

// hostAllowed reports whether the request's Host names this dashboard: a
// loopback name or address, the local address of the connection, or one
// of Options.Hosts. The port is not compared: an SSH tunnel forwards
// another local port to this one.
func (d *dash) hostAllowed(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	for _, h := range d.opt.Hosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			return true
		}
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if h, _, err := net.SplitHostPort(a.String()); err == nil {
			if lip := net.ParseIP(h); lip != nil && lip.Equal(ip) {
				return true
			}
		}
	}
	return false
}

func trimTo(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// fail answers a request the ledger could not serve: 503 when the request
// ran out of time (the page would be partial), 500 otherwise.
func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "5")
	}
	http.Error(w, "reading the ledger: "+err.Error(), code)
}

var stateColors = map[sweep.State]string{
	sweep.Queued: "#999999", sweep.Running: "#0072b2", sweep.Completed: "#009e73",
	sweep.Failed: "#d55e00", sweep.Pruned: "#e69f00", sweep.Cancelled: "#cc79a7",
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

type overviewPage struct {
	Title, Line, Metric string
	Refresh             int
	Finished            bool
	Counts              []stateCount
	Total               int
	Columns             []string
	Sort                string
	Desc                bool
	State, Query        string
	States              []string
	Rows                []row
	Matching            int // rows the filter keeps
	First, Last         int // 1-based rows shown
	Page, Pages         int
	PrevURL, NextURL    string
	Curves, Hist        template.HTML
	Scatters            []template.HTML
	Failures            []failure
	NFailed             int
	Classes             []classCount
	Updated             string
	Ranked              int
	Best, Median        string
}

func (d *dash) overview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	s, err := d.snapshot(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	st := s.status
	p := overviewPage{Title: cmp.Or(s.name, "sweep"), Line: st.Line(), Total: len(s.runs),
		Finished: s.finished, Updated: s.read.Format("15:04:05"), Metric: s.metric,
		Curves: s.curves, Hist: s.hist, Scatters: s.scatters, Failures: s.failed, NFailed: s.nFailed, Classes: s.classes,
		Ranked: len(s.ranked)}
	if !s.finished && d.opt.Refresh > 0 {
		p.Refresh = max(int(d.opt.Refresh/time.Second), 1)
	}
	if len(s.ranked) > 0 {
		p.Best = fmtf(s.finals[s.ranked[0]])
		p.Median = fmtf(s.finals[s.ranked[len(s.ranked)/2]])
	}
	for _, k := range sweep.States() {
		p.States = append(p.States, string(k))
		if n := st.Counts[k]; n > 0 {
			p.Counts = append(p.Counts, stateCount{string(k), n, 100 * float64(n) / float64(max(st.Total, 1)), stateColors[k]})
		}
	}
	p.Columns = append(append([]string{"run", "state", "attempt"}, s.pcols...), s.scols...)

	q := r.URL.Query()
	if v := q.Get("state"); slices.Contains(p.States, v) {
		p.State = v
	}
	p.Query = trimTo(q.Get("q"), maxFilter)
	if v := q.Get("sort"); slices.Contains(p.Columns, v) {
		p.Sort = v
	}
	p.Desc = q.Get("desc") == "1"
	page, _ := strconv.Atoi(q.Get("page"))

	var idx []int
	lq := strings.ToLower(p.Query)
	for i := range s.runs {
		rs := &s.runs[i]
		if p.State != "" && string(rs.State) != p.State {
			continue
		}
		if lq != "" && !strings.Contains(strings.ToLower(rs.Slug), lq) {
			continue
		}
		idx = append(idx, i)
	}
	if p.Sort != "" {
		col := slices.Index(p.Columns, p.Sort)
		keys := make([]sortKey, len(s.runs))
		for _, i := range idx {
			keys[i] = s.key(i, col)
		}
		slices.SortStableFunc(idx, func(a, b int) int { return compareKeys(keys[a], keys[b], p.Desc) })
	}
	p.Matching = len(idx)
	p.Pages = max((len(idx)+pageSize-1)/pageSize, 1)
	p.Page = min(max(page, 1), p.Pages)
	lo := (p.Page - 1) * pageSize
	hi := min(lo+pageSize, len(idx))
	p.First, p.Last = min(lo+1, hi), hi
	link := func(page int) string {
		v := url.Values{}
		for k, x := range map[string]string{"state": p.State, "q": p.Query, "sort": p.Sort} {
			if x != "" {
				v.Set(k, x)
			}
		}
		if p.Desc {
			v.Set("desc", "1")
		}
		v.Set("page", strconv.Itoa(page))
		return "?" + v.Encode()
	}
	if p.Page > 1 {
		p.PrevURL = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		p.NextURL = link(p.Page + 1)
	}
	best := -1
	if len(s.ranked) > 0 {
		best = s.ranked[0]
	}
	for _, i := range idx[lo:hi] {
		p.Rows = append(p.Rows, s.row(i, i == best))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	render(w, "overview", p)
}

// render executes a page into a buffer first, so that a failure is a 500
// and not a 200 with half a page.
func render(w http.ResponseWriter, name string, data any) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write([]byte(b.String()))
}

// row is run i's row of the runs table.
func (s *snapshot) row(i int, best bool) row {
	rs := &s.runs[i]
	rw := row{ID: rs.ID, Slug: rs.Slug, State: string(rs.State), Color: stateColors[rs.State], Best: best}
	rw.Cells = append(rw.Cells, cell{Text: rs.Slug}, cell{Text: string(rs.State)}, cell{Text: strconv.Itoa(rs.Attempt), Right: true})
	prm := rs.Params()
	for _, k := range s.pcols {
		v, ok := prm[k]
		rw.Cells = append(rw.Cells, cell{Text: v.Lit, Right: ok && v.Kind != sweep.String})
	}
	for _, k := range s.scols {
		text := ""
		if v, ok := rs.Latest[k]; ok {
			text = strconv.FormatFloat(v, 'g', 5, 64)
			if st, ok := rs.LatestStep[k]; ok {
				text += " @" + strconv.FormatFloat(st, 'g', 4, 64)
			}
		}
		rw.Cells = append(rw.Cells, cell{Text: text, Right: true})
	}
	return rw
}

// sortKey is a cell's value for sorting: a number when the column holds
// one for this run, else text; missing cells sort last.
type sortKey struct {
	has, num bool
	f        float64
	s        string
}

// key is run i's sort key in column col of the runs table.
func (s *snapshot) key(i, col int) sortKey {
	rs := &s.runs[i]
	switch {
	case col == 0:
		return sortKey{has: true, s: rs.Slug}
	case col == 1:
		return sortKey{has: true, s: string(rs.State)}
	case col == 2:
		return sortKey{has: true, num: true, f: float64(rs.Attempt)}
	case col < 3+len(s.pcols):
		k := s.pcols[col-3]
		v, ok := rs.Params()[k]
		if !ok {
			return sortKey{}
		}
		if v.Kind == sweep.Int || v.Kind == sweep.Float {
			return sortKey{has: true, num: true, f: v.Float()}
		}
		return sortKey{has: true, s: v.Lit}
	}
	v, ok := rs.Latest[s.scols[col-3-len(s.pcols)]]
	if !ok || math.IsNaN(v) {
		return sortKey{}
	}
	return sortKey{has: true, num: true, f: v}
}

// compareKeys orders numbers before text, numbers numerically, text as
// strings, and missing cells last whichever the direction.
func compareKeys(a, b sortKey, desc bool) int {
	if !a.has || !b.has {
		return cmp.Compare(btoi(!a.has), btoi(!b.has))
	}
	var c int
	switch {
	case a.num && b.num:
		c = cmp.Compare(a.f, b.f)
	case a.num != b.num:
		c = cmp.Compare(btoi(!a.num), btoi(!b.num))
	default:
		c = strings.Compare(a.s, b.s)
	}
	if desc {
		return -c
	}
	return c
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

type runPage struct {
	Title, Slug, State, Error, Log string
	Refresh                        int
	Params                         [][2]string
	Curves                         []template.HTML
	// Attempts: number, state, backend id, start, duration, error class
	// and text of each attempt, oldest first.
	Attempts [][7]string
	Note     string
}

func (d *dash) run(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	id := r.PathValue("id")
	run, err := d.l.Get(ctx, id)
	if errors.Is(err, sweep.ErrNoRun) {
		// Perhaps a slug: the overview's read knows them.
		s, serr := d.snapshot(ctx)
		if serr != nil {
			fail(w, serr)
			return
		}
		i, ok := s.bySlug[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		run, err = d.l.Get(ctx, s.runs[i].ID)
	}
	if err != nil {
		fail(w, err)
		return
	}
	ser, err := d.l.Series(ctx, run.ID)
	if err != nil {
		fail(w, err)
		return
	}
	atts, err := d.l.Attempts(ctx, run.ID)
	if err != nil {
		fail(w, err)
		return
	}
	wd, err := d.l.WorkDir(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	p := runPage{Title: run.Slug, Slug: run.Slug, State: string(run.State), Error: run.ErrorText}
	if d.opt.Refresh > 0 && (run.State == sweep.Queued || run.State == sweep.Running) {
		p.Refresh = max(int(d.opt.Refresh/time.Second), 1)
	}
	prm := run.Params()
	for _, k := range slices.Sorted(maps.Keys(prm)) {
		p.Params = append(p.Params, [2]string{k, prm[k].Lit})
	}
	if run.State == sweep.Completed {
		m, err := d.resultMetrics(ctx, run)
		if err != nil {
			fail(w, err)
			return
		}
		if m == nil {
			p.Note = "This run's result metrics changed while the page was read; reload to see them."
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			p.Params = append(p.Params, [2]string{"result: " + k, strconv.FormatFloat(m[k], 'g', 6, 64)})
		}
	}
	rs := &sweep.RunSummary{Run: run}
	for _, k := range slices.Sorted(maps.Keys(ser)) {
		p.Curves = append(p.Curves, seriesSVG(k, ser[k], d.stepName([]*sweep.RunSummary{rs}, []sweep.Series{ser[k]})))
	}
	for _, a := range atts {
		row := [7]string{strconv.Itoa(a.Attempt), string(a.State), a.BackendID, "", "", string(a.ErrorClass), a.ErrorText}
		if !a.StartedAt.IsZero() {
			row[3] = a.StartedAt.UTC().Format("2006-01-02 15:04:05Z")
			if !a.FinishedAt.IsZero() {
				row[4] = a.FinishedAt.Sub(a.StartedAt).Round(time.Millisecond).String()
			}
		}
		p.Attempts = append(p.Attempts, row)
	}
	if run.State != sweep.Queued {
		tail, err := d.logTail(wd, run.ID, run.Attempt)
		if err != nil {
			tail = "(no log: " + err.Error() + ")"
		}
		p.Log = tail
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	render(w, "run", p)
}

// resultMetrics returns a completed run's result metrics. The ledger's
// read API gives them with the runs' summaries only, so they come from
// the overview's read when that shows this attempt completed, else from a
// new read (shared with concurrent requests). Nil when the run changed
// between the two reads.
func (d *dash) resultMetrics(ctx context.Context, run sweep.Run) (map[string]float64, error) {
	match := func(s *snapshot) map[string]float64 {
		if s == nil {
			return nil
		}
		i, ok := s.byID[run.ID]
		if !ok {
			return nil
		}
		c := &s.runs[i]
		if c.Attempt != run.Attempt || c.State != run.State || !c.FinishedAt.Equal(run.FinishedAt) {
			return nil
		}
		return c.Metrics
	}
	d.c.mu.Lock()
	cur := d.c.cur
	d.c.mu.Unlock()
	if m := match(cur); m != nil {
		return m, nil
	}
	s, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return match(s), nil
}
