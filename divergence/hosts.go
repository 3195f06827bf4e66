package divergence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/internal/sh"
	"go.yaml.in/yaml/v3"
)

// Host is one machine in the hosts registry.
//
// In YAML:
//
//	hosts:
//	  - name: laptop            # [A-Za-z0-9._-]+, unique
//	    ssh: me@laptop.local    # ssh destination or ssh_config alias; omit for this machine
//	    ssh_options: [-p, "2222"]
//	    repo: ~/src/model       # the checkout; relative to the login (ssh) or current (local) directory
//	    command: python3 run.py --stem {stem}
//	    output: out             # where runs write .npz files; relative to repo
//	    archive: "*/{stem}.npz" # optional: the archive's path under output (find -path pattern)
//
// Launch records are kept in <output>/.replicate; a sync fetches from the
// checkout's origin. In command, output and archive, {stem}, {host} and {run} are
// replaced by the replication's stem, the host's name and the replication's
// run name (see [ReplicateConfig]); the command also finds them in
// REPLICATE_STEM, REPLICATE_HOST and REPLICATE_RUN. On a file system that
// several hosts share, put {host} in output (out/{host}), or in the file
// name the command writes and in archive, so that each host's archive is
// its own.
type Host struct {
	Name       string   `yaml:"name"`
	SSH        string   `yaml:"ssh"`
	SSHOptions []string `yaml:"ssh_options"`
	Repo       string   `yaml:"repo"`
	Command    string   `yaml:"command"`
	Output     string   `yaml:"output"`
	Archive    string   `yaml:"archive"`

	state string // launch records; "" means <output>/.replicate (tests set it)
}

// ErrHosts is wrapped by errors for an invalid hosts registry.
var ErrHosts = errors.New("invalid hosts registry")

var hostNameRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// LoadHosts reads a hosts registry (see [Host]) and checks it: at least one
// host, unique valid names, a repo and a command for each. statusUnknown fields
// are errors, so typos do not pass silently.
func LoadHosts(r io.Reader) ([]Host, error) {
	var doc struct {
		Hosts []Host `yaml:"hosts"`
	}
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("divergence: %w: empty document", ErrHosts)
		}
		return nil, fmt.Errorf("divergence: %w: %v", ErrHosts, err)
	}
	if len(doc.Hosts) == 0 {
		return nil, fmt.Errorf("divergence: %w: no hosts", ErrHosts)
	}
	seen := map[string]bool{}
	for i, h := range doc.Hosts {
		where := fmt.Sprintf("host %d (%q)", i+1, h.Name)
		switch {
		case !hostNameRE.MatchString(h.Name):
			return nil, fmt.Errorf("divergence: %w: %s: name must match %s", ErrHosts, where, hostNameRE)
		case seen[strings.ToLower(h.Name)]:
			// Names become file names (<Dest>/<name>.npz): on a
			// case-insensitive file system A and a would share one.
			return nil, fmt.Errorf("divergence: %w: %s: duplicate name (names are compared ignoring case)", ErrHosts, where)
		case h.Repo == "":
			return nil, fmt.Errorf("divergence: %w: %s: repo is empty", ErrHosts, where)
		case h.Command == "":
			return nil, fmt.Errorf("divergence: %w: %s: command is empty", ErrHosts, where)
		case strings.HasPrefix(h.SSH, "-"):
			return nil, fmt.Errorf("divergence: %w: %s: ssh destination starts with '-'", ErrHosts, where)
		case strings.HasPrefix(h.Archive, "/") || slices.Contains(strings.Split(h.Archive, "/"), ".."):
			return nil, fmt.Errorf("divergence: %w: %s: archive %q must be a pattern under the output directory (no leading / or ..)", ErrHosts, where, h.Archive)
		}
		seen[strings.ToLower(h.Name)] = true
	}
	return doc.Hosts, nil
}

// ErrHost is wrapped by errors from running something on a host.
var ErrHost = errors.New("host command failed")

