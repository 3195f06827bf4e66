package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/plottest"
	"github.com/crosscluster/crosscluster/sweep"
)

func writeSpec(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUserSpecCheckedFirst: a user's spec that cannot train fails before
// any work (no ledger, no output), with an error naming the run, the
// parameter and what to write (issue 12: every run failed with "invalid
// hidden 0, batch_size 0", then the plot panicked).
func TestUserSpecCheckedFirst(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"the issue's spec", "name: mine\nbase: {epochs: 2}\ngrid: [{key: lr, values: [0.1]}, {key: seed, values: [0]}]",
			[]string{"has no parameter hidden", "e.g. base: {hidden: 32}", "has no parameter batch_size", "nothing was started"}},
		{"zero batch", "name: z\nbase: {epochs: 2, batch_size: 0, hidden: 8, norm: batch, optimizer: sgd, weight_decay: 0, lr: 0.1, seed: 1}",
			[]string{`batch_size is "0"`, "an integer in 1..512"}},
		{"unknown optimizer", "name: o\nbase: {epochs: 2, batch_size: 32, hidden: 8, norm: batch, optimizer: adam, weight_decay: 0, lr: 0.1, seed: 1}",
			[]string{`optimizer is "adam"`, "sgd or adamw"}},
		{"unread parameter", "name: u\nbase: {epochs: 2, batch_size: 32, hidden: 8, norm: batch, optimizer: sgd, weight_decay: 0, lr: 0.1, seed: 1, dropout: 0.1}",
			[]string{"parameter dropout", "not read by the trainer"}},
		{"spec syntax", "name: s\ngrid: [{key: lr, vals: [1]}]", []string{"grid[0].vals", "unknown key"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var buf bytes.Buffer
			_, err := run(context.Background(), config{out: out, backend: "local", workers: 1, spec: writeSpec(t, tc.yaml), prune: "none"}, &buf)
			if err == nil {
				t.Fatalf("no error; output:\n%s", buf.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory created for a spec that cannot run: %v", err)
			}
		})
	}
}

const smallSpec = `
name: small
base: {epochs: 2, batch_size: 32, hidden: 8, norm: batch, optimizer: sgd, weight_decay: 1e-3}
grid:
  - {key: lr, values: [0.1], when: {optimizer: sgd}}
  - {key: lr, values: [0.01], when: {optimizer: adamw}}
  - {key: seed, short: s, values: [0, 1]}
variants:
  - {name: base}
  - {name: adamw, set: {optimizer: adamw}}
`

// TestEpochsInIdentity: a run with -epochs 1 is not taken for one with
// -epochs 2 on the same ledger (issue 15 item 4).
func TestEpochsInIdentity(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	spec := writeSpec(t, smallSpec)
	for i, e := range []int{1, 2, 1} {
		var buf bytes.Buffer
		code, err := run(context.Background(), config{out: out, backend: "local", workers: 2, spec: spec, epochs: e, prune: "none"}, &buf)
		if err != nil || code != 0 {
			t.Fatalf("-epochs %d: %d %v\n%s", e, code, err, buf.String())
		}
		want := []string{"4 runs enqueued", "4 runs enqueued", "resuming"}[i]
		if !strings.Contains(buf.String(), want) {
			t.Errorf("-epochs %d (invocation %d): output lacks %q:\n%s", e, i+1, want, buf.String())
		}
		if i == 1 && !strings.Contains(buf.String(), "ledger holds 8 runs") {
			t.Errorf("-epochs 2 after -epochs 1 did not add 4 new runs:\n%s", buf.String())
		}
		if !strings.Contains(buf.String(), "(4 rows, schema ok)") {
			t.Errorf("-epochs %d: the export does not hold this spec's 4 runs only:\n%s", e, buf.String())
		}
		if i == 2 && !strings.Contains(buf.String(), "0 completed, 0 failed, 0 pruned, 0 retried this invocation") {
			t.Errorf("-epochs 1 again recomputed runs:\n%s", buf.String())
		}
	}
}

