package divergence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crosscluster/crosscluster/internal/launch"
	"github.com/crosscluster/crosscluster/internal/sh"
)

// status is where a replicated run ended up on one host.
type status int

const (
	// Unknown: the host was never polled to a final state (the context was
	// cancelled first).
	statusUnknown status = iota
	// Finished: the run exited 0 and its archive was collected.
	statusFinished
	// Failed: the run exited non-zero, or exited 0 without writing an
	// archive after its launch, or its archive could not be collected.
	statusFailed
	// Vanished: the run's monitor process is gone without an exit record.
	statusVanished
	// Unreachable: the run could not be launched (ssh failed, say).
	statusUnreachable
	// TimedOut: the run was still going when the poll budget ran out; it
	// was sent SIGTERM.
	statusTimedOut
)

// String returns the status in capitals, as printed in progress lines.
func (s status) String() string {
	switch s {
	case statusFinished:
		return "FINISHED"
	case statusFailed:
		return "FAILED"
	case statusVanished:
		return "VANISHED"
	case statusUnreachable:
		return "UNREACHABLE"
	case statusTimedOut:
		return "TIMEDOUT"
	}
	return "UNKNOWN"
}

// ReplicateConfig configures [Replicate]. Stem and Dest are required.
type ReplicateConfig struct {
	// Stem names the run: it replaces {stem} in each host's command,
	// output, state and archive pattern. It must match [A-Za-z0-9._-]+.
	Stem string
	// runName names this replication (it replaces {run}). Each host's launch is
	// keyed by stem, host and run: its records and log in the host's state
	// directory are <stem>.<host>.<run>.*, so hosts that share a state
	// directory (one home directory mounted on every machine) and a
	// replication repeated with the same stem never read each other's
	// launch. It must match [A-Za-z0-9._-]+; empty means the controller's
	// UTC clock and process id, as in 20260102T150405.123Z-p4242 (tests
	// set it).
	runName string
	// Commit, when set, is the commit every host runs: before anything is
	// launched, each host's checkout is brought to it, one host after
	// another (git fetch from the host's origin, then a detached checkout;
	// hosts are not synced at once because several may share one checkout,
	// whose index.lock concurrent git commands would fight over). A host
	// with uncommitted changes to tracked files is refused with [ErrDirty]
	// unless AllowDirty; a host that cannot be synced is not launched, and
	// its Outcome says why. At launch each host's HEAD is checked again: a
	// host at another commit, or whose repo is not a git checkout, fails
	// with [ErrCommit]. Pass a commit hash (git rev-parse HEAD): a branch or
	// tag name would be resolved by each host's own git and could name
	// different commits. Whether set or not, each host's commit at launch
	// is recorded in its Outcome.
	Commit string
	// AllowDirty lets the sync check out over uncommitted changes to
	// tracked files (git may still refuse when they conflict). Untracked
	// files never count: run outputs usually live in the checkout.
	AllowDirty bool
	// Dest is the controller directory that receives <host>.npz.
	Dest string
	// poll is the longest pause between polls, which start 20 ms apart
	// and double; zero means 2 s (tests set it shorter).
	poll time.Duration
	// Budget bounds the whole wait for the runs; zero means one hour.
	Budget time.Duration
	// Progress, when non-nil, receives one line per launch and state change.
	Progress io.Writer
}

// Outcome is one host's part of a replication. Err is nil exactly when the
// host's run finished and its archive was collected to Path; otherwise it
// says what happened (the run failed, vanished, timed out or could not be
// launched, the host was not at the commit, or its archive was another
// host's).
type Outcome struct {
	Host string
	// Launch is the launch's name on the host, <stem>.<host>.<run>: its
	// records and log are <state>/<Launch>.* (set once the host was
	// reached).
	Launch string
	// Commit is the commit the host's checkout was at when the run was
	// launched (git rev-parse HEAD in its repo; empty when the repo is not
	// a git checkout).
	Commit string
	// Path is the copy of the host's archive on the controller (set only
	// when Err is nil).
	Path string
	Err  error

	status   status
	dirty    bool      // tracked files had uncommitted changes at launch
	exit     int       // the run's exit status when it has one
	launched time.Time // when the run was launched (controller clock)
	remote   string    // the archive collected on the host
	// fileID identifies the remote file (device-independent: inode, size
	// and modification time in nanoseconds, as stat reports them), so that
	// two hosts that returned the same file of a shared file system are
	// caught.
	fileID string
}

