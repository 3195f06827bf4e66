package dashboard

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// TestHostHeader: only requests naming a loopback host, the address the
// server was reached on or a configured host are served; any other name
// is refused, so that a page on another origin that rebinds its DNS name
// to 127.0.0.1 cannot read the dashboard (issue 26).
func TestHostHeader(t *testing.T) {
	l, _ := queuedLedger(t, "name: h\ngrid:\n  - {key: lr, values: [0.1, 1]}\n")
	srv := httptest.NewServer(New(l, Options{Hosts: []string{"dash.example.org"}}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		host string
		code int
	}{
		{addr, 200},
		{"localhost", 200},
		{"LOCALHOST.:9999", 200}, // another port: an SSH tunnel
		{"app.localhost:80", 200},
		{"127.0.0.1:1", 200},
		{"127.8.9.10", 200},
		{"[::1]:8080", 200},
		{"dash.example.org:8080", 200},
		{"Dash.Example.Org", 200},
		{"evil.example.com", 421},
		{"evil.example.com:" + strings.Split(addr, ":")[1], 421},
		{"localhost.evil.example.com", 421},
		{"10.11.12.13", 421},
		{"example.org", 421},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			for _, path := range []string{"/", "/run/x"} {
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				req.Host = tc.host
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := tc.code
				if want == 200 && path != "/" {
					want = 404
				}
				if resp.StatusCode != want {
					t.Errorf("GET %s with Host %q: %d, want %d: %.200s", path, tc.host, resp.StatusCode, want, b)
				}
				if want == 421 && strings.Contains(string(b), "<tr") {
					t.Errorf("refused request got the page")
				}
			}
		})
	}
}

// TestQueryBounded: a huge query is refused and not reflected; a long
// name filter is cut.
func TestQueryBounded(t *testing.T) {
	l, _ := queuedLedger(t, "name: q\ngrid:\n  - {key: lr, values: [0.1, 1]}\n")
	srv := httptest.NewServer(New(l, Options{}))
	defer srv.Close()
	big := strings.Repeat("A", 1<<20)
	code, body := get(t, srv.URL+"/?q="+big)
	if code != http.StatusRequestURITooLong || strings.Contains(body, strings.Repeat("A", 1000)) || len(body) > 1000 {
		t.Errorf("1 MB query: %d, %d bytes of body", code, len(body))
	}
	code, body = get(t, srv.URL+"/?q="+strings.Repeat("B", 900))
	if code != 200 || strings.Contains(body, strings.Repeat("B", maxFilter+1)) || !strings.Contains(body, strings.Repeat("B", maxFilter)) {
		t.Errorf("900-byte filter: %d, reflected %d Bs", code, strings.Count(body, "B"))
	}
	if code, body := get(t, srv.URL+"/?q=nothing-like-it"); code != 200 || !strings.Contains(body, "No runs match (2 in all)") {
		t.Errorf("a filter matching nothing: %d", code)
	}
	if code, body := get(t, srv.URL+"/?state=<script>&sort=<b>&page=-5"); code != 200 || strings.Contains(body, "<script>") || strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("bad state/sort/page: %d", code)
	}
}

// queuedLedger returns a ledger holding the runs of the YAML spec, none
// started, and the ID of the first.
func queuedLedger(t testing.TB, spec string) (*sweep.Ledger, string) {
	t.Helper()
	l, err := sweep.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	enqueueYAML(t, l, spec)
	runs, err := l.Runs(context.Background())
	if err != nil || len(runs) == 0 {
		t.Fatalf("Runs: %d runs, %v", len(runs), err)
	}
	return l, runs[0].ID
}

// enqueueYAML enqueues the points of a YAML spec.
func enqueueYAML(t testing.TB, l *sweep.Ledger, spec string) {
	t.Helper()
	s, err := sweep.LoadSpec(strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	seq, _, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enqueue(context.Background(), s, seq); err != nil {
		t.Fatal(err)
	}
}

// TestSortBlankCell: a parameter whose value is blank sorts without a
// panic, after the others (issue 26: a whitespace-only cell made ?sort=
// panic the handler).
func TestSortBlankCell(t *testing.T) {
	l, err := sweep.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := &sweep.Spec{Name: "blank", Axes: []sweep.Axis{
		{Key: "tag", Values: []sweep.Value{sweep.ValueOf(" "), sweep.ValueOf("b"), sweep.ValueOf("\t"), sweep.ValueOf("a")}},
		{Key: "lr", Values: []sweep.Value{sweep.ValueOf(0.1), sweep.ValueOf("  ")}},
	}}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enqueue(context.Background(), s, slices.Values(pts)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(l, Options{}))
	defer srv.Close()
	for _, q := range []string{"?sort=tag", "?sort=tag&desc=1", "?sort=lr", "?sort=lr&desc=1", "?sort=run"} {
		code, body := get(t, srv.URL+"/"+q)
		if code != 200 || strings.Count(body, `<tr class="run`) != 8 {
			t.Errorf("GET %s: %d, %d rows", q, code, strings.Count(body, `<tr class="run`))
		}
	}
}

// failedSweep runs a sweep of 4 runs that all fail with a log line, and
// returns the read-only ledger, its work directory and the runs.
func failedSweep(t *testing.T) (*sweep.Ledger, string, []sweep.Run) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	l, err := sweep.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &sweep.Spec{Name: "f", Axes: []sweep.Axis{{Key: "seed", Values: []sweep.Value{sweep.ValueOf(0), sweep.ValueOf(1), sweep.ValueOf(2), sweep.ValueOf(3)}}}}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Enqueue(ctx, s, slices.Values(pts)); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	fn := func(ctx context.Context, task sweep.Task) (*sweep.Result, error) {
		return nil, os.ErrInvalid
	}
	c := &sweep.Controller{Ledger: l, Backend: &sweep.Local{Func: fn}, WorkDir: work, Parallel: 4, PollInterval: 5 * time.Millisecond,
		Retry: map[sweep.Class]int{sweep.ClassUnknown: 0}}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	l.Close()
	ro, err := sweep.OpenLedgerReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	runs, err := ro.Runs(ctx)
	if err != nil || len(runs) != 4 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	return ro, work, runs
}

// FuzzRequest: no query, path or Host makes the handler panic or answer
// with anything but a page, a refusal or a 404.
func FuzzRequest(f *testing.F) {
	l, err := sweep.OpenLedger(filepath.Join(f.TempDir(), "ledger.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	enqueueYAML(f, l, "name: z\ngrid:\n  - {key: tag, values: [\" \", a, \"\\t\", \"<b>\"]}\n  - {key: lr, values: [0.1, 1]}\n")
	h := New(l, Options{})
	for _, s := range [][3]string{{"/", "sort=tag", "localhost"}, {"/", "sort=lr&desc=1&page=2&state=queued&q=a", "127.0.0.1:80"},
		{"/run/base-taga-lr1", "", "[::1]"}, {"/", "page=99999999999999999999&sort=%00", "evil.example"}, {"/run/%2e%2e", "q=%ff%fe", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, path, query, host string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req := &http.Request{Method: "GET", URL: &url.URL{Path: path, RawQuery: query}, Host: host, Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(context.Background()))
		switch rec.Code {
		case 200, 301, 307, 404, 421, 414:
		default:
			t.Errorf("GET %q ? %q Host %q: %d %.200s", path, query, host, rec.Code, rec.Body)
		}
	})
}
