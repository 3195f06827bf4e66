package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/internal/sh"
)

// State is what Poll knows about a launched command.
type State int

const (
	// Running: no exit record yet and the monitor process is alive.
	Running State = iota
	// Finished: the command exited with status 0.
	Finished
	// Failed: the command exited with a non-zero status.
	Failed
	// Vanished: no exit record and the monitor process is gone.
	Vanished
)

// String returns "RUNNING", "FINISHED", "FAILED" or "VANISHED".
func (s State) String() string {
	switch s {
	case Running:
		return "RUNNING"
	case Finished:
		return "FINISHED"
	case Failed:
		return "FAILED"
	case Vanished:
		return "VANISHED"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Done reports whether s is final (anything but Running).
func (s State) Done() bool { return s != Running }

// Spec describes one command to launch.
type Spec struct {
	// Name identifies the command inside the state directory. It must match
	// [A-Za-z0-9._-]+ and not start with a dot.
	Name string
	// Dir is the working directory; empty means the state directory.
	Dir string
	// Argv is the command and its arguments; it must not be empty.
	Argv []string
	// Env holds extra "KEY=VALUE" entries added to the inherited environment.
	Env []string
	// LogPath receives standard output and standard error (appended);
	// empty means <stateDir>/<Name>.log.
	LogPath string
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)
var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (s Spec) check() {
	if !nameRE.MatchString(s.Name) {
		panic("launch: invalid Spec.Name")
	}
	if len(s.Argv) == 0 {
		panic("launch: empty Spec.Argv")
	}
	for _, kv := range s.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envKeyRE.MatchString(k) {
			panic("launch: Spec.Env entry is not KEY=VALUE")
		}
	}
}

// Paths are the files of one launched command.
type Paths struct {
	Pid, Exit, Log string
	// Token holds the token of the name's latest launch; the launch's
	// monitor claims <Name>.<token>.claim before it runs anything.
	Token string
}

// PathsFor returns where the protocol keeps the files of the command named
// name under stateDir. logPath overrides the log file when non-empty.
func PathsFor(stateDir, name, logPath string) Paths {
	p := Paths{
		Pid:   filepath.Join(stateDir, name+".pid"),
		Exit:  filepath.Join(stateDir, name+".exit"),
		Log:   filepath.Join(stateDir, name+".log"),
		Token: filepath.Join(stateDir, name+".launch"),
	}
	if logPath != "" {
		p.Log = logPath
	}
	return p
}

// join uses "/" so that scripts built on one OS run on a POSIX host.
func join(dir, file string) string {
	return strings.TrimSuffix(dir, "/") + "/" + file
}

// Script returns the POSIX sh wrapper that launches spec detached, keeping its
// state under stateDir (see the package documentation for the protocol).
// It panics if spec is invalid.
func Script(spec Spec, stateDir string) string {
	return script(spec, stateDir, NewToken(), true)
}

// NewToken returns a launch token that no other launch from this process,
// or any other (it holds the process id and the time), has used.
func NewToken() string {
	return strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9-]+$`)

// script builds the wrapper for the launch named by token. With
// writeToken it also removes the previous pid file and record and
// publishes the token itself (Script, for remote use); Local.Start does
// both before it runs the wrapper, so that a wrapper left behind by a dead
// caller can never remove a newer launch's files.
func script(spec Spec, stateDir, token string, writeToken bool) string {
	spec.check()
	if stateDir == "" {
		panic("launch: empty state directory")
	}
	if !tokenRE.MatchString(token) {
		panic("launch: invalid token")
	}
	dir := spec.Dir
	if dir == "" {
		dir = stateDir
	}
	logPath := spec.LogPath
	if logPath == "" {
		logPath = join(stateDir, spec.Name+".log")
	}
	pidf, exitf, tokf := join(stateDir, spec.Name+".pid"), join(stateDir, spec.Name+".exit"), join(stateDir, spec.Name+".launch")
	claimf := join(stateDir, spec.Name+"."+token+".claim")

	var cmd strings.Builder
	for i, a := range spec.Argv {
		if i > 0 {
			cmd.WriteByte(' ')
		}
		cmd.WriteString(sh.Quote(a))
	}

	// The monitor program runs in its own session. It claims the launch,
	// records its pid, runs the command in the background (so that a
	// trapped TERM interrupts wait at once), forwards TERM/INT to it and
	// records the exit status.
	//
	// Order matters, because in dash a trapped signal interrupts a command
	// substitution and leaves its variable empty:
	//   - start is read before the TERM/INT trap and before the pid file
	//     exists, when nobody can know the monitor's pid to signal it;
	//   - the trap goes in before the pid file exists: a Cancel can come as
	//     soon as Start returns, and an untrapped TERM would kill the
	//     monitor without an exit record (VANISHED instead of FAILED); a
	//     signal that arrives before the command starts cancels it (143);
	//   - the claim (a symbolic link created atomically, its target the
	//     monitor's pid) comes before anything else is written: a Fence
	//     that created it first ("fenced") means this launch was given up
	//     by whoever started it, and the monitor exits without running;
	//   - once the child's status is collected, TERM and INT are ignored
	//     (Cancel sends TERM again every few polls), so end is read and the
	//     record written whole; it appears by rename, complete or not at all.
	var mon strings.Builder
	mon.WriteString("trap '' HUP\n")
	mon.WriteString("start=$(date +%s)\n")
	mon.WriteString("child= cancelled=\n")
	mon.WriteString("trap 'cancelled=1; test -n \"$child\" && kill -TERM \"$child\" 2>/dev/null' TERM INT\n")
	fmt.Fprintf(&mon, "pidf=%s exitf=%s\n", sh.Quote(pidf), sh.Quote(exitf))
	fmt.Fprintf(&mon, "ln -s \"$$\" %s 2>/dev/null || exit 0\n", sh.Quote(claimf))
	mon.WriteString("echo $$ > \"$pidf.tmp\" && mv -f \"$pidf.tmp\" \"$pidf\"\n")
	fmt.Fprintf(&mon, "cd %s || { rc=127; echo \"launch: cannot enter directory\" >&2; }\n", sh.Quote(dir))
	mon.WriteString("if [ -z \"${rc:-}\" ] && [ -n \"$cancelled\" ]; then rc=143; fi\n")
	mon.WriteString("if [ -z \"${rc:-}\" ]; then\n")
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&mon, "  %s=%s; export %s\n", k, sh.Quote(v), k)
	}
	fmt.Fprintf(&mon, "  %s </dev/null >>%s 2>&1 &\n", cmd.String(), sh.Quote(logPath))
	mon.WriteString("  child=$!\n")
	mon.WriteString("  [ -n \"$cancelled\" ] && kill -TERM \"$child\" 2>/dev/null\n")
	// wait returns >128 when a trapped signal arrives, perhaps after the
	// shell has reaped the child: loop while the child lives, then ask once
	// more, which reports a status the interrupted wait did not (127 when
	// there is none left to report).
	mon.WriteString("  while :; do\n")
	mon.WriteString("    wait \"$child\"; rc=$?\n")
	mon.WriteString("    kill -0 \"$child\" 2>/dev/null && continue\n")
	mon.WriteString("    wait \"$child\" 2>/dev/null; r=$?; [ $r -ne 127 ] && rc=$r\n")
	mon.WriteString("    break\n")
	mon.WriteString("  done\n")
	mon.WriteString("fi\n")
	mon.WriteString("trap '' TERM INT\n")
	mon.WriteString("end=$(date +%s)\n")
	mon.WriteString("printf 'exit=%s\\nstart=%s\\nend=%s\\n' \"$rc\" \"$start\" \"$end\" > \"$exitf.tmp\" || exit 1\n")
	mon.WriteString("sync \"$exitf.tmp\" 2>/dev/null || sync\n")
	mon.WriteString("mv -f \"$exitf.tmp\" \"$exitf\"\n")

	var s strings.Builder
	s.WriteString("#!/bin/sh\n# crosscluster launch wrapper (internal/launch)\n")
	fmt.Fprintf(&s, "mkdir -p %s %s || exit 1\n", sh.Quote(stateDir), sh.Quote(dir))
	if writeToken {
		fmt.Fprintf(&s, "rm -f %s %s\n", sh.Quote(pidf), sh.Quote(exitf))
		fmt.Fprintf(&s, "echo %s > %s.tmp && mv -f %s.tmp %s || exit 1\n", token, sh.Quote(tokf), sh.Quote(tokf), sh.Quote(tokf))
	}
	// Log directory must exist before the redirection in the monitor.
	fmt.Fprintf(&s, "mkdir -p \"$(dirname %s)\" || exit 1\n", sh.Quote(logPath))
	fmt.Fprintf(&s, "setsid sh -c %s </dev/null >/dev/null 2>&1 &\n", sh.Quote(mon.String()))
	s.WriteString("mon=$!\n")
	s.WriteString("i=0\n")
	fmt.Fprintf(&s, "while [ ! -s %s ]; do\n", sh.Quote(pidf))
	// A fenced launch: wait until its monitor has seen the fence and left,
	// so that nothing of it outlives the wrapper.
	fmt.Fprintf(&s, "  [ \"$(readlink %s 2>/dev/null)\" = fenced ] && { wait \"$mon\" 2>/dev/null; echo 'launch: fenced before it started' >&2; exit 1; }\n", sh.Quote(claimf))
	s.WriteString("  i=$((i+1)); [ $i -gt 1000 ] && { echo 'launch: monitor did not start' >&2; exit 1; }\n")
	s.WriteString("  sleep 0.01 2>/dev/null || sleep 1\ndone\n")
	fmt.Fprintf(&s, "echo \"pid $(cat %s)\"\n", sh.Quote(pidf))
	return s.String()
}

// PollScript returns a POSIX sh program that prints the exit record of the
// command named name under stateDir when there is one, else "running <pid>"
// or "gone". ParsePoll reads its output.
func PollScript(stateDir, name string) string {
	if !nameRE.MatchString(name) {
		panic("launch: invalid Spec.Name")
	}
	pidf := sh.Quote(join(stateDir, name+".pid"))
	exitf := sh.Quote(join(stateDir, name+".exit"))
	return fmt.Sprintf(`if [ -f %[2]s ]; then cat %[2]s; exit 0; fi
pid=$(cat %[1]s 2>/dev/null)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  st=$(sed -n 's/^.*) \(.\).*/\1/p' /proc/"$pid"/stat 2>/dev/null)
  if [ "$st" != Z ]; then
    if [ -f %[2]s ]; then cat %[2]s; else echo "running $pid"; fi
    exit 0
  fi
fi
if [ -f %[2]s ]; then cat %[2]s; else echo gone; fi
`, pidf, exitf)
}

// CancelScript returns a POSIX sh program that sends SIGTERM to the process
// group of the command named name (again every 0.3 s, as Cancel does), waits
// up to grace for its exit record and then sends SIGKILL to the group.
func CancelScript(stateDir, name string, grace time.Duration) string {
	if !nameRE.MatchString(name) {
		panic("launch: invalid Spec.Name")
	}
	pidf := sh.Quote(join(stateDir, name+".pid"))
	exitf := sh.Quote(join(stateDir, name+".exit"))
	steps := int(grace / (100 * time.Millisecond))
	return fmt.Sprintf(`pid=$(cat %[1]s 2>/dev/null) || exit 0
[ -f %[2]s ] && exit 0
kill -TERM -- -"$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
i=0
while [ $i -lt %[3]d ] && [ ! -f %[2]s ]; do
  i=$((i+1)); sleep 0.1 2>/dev/null || sleep 1
  [ $((i %% 3)) -eq 0 ] && { kill -TERM -- -"$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; }
done
[ -f %[2]s ] || kill -KILL -- -"$pid" 2>/dev/null
exit 0
`, pidf, exitf, steps)
}

// Record is a parsed exit record.
type Record struct {
	Exit       int
	Start, End time.Time
}

// State returns Finished for exit status 0 and Failed otherwise.
func (r Record) State() State {
	if r.Exit == 0 {
		return Finished
	}
	return Failed
}

// ErrRecord is wrapped by errors from ParseRecord and ParsePoll.
var ErrRecord = errors.New("launch: malformed exit record")

// ParseRecord parses an exit record. It is strict: exactly the lines
// exit=<code>, start=<unix seconds> and end=<unix seconds>, in that order,
// each ending in a newline, with decimal integers (code 0–255, times
// positive). Anything else, such as an empty value left by an interrupted
// command substitution, is an error wrapping ErrRecord.
func ParseRecord(b []byte) (Record, error) {
	s := string(b)
	if !strings.HasSuffix(s, "\n") {
		return Record{}, fmt.Errorf("%w: %d bytes without a final newline (truncated?)", ErrRecord, len(b))
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	keys := [...]string{"exit", "start", "end"}
	if len(lines) != len(keys) {
		return Record{}, fmt.Errorf("%w: %d lines, want %d (exit, start, end)", ErrRecord, len(lines), len(keys))
	}
	var v [len(keys)]int64
	for i, line := range lines {
		k, val, ok := strings.Cut(line, "=")
		if !ok || k != keys[i] {
			return Record{}, fmt.Errorf("%w: line %d: %q, want %s=<integer>", ErrRecord, i+1, line, keys[i])
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || val[0] == '+' {
			return Record{}, fmt.Errorf("%w: line %d: %s=%q is not an integer", ErrRecord, i+1, k, val)
		}
		v[i] = n
	}
	if v[0] < 0 || v[0] > 255 {
		return Record{}, fmt.Errorf("%w: line 1: exit status %d outside 0–255", ErrRecord, v[0])
	}
	if v[1] <= 0 || v[2] <= 0 {
		return Record{}, fmt.Errorf("%w: start=%d end=%d: times must be positive", ErrRecord, v[1], v[2])
	}
	return Record{Exit: int(v[0]), Start: time.Unix(v[1], 0), End: time.Unix(v[2], 0)}, nil
}

// ParsePoll interprets the output of PollScript, with or without surrounding
// white space. The record is non-nil when the state is Finished or Failed.
func ParsePoll(out []byte) (State, *Record, error) {
	s := strings.TrimSpace(string(out))
	switch {
	case s == "gone":
		return Vanished, nil, nil
	case strings.HasPrefix(s, "running "):
		return Running, nil, nil
	}
	// Callers often trim a remote command's output; the record's lines are
	// checked as strictly as ParseRecord does, the final newline aside.
	r, err := ParseRecord([]byte(s + "\n"))
	if err != nil {
		return 0, nil, err
	}
	return r.State(), &r, nil
}

// ParseStart reads the "pid <n>" line printed by Script.
func ParseStart(out []byte) (int, error) {
	s := strings.TrimSpace(string(out))
	rest, ok := strings.CutPrefix(s, "pid ")
	if !ok {
		return 0, fmt.Errorf("unexpected wrapper output %q", s)
	}
	pid, err := strconv.Atoi(rest)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("unexpected wrapper output %q", s)
	}
	return pid, nil
}

// Local launches commands on this machine with the protocol of the package
// documentation. The zero value is not usable: StateDir must be set.
type Local struct {
	// StateDir holds the pid, exit-record and default log files.
	StateDir string
}

// Handle refers to one launched command.
type Handle struct {
	Name  string
	Pid   int
	Paths Paths
}

// ErrLaunch is wrapped by Start's errors.
var ErrLaunch = errors.New("launch: start failed")

// CancelGrace is how long Start gives a command it cancels (because ctx
// ended during the launch) to exit on SIGTERM before SIGKILL.
const CancelGrace = 5 * time.Second