// TestIncompleteExitsNonZero: a sweep with a failed run exits 1, and the
// repair flags find, requeue and list it.
func TestIncompleteExitsNonZero(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	// lr 1e300 diverges (NaN loss): class divergence, 2 retries, then failed.
	spec := writeSpec(t, strings.Replace(smallSpec, "values: [0.1], when", "values: [0.1, 1e300], when", 1))
	cfg := config{out: out, backend: "local", workers: 2, spec: spec, prune: "none"}
	var buf bytes.Buffer
	code, err := run(context.Background(), cfg, &buf)
	if err != nil || code != 1 {
		t.Fatalf("code %d, err %v, want 1 (incomplete)\n%s", code, err, buf.String())
	}
	if !strings.Contains(buf.String(), "sweep incomplete: 4/6 runs completed (2 failed") {
		t.Errorf("output lacks the verdict:\n%s", buf.String())
	}
	plottest.Check(t, filepath.Join(out, "curves.png"), 800, 500)
	list := cfg
	list.list = "failed"
	buf.Reset()
	if _, err := run(context.Background(), list, &buf); err != nil || strings.Count(buf.String(), "[divergence]") != 2 {
		t.Errorf("-list failed: %v\n%s", err, buf.String())
	}
	rq := cfg
	rq.requeue = "failed"
	buf.Reset()
	if _, err := run(context.Background(), rq, &buf); err != nil || !strings.Contains(buf.String(), "2 run(s) requeued") {
		t.Errorf("-requeue failed: %v\n%s", err, buf.String())
	}
	st := cfg
	st.status = true
	buf.Reset()
	if _, err := run(context.Background(), st, &buf); err != nil || !strings.Contains(buf.String(), "queued           2") {
		t.Errorf("-status: %v\n%s", err, buf.String())
	}
	cn := cfg
	cn.cancel = "queued"
	buf.Reset()
	if _, err := run(context.Background(), cn, &buf); err != nil || !strings.Contains(buf.String(), "2 run(s) cancelled now, 2 cancelled in the ledger") {
		t.Errorf("-cancel queued: %v\n%s", err, buf.String())
	}
	list.list = "cancelled"
	buf.Reset()
	if _, err := run(context.Background(), list, &buf); err != nil || strings.Count(buf.String(), "cancelled by the user") != 2 {
		t.Errorf("-list cancelled: %v\n%s", err, buf.String())
	}
}

// TestInterruptExits130: a sweep stopped by Ctrl-C (its context
// cancelled) says in one line how to resume and exits 130, as a shell
// reports an interrupted command, not 2 as a system error would.
func TestInterruptExits130(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	// 216 runs of 5 epochs take seconds; the context ends after 300 ms.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var buf bytes.Buffer
	code, err := run(ctx, config{out: out, backend: "local", workers: 2, epochs: 5, prune: "none"}, &buf)
	if err != nil || code != 130 || !strings.HasSuffix(buf.String(), "losssweep: interrupted; run again with the same -out to resume\n") {
		t.Errorf("code %d, err %v, want 130 and the resume hint as the last line\n%s", code, err, buf.String())
	}
	// A stop before the controller starts (here: before anything is
	// enqueued, as a slow machine can make the 300 ms above) is the same
	// interruption, not a system error; the next run resumes.
	done, stop := context.WithCancel(context.Background())
	stop()
	buf.Reset()
	code, err = run(done, config{out: out, backend: "local", workers: 2, epochs: 5, prune: "none"}, &buf)
	if err != nil || code != 130 || buf.String() != "losssweep: interrupted; run again with the same -out to resume\n" {
		t.Errorf("cancelled before the start: code %d, err %v, want 130 and the resume hint alone\n%q", code, err, buf.String())
	}
}

// TestFlagsHaveExamples: -h shows an example for every flag (issue 12).
func TestFlagsHaveExamples(t *testing.T) {
	var cfg config
	fs := newFlags(&cfg)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if !strings.Contains(f.Usage, "e.g.") {
			t.Errorf("-%s: usage %q has no example", f.Name, f.Usage)
		}
	})
	if n < 15 {
		t.Errorf("%d flags", n)
	}
}

