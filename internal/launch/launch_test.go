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

func TestParseRecord(t *testing.T) {
	tests := []struct {
		name, in string
		want     int
		wantErr  bool
	}{
		{"ok", "exit=0\nstart=1700000000\nend=1700000001\n", 0, false},
		{"signal", "exit=143\nstart=1700000000\nend=1700000000\n", 143, false},
		{"empty", "", 0, true},
		{"empty start (interrupted substitution)", "exit=143\nstart=\nend=1700000001\n", 0, true},
		{"empty end", "exit=0\nstart=1700000000\nend=\n", 0, true},
		{"exit only", "exit=137\n", 0, true},
		{"no final newline", "exit=0\nstart=1\nend=2", 0, true},
		{"order", "start=1\nexit=0\nend=2\n", 0, true},
		{"extra line", "exit=0\nstart=1\nend=2\nx=3\n", 0, true},
		{"duplicate", "exit=0\nexit=0\nend=2\n", 0, true},
		{"not a number", "exit=x\nstart=1\nend=2\n", 0, true},
		{"plus sign", "exit=+0\nstart=1\nend=2\n", 0, true},
		{"space", "exit= 0\nstart=1\nend=2\n", 0, true},
		{"exit out of range", "exit=256\nstart=1\nend=2\n", 0, true},
		{"negative exit", "exit=-1\nstart=1\nend=2\n", 0, true},
		{"zero time", "exit=0\nstart=0\nend=2\n", 0, true},
		{"garbage", "garbage\n", 0, true},
		{"crlf", "exit=0\r\nstart=1\r\nend=2\r\n", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRecord([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("%q: err %v, want error %v", tc.in, err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrRecord) {
				t.Errorf("%q: error %v does not wrap ErrRecord", tc.in, err)
			}
			if err == nil && r.Exit != tc.want {
				t.Errorf("%q: exit %d want %d", tc.in, r.Exit, tc.want)
			}
		})
	}
}

func TestParsePoll(t *testing.T) {
	rec := "exit=3\nstart=1700000000\nend=1700000002\n"
	tests := []struct {
		name, in string
		want     State
		wantErr  bool
	}{
		{"record", rec, Failed, false},
		{"trimmed record (ssh output)", strings.TrimSpace(rec), Failed, false},
		{"finished", "exit=0\nstart=1\nend=2", Finished, false},
		{"running", "running 42\n", Running, false},
		{"gone", "gone\n", Vanished, false},
		{"empty start", "exit=143\nstart=\nend=2", 0, true},
		{"empty", "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, r, err := ParsePoll([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrRecord) {
					t.Errorf("error %v does not wrap ErrRecord", err)
				}
				return
			}
			if st != tc.want || (st.Done() && st != Vanished) != (r != nil) {
				t.Errorf("ParsePoll = %v, %+v; want %v", st, r, tc.want)
			}
		})
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

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte("exit=0\nstart=1700000000\nend=1700000001\n"))
	f.Add([]byte("exit=143\n"))
	f.Add([]byte("running 12"))
	f.Add([]byte("gone"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := ParseRecord(b); err != nil && !errors.Is(err, ErrRecord) {
			t.Fatalf("untyped error %v", err)
		}
		if _, _, err := ParsePoll(b); err != nil && !errors.Is(err, ErrRecord) {
			t.Fatalf("untyped error %v", err)
		}
	})
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
