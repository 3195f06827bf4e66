package heldjobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/dagman"
	"github.com/crosscluster/crosscluster/sweep"
)

// TestSearchFailedRunIsAnError runs a search in which one run fails for
// good (no retries): the search still writes its best model of the others,
// and returns ErrFailedRuns naming the lost run unless the spec allows
// failures. A search that picked another model without a word was how a
// lost best run went unnoticed.
func TestSearchFailedRunIsAnError(t *testing.T) {
	for _, allow := range []bool{false, true} {
		name := "refused"
		text := smallSpec + "retries: 0\n"
		if allow {
			name = "allowed"
			text += "allow_failed: true\n"
		}
		t.Run(name, func(t *testing.T) {
			spec := loadSpec(t, text)
			if spec.AllowFailed != allow {
				t.Fatalf("AllowFailed %v", spec.AllowFailed)
			}
			out := t.TempDir()
			worker := Worker(filepath.Join(out, DatasetDir), nil)
			var lost string
			s := &Search{Spec: spec, Out: out, Parallel: 1, PollInterval: 10 * time.Millisecond,
				Backend: &sweep.Local{Func: func(ctx context.Context, task sweep.Task) (*sweep.Result, error) {
					if lost == "" {
						lost = task.RunID
						return nil, errors.New("the node vanished")
					}
					return worker(ctx, task)
				}}}
			oc, err := s.Run(context.Background())
			if allow {
				if err != nil {
					t.Fatal(err)
				}
			} else if !errors.Is(err, ErrFailedRuns) || !strings.Contains(err.Error(), "1 of 4") {
				t.Fatalf("error %v, want ErrFailedRuns for 1 of 4 runs", err)
			}
			if oc == nil || oc.Best < 0 || oc.Runs[oc.Best].ID == lost {
				t.Fatalf("outcome %+v", oc)
			}
			if _, err := os.Stat(filepath.Join(out, BestInfoFile)); err != nil {
				t.Errorf("the best model's info was not written: %v", err)
			}
		})
	}
}

// TestNodeCheckTimeHold: with condor.time_retry none, the training node's
// POST script records a run whose job was held for its time limit (hold
// code 46 in its event log; removed, so $RETURN is -1002) as failed at
// once instead of failing the node for a retry; a job held for another
// reason (34, memory) is still retried.
func TestNodeCheckTimeHold(t *testing.T) {
	hold := func(code int) string {
		p := filepath.Join(t.TempDir(), "train_x.log")
		body := "000 (001.000.000) 2026-11-28 07:00:00 Job submitted from host: <127.0.0.1:0>\n...\n" +
			"001 (001.000.000) 2026-11-28 07:00:01 Job executing on host: <127.0.0.1:0>\n...\n" +
			fmt.Sprintf("012 (001.000.000) 2026-11-28 09:00:01 Job was held.\n\tover the limit\n\tCode %d Subcode 0\n...\n", code) +
			"009 (001.000.000) 2026-11-28 09:30:01 Job was aborted.\n\tremoved\n...\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		failed bool
	}{
		{"time hold, no time retry", []string{"-log", hold(46), "-no-time-retry"}, 0, true},
		{"time hold, time retry", []string{"-log", hold(46)}, 1, false},
		{"memory hold, no time retry", []string{"-log", hold(34), "-no-time-retry"}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := filepath.Join(t.TempDir(), "run_x")
			var out, errs strings.Builder
			args := append([]string{"check", "-return", "-1002", "-retry", "0", "-max-retries", "2", "-id", "x", "-run", run, "-model", t.TempDir()}, tc.args...)
			if got := RunNode(context.Background(), args, &out, &errs); got != tc.code {
				t.Errorf("exit %d, want %d (%s)", got, tc.code, errs.String())
			}
			_, err := os.Stat(filepath.Join(run, FailedFile))
			if (err == nil) != tc.failed {
				t.Errorf("failed.json recorded %v, want %v", err == nil, tc.failed)
			}
			if tc.failed && !strings.Contains(errs.String(), "time limit") {
				t.Errorf("the reason does not say time limit: %s", errs.String())
			}
		})
	}
}

// TestCondorDAGAttempts: a training node that fails once (its config is
// damaged, then mended before the retry) succeeds on attempt 2. Its
// result.json, the gathered ledger (attempt 1 failed, attempt 2
// completed) and the kept output and error of each attempt all say so.
func TestCondorDAGAttempts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a DAG of processes")
	}
	want := localSmall(t)
	id := want.Runs[1].ID
	dir := filepath.Join(t.TempDir(), "dag")
	f, err := (&Condor{Spec: loadSpec(t, smallSpec), Dir: dir, Executable: os.Args[0], AllowDynamic: true}).Write()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "train", id, "config.json")
	good, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("{damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	mend := &watchFailed{match: "node train_" + id + ": failed (attempt 1)", then: func() { os.WriteFile(cfg, good, 0o644) }}
	sum, err := dagman.Run(context.Background(), f.DAG, dagman.Config{Parallel: 2, Progress: mend})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Retried != 1 || !mend.done {
		t.Fatalf("summary %+v, mended %v: want one retry", sum, mend.done)
	}
	res, err := sweep.ReadResult(filepath.Join(dir, "train", id, "run_"+id))
	if err != nil || res.Attempt != 2 {
		t.Fatalf("result.json attempt %d (%v), want 2", res.Attempt, err)
	}
	l, err := sweep.OpenLedgerReadOnly(filepath.Join(f.Results, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	atts, err := l.Attempts(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 2 || atts[0].State != sweep.Failed || atts[1].State != sweep.Completed || atts[1].Attempt != 2 {
		t.Errorf("ledger attempts %+v, want attempt 1 failed and 2 completed", atts)
	}
	for _, other := range want.Runs {
		if r, err := l.Get(context.Background(), other.ID); err != nil || other.ID != id && r.Attempt != 1 {
			t.Errorf("run %s: ledger attempt %d (%v), want 1", other.Slug, r.Attempt, err)
		}
	}
	for retry := range 2 {
		for _, ext := range []string{"out", "err"} {
			if m, _ := filepath.Glob(filepath.Join(f.Results, "logs", fmt.Sprintf("train_%s.retry%d.*.%s", id, retry, ext))); len(m) != 1 {
				t.Errorf("attempt %d's %s: %v", retry+1, ext, m)
			}
		}
	}
}

// watchFailed calls then once, when a progress line contains match.
type watchFailed struct {
	match string
	then  func()
	done  bool
}

func (w *watchFailed) Write(p []byte) (int, error) {
	if !w.done && strings.Contains(string(p), w.match) {
		w.done = true
		w.then()
	}
	return len(p), nil
}
