//go:build unix

package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pollTimeout bounds how long a test waits for a short shell command on a
// loaded 2-core machine; the commands themselves take milliseconds.
const pollTimeout = 20 * time.Second

func waitDone(t *testing.T, h *Handle) State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	defer cancel()
	st, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("%s: %v (state %v)", h.Name, err, st)
	}
	return st
}

// groupGone waits until no process of the group pgid is left (a zombie
// monitor counts as gone), within pollTimeout.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for syscall.Kill(-pgid, 0) == nil && groupMembersAlive(pgid) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive after %v", pgid, pollTimeout)
		}
		<-tick.C
	}
}

// groupMembersAlive reports whether a process of group pgid other than a
// zombie exists, from /proc.
func groupMembersAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		// After "comm)": state ppid pgrp ...
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

func TestStartStates(t *testing.T) {
	tests := []struct {
		name     string
		argv     []string
		env      []string
		want     State
		wantExit int
		wantLog  string
	}{
		{"ok", []string{"sh", "-c", "echo hello"}, nil, Finished, 0, "hello\n"},
		{"fail", []string{"sh", "-c", "echo bad >&2; exit 3"}, nil, Failed, 3, "bad\n"},
		{"env-and-quotes", []string{"sh", "-c", `printf '%s|%s\n' "$A" "$1"`, "x", "it's"}, []string{"A=a b'c"}, Finished, 0, "a b'c|it's\n"},
		{"missing-binary", []string{"/nonexistent/prog"}, nil, Failed, 127, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &Local{StateDir: t.TempDir()}
			h, err := l.Start(context.Background(), Spec{Name: tc.name, Argv: tc.argv, Env: tc.env})
			if err != nil {
				t.Fatal(err)
			}
			if got := waitDone(t, h); got != tc.want {
				t.Fatalf("state = %v, want %v", got, tc.want)
			}
			rec, ok, err := h.Record()
			if err != nil || !ok {
				t.Fatalf("Record: ok=%v err=%v", ok, err)
			}
			if rec.Exit != tc.wantExit {
				t.Errorf("exit = %d, want %d", rec.Exit, tc.wantExit)
			}
			log, _ := os.ReadFile(h.Paths.Log)
			if tc.wantLog != "" && string(log) != tc.wantLog {
				t.Errorf("log = %q, want %q", log, tc.wantLog)
			}
			if _, err := os.Stat(h.Paths.Exit + ".tmp"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("temporary exit record left behind: %v", err)
			}
		})
	}
}

