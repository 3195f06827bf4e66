//go:build unix

package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestHookTimeoutKillsGroup: at the timeout the command's whole process
// group dies and run returns at once, not when the children holding its
// output pipe end (issue 26: sh -c 'sleep 20' ran 60 s against a 2 s
// timeout).
func TestHookTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := &hook{command: []string{"sh", "-c", `sleep 30 & echo $! > "$0"; sleep 30; echo never`, pidFile}, timeout: 300 * time.Millisecond}
	start := time.Now()
	err := h.run(context.Background(), hookEvent{Event: "finished"})
	took := time.Since(start)
	if !errors.Is(err, ErrHook) || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Errorf("error %v, want ErrHook saying it timed out", err)
	}
	if took > 5*time.Second {
		t.Errorf("run took %v against a 300 ms timeout", took)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	for start := time.Now(); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the command's background child %d outlived the timeout", pid)
		}
	}
}

// TestHookChildKeepsPipe: a command that succeeds and leaves a child
// holding its output is a success, and run does not wait for the child.
func TestHookChildKeepsPipe(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := &hook{command: []string{"sh", "-c", `sleep 30 & echo $! > "$0"`, pidFile}}
	start := time.Now()
	err := h.run(context.Background(), hookEvent{Event: "finished"})
	if b, rerr := os.ReadFile(pidFile); rerr == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err != nil || time.Since(start) > hookPipeWait+3*time.Second {
		t.Errorf("run: %v after %v", err, time.Since(start))
	}
}