// HostError says which host failed; its message names the step and ends
// with the last lines the command wrote to standard error.
type HostError struct {
	Host string
	Err  error

	op     string // the step: "launch", "sync to <commit>", ...
	stderr string // the last lines of standard error
}

func (e *HostError) Error() string {
	// e.Err may come from this package's exported functions (Open), which
	// say "divergence: " themselves.
	s := fmt.Sprintf("divergence: host %s: %s: %s", e.Host, e.op, strings.TrimPrefix(e.Err.Error(), "divergence: "))
	if e.stderr != "" {
		s += ": " + e.stderr
	}
	return s
}

func (e *HostError) Unwrap() error { return e.Err }

// sshTimeouts make an unreachable host fail within seconds instead of
// hanging: ConnectTimeout bounds the TCP connect and key exchange,
// ServerAlive* notice a host that stops answering mid-command.
var sshTimeouts = []string{"-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"}

// sh runs a POSIX sh script on the host (sh -s, script on standard input)
// and writes its standard output to out.
func (h *Host) sh(ctx context.Context, op, script string, out io.Writer) error {
	var cmd *exec.Cmd
	if h.SSH == "" {
		cmd = exec.CommandContext(ctx, "sh", "-s")
	} else {
		args := append(append(append([]string{}, sshTimeouts...), h.SSHOptions...), "--", h.SSH, "sh -s")
		cmd = exec.CommandContext(ctx, "ssh", args...)
	}
	cmd.Stdin = strings.NewReader(script)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return &HostError{Host: h.Name, op: op, stderr: tail(stderr.String(), 5), Err: fmt.Errorf("%w (%w)", ErrHost, err)}
	}
	return nil
}

// shortOpTimeout bounds each short remote step (resolve, launch, poll,
// find, sync) so a host that accepts the connection but then hangs cannot
// stall a replication; ServerAlive only notices dead connections.
const shortOpTimeout = 2 * time.Minute

// shOut is sh for a short step, returning the trimmed standard output.
func (h *Host) shOut(ctx context.Context, op, script string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, shortOpTimeout)
	defer cancel()
	var out bytes.Buffer
	err := h.sh(ctx, op, script, &out)
	return strings.TrimSpace(out.String()), err
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// quote returns s as one single-quoted sh word.

// cdScript changes to dir, reading a leading "~/" as the home directory
// and relative paths as relative to the starting directory.
func cdScript(dir string) string {
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		return `cd "$HOME" && cd -- ` + sh.Quote(rest)
	}
	if dir == "~" {
		return `cd "$HOME"`
	}
	return "cd -- " + sh.Quote(dir)
}

// paths are a host's directories resolved to absolute paths on the host.
type paths struct {
	repo, output, state string
}

// resolve finds the host's absolute repo, output and state directories,
// creating output and state.
func (h *Host) resolve(ctx context.Context) (paths, error) {
	repo := h.Repo
	if h.SSH == "" && !strings.HasPrefix(repo, "~") {
		abs, err := filepath.Abs(repo)
		if err != nil {
			return paths{}, &HostError{Host: h.Name, op: "resolve repo", Err: err}
		}
		repo = abs
	}
	out := h.Output
	if out == "" {
		out = "."
	}
	state := h.state
	if state == "" {
		state = strings.TrimSuffix(out, "/") + "/.replicate"
	}
	script := fmt.Sprintf(`set -e
%s
repo=$(pwd -P)
mkdir -p -- %s %s
cd -- %s; echo "$(pwd -P)"
cd -- "$repo"; cd -- %s; echo "$(pwd -P)"
echo "$repo"
`, cdScript(repo), sh.Quote(out), sh.Quote(state), sh.Quote(out), sh.Quote(state))
	s, err := h.shOut(ctx, "resolve directories", script)
	if err != nil {
		return paths{}, err
	}
	f := strings.Split(s, "\n")
	if len(f) != 3 {
		return paths{}, &HostError{Host: h.Name, op: "resolve directories", Err: fmt.Errorf("%w: unexpected output %q", ErrHost, s)}
	}
	return paths{output: f[0], state: f[1], repo: f[2]}, nil
}
