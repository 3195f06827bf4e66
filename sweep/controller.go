package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/internal/lastline"
)

// Controller drives the runs of a ledger through a backend: it submits
// queued runs, polls the backend, reads the metrics runs stream and their
// result files, records every transition in the ledger, retries failures
// by class, prunes runs a Pruner gives up on and reaps stale runs. It is
// the only writer of the ledger.
type Controller struct {
	Ledger  *Ledger
	Backend Backend
	// WorkDir holds the attempt directories, WorkDir/runs/<id>/a<n>.
	WorkDir string
	// Parallel bounds the runs in flight; ≤ 0 means 1.
	Parallel int
	// PollInterval is the pause between polls when nothing changed;
	// 0 means defaultPollInterval.
	PollInterval time.Duration
	// Retry says how many extra attempts each class of failure gets. Nil
	// means the default policy: OOM 3, divergence 2, timeout 1,
	// infrastructure 5, corrupt result 1, unknown 0, and an OOM retry
	// halves the integer parameter "batch_size" (floor 16). A non-nil map
	// changes no parameter; an empty one retries nothing.
	Retry map[Class]int
	// StaleAfter, when positive, fails (class infrastructure) a running
	// run whose last heartbeat is older than this, after cancelling it.
	StaleAfter time.Duration
	// Pruner, when non-nil, stops runs that cannot catch up, from the
	// metrics they stream (see ASHA and MedianRule).
	Pruner Pruner
	// Hook, when set, is a command (program and arguments, e.g. {"sh",
	// "-c", "mail -s sweep me@example.org"}) run when something a user
	// waits for happens: the sweep finished (Run drained the queue), or a
	// run failed for good after more than one attempt. It reads a JSON
	// object on its standard input: "event" ("finished" or "run_failed",
	// also in $SWEEP_EVENT), "ledger", "sweep", "counts" (runs by state);
	// for "finished" also "summary" (Summary's fields), for "run_failed"
	// "run_id", "slug" and "attempts" (their errors, oldest first). Nothing
	// leaves the machine unless the command sends it.
	//
	// The command runs beside the controller's work, one event at a time
	// in order, so a slow or hung command never holds up polling, ingest or
	// pruning; Run waits for it before returning once the sweep finished
	// (returning early, it waits only for the command running and drops the
	// rest). At most 16 "run_failed" events wait; more are dropped and
	// counted in Run's error. After 30 s the command's process group is
	// killed (on Unix; elsewhere the command), and only the last 64 KiB of
	// its output are kept; the error (wrapping ErrHook) quotes its last KiB.
	Hook []string
	// AcceptWorkDir lets Run use a work directory that already holds runs
	// of another ledger, or of none (the ledger was deleted or emptied).
	// Without it Run refuses, since it would run again what the directory
	// already holds, over its results.
	AcceptWorkDir bool
	// Progress, when non-nil, receives a one-line status after each change.
	Progress io.Writer

	retry       retryPolicy   // this Run's, from Retry
	hooks       *hookRunner   // this Run's notifications
	hookTimeout time.Duration // tests: bounds one run of the Hook command; 0 means 30 s
}

// defaultPollInterval is the controller's default pause between polls.
const defaultPollInterval = 200 * time.Millisecond

// notifier is implemented by backends that can wake the controller when a
// task ends, instead of waiting for the next poll.
type notifier interface {
	notify() <-chan struct{}
}

// Summary is what Run did.
type Summary struct {
	Completed, Failed, Retried, Cancelled, Pruned int
	// Interrupted counts attempts that a previous controller's death
	// stopped; they are run again without spending retry budget.
	Interrupted int
	Elapsed     time.Duration
}

// AttemptDir returns the directory of attempt n of run id under workDir.
func AttemptDir(workDir, id string, n int) string {
	return filepath.Join(workDir, "runs", id, "a"+strconv.Itoa(n))
}

func (c *Controller) task(r *Run) Task {
	return Task{RunID: r.ID, Slug: r.Slug, Attempt: r.Attempt, Params: r.Params(), Resources: r.resources,
		Dir: AttemptDir(c.WorkDir, r.ID, r.Attempt), BackendID: r.BackendID}
}

// run is the controller's state during Run.
type run struct {
	inflight map[string]Task
	stops    map[string]string      // by run id: a stop the controller asked for (see Run.stop)
	tails    map[string]*metricTail // by run id, for the attempt in flight
	lastBeat map[string]time.Time
	sum      Summary
}

