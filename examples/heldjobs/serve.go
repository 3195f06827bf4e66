package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/lstm"
)

// "heldjobs serve" decides held jobs as a pool runs: it follows an event
// log as the schedd writes it (eventlog.Follow), decides each job when it
// enters a hold (lstm.DecideHolds, the model of a model directory), and
// appends one record per hold to a decisions log (JSON Lines, each line
// synced before the next step). A restarted service reads the log from
// its start again and skips every hold its decisions log already has, so
// each hold is decided once whatever the restarts.
//
// With -act it also acts on each decision: condor_release JOB for a
// release, condor_rm -reason "..." JOB for a removal. An action is
// recorded as started before the command runs and as done after, and a
// hold whose action was started is never acted on again, even if the
// service died before recording the outcome: a hold is never acted on
// twice (at most once; such a hold is listed as "outcome unknown").
// -dry-run prints the commands instead of running them (and records them
// as dry runs).

// serveOptions are the serve command's flags.
type serveOptions struct {
	model, log, decisions string
	act, dryRun           bool
	stopAfter             time.Duration
}

// serveMain runs "heldjobs serve ARGS" and returns the exit status.
func serveMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o serveOptions
	fs := flag.NewFlagSet("heldjobs serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.model, "model", "", "model directory of a search (its bestmodel/) (e.g. -model out/bestmodel)")
	fs.StringVar(&o.log, "log", "", "the HTCondor event log to follow as it is written (e.g. -log /var/log/condor/EventLog)")
	fs.StringVar(&o.decisions, "decisions", "", "append-only decisions log, JSON Lines; a restart skips the holds it has (e.g. -decisions decisions.jsonl)")
	fs.BoolVar(&o.act, "act", false, "run condor_release or condor_rm for each decision, at most once per hold (e.g. -act)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "with -act, print the commands instead of running them (e.g. -act -dry-run)")
	fs.DurationVar(&o.stopAfter, "stop-after", 0, "stop after this long without new events; 0 follows until interrupted (e.g. -stop-after 10m)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "heldjobs serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	case o.model == "" || o.log == "" || o.decisions == "":
		fmt.Fprintln(stderr, "heldjobs serve: -model, -log and -decisions are required")
		return 2
	case o.dryRun && !o.act:
		fmt.Fprintln(stderr, "heldjobs serve: -dry-run needs -act")
		return 2
	case o.stopAfter < 0:
		fmt.Fprintln(stderr, "heldjobs serve: -stop-after must not be negative")
		return 2
	}
	return exitCode(ctx, serve(ctx, o, stdout), stderr)
}

// decisionRecord is one line of the decisions log.
type decisionRecord struct {
	Hold     string    `json:"hold"` // source|cluster.proc.subproc|held-at, the hold's identity
	Kind     string    `json:"kind"` // "decision" or "action"
	Job      string    `json:"job,omitempty"`
	HeldAt   time.Time `json:"held_at,omitzero"`
	HoldCode int       `json:"hold_code,omitempty"`
	P        *float64  `json:"p_release,omitempty"`
	Decision string    `json:"decision,omitempty"` // release or remove
	Command  []string  `json:"command,omitempty"`
	State    string    `json:"state,omitempty"` // action: started, done, failed, dry-run
	Output   string    `json:"output,omitempty"`
}

func holdID(d lstm.Decision) string {
	return d.Job.Source + "|" + d.Job.JobID.String() + "|" + d.HeldAt.UTC().Format(time.RFC3339Nano)
}

// decisionsLog is the append-only decisions log and what it already says.
type decisionsLog struct {
	f       *os.File
	decided map[string]string // hold -> decision
	started map[string]bool   // holds whose action was started
	ended   map[string]bool   // holds whose action was recorded done, failed or dry-run
}

// openDecisions reads the decisions log at path (a cut last line, as a
// crash mid-write leaves, is dropped and truncated away) and opens it for
// appending.
func openDecisions(path string) (*decisionsLog, error) {
	l := &decisionsLog{decided: map[string]string{}, started: map[string]bool{}, ended: map[string]bool{}}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	good := 0
	for line := range strings.Lines(string(b)) {
		if !strings.HasSuffix(line, "\n") {
			break // a cut last line
		}
		var r decisionRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: byte %d: %w", path, good, err)
		}
		switch {
		case r.Kind == "decision":
			l.decided[r.Hold] = r.Decision
		case r.State == "started":
			l.started[r.Hold] = true
		default:
			l.ended[r.Hold] = true
		}
		good += len(line)
	}
	if l.f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		return nil, err
	}
	if err := l.f.Truncate(int64(good)); err != nil {
		l.f.Close()
		return nil, err
	}
	if _, err := l.f.Seek(int64(good), io.SeekStart); err != nil {
		l.f.Close()
		return nil, err
	}
	return l, nil
}

