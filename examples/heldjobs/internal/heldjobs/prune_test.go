package heldjobs

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// slowWriter makes every epoch of an in-process run last at least d
// (TrainRun writes one progress line per epoch), so that the pruner, which
// judges a value once it is 250 ms old, sees runs still going.
type slowWriter struct{ d time.Duration }

func (w slowWriter) Write(p []byte) (int, error) { time.Sleep(w.d); return len(p), nil }

// TestSearchPruned: ASHA on the validation loss, rungs at epochs 1, 2, 4,
// stops runs of a local search before their last epoch; they are pruned in
// the ledger with ASHA's reason, in the runs table with it, their epochs
// stop early in the epochs table, the search succeeds without them, and
// the best run is a completed one.
func TestSearchPruned(t *testing.T) {
	text := strings.Replace(smallSpec, "epochs: 3\npatience: 2\nmetric: f1", "epochs: 8\npatience: 8\nmetric: valid_loss", 1) +
		"prune: {rule: asha, min_epochs: 1, eta: 2}\n"
	spec := loadSpec(t, text)
	out := t.TempDir()
	backend := &sweep.Local{Func: Worker(filepath.Join(out, DatasetDir), slowWriter{150 * time.Millisecond})}
	s := &Search{Spec: spec, Out: out, Backend: backend, Parallel: 1, PollInterval: 20 * time.Millisecond}
	oc, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pruned := 0
	for _, r := range oc.Runs {
		switch r.State {
		case sweep.Pruned:
			pruned++
			if !strings.HasPrefix(r.Error, "ASHA: valid_loss") {
				t.Errorf("run %s pruned with reason %q, want ASHA's", r.Slug, r.Error)
			}
		case sweep.Completed:
			if n := r.metric("epochs"); n != 8 {
				t.Errorf("completed run %s trained %v epochs, want 8", r.Slug, n)
			}
		default:
			t.Errorf("run %s %s", r.Slug, r.State)
		}
	}
	if pruned == 0 || oc.Sweep.Pruned != pruned {
		t.Fatalf("%d runs pruned, the controller says %d; want at least one", pruned, oc.Sweep.Pruned)
	}
	if oc.Runs[oc.Best].State != sweep.Completed {
		t.Errorf("best run %s is %s", oc.Runs[oc.Best].Slug, oc.Runs[oc.Best].State)
	}
	col, rows := readCSV(t, filepath.Join(out, TrackingDir, RunsTable+".csv"))
	epochs := map[string]int{}
	ecol, erows := readCSV(t, filepath.Join(out, TrackingDir, EpochsTable+".csv"))
	for _, r := range erows {
		epochs[r[ecol["slug"]]]++
	}
	seen := 0
	for _, r := range rows {
		if r[col["state"]] != string(sweep.Pruned) {
			continue
		}
		seen++
		if !strings.Contains(r[col["error"]], "ASHA: valid_loss") {
			t.Errorf("runs.csv: pruned run %s has error %q", r[col["slug"]], r[col["error"]])
		}
		if n := epochs[r[col["slug"]]]; n < 1 || n >= 8 {
			t.Errorf("epochs.csv: pruned run %s has %d epochs, want 1 to 7", r[col["slug"]], n)
		}
	}
	if seen != pruned {
		t.Errorf("runs.csv has %d pruned runs, want %d", seen, pruned)
	}
}

// urlWriter passes on the first dashboard URL written to it.
type urlWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	url  chan string
	sent bool
}

var dashboardLine = regexp.MustCompile(`dashboard: (http://127\.0\.0\.1:\d+/)`)

func (w *urlWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := dashboardLine.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.sent = true
		w.url <- m[1]
	}
	return len(p), nil
}

// TestSearchDashboard: with Dashboard set, sweep/dashboard serves the
// search's ledger while its runs go (the runs wait until the page has been
// read): GET / answers 200 with a row for every run; after the search the
// server is closed.
func TestSearchDashboard(t *testing.T) {
	spec := loadSpec(t, smallSpec)
	out := t.TempDir()
	served := make(chan struct{})
	work := Worker(filepath.Join(out, DatasetDir), nil)
	backend := &sweep.Local{Func: func(ctx context.Context, task sweep.Task) (*sweep.Result, error) {
		select {
		case <-served:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return work(ctx, task)
	}}
	w := &urlWriter{url: make(chan string, 1)}
	s := &Search{Spec: spec, Out: out, Backend: backend, Parallel: 2, PollInterval: 20 * time.Millisecond, Progress: w, Dashboard: "127.0.0.1:0"}
	type result struct {
		oc  *Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		oc, err := s.Run(context.Background())
		done <- result{oc, err}
	}()
	var url string
	select {
	case url = <-w.url:
	case r := <-done:
		t.Fatalf("search ended (%v) without a dashboard line:\n%s", r.err, w.buf.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("no dashboard line in 2 minutes")
	}
	resp, err := http.Get(url)
	if err != nil {
		close(served)
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	close(served)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d\n%.500s", url, resp.StatusCode, body)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, run := range r.oc.Runs {
		if !bytes.Contains(body, []byte(run.Slug)) {
			t.Errorf("the dashboard has no row for run %s", run.Slug)
		}
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the dashboard still serves after the search")
	}
}