// ErrTooFew is wrapped by Replicate's error when fewer than two hosts
// finished, so there is nothing to compare.
var ErrTooFew = errors.New("fewer than two hosts finished")

// ErrNoArchive is an Outcome error: the run exited 0 but wrote no .npz in
// its output directory after it was launched.
var ErrNoArchive = errors.New("no .npz written after launch")

// ErrCommit is an Outcome error: the host's checkout was not at
// ReplicateConfig.Commit when its run was to be launched, so it was not.
var ErrCommit = errors.New("host not at the expected commit")

// ErrSameArchive is an Outcome error: two hosts returned the same file (the
// same inode, size and modification time in nanoseconds, whatever the
// paths they found it under), as happens when their runs write to one
// shared file system under a name that does not depend on the host: the
// directory may be mounted at different paths on different machines.
// Comparing the file with itself would report 0 and pass.
var ErrSameArchive = errors.New("hosts returned the same archive file")

// Replicate launches cfg.Stem on every host at once, polls each until it
// finishes, fails or vanishes (within cfg.Budget), and from each host whose
// run finished collects the newest .npz in its output directory (or up to
// three directories below it; only files matching the host's Archive
// pattern when it has one) modified after the launch: it is copied to
// cfg.Dest/<host>.npz through a temporary file and must open as an archive
// before it replaces anything. Two hosts that return the same file both
// fail with [ErrSameArchive]. Each launch is keyed by stem, host and run
// (see [ReplicateConfig.run]), and each host's commit at launch is
// recorded (and checked against cfg.Commit when set). Outcomes come in
// hosts order. Fewer than two statusFinished hosts is an error wrapping
// [ErrTooFew] that names every other host's status. If ctx is cancelled,
// Replicate returns the outcomes so far and ctx.Err(); launched runs keep
// going on their hosts.
//
// Local hosts are launched with internal/launch's Local launcher; ssh hosts
// run the same protocol (launch.Script, launch.PollScript) through
// "ssh -o BatchMode=yes host sh -s".
//
// Host names must be valid and unique, as [LoadHosts] requires; anything
// else is a caller mistake and panics.
func Replicate(ctx context.Context, hosts []Host, cfg ReplicateConfig) ([]Outcome, error) {
	if !hostNameRE.MatchString(cfg.Stem) {
		panic("divergence: invalid ReplicateConfig.Stem")
	}
	if cfg.runName == "" {
		cfg.runName = time.Now().UTC().Format("20060102T150405.000Z") + "-p" + strconv.Itoa(os.Getpid())
	}
	if !hostNameRE.MatchString(cfg.runName) {
		panic("divergence: invalid ReplicateConfig.run")
	}
	if strings.HasPrefix(cfg.Commit, "-") || strings.ContainsAny(cfg.Commit, " \t\n'\"\\") {
		panic("divergence: invalid ReplicateConfig.Commit")
	}
	if cfg.Dest == "" {
		panic("divergence: empty ReplicateConfig.Dest")
	}
	// Host names become file names in Dest (<host>.npz): one that is not a
	// valid registry name (say "../x") or appears twice (ignoring case, for
	// case-insensitive file systems) would write outside Dest or overwrite
	// another host's archive. LoadHosts rejects both; hosts built in code
	// must follow the same rule.
	for i := range hosts {
		if !hostNameRE.MatchString(hosts[i].Name) {
			panic("divergence: invalid host name")
		}
		for j := range i {
			if strings.EqualFold(hosts[i].Name, hosts[j].Name) {
				panic("divergence: duplicate host name")
			}
		}
	}
	if cfg.poll <= 0 {
		cfg.poll = 2 * time.Second
	}
	if cfg.Budget <= 0 {
		cfg.Budget = time.Hour
	}
	if err := os.MkdirAll(cfg.Dest, 0o755); err != nil {
		return nil, err
	}
	pr := &progress{w: cfg.Progress}
	out := make([]Outcome, len(hosts))
	var syncErr []error
	if cfg.Commit != "" {
		var res []*synced
		res, syncErr = syncEach(ctx, hosts, cfg.Commit, cfg.AllowDirty)
		for i, r := range res {
			if r != nil {
				pr.printf("%s: at %s", hosts[i].Name, r.Commit)
			}
		}
	}
	deadline := time.Now().Add(cfg.Budget)
	var wg sync.WaitGroup
	for i := range hosts {
		if syncErr != nil && syncErr[i] != nil {
			out[i] = Outcome{Host: hosts[i].Name, Err: syncErr[i], status: statusUnreachable}
			pr.printf("%s: %s: %v", hosts[i].Name, statusUnreachable, syncErr[i])
			continue
		}
		wg.Go(func() { out[i] = replicateHost(ctx, &hosts[i], cfg, deadline, pr) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		for i := range out {
			if out[i].status != statusFinished && out[i].Err == nil {
				out[i].Err = fmt.Errorf("divergence: %s: %s: %w", out[i].Host, out[i].status, err)
			}
		}
		return out, err
	}
	// The fresh-file check: a file is one host's result only.
	for i := range out {
		for j := range i {
			a, b := &out[j], &out[i]
			// The file ID alone decides: one directory of a shared file
			// system is often mounted at different paths on different
			// machines (or seen through a bind mount or a symlink), so the
			// paths need not match.
			if a.fileID == "" || a.fileID != b.fileID {
				continue
			}
			what := a.remote
			if b.remote != a.remote {
				what = a.remote + " and " + b.remote + ", one file under two paths"
			}
			err := fmt.Errorf("divergence: %w: %s and %s both returned %s (%s); on a shared file system give each host its own output: put {host} in the output directory, or in the command's file name and the host's archive pattern",
				ErrSameArchive, a.Host, b.Host, what, a.fileID)
			for _, o := range []*Outcome{a, b} {
				if o.status == statusFinished {
					o.status, o.Err = statusFailed, err
					pr.printf("%s: FAILED; %v", o.Host, err)
				}
			}
		}
	}
	for i := range out {
		if out[i].status != statusFinished && out[i].Err == nil {
			out[i].Err = fmt.Errorf("divergence: %s: %s", out[i].Host, out[i].status)
		}
	}
	finished := 0
	var others []string
	for _, o := range out {
		if o.status == statusFinished {
			finished++
			continue
		}
		s := o.Host + " " + o.status.String()
		if o.Err != nil {
			s += " (" + strings.TrimPrefix(o.Err.Error(), "divergence: ") + ")"
		}
		others = append(others, s)
	}
	if finished < 2 {
		return out, fmt.Errorf("divergence: %w: %d of %d finished; %s", ErrTooFew, finished, len(hosts), strings.Join(others, "; "))
	}
	return out, nil
}

// progress serialises progress lines from the host goroutines.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) printf(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// runner launches and polls one run on one host.
type runner interface {
	poll(ctx context.Context) (launch.State, *launch.Record, error)
	cancel(ctx context.Context)
}

type localRunner struct{ h *launch.Handle }

func (l localRunner) poll(context.Context) (launch.State, *launch.Record, error) {
	st, err := l.h.Poll()
	if err != nil || !st.Done() || st == launch.Vanished {
		return st, nil, err
	}
	rec, _, err := l.h.Record()
	return st, &rec, err
}

func (l localRunner) cancel(ctx context.Context) { l.h.Cancel(ctx, 5*time.Second) }

type sshRunner struct {
	host        *Host
	state, name string
}

func (s sshRunner) poll(ctx context.Context) (launch.State, *launch.Record, error) {
	out, err := s.host.shOut(ctx, "poll", launch.PollScript(s.state, s.name))
	if err != nil {
		return launch.Running, nil, err
	}
	return launch.ParsePoll([]byte(out))
}

func (s sshRunner) cancel(ctx context.Context) {
	s.host.sh(ctx, "cancel", launch.CancelScript(s.state, s.name, 5*time.Second), io.Discard)
}

func replicateHost(ctx context.Context, h *Host, cfg ReplicateConfig, deadline time.Time, pr *progress) Outcome {
	o := Outcome{Host: h.Name}
	fail := func(st status, err error) Outcome {
		if ctx.Err() != nil {
			st, err = statusUnknown, ctx.Err()
		}
		o.status, o.Err = st, err
		pr.printf("%s: %s: %v", h.Name, st, err)
		return o
	}
	subst := strings.NewReplacer("{stem}", cfg.Stem, "{host}", h.Name, "{run}", cfg.runName)
	hs := *h
	hs.Output, hs.state = subst.Replace(h.Output), subst.Replace(h.state)
	p, err := hs.resolve(ctx)
	if err != nil {
		return fail(statusUnreachable, err)
	}
	o.Launch = cfg.Stem + "." + h.Name + "." + cfg.runName
	// The marker's modification time is the launch time on the host's own
	// clock, so "written after launch" does not depend on clock skew. The
	// same step records the commit the checkout is at.
	mark := p.state + "/" + o.Launch + ".launched"
	out, err := h.shOut(ctx, "mark launch", fmt.Sprintf(`set -e
: > %s
cd -- %s
if c=$(git rev-parse --verify -q 'HEAD^{commit}' 2>/dev/null); then
	echo "commit $c"
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then echo dirty; fi
fi
`, sh.Quote(mark), sh.Quote(p.repo)))
	if err != nil {
		return fail(statusUnreachable, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if c, ok := strings.CutPrefix(line, "commit "); ok {
			o.Commit = c
		}
		o.dirty = o.dirty || line == "dirty"
	}
	if cfg.Commit != "" && o.Commit != cfg.Commit {
		at := "is not a git checkout"
		if o.Commit != "" {
			at = "is at " + o.Commit
		}
		return fail(statusFailed, &HostError{Host: h.Name, op: "check commit", Err: fmt.Errorf("%w %s: %s %s; not launched", ErrCommit, cfg.Commit, p.repo, at)})
	}
	spec := launch.Spec{
		Name:    o.Launch,
		Dir:     p.repo,
		Argv:    []string{"sh", "-c", subst.Replace(h.Command)},
		Env:     []string{"REPLICATE_STEM=" + cfg.Stem, "REPLICATE_HOST=" + h.Name, "REPLICATE_RUN=" + cfg.runName},
		LogPath: p.state + "/" + o.Launch + ".log",
	}
	o.launched = time.Now()
	var run runner
	if h.SSH == "" {
		l := &launch.Local{StateDir: p.state}
		hd, err := l.Start(ctx, spec)
		if err != nil {
			return fail(statusUnreachable, &HostError{Host: h.Name, op: "launch", Err: err})
		}
		run = localRunner{hd}
	} else {
		out, err := h.shOut(ctx, "launch", launch.Script(spec, p.state))
		if err == nil {
			if _, err = launch.ParseStart([]byte(out)); err != nil {
				err = &HostError{Host: h.Name, op: "read launch output", Err: err}
			}
		}
		if err != nil {
			return fail(statusUnreachable, err)
		}
		run = sshRunner{host: h, state: p.state, name: o.Launch}
	}
	commit := o.Commit
	if commit == "" {
		commit = "no git checkout"
	} else if o.dirty {
		commit += ", dirty"
	}
	pr.printf("%s: launched %s at %s (log %s)", h.Name, o.Launch, commit, spec.LogPath)

	var lastErr error
	wait := min(20*time.Millisecond, cfg.poll)
poll:
	for {
		st, rec, err := run.poll(ctx)
		if ctx.Err() != nil {
			o.Err = ctx.Err()
			return o
		}
		if err != nil {
			// A poll that fails (ssh hiccup) is retried until the budget ends.
			lastErr = err
		} else if st.Done() {
			switch st {
			case launch.Vanished:
				return fail(statusVanished, fmt.Errorf("divergence: run %s on %s: process gone without an exit record (see %s)", o.Launch, h.Name, spec.LogPath))
			case launch.Failed:
				o.exit = rec.Exit
				return fail(statusFailed, fmt.Errorf("divergence: run %s on %s exited with status %d (see %s)", o.Launch, h.Name, rec.Exit, spec.LogPath))
			}
			break poll
		}
		if time.Now().After(deadline) {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			run.cancel(cctx)
			cancel()
			err := fmt.Errorf("divergence: run %s on %s still running after the poll budget; sent SIGTERM", o.Launch, h.Name)
			if lastErr != nil {
				err = fmt.Errorf("%w (last poll error: %v)", err, lastErr)
			}
			return fail(statusTimedOut, err)
		}
		select {
		case <-ctx.Done():
			o.Err = ctx.Err()
			return o
		case <-time.After(max(min(wait, time.Until(deadline)), time.Millisecond)):
		}
		// Poll a short run soon and a long one rarely: the pause doubles
		// from 20 ms up to the poll interval.
		wait = min(2*wait, cfg.poll)
	}
	remote, err := newestArchive(ctx, h, p.output, subst.Replace(h.Archive), mark)
	if err != nil {
		return fail(statusFailed, err)
	}
	local := filepath.Join(cfg.Dest, h.Name+".npz")
	id, err := collect(ctx, h, remote, local)
	if err != nil {
		return fail(statusFailed, err)
	}
	o.status, o.remote, o.Path, o.fileID = statusFinished, remote, local, id
	pr.printf("%s: FINISHED; collected %s -> %s", h.Name, remote, local)
	return o
}

// newestArchive returns the newest .npz under dir (in dir or up to three
// directories below it, as runs that archive into dated run directories
// do) modified after mark. A non-empty pattern restricts the search to
// paths (relative to dir) it matches, as find -path does ('*' matches '/'
// too).
//
// find -exec ... {} + hands ls the files in batches (about 128 KiB of
// names each), so each batch's newest is taken first and the newest of
// those after: with thousands of files ls -t of the whole list would sort
// each batch on its own.
func newestArchive(ctx context.Context, h *Host, dir, pattern, mark string) (string, error) {
	match := "-name '*.npz'"
	if pattern != "" {
		match = "-path " + sh.Quote("./"+strings.TrimPrefix(pattern, "./"))
	}
	script := fmt.Sprintf(`set -e
cd -- %s
w=$(find . -maxdepth 4 -type f %s -newer %s -exec sh -c 'ls -t -- "$@" | head -n 1' sh {} +)
if [ -n "$w" ]; then
	printf '%%s\n' "$w" | tr '\n' '\0' | xargs -0 ls -t -- | head -n 1
fi
`, sh.Quote(dir), match, sh.Quote(mark))
	f, err := h.shOut(ctx, "find archive", script)
	if err != nil {
		return "", err
	}
	if f == "" {
		where := dir
		if pattern != "" {
			where += " matching " + pattern
		}
		return "", &HostError{Host: h.Name, op: "find archive in " + where, Err: ErrNoArchive}
	}
	return dir + "/" + strings.TrimPrefix(f, "./"), nil
}

// fileIDScript defines fid FILE, which prints the file's identity: inode,
// size and modification time (in nanoseconds with GNU stat, seconds with
// BSD stat).
const fileIDScript = `fid() { stat -c '%i %s %.9Y' -- "$1" 2>/dev/null || stat -f '%i %z %m' -- "$1"; }`

// exitChanged is the copy script's exit status for a file that changed
// while it was copied.
const exitChanged = 4

// collect copies remote to local through a temporary file in local's
// directory and renames it into place only once it opens as an archive and
// has the size the host reports. It returns the file's identity (see
// Outcome.fileID), taken in the same remote step as the copy, before and
// after it: a file rewritten meanwhile is an error, so the identity is
// the copied content's.
func collect(ctx context.Context, h *Host, remote, local string) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(local), "."+filepath.Base(local)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("divergence: %w", err)
	}
	defer os.Remove(tmp.Name())
	// The first line is the identity, whose second field is the size, so
	// a copy cut short is noticed.
	script := fmt.Sprintf(`set -e
%s
before=$(fid %[2]s)
printf '%%s\n' "$before"
cat -- %[2]s
after=$(fid %[2]s)
if [ "$before" != "$after" ]; then
	echo "changed while it was copied (file ID $before, then $after)" >&2
	exit %[3]d
fi
`, fileIDScript, sh.Quote(remote), exitChanged)
	hw := &sizeFirst{w: tmp}
	err = h.sh(ctx, "copy "+remote, script, hw)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	id := string(hw.line)
	f := strings.Fields(id)
	var want int64 = -1
	if len(f) == 3 {
		want, _ = strconv.ParseInt(f[1], 10, 64)
	}
	if hw.n != want {
		return "", &HostError{Host: h.Name, op: "copy " + remote, Err: fmt.Errorf("%w: copy incomplete: %d bytes received, host reports %q (inode, size, mtime)", ErrHost, hw.n, id)}
	}
	r, err := Open(tmp.Name())
	if err != nil {
		return "", &HostError{Host: h.Name, op: "check " + remote, Err: err}
	}
	r.Close()
	if err := os.Rename(tmp.Name(), local); err != nil {
		return "", fmt.Errorf("divergence: %w", err)
	}
	return id, nil
}

// sizeFirst splits off the first line of a stream and counts the rest.
type sizeFirst struct {
	line    []byte
	gotLine bool
	n       int64
	w       io.Writer
}

func (s *sizeFirst) Write(p []byte) (int, error) {
	total := len(p)
	if !s.gotLine {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(s.line)+len(p) > 128 {
				return 0, errors.New("size line too long")
			}
			s.line = append(s.line, p...)
			return total, nil
		}
		s.line = append(s.line, p[:i]...)
		s.gotLine = true
		p = p[i+1:]
	}
	n, err := s.w.Write(p)
	s.n += int64(n)
	if err != nil {
		return total - len(p) + n, err
	}
	return total, nil
}