func TestDirAndLogPath(t *testing.T) {
	state := t.TempDir()
	work := filepath.Join(t.TempDir(), "w")
	logPath := filepath.Join(t.TempDir(), "logs", "run.log")
	l := &Local{StateDir: state}
	h, err := l.Start(context.Background(), Spec{Name: "pwd", Dir: work, Argv: []string{"pwd"}, LogPath: logPath})
	if err != nil {
		t.Fatal(err)
	}
	if st := waitDone(t, h); st != Finished {
		t.Fatalf("state %v", st)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != work {
		t.Errorf("pwd = %q, want %q", got, work)
	}
}

func TestRunningThenCancel(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	// The grandchild sleep checks that the whole process group is signalled.
	h, err := l.Start(context.Background(), Spec{Name: "long", Argv: []string{"sh", "-c", "sleep 300 & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := h.Poll(); err != nil || st != Running {
		t.Fatalf("Poll = %v, %v; want RUNNING", st, err)
	}
	if err := h.Cancel(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	st := waitDone(t, h)
	if st != Failed {
		t.Fatalf("after cancel: %v, want FAILED (exit 143)", st)
	}
	rec, _, _ := h.Record()
	if rec.Exit != 128+int(syscall.SIGTERM) {
		t.Errorf("exit = %d, want %d", rec.Exit, 128+int(syscall.SIGTERM))
	}
	// Nothing of the group may survive (the grandchild got TERM with the
	// group and may take a moment to exit).
	groupGone(t, h.Pid)
}

func TestVanished(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	h, err := l.Start(context.Background(), Spec{Name: "victim", Argv: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-h.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if st := waitDone(t, h); st != Vanished {
		t.Fatalf("state %v, want VANISHED", st)
	}
}

func TestAttach(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	h, err := l.Start(context.Background(), Spec{Name: "a", Argv: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, h)
	h2 := l.Attach("a")
	if h2.Pid != h.Pid {
		t.Errorf("Attach pid %d, want %d", h2.Pid, h.Pid)
	}
	if st, err := h2.Poll(); err != nil || st != Finished {
		t.Errorf("Attach Poll = %v, %v", st, err)
	}
	if st, _ := l.Attach("never-started").Poll(); st != Vanished {
		t.Errorf("unknown run: %v, want VANISHED", st)
	}
}

func TestPollScriptAgrees(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	names := map[string][]string{"ok": {"true"}, "bad": {"false"}, "run": {"sleep", "300"}}
	handles := map[string]*Handle{}
	for n, argv := range names {
		h, err := l.Start(context.Background(), Spec{Name: n, Argv: argv})
		if err != nil {
			t.Fatal(err)
		}
		handles[n] = h
	}
	waitDone(t, handles["ok"])
	waitDone(t, handles["bad"])
	defer handles["run"].Cancel(context.Background(), time.Second)
	for n, h := range handles {
		want, _ := h.Poll()
		out, err := exec.Command("sh", "-c", PollScript(l.StateDir, n)).Output()
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ParsePoll(out)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: PollScript says %v, Poll says %v (output %q)", n, got, want, out)
		}
	}
	out, _ := exec.Command("sh", "-c", PollScript(l.StateDir, "nope")).Output()
	if st, _, _ := ParsePoll(out); st != Vanished {
		t.Errorf("missing run: %v", st)
	}
}

func TestCancelScript(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	h, err := l.Start(context.Background(), Spec{Name: "c", Argv: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("sh", "-c", CancelScript(l.StateDir, "c", 5*time.Second)).Run(); err != nil {
		t.Fatal(err)
	}
	if st := waitDone(t, h); st != Failed {
		t.Errorf("state %v, want FAILED", st)
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"bad name":   func() { Script(Spec{Name: "../x", Argv: []string{"true"}}, "/tmp") },
		"dot name":   func() { Script(Spec{Name: ".x", Argv: []string{"true"}}, "/tmp") },
		"no argv":    func() { Script(Spec{Name: "x"}, "/tmp") },
		"bad env":    func() { Script(Spec{Name: "x", Argv: []string{"true"}, Env: []string{"1A=b"}}, "/tmp") },
		"no state":   func() { Script(Spec{Name: "x", Argv: []string{"true"}}, "") },
		"zero Local": func() { (&Local{}).Start(context.Background(), Spec{Name: "x", Argv: []string{"true"}}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

func BenchmarkPoll(b *testing.B) {
	l := &Local{StateDir: b.TempDir()}
	h, err := l.Start(context.Background(), Spec{Name: "x", Argv: []string{"true"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := h.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Poll(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCancelRightAfterStart cancels as soon as Start returns, when the
// monitor may not have reached its signal trap yet: the run must still end
// FAILED with an exit record, never VANISHED.
func TestCancelRightAfterStart(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	for i := range 20 {
		h, err := l.Start(context.Background(), Spec{Name: fmt.Sprintf("quick%d", i), Argv: []string{"sleep", "300"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Cancel(context.Background(), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if st := waitDone(t, h); st != Failed {
			t.Fatalf("run %d: state %v after an immediate cancel, want FAILED", i, st)
		}
		rec, ok, err := h.Record()
		if err != nil || !ok || rec.Exit != 143 || rec.Start.IsZero() || rec.End.Before(rec.Start) {
			t.Fatalf("run %d: record %+v, ok %v, err %v; want exit 143 with start ≤ end", i, rec, ok, err)
		}
	}
}

// TestCancelStorm sends TERM to the monitor's group continuously, from
// right after Start until the record exists, as a Cancel under load does:
// the record must still be whole (start and end present) with exit 143.
func TestCancelStorm(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	for i := range 10 {
		h, err := l.Start(context.Background(), Spec{Name: fmt.Sprintf("storm%d", i), Argv: []string{"sleep", "300"}})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = syscall.Kill(-h.Pid, syscall.SIGTERM)
				runtime.Gosched()
			}
		}()
		st := waitDone(t, h)
		close(stop)
		<-done
		rec, ok, err := h.Record()
		if st != Failed || err != nil || !ok || rec.Exit != 143 {
			t.Fatalf("run %d: state %v, record %+v ok %v err %v; want FAILED 143", i, st, rec, ok, err)
		}
	}
}

// TestStartCancelledContext: a context that has ended launches nothing;
// one that ends during the launch leaves nothing running. Both errors wrap
// context.Canceled and ErrLaunch.
func TestStartCancelledContext(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h, err := l.Start(ctx, Spec{Name: "never", Argv: []string{"sleep", "300"}})
	if h != nil || !errors.Is(err, context.Canceled) || !errors.Is(err, ErrLaunch) {
		t.Fatalf("Start with a cancelled context = %v, %v; want nil and an error wrapping context.Canceled and ErrLaunch", h, err)
	}
	if _, err := os.Stat(filepath.Join(l.StateDir, "never.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a pid file exists for a launch that never started: %v", err)
	}
	// A context cancelled while the wrapper runs: the cancel lands at a
	// different point of the launch each time.
	for i := range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		name := fmt.Sprintf("mid%d", i)
		go func() {
			for range i {
				runtime.Gosched()
			}
			cancel()
		}()
		h, err := l.Start(ctx, Spec{Name: name, Argv: []string{"sleep", "300"}})
		cancel()
		if err == nil {
			// The launch finished before the cancel: a normal handle.
			if err := h.Cancel(context.Background(), 5*time.Second); err != nil {
				t.Fatal(err)
			}
			waitDone(t, h)
			continue
		}
		if h != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: Start = %v, %v; want nil and context.Canceled", name, h, err)
		}
		// Whatever started was cancelled before Start returned.
		a := l.Attach(name)
		if a.Pid == 0 {
			continue
		}
		if st, _ := a.Poll(); st == Running {
			t.Fatalf("%s: still running after Start returned an error", name)
		}
	}
}

// TestFence: a launch fenced before its monitor claims it never runs the
// command; one whose monitor claimed first is returned as running; a name
// never launched gives nil.
func TestFence(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	if h, err := l.Fence("never"); h != nil || err != nil {
		t.Fatalf("Fence of a name never launched = %v, %v; want nil, nil", h, err)
	}
	// Claimed first: the launch ran.
	h, err := l.Start(context.Background(), Spec{Name: "ran", Argv: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.Fence("ran")
	if err != nil || f == nil || f.Pid != h.Pid {
		t.Fatalf("Fence of a started launch = %+v, %v; want the handle of pid %d", f, err, h.Pid)
	}
	if err := f.Cancel(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	waitDone(t, f)

	// Fenced first: the wrapper of a dead caller runs afterwards.
	marker := filepath.Join(t.TempDir(), "ran")
	spec := Spec{Name: "late", Argv: []string{"touch", marker}}
	token := NewToken()
	if err := writeFileAtomic(PathsFor(l.StateDir, "late", "").Token, []byte(token+"\n")); err != nil {
		t.Fatal(err)
	}
	if f, err := l.Fence("late"); f != nil || err != nil {
		t.Fatalf("Fence before the monitor = %v, %v; want nil, nil", f, err)
	}
	cmd := exec.Command("sh", "-s")
	cmd.Stdin = strings.NewReader(script(spec, l.StateDir, token, false))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "fenced") {
		t.Errorf("wrapper of a fenced launch: %v %q; want a failure naming the fence", err, out)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the fenced command ran: %v", err)
	}
	if _, err := os.Stat(PathsFor(l.StateDir, "late", "").Pid); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fenced launch wrote a pid file: %v", err)
	}
}

// TestFenceRace runs Start and Fence of the same launch at the same time:
// whichever wins, the two agree: Fence returns a handle exactly when the
// command runs.
func TestFenceRace(t *testing.T) {
	l := &Local{StateDir: t.TempDir()}
	marks := t.TempDir()
	for i := range 20 {
		name := fmt.Sprintf("r%d", i)
		marker := filepath.Join(marks, name)
		started := make(chan error, 1)
		go func() {
			_, err := l.Start(context.Background(), Spec{Name: name, Argv: []string{"touch", marker}})
			started <- err
		}()
		var f *Handle
		var ferr error
		// Fence as soon as the token is published, while the wrapper runs.
		for {
			if _, err := os.Stat(PathsFor(l.StateDir, name, "").Token); err == nil {
				f, ferr = l.Fence(name)
				break
			}
			runtime.Gosched()
		}
		serr := <-started
		if ferr != nil {
			t.Fatalf("%s: Fence: %v", name, ferr)
		}
		if f == nil {
			if serr == nil {
				t.Fatalf("%s: fenced, yet Start succeeded", name)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s: fenced, yet the command ran", name)
			}
			continue
		}
		if serr != nil {
			t.Fatalf("%s: Fence found the launch running, yet Start failed: %v", name, serr)
		}
		if st := waitDone(t, f); st != Finished {
			t.Fatalf("%s: %v, want FINISHED", name, st)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("%s: Fence found the launch running, yet the command did not run: %v", name, err)
		}
	}
}
