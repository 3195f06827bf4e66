package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMetricsStreamed: a run logs two series at different frequencies; the
// values are readable from a read-only ledger while the run goes on, and
// end up in the result, the export and the read API with their own steps.
func TestMetricsStreamed(t *testing.T) {
	ctx := context.Background()
	l, path := openTemp(t)
	mustEnqueue(t, l, gridSpec("m", 1, nil))
	release := make(chan struct{})
	fn := func(ctx context.Context, task Task) (*Result, error) {
		ml, err := OpenMetricLog(task.Dir)
		if err != nil {
			return nil, err
		}
		defer ml.Close()
		for i := 1; i <= 8; i++ {
			e := float64(i) / 4
			ml.Log("val_loss", e, 2/e)
			if i%4 == 0 {
				ml.Log("accuracy", e, 0.5+e/10)
			}
			if i == 4 {
				<-release // hold the run half-way until the test has looked
			}
		}
		ml.Log("val_loss", 2.25, math.NaN())
		return &Result{Metrics: map[string]float64{"final": 1}}, nil
	}
	work := t.TempDir()
	c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: work, PollInterval: 5 * time.Millisecond}
	done := make(chan error, 1)
	go func() { _, err := c.Run(ctx); done <- err }()
	ro, err := OpenLedgerReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var id string
	waitFor(t, func() bool {
		rs, _ := ro.Summaries(ctx, Running)
		if len(rs) == 1 && rs[0].LatestStep["val_loss"] == 1 && rs[0].LatestStep["accuracy"] == 1 {
			id = rs[0].ID
			return true
		}
		return false
	})
	ss, err := ro.Series(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss["val_loss"].Step) != 4 || len(ss["accuracy"].Step) != 1 {
		t.Errorf("mid-run series %+v", ss)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ss, _ = ro.Series(ctx, id)
	vl := ss["val_loss"]
	if !slices.Equal(vl.Step, []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25}) || !math.IsNaN(vl.Value[8]) || vl.Value[0] != 8 {
		t.Errorf("val_loss %+v", vl)
	}
	if acc := ss["accuracy"]; !slices.Equal(acc.Step, []float64{1, 2}) {
		t.Errorf("accuracy %+v", acc)
	}
	sum, _ := ro.Summaries(ctx)
	if sum[0].Metrics["final"] != 1 || !math.IsNaN(sum[0].Latest["val_loss"]) || sum[0].LatestStep["val_loss"] != 2.25 {
		t.Errorf("summary %+v", sum[0])
	}
	results, _, err := l.Collect(ctx, work, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if s := results[id].Series["accuracy"]; len(s.Step) != 2 {
		t.Errorf("collected series %+v", results[id].Series)
	}
}

// TestMetricLogPartialLine: a line cut short at the end is not read; a
// malformed whole line fails the run as corrupt, naming file and line.
func TestMetricLogPartialLine(t *testing.T) {
	dir := t.TempDir()
	ml, err := OpenMetricLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	ml.Log("a", 1, 1)
	ml.Close()
	f, _ := os.OpenFile(filepath.Join(dir, MetricFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"series":"a","step":2,"val`)
	f.Close()
	ss, err := readMetricLog(dir)
	if err != nil || len(ss["a"].Step) != 1 {
		t.Fatalf("partial last line: %+v, %v", ss, err)
	}
	os.WriteFile(filepath.Join(dir, MetricFile), []byte("{\"series\":\"a\",\"step\":1,\"value\":1}\nnot json\n"), 0o644)
	_, err = readMetricLog(dir)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), MetricFile) {
		t.Errorf("malformed line: %v", err)
	}
}

func FuzzReadMetricLog(f *testing.F) {
	f.Add([]byte("{\"series\":\"val_loss\",\"step\":0.25,\"value\":1.5,\"time\":1764000000.123}\n"))
	f.Add([]byte("{\"series\":\"a\",\"step\":1,\"value\":\"nan\"}\n{\"series\":\"a\",\"step\":2,\"value\":\"inf\"}\n{\"seri"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, MetricFile), b, 0o644)
		ss, err := readMetricLog(dir)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for k, s := range ss {
			if k == "" || len(s.Step) != len(s.Value) {
				t.Fatalf("bad series %q %+v", k, s)
			}
		}
	})
}

// TestHook: the notification command gets the summary on stdin when the
// sweep finishes, and when a run fails for good after several attempts.
func TestHook(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	mustEnqueue(t, l, gridSpec("h", 3, map[string]Value{"batch_size": intValue(64)}))
	out := filepath.Join(t.TempDir(), "events")
	fn := func(ctx context.Context, task Task) (*Result, error) {
		if task.Params["seed"].Int() == 2 {
			return nil, errors.New("fatal error: runtime: out of memory") // OOM: retried 3 times
		}
		return &Result{Metrics: map[string]float64{"best": 1}}, nil
	}
	c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: t.TempDir(),
		Hook: []string{"sh", "-c", `{ printf '%s ' "$SWEEP_EVENT"; cat; } >> "$0"`, out}}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "run_failed {") || !strings.HasPrefix(lines[1], "finished {") {
		t.Fatalf("events:\n%s", b)
	}
	var failed, finished hookEvent
	json.Unmarshal([]byte(strings.TrimPrefix(lines[0], "run_failed ")), &failed)
	json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "finished ")), &finished)
	if failed.Slug != "base-s2" || len(failed.Attempts) != 4 || !strings.Contains(failed.Attempts[3], "oom") {
		t.Errorf("run_failed event %+v", failed)
	}
	if finished.Counts["completed"] != 2 || finished.Counts["failed"] != 1 || finished.Summary == nil || finished.Summary.Completed != 2 || finished.Sweep != "h" {
		t.Errorf("finished event %+v", finished)
	}
	// A failing command does not stop the sweep; Run reports it at the end.
	l2, _ := openTemp(t)
	mustEnqueue(t, l2, gridSpec("h2", 1, nil))
	c = &Controller{Ledger: l2, Backend: &Local{Func: fn}, WorkDir: t.TempDir(), Hook: []string{"sh", "-c", "echo no mail >&2; exit 3"}}
	sum, err := c.Run(ctx)
	if !errors.Is(err, ErrHook) || sum.Completed != 1 || !strings.Contains(err.Error(), "no mail") {
		t.Errorf("failing hook: %+v, %v", sum, err)
	}
}
