package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// hook runs Controller.Hook's command for one event.
type hook struct {
	command []string
	timeout time.Duration // tests: bounds one run of the command; 0 means 30 s
}

// hookEvent is what the Hook command reads on standard input, a JSON object:
// "event" ("finished" or "run_failed"), "ledger", "sweep", "counts" (runs by
// state); for "finished" also "summary" (what this Run did, Summary's
// fields); for "run_failed" also "run_id", "slug" and "attempts" (the
// attempts' errors, oldest first).
type hookEvent struct {
	Event  string         `json:"event"` // "finished" or "run_failed"
	Ledger string         `json:"ledger"`
	Sweep  string         `json:"sweep"`
	Counts map[string]int `json:"counts"` // runs by state
	// For "finished": what this Run did.
	Summary *Summary `json:"summary,omitempty"`
	// For "run_failed": the run and its attempts' errors, oldest first.
	Run      string   `json:"run_id,omitempty"`
	Slug     string   `json:"slug,omitempty"`
	Attempts []string `json:"attempts,omitempty"`
}

// ErrHook is wrapped by the error of the Hook command that failed, timed out
// or was dropped; the sweep itself is not affected, and Run returns the
// error once it is done.
var ErrHook = errors.New("notification hook failed")

const (
	// hookQueue bounds the events waiting for the command.
	hookQueue = 16
	// hookTail is how much of the command's output (the end) is kept.
	hookTail = 64 << 10
	// hookErrTail is how much of that tail an error message quotes.
	hookErrTail = 1 << 10
	// hookPipeWait bounds the wait for the output pipe after the command
	// exited or was killed: a child that left the process group (setsid)
	// may hold it open for ever.
	hookPipeWait = 2 * time.Second
)

func (h *hook) run(ctx context.Context, ev hookEvent) error {
	if len(h.command) == 0 {
		return nil
	}
	timeout := h.timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("sweep: %w: %s: %v", ErrHook, ev.Event, err)
	}
	cmd := exec.CommandContext(ctx, h.command[0], h.command[1:]...)
	cmd.Stdin = bytes.NewReader(append(b, '\n'))
	cmd.Env = append(cmd.Environ(), "SWEEP_EVENT="+ev.Event)
	out := &tailBuffer{max: hookTail}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = hookPipeWait
	killGroup(cmd)
	err = cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		// The command succeeded; something it started still holds the
		// output open, and is left to run.
		err = nil
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v (process group killed): %w", timeout, err)
	}
	return fmt.Errorf("sweep: %w: %s %s: %v%s", ErrHook, ev.Event, strings.Join(h.command, " "), err, out.quote(hookErrTail))
}