// TestMain makes the test binary a losssweep worker when the process
// backend starts it, as the command is.
func TestMain(m *testing.M) {
	if t, ok, err := sweep.WorkerTask(); ok {
		if err == nil {
			err = worker(context.Background(), t)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "losssweep worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProcessBackend runs the small study as detached worker processes,
// which stream their metrics and write their results themselves.
func TestProcessBackend(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var buf bytes.Buffer
	code, err := run(context.Background(), config{out: out, backend: "process", workers: 2, spec: writeSpec(t, smallSpec), prune: "none"}, &buf)
	if err != nil || code != 0 {
		t.Fatalf("code %d, err %v\n%s", code, err, buf.String())
	}
	if !strings.Contains(buf.String(), "4/4 runs completed") || !strings.Contains(buf.String(), "(4 rows, schema ok)") {
		t.Errorf("output:\n%s", buf.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "export", "losssweep_trajectories", "base-lr0.1-s0.csv"))
	if err != nil || !strings.HasPrefix(string(b), "step,train_loss,val_loss\n0.25,") || strings.Count(string(b), "\n") != 9 {
		t.Errorf("trajectory of a process worker: %v\n%s", err, b)
	}
}

// lockedBuffer is a bytes.Buffer safe for the writer goroutine and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServe: -serve puts the dashboard up on 127.0.0.1, keeps it after the
// sweep until the context ends (Ctrl-C), then the program returns.
func TestServe(t *testing.T) {
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf lockedBuffer
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, config{out: out, backend: "local", workers: 2, spec: writeSpec(t, smallSpec), prune: "none", serve: ":0"}, &buf)
		done <- err
	}()
	re := regexp.MustCompile(`dashboard still at (http://127\.0\.0\.1:\d+/)`)
	var url string
	for start := time.Now(); url == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(buf.String()); m != nil {
			url = m[1]
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("no dashboard line:\n%s", buf.String())
		}
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(body), `<tr class="run`) != 4 || !strings.Contains(string(body), "completed 4") {
		t.Errorf("dashboard %d:\n%.400s", resp.StatusCode, body)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("run did not return after the context ended")
	}
}

// TestFlagsRefused: every flag is checked before any work: a bad value or
// a stray argument exits 2 with a message naming the flag, and leaves no
// output directory behind.
func TestFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	spec := writeSpec(t, "name: s\nbase: {epochs: 2, batch_size: 32, hidden: 8, norm: none, optimizer: sgd, lr: 0.1, weight_decay: 0}\ngrid:\n  - {key: seed, values: [0]}\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"stray argument", []string{"extra"}, `unexpected argument "extra"`},
		{"argument after flags", []string{"-epochs", "2", "now"}, `unexpected argument "now"`},
		{"workers 0", []string{"-workers", "0"}, "-workers 0"},
		{"workers negative", []string{"-workers", "-3"}, "-workers -3"},
		{"epochs negative", []string{"-epochs", "-5"}, "-epochs -5"},
		{"epochs not a number", []string{"-epochs", "five"}, "invalid value"},
		{"backend", []string{"-backend", "cloud"}, `-backend "cloud"`},
		{"prune", []string{"-prune", "maybe"}, `-prune "maybe"`},
		{"serve", []string{"-serve", "nowhere"}, `-serve "nowhere"`},
		{"list", []string{"-list", "done"}, `-list "done"`},
		{"force alone", []string{"-force"}, "-force goes with -requeue"},
		{"two modes", []string{"-status", "-list", "all"}, "each do one thing"},
		{"ledger is a directory", []string{"-ledger", dir}, "is a directory"},
		{"ledger is empty", []string{"-ledger", empty}, "is an empty file"},
		{"spec missing", []string{"-spec", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{"requeue without a ledger", []string{"-requeue", "failed", "-spec", spec}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			code := command(context.Background(), append([]string{"-out", out}, tc.args...), &stdout, &stderr)
			if tc.want != "" && (code != 2 || !strings.Contains(stderr.String(), tc.want)) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("exit %d left %s behind (%v)\n%s%s", code, out, err, stdout.String(), stderr.String())
			}
		})
	}
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Error("the empty -ledger was written to")
	}
}
