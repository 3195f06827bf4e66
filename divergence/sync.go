package divergence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/crosscluster/crosscluster/internal/sh"
)

// ErrDirty is wrapped by Sync errors for a host whose checkout has
// uncommitted changes to tracked files.
var ErrDirty = errors.New("working tree has uncommitted changes")

// head returns the commit checked out in the controller's repository dir.
func head(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--verify", "HEAD^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("divergence: git rev-parse HEAD in %s: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// synced records one host's state after a sync.
type synced struct {
	Host string
	// Commit is the host's HEAD after the checkout, as git reports it.
	Commit string
	// Dirty reports uncommitted changes to tracked files (allowDirty only).
	Dirty bool
}

// syncHosts brings every host's checkout to commit, one host after another:
// git fetch from the host's origin, then a detached checkout. Hosts are not
// synced at once because several may share one checkout (a home directory
// mounted on every machine), and concurrent git commands in one checkout
// fail on its index.lock; a host whose checkout an earlier host already
// brought to commit only finds it there. A host with uncommitted changes
// to tracked files is refused with [ErrDirty] unless allowDirty. The
// result has one entry per host that synced, in hosts order; errs holds
// each host's [*HostError] (nil when it synced). Once ctx is done the
// remaining hosts are not tried.
func syncHosts(ctx context.Context, hosts []Host, commit string, allowDirty bool) ([]synced, error) {
	res, errs := syncEach(ctx, hosts, commit, allowDirty)
	var out []synced
	for _, r := range res {
		if r != nil {
			out = append(out, *r)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	return out, ctx.Err()
}

// syncEach syncs the hosts in order and returns each one's result and
// error (both nil for hosts not tried once ctx is done).
func syncEach(ctx context.Context, hosts []Host, commit string, allowDirty bool) ([]*synced, []error) {
	if commit == "" || strings.HasPrefix(commit, "-") {
		panic("divergence: invalid commit")
	}
	res := make([]*synced, len(hosts))
	errs := make([]error, len(hosts))
	for i := range hosts {
		if ctx.Err() != nil {
			break
		}
		res[i], errs[i] = syncHost(ctx, &hosts[i], commit, allowDirty)
	}
	return res, errs
}

// exitDirty is the sync script's exit status for a refused dirty tree.
const exitDirty = 3

func syncHost(ctx context.Context, h *Host, commit string, allowDirty bool) (*synced, error) {
	const remote = "origin"
	allow := 0
	if allowDirty {
		allow = 1
	}
	script := fmt.Sprintf(`set -e
%s
dirty=$(git status --porcelain --untracked-files=no)
if [ -n "$dirty" ] && [ %d != 1 ]; then
  echo "uncommitted changes:" $dirty >&2
  exit %d
fi
git fetch --quiet -- %s
git -c advice.detachedHead=false checkout --quiet --detach %s --
echo "commit $(git rev-parse HEAD)"
if [ -n "$dirty" ]; then echo dirty; fi
`, cdScript(h.Repo), allow, exitDirty, sh.Quote(remote), sh.Quote(commit))
	// No short timeout here: fetching a large repository can take a while.
	var buf bytes.Buffer
	err := h.sh(ctx, "sync to "+commit, script, &buf)
	out := strings.TrimSpace(buf.String())
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == exitDirty {
			var he *HostError
			errors.As(err, &he)
			he.Err = fmt.Errorf("%w: %w", ErrDirty, he.Err)
		}
		return nil, err
	}
	s := &synced{Host: h.Name}
	for _, line := range strings.Split(out, "\n") {
		if c, ok := strings.CutPrefix(line, "commit "); ok {
			s.Commit = c
		}
		if line == "dirty" {
			s.Dirty = true
		}
	}
	if s.Commit == "" {
		return nil, &HostError{Host: h.Name, op: "sync", Err: fmt.Errorf("%w: no commit in output %q", ErrHost, out)}
	}
	return s, nil
}
