package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/plottest"
	"github.com/crosscluster/crosscluster/internal/testenv"
	"github.com/crosscluster/crosscluster/sweep"
)

const testSpec = `name: dash
base: {epochs: 5}
grid:
  - {key: lr, values: [0.01, 0.1, 1]}
  - {key: tag, values: [plain, "<script>alert(1)</script>"]}
`

// liveSweep starts a sweep of 6 runs whose workers stream val_loss for 5
// steps and then wait for release; the run with lr 1 and the plain tag
// fails with a log line. It returns the read-only ledger, a release
// function and a wait function for the controller.
func liveSweep(t *testing.T) (*sweep.Ledger, func(), func() error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	l, err := sweep.OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	enqueueYAML(t, l, testSpec)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	release := make(chan struct{})
	var once sync.Once
	work := func(ctx context.Context, task sweep.Task) (*sweep.Result, error) {
		ml, err := sweep.OpenMetricLog(task.Dir)
		if err != nil {
			return nil, err
		}
		defer ml.Close()
		lr := task.Params["lr"].Float()
		final := 0.0
		for step := 1; step <= 5; step++ {
			final = 1/float64(step) + math.Abs(math.Log10(lr)+1)*0.1
			if err := ml.Log("val_loss", float64(step), final); err != nil {
				return nil, err
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if lr == 1 && task.Params["tag"].Lit == "plain" {
			return nil, errors.New("loss diverged <b>badly</b>") // the backend writes it to the run's log
		}
		return &sweep.Result{Metrics: map[string]float64{"val_loss": final}}, nil
	}
	c := &sweep.Controller{Ledger: l, Backend: &sweep.Local{Func: work}, WorkDir: filepath.Join(dir, "work"),
		Parallel: 6, PollInterval: 20 * time.Millisecond, Retry: map[sweep.Class]int{sweep.ClassUnknown: 0, sweep.ClassDivergence: 0}}
	done := make(chan error, 1)
	go func() { _, err := c.Run(ctx); done <- err }()
	ro, err := sweep.OpenLedgerReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro, func() { once.Do(func() { close(release) }) }, func() error { return <-done }
}

// waitFor polls cond until it holds (the controller ingests the workers'
// metrics on its own schedule); it fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDashboard(t *testing.T) {
	l, release, wait := liveSweep(t)
	srv := httptest.NewServer(New(l, Options{Metric: "val_loss", Refresh: time.Second}))
	defer srv.Close()
	ctx := context.Background()
	waitFor(t, "every run to stream 5 steps", func() bool {
		rs, err := l.Summaries(ctx)
		if err != nil || len(rs) != 6 {
			return false
		}
		for _, r := range rs {
			if r.LatestStep["val_loss"] != 5 {
				return false
			}
		}
		return true
	})
	code, body := get(t, srv.URL+"/")
	if code != 200 {
		t.Fatalf("GET /: %d\n%s", code, body)
	}
	if n := strings.Count(body, `<tr class="run`); n != 6 {
		t.Errorf("%d run rows, want 6", n)
	}
	for _, want := range []string{"running", "<svg", "val_loss of all 6 runs that streamed it", "lr against val_loss", "&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>alert(1)") {
		t.Error("a run name reached the page unescaped")
	}
	// The runs stream val_loss at epochs 1..5 of their 5: the curves'
	// axis counts epochs, with more ticks than its two ends.
	if !strings.Contains(body, `text-anchor="middle">epoch</text>`) || strings.Contains(body, `text-anchor="middle">step</text>`) {
		t.Error("the curves' x axis is not labelled epoch")
	}
	if n := strings.Count(body, `class="tick"`); n < 12 {
		t.Errorf("%d ticks over the figures", n)
	}
	if !strings.Contains(body, `<meta http-equiv="refresh" content="1">`) {
		t.Error("a running sweep's overview does not refresh")
	}
	// Sorting by lr, descending: the first row has lr 1.
	_, sorted := get(t, srv.URL+"/?sort=lr&desc=1")
	rows := regexp.MustCompile(`<tr class="run[^"]*"[^>]*>(.*?)</tr>`).FindAllStringSubmatch(sorted, -1)
	if len(rows) != 6 || !strings.Contains(rows[0][1], `>1</td>`) || !strings.Contains(rows[5][1], `>0.01</td>`) {
		t.Errorf("sorted by lr desc: first %q, last %q", rows[0][1], rows[len(rows)-1][1])
	}
	// Filtering by name.
	if _, f := get(t, srv.URL+"/?q=script"); strings.Count(f, `<tr class="run`) != 3 {
		t.Errorf("filter q=script: %d rows, want 3", strings.Count(f, `<tr class="run`))
	}
	// Nothing outside the ledger is served.
	for _, p := range []string{"/../../etc/passwd", "/run/..%2f..%2fgo.mod", "/run/../../go.mod", "/ledger.db", "/work/runs"} {
		code, b := get(t, srv.URL+p)
		if code == 200 || strings.Contains(b, "module github.com") || strings.Contains(b, "root:") {
			t.Errorf("GET %s: %d %.80q", p, code, b)
		}
	}

	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, srv.URL+"/")
	for _, want := range []string{"completed 5", "failed 1", "Failed runs", "loss diverged", "&lt;b&gt;badly&lt;/b&gt;", `class="run best"`} {
		if !strings.Contains(body, want) {
			t.Errorf("after the sweep, the overview lacks %q", want)
		}
	}
	if strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "no longer refreshes") {
		t.Error("the overview of a finished sweep still refreshes")
	}
	// One run's page.
	id := regexp.MustCompile(`href="run/([0-9a-f]+)"`).FindStringSubmatch(body)
	if id == nil {
		t.Fatal("no run link")
	}
	code, runPage := get(t, srv.URL+"/run/"+id[1])
	if code != 200 || !strings.Contains(runPage, "<svg") || !strings.Contains(runPage, "result: val_loss") {
		t.Errorf("run page %d:\n%.300s", code, runPage)
	}
	// The failed run's page lists its attempt, with the error escaped.
	code, failed := get(t, srv.URL+"/run/base-lr1-tagplain")
	for _, want := range []string{`id="attempts"`, `<td class="r">1</td><td>failed</td>`, "loss diverged &lt;b&gt;badly&lt;/b&gt;"} {
		if code != 200 || !strings.Contains(failed, want) {
			t.Errorf("failed run's page (%d) lacks %q:\n%.2000s", code, want, failed)
		}
	}
	if code, _ := get(t, srv.URL+"/run/nope"); code != 404 {
		t.Errorf("unknown run: %d", code)
	}
}