// tailBuffer keeps the last max bytes written to it and counts the rest.
type tailBuffer struct {
	max  int
	b    []byte
	seen int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.seen += int64(len(p))
	if len(p) >= t.max {
		t.b = append(t.b[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if len(t.b)+len(p) > 2*t.max {
		// Keep the last max bytes; copying at most every max bytes
		// written keeps Write linear.
		n := copy(t.b, t.b[len(t.b)-t.max:])
		t.b = t.b[:n]
	}
	t.b = append(t.b, p...)
	return len(p), nil
}

// tail returns the last max bytes written.
func (t *tailBuffer) tail() []byte {
	return t.b[max(len(t.b)-t.max, 0):]
}

// quote returns ": " and the last n bytes of the output, trimmed, saying
// how much came before; "" for no output.
func (t *tailBuffer) quote(n int) string {
	b := bytes.TrimSpace(t.tail())
	if len(b) == 0 {
		return ""
	}
	cut := ""
	if len(b) > n || t.seen > int64(len(t.tail())) {
		b = b[max(len(b)-n, 0):]
		cut = fmt.Sprintf("(last %d of %d bytes of output) ", len(b), t.seen)
	}
	return ": " + cut + strings.ToValidUTF8(string(b), "?")
}

// hookRunner runs the Hook command for the events of one Controller.Run,
// one at a time and in order, in a goroutine of its own.
type hookRunner struct {
	hook *hook

	mu      sync.Mutex
	queue   []hookEvent
	busy    bool           // a goroutine is delivering the queue
	idle    chan struct{}  // closed when busy turns false
	stopped bool           // close called: queued events are dropped
	dropped map[string]int // events not delivered, by name
	errs    []error
}

func newHookRunner(h *hook) *hookRunner {
	return &hookRunner{hook: h, dropped: map[string]int{}}
}

// send queues ev for the command and returns at once.
func (r *hookRunner) send(ctx context.Context, ev hookEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// "finished" comes last and is never dropped for want of room.
	if r.stopped || len(r.queue) >= hookQueue && ev.Event != "finished" {
		r.dropped[ev.Event]++
		return
	}
	r.queue = append(r.queue, ev)
	if !r.busy {
		r.busy, r.idle = true, make(chan struct{})
		go r.deliver(context.WithoutCancel(ctx))
	}
}

func (r *hookRunner) deliver(ctx context.Context) {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 || r.stopped {
			for _, ev := range r.queue {
				r.dropped[ev.Event]++
			}
			r.queue = nil
			r.busy = false
			close(r.idle)
			r.mu.Unlock()
			return
		}
		ev := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()
		if err := r.hook.run(ctx, ev); err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}
	}
}

// wait waits until every queued event has been delivered and returns the
// failures so far, and the events dropped, as one error wrapping ErrHook.
func (r *hookRunner) wait() error {
	r.mu.Lock()
	idle := r.idle
	r.mu.Unlock()
	if idle != nil {
		<-idle
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := r.errs
	for _, name := range []string{"run_failed", "finished"} {
		if n := r.dropped[name]; n > 0 {
			errs = append(errs, fmt.Errorf("sweep: %w: %d %s event(s) not delivered: the command was busy with %d others, or Run was returning", ErrHook, n, name, hookQueue))
		}
	}
	return errors.Join(errs...)
}

// close drops the events not yet started and waits for the one running
// (its timeout bounds the wait); Run calls it on every return so that no
// command outlives it. Failures and dropped events are in wait's error.
func (r *hookRunner) close() {
	r.mu.Lock()
	r.stopped = true
	idle := r.idle
	r.mu.Unlock()
	if idle != nil {
		<-idle
	}
}

func (c *Controller) event(ctx context.Context, name string) (hookEvent, error) {
	ev := hookEvent{Event: name, Ledger: c.Ledger.Path(), Counts: map[string]int{}}
	var err error
	if ev.Sweep, err = c.Ledger.Name(ctx); err != nil {
		return ev, err
	}
	st, err := c.Ledger.Status(ctx, 1)
	if err != nil {
		return ev, err
	}
	for k, n := range st.Counts {
		ev.Counts[string(k)] = n
	}
	return ev, nil
}

// startHooks returns the hook runner of one Run; its zero-hook form does
// nothing.
func (c *Controller) startHooks() *hookRunner {
	return newHookRunner(&hook{command: c.Hook, timeout: c.hookTimeout})
}

// notifyFinished runs the "finished" command after the queued ones and
// returns every hook failure of this Run.
func (c *Controller) notifyFinished(ctx context.Context, sum Summary) error {
	if len(c.Hook) == 0 {
		return nil
	}
	ev, err := c.event(ctx, "finished")
	if err != nil {
		return errors.Join(err, c.hooks.wait())
	}
	ev.Summary = &sum
	c.hooks.send(ctx, ev)
	return c.hooks.wait()
}

func (c *Controller) notifyFailed(ctx context.Context, t Task, atts []Run) error {
	if len(c.Hook) == 0 {
		return nil
	}
	ev, err := c.event(ctx, "run_failed")
	if err != nil {
		return err
	}
	ev.Run, ev.Slug = t.RunID, t.Slug
	for _, a := range atts {
		ev.Attempts = append(ev.Attempts, fmt.Sprintf("attempt %d: %s: %s", a.Attempt, a.ErrorClass, a.ErrorText))
	}
	// The command runs beside the controller; a failure does not stop the
	// sweep, and Run returns it at the end.
	c.hooks.send(ctx, ev)
	return nil
}