// Run drives the sweep until no run is queued or running, or ctx ends. It
// returns an error when the ledger or backend fails, or an error wrapping
// ctx.Err() with what was done so far. Runs that end failed do not make
// Run return an error; see Summary and Ledger.Status.
//
// Before anything else Run ties the ledger to WorkDir (see
// AcceptWorkDir), then settles the runs a previous controller left
// running: those the backend still runs are adopted; those that finished
// are recorded; an attempt the previous controller's death stopped (an
// in-process worker) is recorded as interrupted and runs again without
// spending retry budget; one that never reached the backend goes back to
// the queue.
func (c *Controller) Run(ctx context.Context) (Summary, error) {
	if c.Ledger == nil || c.Backend == nil || c.WorkDir == "" {
		panic("sweep: Controller needs Ledger, Backend and WorkDir")
	}
	start := time.Now()
	c.hooks = c.startHooks()
	defer c.hooks.close()
	st := &run{inflight: map[string]Task{}, stops: map[string]string{}, tails: map[string]*metricTail{}, lastBeat: map[string]time.Time{}}
	done := func(err error) (Summary, error) {
		st.sum.Elapsed = time.Since(start)
		return st.sum, err
	}
	c.retry = retryPolicy{budget: c.Retry}
	if c.Retry == nil {
		c.retry = defaultRetry()
	}
	par := max(c.Parallel, 1)
	poll := c.PollInterval
	if poll <= 0 {
		poll = defaultPollInterval
	}
	var wake <-chan struct{}
	if n, ok := c.Backend.(notifier); ok {
		wake = n.notify()
	}
	if err := c.bindWorkDir(ctx); err != nil {
		return done(err)
	}
	if err := c.recover(ctx, st); err != nil {
		return done(err)
	}
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return done(fmt.Errorf("sweep: controller stopped: %w", err))
		}
		changed := false
		if len(st.inflight) > 0 {
			ch, err := c.pollInflight(ctx, st)
			if err != nil {
				return done(err)
			}
			changed = changed || ch
		}
		// Fill free slots.
		if free := par - len(st.inflight); free > 0 {
			q, err := c.Ledger.nextQueued(ctx, free)
			if err != nil {
				return done(err)
			}
			if len(q) > 0 {
				if err := c.submit(ctx, q, st); err != nil {
					return done(err)
				}
				changed = true
			}
		}
		if len(st.inflight) == 0 {
			q, err := c.Ledger.nextQueued(ctx, 1)
			if err != nil {
				return done(err)
			}
			if len(q) == 0 {
				c.progress(ctx)
				sum, _ := done(nil)
				return sum, c.notifyFinished(ctx, sum)
			}
		}
		if changed {
			c.progress(ctx)
			continue
		}
		timer.Reset(poll)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-timer.C:
		}
	}
}

