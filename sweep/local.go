package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/crosscluster/crosscluster/internal/launch"
)

// Local runs tasks on this machine, either as in-process Go functions (Func
// set) or as processes (Command set) started with internal/launch so that
// they survive a controller crash and are adopted by the next controller.
// The controller bounds concurrency (Controller.Parallel).
type Local struct {
	// Func, when set, is an in-process worker: it computes a run's result
	// from its task in a goroutine and must honour ctx; the backend writes
	// the result with WriteResult.
	Func func(ctx context.Context, t Task) (*Result, error)
	// Command is the worker program; it receives the Env* variables and
	// writes its result with WriteResult (see WorkerTask).
	Command []string
	// StateDir holds the launcher's pid and exit records (required with
	// Command).
	StateDir string

	mu    sync.Mutex
	funcs map[string]*funcTask
	owner string // prefix of this backend's in-process ids
	gen   int
	wake  chan struct{}
}

// notify returns a channel that receives a value when an in-process task
// ends (notifier).
func (l *Local) notify() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	return l.wake
}

type funcTask struct {
	cancel context.CancelFunc
	ended  chan struct{}
	done   bool
	failed bool
}

func (l *Local) check() {
	if (l.Func == nil) == (len(l.Command) == 0) {
		panic("sweep: Local needs exactly one of Func and Command")
	}
	if len(l.Command) > 0 && l.StateDir == "" {
		panic("sweep: Local.Command needs StateDir")
	}
}

func launchName(t Task) string { return t.RunID + "-a" + strconv.Itoa(t.Attempt) }

// Submit starts every task at once. When ctx ends it stops before the next
// task and returns the ids of the tasks it started with an error wrapping
// ctx.Err(). A worker process whose launch was under way when ctx ended is
// not killed half-way: its launch completes and it is returned with the
// others, so that the controller records it and adopts or cancels it
// instead of starting the same attempt again.
func (l *Local) Submit(ctx context.Context, tasks []Task) ([]string, error) {
	l.check()
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		if err := ctx.Err(); err != nil {
			return ids[:i], fmt.Errorf("sweep: run %s: not started: %w", t.RunID, err)
		}
		if l.Func != nil {
			// In-process workers get their parameters directly.
			if err := os.MkdirAll(t.Dir, 0o755); err != nil {
				return ids[:i], fmt.Errorf("sweep: run %s: %w", t.RunID, err)
			}
			ids[i] = l.startFunc(t)
			continue
		}
		if err := prepare(t); err != nil {
			return ids[:i], err
		}
		lc := &launch.Local{StateDir: l.StateDir}
		h, err := lc.Start(context.WithoutCancel(ctx), launch.Spec{
			Name:    launchName(t),
			Dir:     t.Dir,
			Argv:    l.Command,
			Env:     taskEnv(t),
			LogPath: filepath.Join(t.Dir, "log"),
		})
		if err != nil {
			return ids[:i], fmt.Errorf("sweep: run %s: %w: %w", t.RunID, ErrLaunch, err)
		}
		ids[i] = "proc:" + h.Name
	}
	return ids, nil
}

func (l *Local) startFunc(t Task) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.funcs == nil {
		l.funcs = map[string]*funcTask{}
		// The process id and the time make this backend's ids unknown to
		// any other controller, so tasks of a dead controller are not
		// confused with this one's (Adopt).
		l.owner = fmt.Sprintf("func:%d.%d:", os.Getpid(), time.Now().UnixNano())
	}
	l.gen++
	id := l.owner + strconv.Itoa(l.gen)
	ctx, cancel := context.WithCancel(context.Background())
	ft := &funcTask{cancel: cancel, ended: make(chan struct{})}
	l.funcs[id] = ft
	go func() {
		res, err := l.Func(ctx, t)
		if err == nil && res != nil {
			res.RunID, res.Attempt = t.RunID, t.Attempt
			err = WriteResult(t.Dir, res)
		} else if err == nil {
			err = errors.New("worker returned no result")
		}
		if err != nil {
			_ = writeFile(filepath.Join(t.Dir, "log"), []byte(err.Error()+"\n"), false)
		}
		cancel()
		l.mu.Lock()
		ft.done, ft.failed = true, err != nil
		close(ft.ended)
		if l.wake != nil {
			select {
			case l.wake <- struct{}{}:
			default:
			}
		}
		l.mu.Unlock()
	}()
	return id
}

