package sweep

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func openTemp(t testing.TB) (*Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

func TestLedgerTransitions(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	pts := mustEnqueue(t, l, gridSpec("t", 3, map[string]Value{"batch_size": intValue(64)}))
	// Enqueue again: idempotent.
	if n, err := l.Enqueue(ctx, nil, slices.Values(pts)); err != nil || n != 0 {
		t.Fatalf("re-enqueue added %d, %v", n, err)
	}
	id := pts[0].ID
	if err := l.complete(ctx, id); err == nil {
		t.Fatal("queued→completed allowed")
	} else {
		var te *TransitionError
		if !errors.As(err, &te) || te.actual != Queued {
			t.Fatalf("error %v", err)
		}
	}
	if n, err := l.start(ctx, id, ""); err != nil || n != 1 {
		t.Fatalf("Start = %d, %v", n, err)
	}
	if err := l.setBackendID(ctx, id, "job_1"); err != nil {
		t.Fatal(err)
	}
	if err := l.fail(ctx, id, ClassOOM, "CUDA out of memory"); err != nil {
		t.Fatal(err)
	}
	if err := l.retry(ctx, id, map[string]Value{"batch_size": intValue(32)}); err != nil {
		t.Fatal(err)
	}
	if n, err := l.start(ctx, id, "job_2"); err != nil || n != 2 {
		t.Fatalf("second Start = %d, %v", n, err)
	}
	if err := l.complete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := l.complete(ctx, id); err == nil {
		t.Fatal("completed twice")
	}
	r, err := l.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != Completed || r.Attempt != 2 || r.Completions != 1 || r.Params()["batch_size"].Int() != 32 || r.Config["batch_size"].Int() != 64 {
		t.Errorf("run after retry: %+v", r)
	}
	atts, err := l.Attempts(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 2 || atts[0].State != Failed || atts[0].ErrorClass != ClassOOM || atts[0].BackendID != "job_1" || atts[1].State != Completed || atts[1].overrides["batch_size"].Int() != 32 {
		t.Errorf("attempts: %+v", atts)
	}
	if err := l.cancel(ctx, pts[1].ID, "user"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Get(ctx, "nope"); !errors.Is(err, ErrNoRun) {
		t.Errorf("unknown run: %v", err)
	}
	st, err := l.Status(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 3 || st.Counts[Completed] != 1 || st.Counts[Cancelled] != 1 || st.Counts[Queued] != 1 {
		t.Errorf("status %+v", st)
	}
	var b strings.Builder
	if err := st.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "completed        1   33.3%") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestSecondControllerRefused(t *testing.T) {
	l, path := openTemp(t)
	_, err := OpenLedger(path)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "pid") {
		t.Errorf("error does not name the holder: %v", err)
	}
	ro, err := OpenLedgerReadOnly(path)
	if err != nil {
		t.Fatalf("read-only open while locked: %v", err)
	}
	ro.Close()
	l.Close()
	l2, err := OpenLedger(path)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	l2.Close()
}

func TestStatusAlerts(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	pts := mustEnqueue(t, l, gridSpec("a", 10, nil))
	now := time.Unix(1_700_000_000, 0)
	l.now = func() time.Time { return now }
	for i, p := range pts {
		if _, err := l.start(ctx, p.ID, "x"); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Second)
		switch {
		case i < 7:
			l.complete(ctx, p.ID)
		case i < 9:
			l.fail(ctx, p.ID, ClassUnknown, "boom")
		}
	}
	now = now.Add(time.Hour)
	st, err := l.Status(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if st.meanRun != 10*time.Second {
		t.Errorf("mean run %v, want 10s", st.meanRun)
	}
	if len(st.alerts) != 2 || !strings.Contains(st.alerts[0], "failure rate 22.2%") || !strings.Contains(st.alerts[1], "1 run(s) running longer") {
		t.Errorf("alerts %q", st.alerts)
	}
	if st.eta != 5*time.Second {
		t.Errorf("ETA %v, want 5s (1 remaining × 10 s / 2)", st.eta)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		state, log string
		want       Class
	}{
		{"OUT_OF_MEMORY", "", ClassOOM},
		{"TIMEOUT", "", ClassTimeout},
		{"NODE_FAIL", "", ClassInfrastructure},
		{"PREEMPTED", "", ClassInfrastructure},
		{"CANCELLED by 0", "", ClassCancelled},
		{"FAILED", "RuntimeError: CUDA out of memory. Tried to allocate", ClassOOM},
		{"", "fatal error: runtime: out of memory", ClassOOM},
		{"", "epoch 3: loss nan", ClassDivergence},
		{"", "train loss is inf at step 9", ClassDivergence},
		{"", "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024 DUE TO TIME LIMIT ***", ClassTimeout},
		{"FAILED", "segfault", ClassUnknown},
	}
	for _, tc := range tests {
		if got := classify(tc.state, tc.log); got != tc.want {
			t.Errorf("classify(%q, %q) = %s, want %s", tc.state, tc.log, got, tc.want)
		}
	}
	p := defaultRetry()
	params := map[string]Value{"batch_size": intValue(40)}
	if got := p.adjust(ClassOOM, params)["batch_size"].Int(); got != 20 {
		t.Errorf("halved 40 → %d", got)
	}
	params["batch_size"] = intValue(20)
	if got := p.adjust(ClassOOM, params)["batch_size"].Int(); got != minBatchSize {
		t.Errorf("halved 20 → %d, want floor %d", got, minBatchSize)
	}
	if p.adjust(ClassTimeout, params) != nil {
		t.Error("timeout adjusted the batch size")
	}
}

// TestPermute: permute puts s[idx[k]] at k, in place, for every shape of
// cycles (identity, one long cycle, swaps, fixed points among them).
func TestPermute(t *testing.T) {
	for _, idx := range [][]int32{{}, {0}, {0, 1, 2}, {1, 2, 3, 0}, {1, 0, 3, 2}, {2, 1, 0, 4, 3}, {4, 0, 2, 1, 3}} {
		s := make([]string, len(idx))
		want := make([]string, len(idx))
		for i := range s {
			s[i] = strconv.Itoa(i)
		}
		for k, j := range idx {
			want[k] = s[j]
		}
		permute(s, idx)
		if !slices.Equal(s, want) {
			t.Errorf("permute by %v: %v, want %v", idx, s, want)
		}
	}
}
