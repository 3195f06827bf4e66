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
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Start runs the wrapper script for spec with "sh -s" and returns once the
// detached monitor has recorded its pid. A previous record of the same name
// is removed first, and the launch's token is published before the wrapper
// starts (see Fence).
//
// ctx bounds the launch only, not the command's lifetime, and it never cuts
// the wrapper short: killing the wrapper could leave a command that has
// already started without anyone knowing it. If ctx has ended before Start
// is called, nothing is launched. If it ends while the wrapper runs, the
// wrapper finishes (it takes milliseconds, at most about 10 s), the command
// it started is cancelled (SIGTERM, then SIGKILL after CancelGrace), and
// Start returns an error wrapping ctx.Err(). So on error nothing this call
// launched is left running. A caller that would rather keep a command that
// started, and adopt it, passes context.WithoutCancel(ctx) and checks ctx
// itself.
func (l *Local) Start(ctx context.Context, spec Spec) (*Handle, error) {
	if l.StateDir == "" {
		panic("launch: empty Local.StateDir")
	}
	token := NewToken()
	sc := script(spec, l.StateDir, token, false)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: not started: %w", ErrLaunch, spec.Name, err)
	}
	paths := PathsFor(l.StateDir, spec.Name, spec.LogPath)
	if err := os.MkdirAll(l.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrLaunch, spec.Name, err)
	}
	for _, f := range []string{paths.Pid, paths.Exit} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: %w", ErrLaunch, spec.Name, err)
		}
	}
	// The token is on disk before any process of this launch exists, so a
	// Fence after our death always knows which launch to fence.
	if err := writeFileAtomic(paths.Token, []byte(token+"\n")); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrLaunch, spec.Name, err)
	}
	cmd := exec.Command("sh", "-s")
	// Its own process group: a Ctrl-C at the terminal reaches the caller
	// (which then cancels ctx) but does not kill the wrapper half-way,
	// after the monitor it forked may already have started the command.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = strings.NewReader(sc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v: %s", ErrLaunch, spec.Name, err, strings.TrimSpace(stderr.String()))
	}
	pid, err := ParseStart(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLaunch, spec.Name, err)
	}
	h := &Handle{Name: spec.Name, Pid: pid, Paths: paths}
	if err := ctx.Err(); err != nil {
		cerr := h.Cancel(context.WithoutCancel(ctx), CancelGrace)
		return nil, errors.Join(fmt.Errorf("%w: %s: cancelled while starting: %w", ErrLaunch, spec.Name, err), cerr)
	}
	return h, nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o666); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// fencedTarget is the claim link's target when a Fence, not a monitor,
// created it.
const fencedTarget = "fenced"

// fenceWait bounds how long Fence waits for the pid file of a monitor that
// has claimed its launch (it writes the file right after the claim).
const fenceWait = 10 * time.Second

// Fence settles the latest launch of name, which a caller that died may
// have left in flight (its wrapper still running, its monitor not yet
// started): afterwards the launch either runs, and Fence returns its
// handle, or never will, and Fence returns nil. It claims the launch's
// token before the monitor can (the claim is a symbolic link, created or
// not atomically); a monitor that finds it fenced exits without running the
// command. A name that was never launched gives nil. Fence is for local
// launches made with Start, which publishes the token before the wrapper
// runs.
func (l *Local) Fence(name string) (*Handle, error) {
	if !nameRE.MatchString(name) {
		panic("launch: invalid Spec.Name")
	}
	paths := PathsFor(l.StateDir, name, "")
	b, err := os.ReadFile(paths.Token)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("launch: fence %s: %w", name, err)
	}
	token := strings.TrimSpace(string(b))
	if !tokenRE.MatchString(token) {
		return nil, fmt.Errorf("launch: fence %s: %w: bad token %q", name, ErrRecord, token)
	}
	claim := filepath.Join(l.StateDir, name+"."+token+".claim")
	err = os.Symlink(fencedTarget, claim)
	if err == nil {
		return nil, nil
	}
	if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("launch: fence %s: %w", name, err)
	}
	target, err := os.Readlink(claim)
	if err != nil {
		return nil, fmt.Errorf("launch: fence %s: %w", name, err)
	}
	if target == fencedTarget {
		return nil, nil
	}
	pid, err := strconv.Atoi(target)
	if err != nil || pid <= 0 {
		return nil, fmt.Errorf("launch: fence %s: %w: claim %q", name, ErrRecord, target)
	}
	h := &Handle{Name: name, Pid: pid, Paths: paths}
	// The monitor writes its pid file right after claiming; wait for it so
	// that the handle's Poll reads the files as for any launch.
	for deadline := time.Now().Add(fenceWait); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(paths.Pid); err == nil && strings.TrimSpace(string(b)) == target {
			break
		}
		if !alive(pid) {
			break
		}
	}
	return h, nil
}