// Poll reports on the tasks.
func (l *Local) Poll(ctx context.Context, tasks []Task) ([]TaskStatus, error) {
	l.check()
	out := make([]TaskStatus, len(tasks))
	now := time.Now()
	for i, t := range tasks {
		if l.Func != nil {
			l.mu.Lock()
			ft, ok := l.funcs[t.BackendID]
			switch {
			case !ok:
				out[i].State = lost
			case !ft.done:
				out[i] = TaskStatus{State: Running, Heartbeat: now}
			case ft.failed:
				out[i] = TaskStatus{State: Failed, Exit: 1}
				delete(l.funcs, t.BackendID)
			default:
				out[i].State = Completed
				delete(l.funcs, t.BackendID)
			}
			l.mu.Unlock()
			continue
		}
		h := (&launch.Local{StateDir: l.StateDir}).Attach(launchName(t))
		st, err := h.Poll()
		if err != nil {
			return nil, fmt.Errorf("sweep: run %s: %w: %w", t.RunID, ErrLaunch, err)
		}
		switch st {
		case launch.Running:
			out[i] = TaskStatus{State: Running, Heartbeat: heartbeatOf(t.Dir)}
		case launch.Finished:
			out[i].State = Completed
		case launch.Failed:
			rec, _, _ := h.Record()
			out[i] = TaskStatus{State: Failed, Exit: rec.Exit}
		default:
			out[i].State = lost
		}
	}
	return out, nil
}

// cancelGrace is how long a cancelled worker process has to exit on SIGTERM.
const cancelGrace = 5 * time.Second

// Cancel stops the tasks and returns once each has stopped (an in-process
// worker has returned, a process has exited or been killed), or an error
// naming the tasks it could not stop.
func (l *Local) Cancel(ctx context.Context, tasks []Task) error {
	l.check()
	var errs []error
	for _, t := range tasks {
		if l.Func != nil {
			l.mu.Lock()
			ft, ok := l.funcs[t.BackendID]
			l.mu.Unlock()
			if !ok {
				continue
			}
			ft.cancel()
			select {
			case <-ft.ended:
			case <-ctx.Done():
				errs = append(errs, fmt.Errorf("sweep: cancel run %s: %w", t.RunID, ctx.Err()))
			}
			continue
		}
		h := (&launch.Local{StateDir: l.StateDir}).Attach(launchName(t))
		if err := h.Cancel(ctx, cancelGrace); err != nil {
			errs = append(errs, fmt.Errorf("sweep: cancel run %s: %w: %w", t.RunID, ErrLaunch, err))
		}
	}
	return errors.Join(errs...)
}

// Adopt reports, for tasks a previous controller left running, under which
// id each still runs, or "" when it does not and never will. A worker
// process with a recorded id runs on its own and keeps it. One without
// (the controller died while launching it) is fenced: if its monitor had
// not started yet it never will (""), else it is adopted. In-process
// workers die with their controller: only this backend's own are adopted,
// the others are Gone.
func (l *Local) Adopt(ctx context.Context, tasks []Task) ([]string, error) {
	l.check()
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		if l.Func != nil {
			l.mu.Lock()
			ids[i] = Gone
			if _, ok := l.funcs[t.BackendID]; ok {
				ids[i] = t.BackendID
			}
			l.mu.Unlock()
			continue
		}
		if t.BackendID != "" {
			ids[i] = t.BackendID
			continue
		}
		h, err := (&launch.Local{StateDir: l.StateDir}).Fence(launchName(t))
		if err != nil {
			return nil, fmt.Errorf("sweep: adopt run %s: %w: %w", t.RunID, ErrLaunch, err)
		}
		if h != nil {
			ids[i] = "proc:" + h.Name
		}
	}
	return ids, nil
}
