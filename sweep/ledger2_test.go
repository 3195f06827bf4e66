package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/launch"
)

// TestLedgerPathSpecialChars: paths with URI syntax in them ('#', '?', '%',
// spaces, quotes) name their own file; two such ledgers open at once.
func TestLedgerPathSpecialChars(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	names := []string{"sweep#1", "sweep#2", "a?b=c", "p%41q", "with space", `quo"te'`}
	var ls []*Ledger
	for _, n := range names {
		path := filepath.Join(root, n, "ledger.db")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		l, err := OpenLedger(path)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		ls = append(ls, l)
		mustEnqueue(t, l, gridSpec("u", 1+len(ls), nil))
	}
	for i, l := range ls {
		st, err := l.Status(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if st.Total != i+2 {
			t.Errorf("%s: %d runs, want %d (ledgers mixed up)", names[i], st.Total, i+2)
		}
		if _, err := os.Stat(filepath.Join(root, names[i], "ledger.db")); err != nil {
			t.Errorf("%s: %v", names[i], err)
		}
		l.Close()
	}
	// Nothing was written where an unescaped URI would have pointed.
	for _, stray := range []string{"sweep", "a", "p", "with"} {
		if _, err := os.Stat(filepath.Join(root, stray)); err == nil {
			t.Errorf("stray file %s written", stray)
		}
	}
}

// TestWorkDirTiedToLedger: a work directory holding runs of a deleted,
// replaced or emptied ledger refuses to start until told.
func TestWorkDirTiedToLedger(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	work := filepath.Join(dir, "work")
	ok := func(ctx context.Context, t Task) (*Result, error) {
		return &Result{Metrics: map[string]float64{"best": 1}}, nil
	}
	runOnce := func(accept bool) error {
		l, err := OpenLedger(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if _, err := l.Enqueue(ctx, nil, slices.Values(mustPoints(t, gridSpec("w", 3, nil)))); err != nil {
			t.Fatal(err)
		}
		_, err = (&Controller{Ledger: l, Backend: &Local{Func: ok}, WorkDir: work, AcceptWorkDir: accept}).Run(ctx)
		return err
	}
	if err := runOnce(false); err != nil {
		t.Fatal(err)
	}
	if err := runOnce(false); err != nil {
		t.Fatalf("the same ledger again: %v", err)
	}
	// Deleted and recreated: refused, then accepted when told.
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	if err := runOnce(false); !errors.Is(err, ErrWorkDir) || !strings.Contains(err.Error(), "AcceptWorkDir") {
		t.Fatalf("new ledger over old results: %v, want ErrWorkDir saying how to proceed", err)
	}
	if err := runOnce(true); err != nil {
		t.Fatalf("accepted: %v", err)
	}
	// Emptied: the runs are gone from the ledger, their directories not.
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.db.Exec(`DELETE FROM runs`); err != nil {
		t.Fatal(err)
	}
	_, err = (&Controller{Ledger: l, Backend: &Local{Func: ok}, WorkDir: work}).Run(ctx)
	if !errors.Is(err, ErrWorkDir) || !strings.Contains(err.Error(), "emptied") {
		t.Errorf("emptied ledger: %v, want ErrWorkDir", err)
	}
	// A controller stopped while it checks the work directory reports the
	// stop, not a foreign work directory (found by TestKillLoopProcessPrune:
	// the ledger read failing with context.Canceled was taken for a verdict).
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	c := &Controller{Ledger: l, Backend: &Local{Func: ok}, WorkDir: work}
	abs, _ := filepath.Abs(work)
	if why, err := c.unknownRuns(stopped, abs); why != "" || !errors.Is(err, context.Canceled) {
		t.Errorf("unknownRuns after cancel: %q, %v; want no verdict and context.Canceled", why, err)
	}
	if err := c.bindWorkDir(stopped); errors.Is(err, ErrWorkDir) || !errors.Is(err, context.Canceled) {
		t.Errorf("bindWorkDir after cancel: %v, want context.Canceled and not ErrWorkDir", err)
	}
	// Another work directory for a ledger that ran elsewhere.
	_, err = (&Controller{Ledger: l, Backend: &Local{Func: ok}, WorkDir: filepath.Join(dir, "elsewhere")}).Run(ctx)
	if !errors.Is(err, ErrWorkDir) {
		t.Errorf("moved work directory: %v, want ErrWorkDir", err)
	}
	l.Close()
}

func mustPoints(t *testing.T, s *Spec) []Point {
	t.Helper()
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	return pts
}

// TestInputsChecked: results computed from other inputs are not mixed.
func TestInputsChecked(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	s := gridSpec("in", 2, nil)
	s.Inputs = map[string]string{"code": "abc", "data": "sha256:1"}
	if _, err := l.Enqueue(ctx, s, slices.Values(mustPoints(t, s))); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enqueue(ctx, s, slices.Values(mustPoints(t, s))); err != nil {
		t.Fatalf("same inputs: %v", err)
	}
	s.Inputs = map[string]string{"code": "def", "data": "sha256:1"}
	_, err := l.Enqueue(ctx, s, slices.Values(mustPoints(t, s)))
	var ie *InputsError
	if !errors.As(err, &ie) || len(ie.changed) != 1 || !strings.Contains(ie.changed[0], `code: "abc" → "def"`) {
		t.Fatalf("changed code: %v, want an *InputsError naming code", err)
	}
	if err := l.AcceptInputs(ctx, s.Inputs); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enqueue(ctx, s, slices.Values(mustPoints(t, s))); err != nil {
		t.Fatalf("after AcceptInputs: %v", err)
	}
	got, _ := l.inputs(ctx)
	if got["code"] != "def" {
		t.Errorf("recorded inputs %v", got)
	}
}

// TestRequeueAndCancelByUser: the repair API.
func TestRequeueAndCancelByUser(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	pts := mustEnqueue(t, l, gridSpec("r", 4, nil))
	fail := true
	fn := func(ctx context.Context, t Task) (*Result, error) {
		if t.Params["seed"].Int() == 1 && fail {
			return nil, errors.New("segmentation fault")
		}
		return &Result{Metrics: map[string]float64{"best": 1}}, nil
	}
	work := t.TempDir()
	c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: work}
	if err := c.Cancel(ctx, pts[3].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := l.Status(ctx, 1)
	if st.Counts[Completed] != 2 || st.Counts[Failed] != 1 || st.Counts[Cancelled] != 1 {
		t.Fatalf("counts %v", st.Counts)
	}
	// Completed runs need force.
	if _, err := l.Requeue(ctx, nil, []State{Completed}, false); err == nil {
		t.Error("completed runs requeued without force")
	}
	ids, err := l.Requeue(ctx, nil, []State{Failed, Cancelled}, false)
	if err != nil || len(ids) != 2 {
		t.Fatalf("Requeue failed and cancelled = %v, %v", ids, err)
	}
	fail = false
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ = l.Status(ctx, 1)
	if st.Counts[Completed] != 4 {
		t.Fatalf("after requeue: %v", st.Counts)
	}
	atts, _ := l.Attempts(ctx, pts[1].ID)
	if len(atts) != 2 || atts[0].State != Failed || atts[1].State != Completed {
		t.Errorf("attempts of the requeued run: %+v", atts)
	}
	if ids, err := l.Requeue(ctx, []string{pts[0].ID}, nil, true); err != nil || !slices.Equal(ids, []string{pts[0].ID}) {
		t.Errorf("forced requeue by id: %v, %v", ids, err)
	}
	if _, err := l.Requeue(ctx, []string{"nope"}, nil, false); !errors.Is(err, ErrNoRun) {
		t.Errorf("unknown id: %v", err)
	}
	if err := c.Cancel(ctx, pts[2].ID); err == nil {
		t.Error("cancel of a completed run accepted")
	}
}

// failCancel is a backend whose Cancel fails: the runs must stay running in
// the ledger, and the error reach the caller.
type failCancel struct{ *Local }

var errNoCancel = errors.New("scheduler refused the cancel")

func (f failCancel) Cancel(ctx context.Context, tasks []Task) error { return errNoCancel }

func TestCancelRecordedOnlyWhenConfirmed(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	mustEnqueue(t, l, gridSpec("cc", 2, map[string]Value{"mode": strValue("hang")}))
	work := t.TempDir()
	cmd := workerCommand(t)
	loc := &Local{Command: cmd, StateDir: filepath.Join(work, "launch")}
	c := &Controller{Ledger: l, Backend: failCancel{loc}, WorkDir: work, Parallel: 2, PollInterval: 10 * time.Millisecond}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := c.Run(runCtx); done <- err }()
	waitFor(t, func() bool {
		rs, _ := l.Runs(ctx, Running)
		return len(rs) == 2 && rs[0].BackendID != "" && rs[1].BackendID != ""
	})
	stop()
	<-done
	if err := c.Cancel(ctx); !errors.Is(err, errNoCancel) {
		t.Fatalf("Cancel = %v, want the backend's error", err)
	}
	st, _ := l.Status(ctx, 1)
	if st.Counts[Running] != 2 || st.Counts[Cancelled] != 0 {
		t.Fatalf("counts %v: a cancel the backend refused was recorded", st.Counts)
	}
	// With a backend that cancels, it is recorded.
	c.Backend = loc
	if err := c.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := l.Status(ctx, 1); st.Counts[Cancelled] != 2 {
		t.Fatalf("counts %v", st.Counts)
	}
}

// TestAdoptFencesLaunchInFlight: a controller died after publishing a
// launch's token but before its wrapper ran. The next controller's Adopt
// fences it (the late wrapper will run nothing) and requeues the run;
// a launch whose monitor had claimed it is adopted.
func TestAdoptFencesLaunchInFlight(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	pts := mustEnqueue(t, l, gridSpec("f", 2, nil))
	work := t.TempDir()
	state := filepath.Join(work, "launch")
	loc := &Local{Command: workerCommand(t), StateDir: state}
	var tasks []Task
	for _, p := range pts {
		n, err := l.start(ctx, p.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, Task{RunID: p.ID, Attempt: n, Dir: AttemptDir(work, p.ID, n)})
	}
	// Run 0: token published, no wrapper yet.
	tok := launch.PathsFor(state, launchName(tasks[0]), "").Token
	os.MkdirAll(state, 0o755)
	if err := os.WriteFile(tok, []byte("dead-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Run 1: really launched (its monitor claimed it), id not recorded.
	if _, err := (&launch.Local{StateDir: state}).Start(ctx, launch.Spec{Name: launchName(tasks[1]), Argv: []string{"sleep", "30"}}); err != nil {
		t.Fatal(err)
	}
	ids, err := loc.Adopt(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != "" || ids[1] != "proc:"+launchName(tasks[1]) {
		t.Fatalf("Adopt = %q, want [\"\" proc:...]", ids)
	}
	if target, err := os.Readlink(filepath.Join(state, launchName(tasks[0])+".dead-1.claim")); err != nil || target != "fenced" {
		t.Errorf("launch in flight not fenced: %q, %v", target, err)
	}
	h := (&launch.Local{StateDir: state}).Attach(launchName(tasks[1]))
	h.Cancel(ctx, 5*time.Second)
}
