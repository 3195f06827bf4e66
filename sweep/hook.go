package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Hook runs a command when something a user waits for happens: the sweep
// finished (Controller.Run drained the queue), or a run failed for good
// after more than one attempt. The command gets a JSON summary on its
// standard input (HookEvent) and SWEEP_EVENT ("finished" or "run_failed")
// in its environment; it may send a mail, post to a chat, or page. Nothing
// leaves the machine unless the command sends it.
type Hook struct {
	// Command is the program and its arguments, e.g. {"sh", "-c",
	// "mail -s sweep me@example.org"}.
	Command []string
	// Timeout bounds one run of the command; 0 means 30 s.
	Timeout time.Duration
}

// HookEvent is what a Hook's command reads on standard input.
type HookEvent struct {
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

// ErrHook is wrapped by the error of a Hook command that failed; the
// sweep itself is not affected, and Run returns the error once it is done.
var ErrHook = errors.New("notification hook failed")

func (h *Hook) run(ctx context.Context, ev HookEvent) error {
	if len(h.Command) == 0 {
		return nil
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, h.Command[0], h.Command[1:]...)
	cmd.Stdin = bytes.NewReader(append(b, '\n'))
	cmd.Env = append(cmd.Environ(), "SWEEP_EVENT="+ev.Event)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sweep: %w: %s %s: %v: %s", ErrHook, ev.Event, strings.Join(h.Command, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (c *Controller) event(ctx context.Context, name string) (HookEvent, error) {
	ev := HookEvent{Event: name, Ledger: c.Ledger.Path(), Counts: map[string]int{}}
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

func (c *Controller) notifyFinished(ctx context.Context, sum Summary) error {
	if c.Notify == nil {
		return nil
	}
	ev, err := c.event(ctx, "finished")
	if err != nil {
		return err
	}
	ev.Summary = &sum
	return c.Notify.run(ctx, ev)
}

func (c *Controller) notifyFailed(ctx context.Context, t Task, atts []Attempt) error {
	if c.Notify == nil {
		return nil
	}
	ev, err := c.event(ctx, "run_failed")
	if err != nil {
		return err
	}
	ev.Run, ev.Slug = t.RunID, t.Slug
	for _, a := range atts {
		ev.Attempts = append(ev.Attempts, fmt.Sprintf("attempt %d: %s: %s", a.N, a.ErrorClass, a.ErrorText))
	}
	// A failed notification does not stop the sweep: Run returns it at
	// the end.
	if err := c.Notify.run(ctx, ev); err != nil {
		c.log("hook", "error", err.Error())
		c.hookErr = errors.Join(c.hookErr, err)
	}
	return nil
}