// Attach returns a handle for a command launched earlier (perhaps by another
// controller process) under the same state directory.
func (l *Local) Attach(name string) *Handle {
	if !nameRE.MatchString(name) {
		panic("launch: invalid Spec.Name")
	}
	h := &Handle{Name: name, Paths: PathsFor(l.StateDir, name, "")}
	if b, err := os.ReadFile(h.Paths.Pid); err == nil {
		h.Pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	return h
}

// Poll reports the command's state from its files. The error is non-nil
// only when the exit record exists but cannot be read or parsed.
func (h *Handle) Poll() (State, error) {
	st, _, err := h.poll()
	return st, err
}

// Record returns the exit record, or ok == false while there is none.
func (h *Handle) Record() (r Record, ok bool, err error) {
	_, rec, err := h.poll()
	if err != nil || rec == nil {
		return Record{}, false, err
	}
	return *rec, true, nil
}

func (h *Handle) poll() (State, *Record, error) {
	if st, rec, ok, err := readRecord(h.Paths.Exit); ok || err != nil {
		return st, rec, err
	}
	pid := h.Pid
	if b, err := os.ReadFile(h.Paths.Pid); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pid = p
		}
	}
	if pid > 0 && alive(pid) {
		return Running, nil, nil
	}
	// The monitor may have written its record between the two reads.
	if st, rec, ok, err := readRecord(h.Paths.Exit); ok || err != nil {
		return st, rec, err
	}
	return Vanished, nil, nil
}

func readRecord(path string) (State, *Record, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, fmt.Errorf("launch: reading %s: %w", path, err)
	}
	r, err := ParseRecord(b)
	if err != nil {
		return 0, nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return r.State(), &r, true, nil
}

// alive reports whether pid exists and is not a zombie. Zombies matter
// because a monitor whose parent exited may never be reaped in a container.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// Wait polls the command's files until it is done (any state but Running)
// and returns that state, or ctx.Err() when ctx ends first. Polls start
// 5 ms apart and back off to 100 ms.
func (h *Handle) Wait(ctx context.Context) (State, error) {
	d := 5 * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		st, err := h.Poll()
		if err != nil || st.Done() {
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-t.C:
		}
		d = min(2*d, 100*time.Millisecond)
		t.Reset(d)
	}
}

// Cancel sends SIGTERM to the command's process group, waits up to grace for
// the exit record and then sends SIGKILL. If the group had to be killed, no
// record may exist and Poll reports Vanished. Cancel of a finished command
// does nothing. ctx bounds the wait.
func (h *Handle) Cancel(ctx context.Context, grace time.Duration) error {
	if st, _ := h.Poll(); st.Done() {
		return nil
	}
	pid := h.Pid
	if b, err := os.ReadFile(h.Paths.Pid); err == nil {
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pid = p
		}
	}
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	// TERM is sent again every few polls: a signal that reaches a freshly
	// forked shell child before it has reset its handlers is lost, and the
	// command would then outlive the cancel until the grace period ends.
	deadline := time.Now().Add(grace)
	for n := 1; time.Now().Before(deadline); n++ {
		if st, _ := h.Poll(); st.Done() {
			return nil
		}
		if n%10 == 0 {
			_ = syscall.Kill(-pid, syscall.SIGTERM)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return nil
}