func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		// .ci/install-deps.sh installs it: in CI the browser test must run,
		// not skip (issue 20: the dashboard is tested in Chromium in CI).
		t.Fatal("no chromium on PATH in CI; .ci/install-deps.sh should have installed it")
	}
	testenv.Skip(t, "no chromium on PATH (apt-get install chromium); the dashboard's browser test needs it")
	return ""
}

// browse runs headless Chromium on url with extra flags and returns its
// standard output.
func browse(t *testing.T, bin, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,1000", "--hide-scrollbars"}, flags...)
	out, err := exec.CommandContext(ctx, bin, append(args, url)...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", flags, err)
	}
	return string(out)
}

// TestDashboardInChromium loads the page in a real headless Chromium while
// the sweep runs and after it: the DOM the browser built has a row per run,
// the status changes as runs finish, and the screenshot is a real picture.
func TestDashboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	l, release, wait := liveSweep(t)
	srv := httptest.NewServer(New(l, Options{Metric: "val_loss", Refresh: -1}))
	defer srv.Close()
	waitFor(t, "running runs", func() bool {
		st, err := l.Status(context.Background(), 1)
		return err == nil && st.Counts[sweep.Running] == 6
	})
	dom := browse(t, bin, srv.URL+"/", "--dump-dom")
	if n := strings.Count(dom, `<tr class="run`); n != 6 || !strings.Contains(dom, "running 6") {
		t.Errorf("while running: %d rows in the DOM; status %q", n, regexp.MustCompile(`<p id="status">[^<]*`).FindString(dom))
	}
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	browse(t, bin, srv.URL+"/", "--screenshot="+shot)
	plottest.Check(t, shot, 1280, 1000)
	if dir := os.Getenv("DASHBOARD_SCREENSHOTS"); dir != "" {
		b, _ := os.ReadFile(shot)
		os.WriteFile(filepath.Join(dir, "dashboard-running.png"), b, 0o644)
	}

	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	after := browse(t, bin, srv.URL+"/", "--dump-dom")
	if !strings.Contains(after, "completed 5") || !strings.Contains(after, "failed 1") || after == dom {
		t.Errorf("after the sweep the page did not change: %q", regexp.MustCompile(`<p id="status">[^<]*`).FindString(after))
	}
	if dir := os.Getenv("DASHBOARD_SCREENSHOTS"); dir != "" {
		browse(t, bin, srv.URL+"/", "--screenshot="+filepath.Join(dir, "dashboard-done.png"))
	}
	_ = fmt.Sprint
}
