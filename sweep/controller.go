package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Controller drives the runs of a ledger through a backend: it submits
// queued runs, polls the backend, reads result files, records every
// transition in the ledger, retries failures by class and reaps stale runs.
// It is the only writer of the ledger.
type Controller struct {
	Ledger  *Ledger
	Backend Backend
	// WorkDir holds the attempt directories, WorkDir/runs/<id>/a<n>.
	WorkDir string
	// Parallel bounds the runs in flight; ≤ 0 means 1.
	Parallel int
	// PollInterval is the pause between polls when nothing changed;
	// 0 means DefaultPollInterval.
	PollInterval time.Duration
	// Retry is the retry policy; a nil Budget means DefaultRetry().
	Retry RetryPolicy
	// StaleAfter, when positive, fails (class infrastructure) a running
	// run whose last heartbeat is older than this, after cancelling it.
	StaleAfter time.Duration
	// CancelOnExit cancels the runs in flight when Run returns because ctx
	// ended; otherwise they keep running and a later Run adopts them.
	CancelOnExit bool
	// Progress, when non-nil, receives a one-line status after each change.
	Progress io.Writer
	// Logger, when non-nil, receives one record per transition.
	Logger *slog.Logger
}

// DefaultPollInterval is the controller's default pause between polls.
const DefaultPollInterval = 200 * time.Millisecond

// Notifier is implemented by backends that can wake the controller when a
// task ends, instead of waiting for the next poll.
type Notifier interface {
	Notify() <-chan struct{}
}

// Summary is what Run did.
type Summary struct {
	Completed, Failed, Retried, Cancelled int
	Elapsed                               time.Duration
}

// AttemptDir returns the directory of attempt n of run id under workDir.
func AttemptDir(workDir, id string, n int) string {
	return filepath.Join(workDir, "runs", id, "a"+strconv.Itoa(n))
}

func (c *Controller) task(r *Run) Task {
	return Task{RunID: r.ID, Slug: r.Slug, Attempt: r.Attempt, Params: r.Params(), Dir: AttemptDir(c.WorkDir, r.ID, r.Attempt), BackendID: r.BackendID}
}

func (c *Controller) log(msg string, args ...any) {
	if c.Logger != nil {
		c.Logger.Info(msg, args...)
	}
}

// Run drives the sweep until no run is queued or running, or ctx ends. It
// returns an error when the ledger or backend fails, or ctx.Err() with what
// was done so far. Runs that end failed do not make Run return an error;
// see Summary and Ledger.Status.
func (c *Controller) Run(ctx context.Context) (Summary, error) {
	if c.Ledger == nil || c.Backend == nil || c.WorkDir == "" {
		panic("sweep: Controller needs Ledger, Backend and WorkDir")
	}
	start := time.Now()
	var sum Summary
	if c.Retry.Budget == nil {
		c.Retry = DefaultRetry()
	}
	par := max(c.Parallel, 1)
	poll := c.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	var wake <-chan struct{}
	if n, ok := c.Backend.(Notifier); ok {
		wake = n.Notify()
	}
	inflight, err := c.recover(ctx, &sum)
	if err != nil {
		sum.Elapsed = time.Since(start)
		return sum, err
	}
	lastBeat := map[string]time.Time{}
	for {
		if err := ctx.Err(); err != nil {
			if c.CancelOnExit {
				c.cancelAll(context.WithoutCancel(ctx), inflight, &sum)
			}
			sum.Elapsed = time.Since(start)
			return sum, err
		}
		changed := false
		// Poll what is in flight.
		if len(inflight) > 0 {
			tasks := make([]Task, 0, len(inflight))
			for _, t := range inflight {
				tasks = append(tasks, t)
			}
			sts, err := c.Backend.Poll(ctx, tasks)
			if err != nil {
				sum.Elapsed = time.Since(start)
				return sum, err
			}
			now := time.Now()
			for i, st := range sts {
				t := tasks[i]
				switch st.Phase {
				case PhasePending, PhaseRunning:
					if st.Phase == PhaseRunning && !st.Heartbeat.IsZero() && st.Heartbeat.Sub(lastBeat[t.RunID]) > time.Second {
						lastBeat[t.RunID] = st.Heartbeat
						if err := c.Ledger.Heartbeat(ctx, t.RunID, st.Heartbeat); err != nil {
							sum.Elapsed = time.Since(start)
							return sum, err
						}
					}
					if c.StaleAfter > 0 && st.Phase == PhaseRunning {
						if c.stale(ctx, t, st, now) {
							_ = c.Backend.Cancel(ctx, []Task{t})
							if err := c.finish(ctx, t, PhaseFailed, ClassInfrastructure, "stale: no heartbeat for "+c.StaleAfter.String(), &sum); err != nil {
								sum.Elapsed = time.Since(start)
								return sum, err
							}
							delete(inflight, t.RunID)
							changed = true
						}
					}
					continue
				}
				if err := c.settle(ctx, t, st, &sum); err != nil {
					sum.Elapsed = time.Since(start)
					return sum, err
				}
				delete(inflight, t.RunID)
				delete(lastBeat, t.RunID)
				changed = true
			}
		}
		// Fill free slots.
		if free := par - len(inflight); free > 0 {
			q, err := c.Ledger.NextQueued(ctx, free)
			if err != nil {
				sum.Elapsed = time.Since(start)
				return sum, err
			}
			if len(q) > 0 {
				if err := c.submit(ctx, q, inflight); err != nil {
					sum.Elapsed = time.Since(start)
					return sum, err
				}
				changed = true
			}
		}
		if len(inflight) == 0 {
			q, err := c.Ledger.NextQueued(ctx, 1)
			if err != nil {
				sum.Elapsed = time.Since(start)
				return sum, err
			}
			if len(q) == 0 {
				c.progress(ctx)
				sum.Elapsed = time.Since(start)
				return sum, nil
			}
		}
		if changed {
			c.progress(ctx)
			continue
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-time.After(poll):
		}
	}
}