// TestHookOutputBounded: 200 MB of output from a failing command cost
// memory for its last 64 KiB only, and the error quotes the end of it
// (issue 26: 200 MB of output took 931 MB of RSS).
func TestHookOutputBounded(t *testing.T) {
	const size = 200_000_000
	h := &hook{command: []string{"sh", "-c", fmt.Sprintf("yes 'hook output line' | head -c %d; echo the end; exit 3", size)}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := h.run(context.Background(), hookEvent{Event: "finished"})
	runtime.ReadMemStats(&after)
	// What run allocates besides the kept tail: os/exec's copy buffer,
	// the command and its environment; well under 8 MB.
	const budget = 8 << 20
	if grew := after.TotalAlloc - before.TotalAlloc; grew > budget {
		t.Errorf("run allocated %d bytes for %d bytes of output", grew, size)
	}
	msg := fmt.Sprint(err)
	if !errors.Is(err, ErrHook) || !strings.HasSuffix(msg, "the end") || !strings.Contains(msg, "hook output line\nhook output line") ||
		!strings.Contains(msg, fmt.Sprintf("(last %d of %d bytes of output)", hookErrTail, size+len("the end\n"))) {
		t.Errorf("error %.300q ... %.100q", msg, msg[max(len(msg)-100, 0):])
	}
	if len(msg) > hookErrTail+500 {
		t.Errorf("error message of %d bytes", len(msg))
	}
}

func TestTailBuffer(t *testing.T) {
	var want []byte
	tb := &tailBuffer{max: 10}
	for i := range 200 {
		p := []byte(strings.Repeat(string(rune('a'+i%26)), i%23))
		tb.Write(p)
		want = append(want, p...)
		if got, w := string(tb.tail()), string(want[max(len(want)-10, 0):]); got != w {
			t.Fatalf("after %d writes: %q, want %q", i+1, got, w)
		}
		if cap(tb.b) > 64 {
			t.Fatalf("buffer grew to %d", cap(tb.b))
		}
	}
	if tb.seen != int64(len(want)) {
		t.Errorf("seen %d, want %d", tb.seen, len(want))
	}
}

// hookLedger returns a ledger holding n runs, seed 0..n-1.
func hookLedger(t *testing.T, n int) *Ledger {
	t.Helper()
	l, err := OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	vals := make([]Value, n)
	for i := range vals {
		vals[i] = intValue(int64(i))
	}
	s := &Spec{Name: "hook", Axes: []Axis{{Key: "seed", Short: "s", Values: vals}}}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Enqueue(context.Background(), s, slices.Values(pts)); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHookDoesNotBlockController: while a slow command handles a run's
// failure, the controller goes on running the other runs; Run waits for
// the command before it returns (issue 26: the hook blocked the poll
// loop).
func TestHookDoesNotBlockController(t *testing.T) {
	const hookTakes = 4 * time.Second
	l := hookLedger(t, 9)
	var mu sync.Mutex
	var failedAt, lastEnd time.Time
	fn := func(ctx context.Context, task Task) (*Result, error) {
		if task.Params["seed"].Int() == 0 {
			mu.Lock()
			failedAt = time.Now()
			mu.Unlock()
			return nil, errors.New("boom")
		}
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		lastEnd = time.Now()
		mu.Unlock()
		return &Result{Metrics: map[string]float64{"x": 1}}, nil
	}
	marks := filepath.Join(t.TempDir(), "events")
	c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: t.TempDir(), PollInterval: 5 * time.Millisecond,
		Retry: map[Class]int{ClassUnknown: 1},
		Hook:  []string{"sh", "-c", `echo "$SWEEP_EVENT" >> "$0"; [ "$SWEEP_EVENT" = finished ] || sleep ` + strconv.Itoa(int(hookTakes/time.Second)), marks}}
	start := time.Now()
	sum, err := c.Run(context.Background())
	returned := time.Now()
	if err != nil || sum.Completed != 8 || sum.Failed != 1 {
		t.Fatalf("Run: %+v, %v", sum, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The other runs take ~0.1 s in all; with the controller stalled by
	// the command they would end hookTakes after the failure.
	if lastEnd.Sub(failedAt) > hookTakes/2 {
		t.Errorf("the last run ended %v after the failure; the %v hook held up the controller", lastEnd.Sub(failedAt), hookTakes)
	}
	if returned.Sub(failedAt) < hookTakes {
		t.Errorf("Run returned %v after the failure, before its %v hook ended", returned.Sub(failedAt), hookTakes)
	}
	b, _ := os.ReadFile(marks)
	if got := strings.Fields(string(b)); len(got) != 2 || got[0] != "run_failed" || got[1] != "finished" {
		t.Errorf("events %q after %v, want run_failed then finished", got, returned.Sub(start))
	}
}

// TestHookQueueBounded: events beyond the queue are dropped and counted in
// the error; "finished" is always delivered, last.
func TestHookQueueBounded(t *testing.T) {
	marks := filepath.Join(t.TempDir(), "events")
	r := newHookRunner(&hook{command: []string{"sh", "-c", `echo "$SWEEP_EVENT" >> "$0"; sleep 0.05`, marks}})
	const sent = 40
	for range sent {
		r.send(context.Background(), hookEvent{Event: "run_failed"})
	}
	r.send(context.Background(), hookEvent{Event: "finished"})
	err := r.wait()
	b, _ := os.ReadFile(marks)
	got := strings.Fields(string(b))
	delivered := len(got) - 1
	if len(got) == 0 || got[len(got)-1] != "finished" || delivered > hookQueue+1 || delivered < hookQueue {
		t.Fatalf("delivered %q", got)
	}
	want := fmt.Sprintf("%d run_failed event(s) not delivered", sent-delivered)
	if !errors.Is(err, ErrHook) || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("error %v, want ErrHook saying %q", err, want)
	}
	r.close()
}

// TestHookStopDropsQueued: when Run returns early the queued events are
// dropped, the one running finishes, and nothing outlives
// close.
func TestHookStopDropsQueued(t *testing.T) {
	marks := filepath.Join(t.TempDir(), "events")
	r := newHookRunner(&hook{command: []string{"sh", "-c", `sleep 0.2; echo "$SWEEP_EVENT" >> "$0"`, marks}})
	for range 5 {
		r.send(context.Background(), hookEvent{Event: "run_failed"})
	}
	time.Sleep(50 * time.Millisecond) // the first is running
	r.close()
	b, _ := os.ReadFile(marks)
	if n := strings.Count(string(b), "run_failed"); n != 1 {
		t.Errorf("%d events delivered after close, want the running one", n)
	}
	if n := r.dropped["run_failed"]; n != 4 {
		t.Errorf("%d events dropped at close, want 4", n)
	}
	r.send(context.Background(), hookEvent{Event: "finished"})
	if err := r.wait(); !errors.Is(err, ErrHook) {
		t.Errorf("an event sent after close: %v", err)
	}
}