func slicesOf(m map[string]Task) []Task {
	out := make([]Task, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	return out
}

// pollInflight polls the backend, ingests the metrics the running tasks
// streamed, prunes, reaps stale tasks and settles the ended ones.
func (c *Controller) pollInflight(ctx context.Context, st *run) (bool, error) {
	tasks := slicesOf(st.inflight)
	sts, err := c.Backend.Poll(ctx, tasks)
	if err != nil {
		return false, err
	}
	if err := c.ingest(ctx, st, tasks); err != nil {
		return false, err
	}
	now := time.Now()
	changed := false
	// The pruner is asked on every poll: a value logged earlier may become
	// judgeable now (see Pruner).
	var decided map[string]string
	if c.Pruner != nil {
		if decided, err = c.Pruner.decideAll(ctx, c.Ledger); err != nil {
			return false, err
		}
	}
	for i, ts := range sts {
		t := tasks[i]
		switch ts.State {
		case Queued, Running:
			if ts.State == Running && !ts.Heartbeat.IsZero() && ts.Heartbeat.Sub(st.lastBeat[t.RunID]) > time.Second {
				st.lastBeat[t.RunID] = ts.Heartbeat
				if err := c.Ledger.heartbeat(ctx, t.RunID, ts.Heartbeat); err != nil {
					return changed, err
				}
			}
			if reason := decided[t.RunID]; reason != "" {
				if err := c.prune(ctx, st, t, reason); err != nil {
					return changed, err
				}
				changed = true
				continue
			}
			if c.StaleAfter > 0 && ts.State == Running && c.stale(ctx, t, ts, now) {
				if err := c.stop(ctx, st, t, "stale", "stale: no heartbeat for "+c.StaleAfter.String()); err != nil {
					return changed, err
				}
				changed = true
			}
			continue
		}
		if err := c.settle(ctx, st, t, ts); err != nil {
			return changed, err
		}
		c.forget(st, t.RunID)
		changed = true
	}
	return changed, nil
}

func (c *Controller) forget(st *run, id string) {
	delete(st.inflight, id)
	delete(st.stops, id)
	delete(st.lastBeat, id)
	delete(st.tails, id)
}

// prune stops a run a Pruner gave up on.
func (c *Controller) prune(ctx context.Context, st *run, t Task, reason string) error {
	return c.stop(ctx, st, t, "prune", reason)
}

// stop ends a running attempt on the controller's initiative: kind
// "prune", "cancel" or "stale". The request is recorded first, then the
// backend is asked; once it confirms, the run is recorded as pruned,
// cancelled or failed (stale, class infrastructure). A controller that
// dies in between leaves the request in the ledger, and the next one
// finishes the job (recover, settle), so a stopped attempt is never taken
// for a failure of the run.
func (c *Controller) stop(ctx context.Context, st *run, t Task, kind, reason string) error {
	if err := c.Ledger.requestStop(ctx, t.RunID, kind, reason); err != nil {
		return err
	}
	st.stops[t.RunID] = kind + ":" + reason
	if err := c.Backend.Cancel(ctx, []Task{t}); err != nil {
		return fmt.Errorf("sweep: run %s: stopping (%s): %w", t.RunID, kind, err)
	}
	// The run may have finished before the cancel reached it: a complete
	// result is kept as such.
	sts, err := c.Backend.Poll(ctx, []Task{t})
	if err != nil {
		return err
	}
	if err := c.settle(ctx, st, t, sts[0]); err != nil {
		return err
	}
	c.forget(st, t.RunID)
	return nil
}

// finishStop records a stopped attempt as its stop request says.
func (c *Controller) finishStop(ctx context.Context, st *run, t Task, req string) error {
	kind, reason, _ := strings.Cut(req, ":")
	switch kind {
	case "prune":
		if err := c.Ledger.prune(ctx, t.RunID, reason); err != nil {
			return err
		}
		st.sum.Pruned++
		return nil
	case "cancel":
		if err := c.Ledger.cancel(ctx, t.RunID, reason); err != nil {
			return err
		}
		st.sum.Cancelled++
		return nil
	}
	return c.finish(ctx, t, Failed, ClassInfrastructure, reason, &st.sum)
}

// ingest reads what the tasks' metric logs gained since the last call into
// the ledger. A log that cannot be read now is read again at the next
// poll, from where the last whole line ended; a malformed line is skipped
// here, and the run fails as corrupt when it ends (settle).
func (c *Controller) ingest(ctx context.Context, st *run, tasks []Task) error {
	var rows []metricRow
	readAt := time.Now()
	defer func() { c.Ledger.metricsReadAt = readAt }()
	for _, t := range tasks {
		tail := st.tails[t.RunID]
		if tail == nil {
			tail = &metricTail{}
			st.tails[t.RunID] = tail
		}
		pts, _ := tail.next(filepath.Join(t.Dir, MetricFile))
		for _, p := range pts {
			rows = append(rows, metricRow{t.RunID, t.Attempt, p})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return c.Ledger.addMetrics(ctx, rows)
}

func (c *Controller) stale(ctx context.Context, t Task, st TaskStatus, now time.Time) bool {
	last := st.Heartbeat
	if last.IsZero() {
		r, err := c.Ledger.Get(ctx, t.RunID)
		if err != nil {
			return false
		}
		last = r.heartbeatAt
	}
	return !last.IsZero() && now.Sub(last) > c.StaleAfter
}

// submit records the start of each run, hands the batch to the backend and
// records the backend ids. A crash between the two leaves running runs
// without a backend id, which recover resolves with Adopt.
func (c *Controller) submit(ctx context.Context, runs []Run, st *run) error {
	// Work the backend accepted is recorded even if ctx ends meanwhile, so
	// that Cancel and the next controller can find it, and runs recorded as
	// started that the backend did not take go back to the queue.
	bctx := context.WithoutCancel(ctx)
	tasks := make([]Task, 0, len(runs))
	for i := range runs {
		r := &runs[i]
		n, err := c.Ledger.start(ctx, r.ID, "")
		if err != nil {
			for _, t := range tasks {
				if uerr := c.Ledger.unstart(bctx, t.RunID); uerr != nil {
					return errors.Join(err, uerr)
				}
			}
			return err
		}
		r.Attempt = n
		tasks = append(tasks, c.task(r))
	}
	ids, err := c.Backend.Submit(ctx, tasks)
	for i, id := range ids {
		tasks[i].BackendID = id
		if err := c.Ledger.setBackendID(bctx, tasks[i].RunID, id); err != nil {
			return err
		}
		st.inflight[tasks[i].RunID] = tasks[i]
	}
	if err != nil {
		for _, t := range tasks[len(ids):] {
			if uerr := c.Ledger.unstart(bctx, t.RunID); uerr != nil {
				return errors.Join(err, uerr)
			}
		}
		return err
	}
	return nil
}

// recover settles the runs the ledger says are running (see Run).
func (c *Controller) recover(ctx context.Context, st *run) error {
	running, err := c.Ledger.Runs(ctx, Running)
	if err != nil || len(running) == 0 {
		return err
	}
	tasks := make([]Task, len(running))
	for i := range running {
		tasks[i] = c.task(&running[i])
	}
	ids, err := c.Backend.Adopt(ctx, tasks)
	if err != nil {
		return err
	}
	for i, t := range tasks {
		if running[i].stop != "" {
			st.stops[t.RunID] = running[i].stop
		}
		switch {
		case ids[i] != "" && ids[i] != Gone && running[i].stop != "":
			// A stop a dead controller asked for: ask again, then record it.
			t.BackendID = ids[i]
			kind, reason, _ := strings.Cut(running[i].stop, ":")
			if err := c.stop(ctx, st, t, kind, reason); err != nil {
				return err
			}
		case (ids[i] == "" || ids[i] == Gone) && running[i].stop != "" && !resultOK(t):
			if err := c.finishStop(ctx, st, t, running[i].stop); err != nil {
				return err
			}
		case ids[i] != "" && ids[i] != Gone:
			if ids[i] != t.BackendID {
				t.BackendID = ids[i]
				if err := c.Ledger.setBackendID(ctx, t.RunID, t.BackendID); err != nil {
					return err
				}
			}
			st.inflight[t.RunID] = t
		case resultOK(t):
			if err := c.settle(ctx, st, t, TaskStatus{State: Completed}); err != nil {
				return err
			}
		case ids[i] == Gone:
			if err := c.finish(ctx, t, Failed, ClassInterrupted, "the controller stopped while the attempt ran", &st.sum); err != nil {
				return err
			}
		default:
			if err := c.Ledger.unstart(ctx, t.RunID); err != nil {
				return err
			}
		}
	}
	return nil
}

func resultOK(t Task) bool {
	res, err := ReadResult(t.Dir)
	return err == nil && res.RunID == t.RunID
}

// settle records the end of a task.
func (c *Controller) settle(ctx context.Context, st *run, t Task, ts TaskStatus) error {
	res, rerr := ReadResult(t.Dir)
	if rerr == nil && res.RunID != t.RunID {
		rerr = fmt.Errorf("%w: %s holds run %s", ErrCorrupt, filepath.Join(t.Dir, ResultFile), res.RunID)
	}
	if err := c.ingest(ctx, st, []Task{t}); err != nil {
		return err
	}
	if req := st.stops[t.RunID]; req != "" && !(ts.State == Completed && rerr == nil) {
		// The controller stopped it (perhaps a controller that died since):
		// record it as meant, not as a failure of the run.
		return c.finishStop(ctx, st, t, req)
	}
	switch {
	case ts.State == Completed || (ts.State == lost && rerr == nil):
		if rerr == nil {
			_, rerr = readMetricLog(t.Dir)
		}
		if rerr != nil {
			return c.finish(ctx, t, Failed, ClassCorrupt, rerr.Error(), &st.sum)
		}
		if err := c.Ledger.addResult(ctx, t.RunID, t.Attempt, res); err != nil {
			return err
		}
		return c.finish(ctx, t, Completed, "", "", &st.sum)
	case ts.State == lost:
		return c.finish(ctx, t, Failed, ClassInfrastructure, "worker vanished without a result", &st.sum)
	}
	tail := logTail(filepath.Join(t.Dir, "log"), 20)
	class := classify(ts.SchedState, tail)
	text := "exit " + strconv.Itoa(ts.Exit)
	if ts.SchedState != "" {
		text += " (" + ts.SchedState + ")"
	}
	if last := lastline.Of(tail); last != "" {
		text += ": " + last
	}
	return c.finish(ctx, t, Failed, class, text, &st.sum)
}

func (c *Controller) finish(ctx context.Context, t Task, ph State, class Class, text string, sum *Summary) error {
	if ph == Completed {
		if err := c.Ledger.complete(ctx, t.RunID); err != nil {
			return err
		}
		sum.Completed++
		return nil
	}
	// The earlier attempts (archived) and this one decide the retry.
	atts, err := c.Ledger.Attempts(ctx, t.RunID)
	if err != nil {
		return err
	}
	n := 1
	for _, a := range atts {
		if a.Attempt < t.Attempt && a.State == Failed && a.ErrorClass == class {
			n++
		}
	}
	if class == ClassInterrupted {
		sum.Interrupted++
	}
	if !retryAllowed(c.retry, class, n) {
		if err := c.Ledger.fail(ctx, t.RunID, class, text); err != nil {
			return err
		}
		sum.Failed++
		atts = append(atts[:0:0], atts...)
		if len(atts) > 0 && atts[len(atts)-1].Attempt == t.Attempt {
			atts[len(atts)-1].State, atts[len(atts)-1].ErrorClass, atts[len(atts)-1].ErrorText = Failed, class, text
		}
		if failed := len(atts) - countClass(atts, ClassInterrupted); failed > 1 {
			return c.notifyFailed(ctx, t, atts)
		}
		return nil
	}
	r, err := c.Ledger.Get(ctx, t.RunID)
	if err != nil {
		return err
	}
	var ov map[string]Value
	if c.retry.adjust != nil && class != ClassInterrupted {
		if adj := c.retry.adjust(class, r.Params()); adj != nil {
			ov = maps.Clone(r.overrides)
			if ov == nil {
				ov = map[string]Value{}
			}
			maps.Copy(ov, adj)
		}
	}
	if err := c.Ledger.failRetry(ctx, t.RunID, class, text, ov); err != nil {
		return err
	}
	if class != ClassInterrupted {
		sum.Retried++
	}
	return nil
}

func countClass(atts []Run, class Class) int {
	n := 0
	for _, a := range atts {
		if a.ErrorClass == class {
			n++
		}
	}
	return n
}

// cancelTasks asks the backend to stop the tasks and records as cancelled
// those whose cancel it confirmed. When the batch fails, each task is
// tried alone so that one failure does not hide the others' success; the
// error names the tasks that could not be stopped, which stay running in
// the ledger.
func (c *Controller) cancelTasks(ctx context.Context, tasks []Task, reason string, sum *Summary) error {
	if len(tasks) == 0 {
		return nil
	}
	confirmed := tasks
	var errs []error
	if err := c.Backend.Cancel(ctx, tasks); err != nil {
		confirmed = nil
		for _, t := range tasks {
			if err := c.Backend.Cancel(ctx, []Task{t}); err != nil {
				errs = append(errs, err)
				continue
			}
			confirmed = append(confirmed, t)
		}
	}
	for _, t := range confirmed {
		if err := c.Ledger.cancel(ctx, t.RunID, reason); err != nil {
			errs = append(errs, err)
			continue
		}
		sum.Cancelled++
	}
	return errors.Join(errs...)
}

// Cancel stops runs: the given ones, or with no ids every queued and
// running run of the sweep. A queued run is cancelled at once; a running
// one is recorded as cancelled only once the backend has confirmed that it
// stopped, and the error names those it could not stop, which stay
// running in the ledger. A run recorded as started that never reached the
// backend (a controller died in between) is fenced first, so it cannot
// start later. Cancel takes no lock of its own: call it with the ledger a
// stopped Run used, or from the process that holds the ledger.
func (c *Controller) Cancel(ctx context.Context, ids ...string) error {
	var rs []Run
	if len(ids) == 0 {
		var err error
		if rs, err = c.Ledger.Runs(ctx, Queued, Running); err != nil {
			return err
		}
	} else {
		for _, id := range ids {
			r, err := c.Ledger.Get(ctx, id)
			if err != nil {
				return err
			}
			if r.State != Queued && r.State != Running {
				return &TransitionError{id: id, from: r.State, to: Cancelled, actual: r.State}
			}
			rs = append(rs, r)
		}
	}
	var running []Task
	var errs []error
	var sum Summary
	for i := range rs {
		if rs[i].State == Running {
			running = append(running, c.task(&rs[i]))
			continue
		}
		if err := c.Ledger.cancel(ctx, rs[i].ID, "cancelled by the user"); err != nil {
			errs = append(errs, err)
		}
	}
	if len(running) > 0 {
		adopted, err := c.Backend.Adopt(ctx, running)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		var live []Task
		for i, t := range running {
			if adopted[i] == "" || adopted[i] == Gone {
				// Not on the backend and never will be.
				if err := c.Ledger.cancel(ctx, t.RunID, "cancelled by the user"); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			// Recorded first: if this process dies before the backend has
			// confirmed, the next controller finishes the cancel.
			if err := c.Ledger.requestStop(ctx, t.RunID, "cancel", "cancelled by the user"); err != nil {
				errs = append(errs, err)
				continue
			}
			t.BackendID = adopted[i]
			live = append(live, t)
		}
		if err := c.cancelTasks(ctx, live, "cancelled by the user", &sum); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) progress(ctx context.Context) {
	if c.Progress == nil {
		return
	}
	st, err := c.Ledger.Status(ctx, max(c.Parallel, 1))
	if err != nil {
		return
	}
	fmt.Fprintln(c.Progress, st.Line())
}

// workDirMarker is the file in a work directory that names its ledger.
const workDirMarker = ".sweep-ledger"

// bindWorkDir ties the ledger and the work directory to each other (see
// AcceptWorkDir): the directory's marker names the ledger's id, and the
// ledger records the directory.
func (c *Controller) bindWorkDir(ctx context.Context) error {
	id, err := c.Ledger.id(ctx)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(c.WorkDir)
	if err != nil {
		return fmt.Errorf("sweep: work directory: %w", err)
	}
	recorded, err := c.Ledger.WorkDir(ctx)
	if err != nil {
		return err
	}
	marker := filepath.Join(abs, workDirMarker)
	b, merr := os.ReadFile(marker)
	owner, _, _ := strings.Cut(string(b), "\n")
	if !c.AcceptWorkDir {
		refuse := func(why string) error {
			return fmt.Errorf("sweep: %w: %s: %s; running would redo its runs over their results. Use another work directory, or set AcceptWorkDir (losssweep -accept-work-dir) if that is what you want", ErrWorkDir, abs, why)
		}
		switch {
		case merr == nil && owner != id:
			return refuse(fmt.Sprintf("it holds the runs of ledger %s, not of %s (%s); was the ledger deleted or replaced?", owner, id, c.Ledger.Path()))
		case merr != nil && !errors.Is(merr, os.ErrNotExist):
			return fmt.Errorf("sweep: work directory: %w", merr)
		case merr != nil:
			if ents, err := os.ReadDir(filepath.Join(abs, "runs")); err == nil && len(ents) > 0 {
				return refuse(fmt.Sprintf("it holds %d run directories but no record of which ledger made them", len(ents)))
			}
		}
		if recorded != "" && recorded != abs {
			return fmt.Errorf("sweep: %w: ledger %s ran its sweep in %s, not %s; set AcceptWorkDir to move it", ErrWorkDir, c.Ledger.Path(), recorded, abs)
		}
		if merr == nil {
			why, err := c.unknownRuns(ctx, abs)
			if err != nil {
				// A ledger error (or the context ending) is not a verdict
				// on the work directory.
				return err
			}
			if why != "" {
				return refuse(why)
			}
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("sweep: work directory: %w", err)
	}
	if merr != nil || owner != id {
		if err := writeAtomic(marker, []byte(id+"\n"+c.Ledger.Path()+"\n")); err != nil {
			return err
		}
	}
	if recorded != abs {
		return c.Ledger.setMeta(ctx, "work_dir", abs)
	}
	return nil
}

// unknownRuns says why the work directory holds run directories whose run
// the ledger does not have (an emptied ledger), or "" when it holds none;
// err is a failure to read the ledger.
func (c *Controller) unknownRuns(ctx context.Context, abs string) (why string, err error) {
	ents, err := os.ReadDir(filepath.Join(abs, "runs"))
	if err != nil || len(ents) == 0 {
		return "", nil
	}
	known, err := c.Ledger.runIDs(ctx)
	if err != nil {
		return "", err
	}
	n, first := 0, ""
	for _, e := range ents {
		if !known[e.Name()] {
			if n == 0 {
				first = e.Name()
			}
			n++
		}
	}
	if n > 0 {
		return fmt.Sprintf("it holds %d run directories (e.g. %s) of runs this ledger does not have; was the ledger emptied?", n, first), nil
	}
	return "", nil
}

// logTail returns the last n lines of a log file ("" when unreadable); it
// reads at most the last 64 KiB.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxRead = 64 << 10
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-maxRead, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