func (c *Controller) stale(ctx context.Context, t Task, st TaskStatus, now time.Time) bool {
	last := st.Heartbeat
	if last.IsZero() {
		r, err := c.Ledger.Get(ctx, t.RunID)
		if err != nil {
			return false
		}
		last = r.HeartbeatAt
	}
	return !last.IsZero() && now.Sub(last) > c.StaleAfter
}

// submit records the start of each run, hands the batch to the backend and
// records the backend ids. A crash between the two leaves running runs
// without a backend id, which recover resolves with Adopt.
func (c *Controller) submit(ctx context.Context, runs []Run, inflight map[string]Task) error {
	// Work the backend accepted is recorded even if ctx ends meanwhile, so
	// that Cancel and the next controller can find it, and runs recorded as
	// started that the backend did not take go back to the queue.
	bctx := context.WithoutCancel(ctx)
	tasks := make([]Task, 0, len(runs))
	for i := range runs {
		r := &runs[i]
		n, err := c.Ledger.Start(ctx, r.ID, "")
		if err != nil {
			for _, t := range tasks {
				if uerr := c.Ledger.Unstart(bctx, t.RunID); uerr != nil {
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
		if err := c.Ledger.SetBackendID(bctx, tasks[i].RunID, id); err != nil {
			return err
		}
		inflight[tasks[i].RunID] = tasks[i]
		c.log("started", "run", tasks[i].RunID, "attempt", tasks[i].Attempt, "backend_id", id)
	}
	if err != nil {
		for _, t := range tasks[len(ids):] {
			if uerr := c.Ledger.Unstart(bctx, t.RunID); uerr != nil {
				return errors.Join(err, uerr)
			}
		}
		return err
	}
	return nil
}

// recover loads the runs in flight from the ledger, adopting those whose
// backend id a crashed controller did not record.
func (c *Controller) recover(ctx context.Context, sum *Summary) (map[string]Task, error) {
	running, err := c.Ledger.Runs(ctx, Running)
	if err != nil {
		return nil, err
	}
	inflight := map[string]Task{}
	var orphans []Task
	for i := range running {
		t := c.task(&running[i])
		if t.BackendID == "" {
			orphans = append(orphans, t)
			continue
		}
		inflight[t.RunID] = t
	}
	if len(orphans) == 0 {
		return inflight, nil
	}
	ids, err := c.Backend.Adopt(ctx, orphans)
	if err != nil {
		return nil, err
	}
	for i, t := range orphans {
		if ids[i] != "" {
			t.BackendID = ids[i]
			if err := c.Ledger.SetBackendID(ctx, t.RunID, t.BackendID); err != nil {
				return nil, err
			}
			inflight[t.RunID] = t
			continue
		}
		if res, err := ReadResult(t.Dir); err == nil && res.RunID == t.RunID {
			if err := c.finish(ctx, t, PhaseDone, "", "", sum); err != nil {
				return nil, err
			}
			continue
		}
		if err := c.Ledger.Unstart(ctx, t.RunID); err != nil {
			return nil, err
		}
		c.log("requeued unsubmitted run", "run", t.RunID)
	}
	return inflight, nil
}

// settle records the end of a task.
func (c *Controller) settle(ctx context.Context, t Task, st TaskStatus, sum *Summary) error {
	res, rerr := ReadResult(t.Dir)
	if rerr == nil && res.RunID != t.RunID {
		rerr = fmt.Errorf("%w: %s holds run %s", ErrCorrupt, filepath.Join(t.Dir, ResultFile), res.RunID)
	}
	switch {
	case st.Phase == PhaseDone || (st.Phase == PhaseLost && rerr == nil):
		if rerr != nil {
			return c.finish(ctx, t, PhaseFailed, ClassCorrupt, rerr.Error(), sum)
		}
		return c.finish(ctx, t, PhaseDone, "", "", sum)
	case st.Phase == PhaseLost:
		return c.finish(ctx, t, PhaseFailed, ClassInfrastructure, "worker vanished without a result", sum)
	}
	tail := LogTail(filepath.Join(t.Dir, "log"), 20)
	class := Classify(st.SchedState, tail)
	text := "exit " + strconv.Itoa(st.Exit)
	if st.SchedState != "" {
		text += " (" + st.SchedState + ")"
	}
	if last := lastLine(tail); last != "" {
		text += ": " + last
	}
	return c.finish(ctx, t, PhaseFailed, class, text, sum)
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	const maxLen = 300
	if len(s) > maxLen {
		s = s[:maxLen]
	}
	return s
}

func (c *Controller) finish(ctx context.Context, t Task, ph Phase, class Class, text string, sum *Summary) error {
	if ph == PhaseDone {
		if err := c.Ledger.Complete(ctx, t.RunID); err != nil {
			return err
		}
		sum.Completed++
		c.log("completed", "run", t.RunID, "attempt", t.Attempt)
		return nil
	}
	if err := c.Ledger.Fail(ctx, t.RunID, class, text); err != nil {
		return err
	}
	c.log("failed", "run", t.RunID, "attempt", t.Attempt, "class", string(class), "error", text)
	atts, err := c.Ledger.Attempts(ctx, t.RunID)
	if err != nil {
		return err
	}
	n := 0
	for _, a := range atts {
		if a.State == Failed && a.ErrorClass == class {
			n++
		}
	}
	if !retryAllowed(c.Retry, class, n) {
		sum.Failed++
		return nil
	}
	r, err := c.Ledger.Get(ctx, t.RunID)
	if err != nil {
		return err
	}
	var ov map[string]Value
	if c.Retry.Adjust != nil {
		if adj := c.Retry.Adjust(class, r.Params()); adj != nil {
			ov = maps.Clone(r.Overrides)
			if ov == nil {
				ov = map[string]Value{}
			}
			maps.Copy(ov, adj)
		}
	}
	if err := c.Ledger.Requeue(ctx, t.RunID, ov); err != nil {
		return err
	}
	sum.Retried++
	c.log("retrying", "run", t.RunID, "class", string(class), "failures_of_class", n)
	return nil
}

func (c *Controller) cancelAll(ctx context.Context, inflight map[string]Task, sum *Summary) {
	tasks := make([]Task, 0, len(inflight))
	for _, t := range inflight {
		tasks = append(tasks, t)
	}
	_ = c.Backend.Cancel(ctx, tasks)
	for _, t := range tasks {
		if err := c.Ledger.Cancel(ctx, t.RunID, "controller stopped"); err == nil {
			sum.Cancelled++
		}
	}
}

// Cancel stops the sweep: every queued run and every running run (after the
// backend cancels it) becomes cancelled.
func (c *Controller) Cancel(ctx context.Context) error {
	running, err := c.Ledger.Runs(ctx, Running)
	if err != nil {
		return err
	}
	tasks := make([]Task, 0, len(running))
	var orphans []Task
	for i := range running {
		if running[i].BackendID != "" {
			tasks = append(tasks, c.task(&running[i]))
		} else {
			orphans = append(orphans, c.task(&running[i]))
		}
	}
	// A run recorded as started without a backend id may still have
	// reached the backend (a controller died in between).
	if len(orphans) > 0 {
		ids, err := c.Backend.Adopt(ctx, orphans)
		if err != nil {
			return err
		}
		for i, id := range ids {
			if id != "" {
				orphans[i].BackendID = id
				tasks = append(tasks, orphans[i])
			}
		}
	}
	berr := c.Backend.Cancel(ctx, tasks)
	rs, err := c.Ledger.Runs(ctx, Queued, Running)
	if err != nil {
		return errors.Join(berr, err)
	}
	for _, r := range rs {
		if err := c.Ledger.Cancel(ctx, r.ID, "sweep cancelled"); err != nil {
			return errors.Join(berr, err)
		}
	}
	return berr
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

// LogTail returns the last n lines of a log file ("" when unreadable); it
// reads at most the last 64 KiB.
func LogTail(path string, n int) string {
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