// append writes r as one line and syncs it.
func (l *decisionsLog) append(r decisionRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return l.f.Sync()
}

// command is the condor command that carries out d.
func command(d lstm.Decision) []string {
	id := strconv.Itoa(d.Job.Cluster) + "." + strconv.Itoa(d.Job.Proc)
	if d.Release {
		return []string{"condor_release", id}
	}
	return []string{"condor_rm", "-reason", fmt.Sprintf("heldjobs: P(release) %.4f below the threshold", d.P), id}
}

func serve(ctx context.Context, o serveOptions, stdout io.Writer) error {
	m, info, err := heldjobs.LoadModel(o.model)
	if err != nil {
		return err
	}
	if info.Forward {
		return fmt.Errorf("%s: %w: the model frames forward, reading events after the hold; decisions need a model framed at the hold", o.model, heldjobs.ErrModelDir)
	}
	l, err := openDecisions(o.decisions)
	if err != nil {
		return fmt.Errorf("decisions log: %w", err)
	}
	defer l.f.Close()
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	for hold := range l.started {
		if !l.ended[hold] {
			fmt.Fprintf(w, "hold %s: its action was started by an earlier run and not recorded as done: outcome unknown, not repeated\n", hold)
		}
	}
	act := func(hold string, d lstm.Decision) error {
		if !o.act || l.started[hold] || l.ended[hold] {
			return nil
		}
		cmd := command(d)
		if o.dryRun {
			fmt.Fprintf(w, "dry run: %s\n", strings.Join(cmd, " "))
			l.ended[hold] = true
			return l.append(decisionRecord{Hold: hold, Kind: "action", Command: cmd, State: "dry-run"})
		}
		if err := l.append(decisionRecord{Hold: hold, Kind: "action", Command: cmd, State: "started"}); err != nil {
			return err
		}
		l.started[hold] = true
		out, err := exec.CommandContext(context.WithoutCancel(ctx), cmd[0], cmd[1:]...).CombinedOutput()
		state := "done"
		if err != nil {
			state = "failed: " + err.Error()
		}
		fmt.Fprintf(w, "%s: %s\n", strings.Join(cmd, " "), state)
		l.ended[hold] = true
		return l.append(decisionRecord{Hold: hold, Kind: "action", Command: cmd, State: state, Output: strings.TrimSpace(string(out))})
	}
	events := eventlog.Follow(ctx, o.log, eventlog.FollowOptions{StopAfter: o.stopAfter})
	err = lstm.DecideHolds(ctx, m, info.Builder(), info.Threshold, o.log, events, func(d lstm.Decision) error {
		hold := holdID(d)
		if _, ok := l.decided[hold]; !ok {
			dec := map[bool]string{true: "release", false: "remove"}[d.Release]
			if err := l.append(decisionRecord{Hold: hold, Kind: "decision", Job: d.Job.JobID.String(), HeldAt: d.HeldAt,
				HoldCode: d.HoldCode, P: &d.P, Decision: dec}); err != nil {
				return err
			}
			l.decided[hold] = dec
			fmt.Fprintf(w, "%s held at %s (code %d): P(release) %.4f, %s\n", d.Job.JobID, d.HeldAt.UTC().Format(time.RFC3339), d.HoldCode, d.P, dec)
		}
		if err := act(hold, d); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d holds decided in %s\n", len(l.decided), o.decisions)
	return nil
}
