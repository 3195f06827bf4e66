package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	deadline := time.Now().Add(pollTimeout)
	for time.Now().Before(deadline) {
		st, err := h.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if st.Done() {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s still running after %v", h.Name, pollTimeout)
	return Running
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
	// Nothing of the group may survive.
	if err := syscall.Kill(-h.Pid, 0); err == nil {
		time.Sleep(200 * time.Millisecond)
		if syscall.Kill(-h.Pid, 0) == nil && alive(h.Pid) {
			t.Errorf("process group %d still alive after cancel", h.Pid)
		}
	}
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
		in      string
		want    int
		wantErr bool
	}{
		{"exit=0\nstart=1\nend=2\n", 0, false},
		{"exit=137\n", 137, false},
		{"", 0, true},
		{"start=1\n", 0, true},
		{"exit=x\n", 0, true},
		{"garbage", 0, true},
	}
	for _, tc := range tests {
		r, err := ParseRecord([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if err != nil && !errors.Is(err, ErrRecord) {
			t.Errorf("%q: error %v does not wrap ErrRecord", tc.in, err)
		}
		if err == nil && r.Exit != tc.want {
			t.Errorf("%q: exit %d want %d", tc.in, r.Exit, tc.want)
		}
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
	for st, _ := h.Poll(); !st.Done(); st, _ = h.Poll() {
		time.Sleep(time.Millisecond)
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
	}
}
