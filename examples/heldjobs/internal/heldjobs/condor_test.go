package heldjobs

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/dagman"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/sweep"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/condor")

// submitChecks are the submit commands the pipeline's files may hold, each
// with the section of the HTCondor manual that defines it (condor_submit(1),
// "Submit Description File Commands", HTCondor 23/24; the policy and
// accounting commands as htcondor-jdl(1) of the HTCondor repository's
// docs/man-pages/htcondor-jdl.rst, commit 7491a145 of 2026-08-21, words
// them) and what its value
// must look like here. Every line of every generated submit file must be a
// comment, one of these, or the final "queue".
var submitChecks = map[string]*regexp.Regexp{
	// BASIC COMMANDS, universe: "vanilla" runs a program on any execute
	// point, the universe for plain executables.
	"universe": regexp.MustCompile(`^vanilla$`),
	// BASIC COMMANDS, executable: the program; with file transfer on it is
	// copied to the execute point (FILE TRANSFER COMMANDS,
	// transfer_executable, default True), so it is the static binary
	// copied into the DAG directory; "If no path or a relative path is
	// used, then the executable file is presumed to be relative to the
	// current working directory of the user as the condor_submit command
	// is issued": DAGMan's, the DAG directory.
	"executable":          regexp.MustCompile(`^heldjobs$`),
	"transfer_executable": regexp.MustCompile(`^true$`),
	// BASIC COMMANDS, arguments, "New Syntax": the whole list in double
	// quotes, each argument in single quotes, '' for a quote inside.
	"arguments": regexp.MustCompile(`^"'node'( '([^']|'')*')+"$`),
	// initialdir: the access-point directory of the job's relative input,
	// output, error and log paths (one per node), relative to the DAG
	// directory like the executable.
	"initialdir": regexp.MustCompile(`^(parse|select|cleanup|\$\(dir\))$`),
	// FILE TRANSFER COMMANDS, should_transfer_files = YES: always transfer,
	// for pools without a shared file system; when_to_transfer_output =
	// ON_EXIT: outputs come back when the job exits.
	"should_transfer_files":   regexp.MustCompile(`^YES$`),
	"when_to_transfer_output": regexp.MustCompile(`^ON_EXIT$`),
	// FILE TRANSFER COMMANDS, transfer_input_files: a comma-separated list
	// of files and directories, relative to initialdir or absolute; a
	// directory named without a trailing slash arrives as that directory.
	"transfer_input_files": regexp.MustCompile(`^[^\s,"']+(, [^\s,"']+)*$`),
	// FILE TRANSFER COMMANDS, transfer_output_files: names in the scratch
	// directory; "When this comma separated list is defined, and any of the
	// files or directories do not exist as the job exits, HTCondor
	// considers this an error, and places the job on hold." Every listed
	// name is a directory that came with the input, so it always exists.
	"transfer_output_files": regexp.MustCompile(`^(dataset|best|results|run_\$\(run_id\), model_\$\(run_id\))$`),
	// BASIC COMMANDS, output, error: the job's standard streams, one pair
	// per attempt: named with the node's retry number ($(retry), DAGMan's
	// $(RETRY) through VARS) and the job's $(Cluster), so that a retry
	// does not overwrite the attempt before it; log: the job event log,
	// one per node. All in the node's <node>.logs directory.
	"output": regexp.MustCompile(`^(parse\.logs/parse|select\.logs/select|cleanup\.logs/cleanup|train_\$\(run_id\)\.logs/train_\$\(run_id\))\.retry\$\(retry\)\.\$\(Cluster\)\.out$`),
	"error":  regexp.MustCompile(`^(parse\.logs/parse|select\.logs/select|cleanup\.logs/cleanup|train_\$\(run_id\)\.logs/train_\$\(run_id\))\.retry\$\(retry\)\.\$\(Cluster\)\.err$`),
	"log":    regexp.MustCompile(`^(parse\.logs/parse|select\.logs/select|cleanup\.logs/cleanup|train_\$\(run_id\)\.logs/train_\$\(run_id\))\.log$`),
	// BASIC COMMANDS, environment, new syntax: double-quoted NAME=value
	// pairs separated by spaces.
	"environment": regexp.MustCompile(`^"(\w+=\S+)( \w+=\S+)*"$`),
	// COMMANDS FOR MATCHMAKING: request_cpus (cores), request_memory (MiB
	// without a unit), request_disk (KiB without a unit).
	"request_cpus":   regexp.MustCompile(`^[1-9][0-9]*$`),
	"request_memory": regexp.MustCompile(`^[1-9][0-9]*$`),
	"request_disk":   regexp.MustCompile(`^[1-9][0-9]*$`),
	// POLICY COMMANDS, allowed_job_duration = <integer>: "The longest
	// time for which a job may continuously be in the running state, in
	// seconds. Jobs which exceed this duration will go on hold, with hold
	// code 46." (new in HTCondor 9.3.1, version history 9.x feature
	// releases). A node's resources.time (2h for training, 1h for parse
	// here); with retries, the limit of each retry, multiplied by the
	// spec's condor.time_retry factor (default 2), chosen by the retry
	// number with $CHOICE: "$CHOICE(index, item1, item2, ...) An item
	// within the list is returned. [...] The first item in the list is at
	// index 0." (Function Macros in the Submit Description File).
	"allowed_job_duration": regexp.MustCompile(`^\$CHOICE\(retry, (7200, 14400, 28800|3600, 7200, 14400)\)$`),
	// FILE TRANSFER COMMANDS, checkpoint_exit_code = <integer>: the
	// training job exits 85 after storing its checkpoint, and HTCondor
	// transfers transfer_checkpoint_files (run_$(run_id), where the
	// checkpoint is) to the access point and starts it again ("If the
	// executable exits with checkpoint_exit_code, HTCondor will transfer
	// the checkpoint to the submit node, and then immediately restart the
	// executable in the same sandbox", Self-Checkpointing Applications).
	"checkpoint_exit_code":      regexp.MustCompile(`^85$`),
	"transfer_checkpoint_files": regexp.MustCompile(`^run_\$\(run_id\)$`),
	// The spec's condor section: extra commands for every node and per
	// node kind, written as given after the pipeline's own.
	"+ProjectName":         regexp.MustCompile(`^"crosscluster"$`),
	"requirements":         regexp.MustCompile(`^\(OpSysMajorVer == 9\)$|^HasSingularity$`),
	"container_image":      regexp.MustCompile(`^osdf:///ospool/ap40/data/alice/heldjobs\.sif$`),
	"retry_request_memory": regexp.MustCompile(`^RequestMemory \* 2$`),
	// ADVANCED COMMANDS, accounting_group = <accounting-group-name>:
	// "Causes jobs to negotiate under the given accounting group. This
	// value is advertised in the job ClassAd as AcctGroup." The spec's
	// resources.account, on every node.
	"accounting_group": regexp.MustCompile(`^group_physics\.alice$`),
	// POLICY COMMANDS, periodic_remove = <ClassAd Boolean Expression>:
	// "This expression is checked periodically. If it becomes True, the
	// job is removed from the queue." Job ClassAd attributes: JobStatus
	// 5 is Held (Job Status Codes); "if the job is on hold, the ClassAd
	// expression time() - EnteredCurrentStatus will equal the number of
	// seconds that the job has been on hold" (EnteredCurrentStatus);
	// time() is a ClassAd builtin function. DAGMan: a job "externally
	// removed from the batch system queue (by something other than
	// condor_dagman) is reported as -1002" to the POST script ($RETURN,
	// "Special Script Argument Macros"), and a node whose job failed and
	// that has no POST script fails ("Node Success/Failure" table,
	// "DAGMan Completion"), so RETRY applies ("Retrying Failed Nodes").
	// DefaultHoldLimit, 30 minutes, on every node.
	"periodic_remove": regexp.MustCompile(`^JobStatus == 5 && time\(\) - EnteredCurrentStatus > 1800$`),
}

// dagChecks are the DAG file's lines, each with the DAGMan reference
// ("DAGMan Workflows", DAG commands) that defines it.
var dagChecks = []*regexp.Regexp{
	// JOB NodeName SubmitDescription
	// (relative to the DAG directory, where DAGMan runs)
	regexp.MustCompile(`^JOB (parse|select|cleanup|train_[0-9a-f]{16}) (parse|train|select|cleanup)\.sub$`),
	// VARS NodeName macroname="string" ...: the training node's macros;
	// DAGMan expands $(RETRY) in a VARS value to the node's retry number
	// ("Special node macros": $(JOB), $(RETRY)), which the job gets as its
	// attempt.
	regexp.MustCompile(`^VARS train_[0-9a-f]{16} dir="train/[0-9a-f]{16}" run_id="[0-9a-f]{16}" shape_file="\d+x\d+x\d+s\.npz" retry="\$\(RETRY\)"$`),
	regexp.MustCompile(`^VARS (parse|select|cleanup) retry="\$\(RETRY\)"$`),
	// SCRIPT POST NodeName ExecutableName [arguments], with the script
	// macros $RETURN (the job's exit code), $RETRY (the retry number, 0 on
	// the first attempt) and $MAX_RETRIES (the node's RETRY count) ("Special
	// Script Argument Macros"): the node's success is the POST script's
	// ("the exit value of whatever component of the node was run last
	// determines the success or failure of the node").
	regexp.MustCompile(`^SCRIPT POST train_[0-9a-f]{16} \./heldjobs node check -return \$RETURN -retry \$RETRY -max-retries \$MAX_RETRIES -id [0-9a-f]{16} -run train/\S+ -model train/\S+$`),
	// RETRY NodeName NumberOfRetries [UNLESS-EXIT value]: a training node
	// is retried whenever its POST script fails; the others stop on 3.
	regexp.MustCompile(`^RETRY (parse|select|cleanup) 2 UNLESS-EXIT 3$`),
	regexp.MustCompile(`^RETRY train_[0-9a-f]{16} 2$`),
	// PARENT ParentNodeName ... CHILD ChildNodeName ...
	regexp.MustCompile(`^PARENT [\w ]+ CHILD \w+$`),
}

// goldenLogs writes the two rotated logs the golden spec names.
func goldenLogs(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	paths, _, err := synth.CondorRotated(dir, "EventLog", synth.CondorLogConfig{Seed: 4, Jobs: 800, HoldRate: 0.4}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	return dir, paths
}

// TestCondorGolden writes the DAG of a two-point search over real-format
// rotated logs and compares every file with testdata/condor (regenerate
// with go test -run TestCondorGolden -update ./examples/heldjobs/internal/heldjobs/), after checking
// every line against the manual sections above and the DAG's structure.
func TestCondorGolden(t *testing.T) {
	logDir, logs := goldenLogs(t)
	spec := loadSpec(t, "name: golden\ndata:\n  logs: ["+strings.Join(logs, ", ")+"]\n  seed: 1\n"+
		"space: {shape: [3x6x60s, 2x4x120s], hidden: [8], layers: [1], lr: [0.003], batch: [32]}\n"+
		"epochs: 3\nresources: {cpus: 2, memory: 3G, disk: 2G, time: 2h, account: group_physics.alice}\n"+
		"condor:\n  submit: {+ProjectName: '\"crosscluster\"', requirements: '(OpSysMajorVer == 9)'}\n"+
		"  parse: {resources: {disk: 8G, time: 1h}}\n"+
		"  train: {submit: {container_image: 'osdf:///ospool/ap40/data/alice/heldjobs.sif', retry_request_memory: 'RequestMemory * 2'}}\n"+
		"  select: {resources: {memory: 1G, disk: 1G}}\n"+
		"  cleanup: {submit: {requirements: HasSingularity}}\n")
	dir := filepath.Join(t.TempDir(), "condor")
	c := &Condor{Spec: spec, Dir: dir, Executable: os.Args[0], AllowDynamic: true}
	f, err := c.Write()
	if err != nil {
		t.Fatal(err)
	}
	repl := strings.NewReplacer(dir, "/work/condor", logDir, "/work/logs")
	files := map[string]string{}
	for _, name := range []string{"heldjobs.dag", "parse.sub", "train.sub", "select.sub", "cleanup.sub", "spec.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = repl.Replace(string(b))
	}
	// Every submit line is a checked command, every command appears once,
	// the file ends with queue, and every macro is one the DAG defines.
	for _, name := range []string{"parse.sub", "train.sub", "select.sub", "cleanup.sub"} {
		lines := strings.Split(strings.TrimSpace(files[name]), "\n")
		seen := map[string]bool{}
		for _, ln := range lines[:len(lines)-1] {
			if strings.HasPrefix(ln, "# ") {
				continue
			}
			k, v, ok := strings.Cut(ln, " = ")
			re := submitChecks[k]
			if !ok || re == nil || !re.MatchString(v) || seen[k] {
				t.Errorf("%s: line %q is not a checked submit command (or repeats one)", name, ln)
			}
			seen[k] = true
		}
		only := map[string][]string{"environment": {"train.sub"}, "allowed_job_duration": {"train.sub", "parse.sub"},
			"checkpoint_exit_code": {"train.sub"}, "transfer_checkpoint_files": {"train.sub"}, "container_image": {"train.sub"},
			"retry_request_memory": {"train.sub"}}
		for k := range submitChecks {
			if in, ok := only[k]; seen[k] != (!ok || slices.Contains(in, name)) {
				t.Errorf("%s: %s present %v", name, k, seen[k])
			}
		}
		if lines[len(lines)-1] != "queue" {
			t.Errorf("%s ends with %q, want queue (BASIC COMMANDS, queue: one job)", name, lines[len(lines)-1])
		}
		for _, m := range regexp.MustCompile(`\$\((\w+)\)`).FindAllStringSubmatch(files[name], -1) {
			if m[1] != "retry" && m[1] != "Cluster" && (name != "train.sub" || !slices.Contains([]string{"dir", "run_id", "shape_file"}, m[1])) {
				t.Errorf("%s: macro %s is not defined by the node's VARS", name, m[0])
			}
		}
	}
	if want := "transfer_input_files = ../spec.json, dataset, ../eventlogs/EventLog.old, ../eventlogs/EventLog\n"; !strings.Contains(files["parse.sub"], want) {
		t.Errorf("parse.sub does not transfer the logs in:\n%s", files["parse.sub"])
	}
	if !strings.Contains(files["train.sub"], "request_cpus = 2\nrequest_memory = 3072\nrequest_disk = 2097152\naccounting_group = group_physics.alice\n") {
		t.Errorf("train.sub does not ask for the spec's resources:\n%s", files["train.sub"])
	}
	// The DAG: every line checked; parse before every training node, every
	// training node before select, select before cleanup; RETRY on every
	// node; a POST script on every training node.
	parents := map[string][]string{}
	retry, post := map[string]bool{}, map[string]bool{}
	var nodes []string
	for _, ln := range strings.Split(strings.TrimSpace(files["heldjobs.dag"]), "\n") {
		ok := false
		for _, re := range dagChecks {
			ok = ok || re.MatchString(ln)
		}
		if !ok {
			t.Errorf("heldjobs.dag: line %q is not a checked DAG command", ln)
		}
		fs := strings.Fields(ln)
		switch fs[0] {
		case "JOB":
			nodes = append(nodes, fs[1])
		case "RETRY":
			retry[fs[1]] = true
		case "SCRIPT":
			post[fs[2]] = true
		case "PARENT":
			c := slices.Index(fs, "CHILD")
			parents[fs[c+1]] = append(parents[fs[c+1]], fs[1:c]...)
		}
	}
	var train []string
	for _, n := range nodes {
		if !retry[n] {
			t.Errorf("node %s has no RETRY", n)
		}
		if strings.HasPrefix(n, "train_") {
			train = append(train, n)
			if !post[n] || !slices.Equal(parents[n], []string{"parse"}) {
				t.Errorf("node %s: POST %v, parents %v", n, post[n], parents[n])
			}
		}
	}
	if len(train) != 2 || !slices.Equal(parents["select"], train) || !slices.Equal(parents["cleanup"], []string{"select"}) || len(parents["parse"]) > 0 {
		t.Errorf("DAG structure: nodes %v, parents %v", nodes, parents)
	}
	if len(f.Runs) != 2 {
		t.Errorf("%d run directories", len(f.Runs))
	}
	for name, text := range files {
		golden := filepath.Join("testdata", "condor", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -run TestCondorGolden -update ./examples/heldjobs/internal/heldjobs/ writes it)", err)
		}
		if text != string(want) {
			t.Errorf("%s differs from %s:\n got:\n%s\nwant:\n%s", name, golden, text, want)
		}
	}
}

// TestNodeCheck is the training nodes' POST script: it passes a failed job
// on (so that DAGMan retries the node) except a run that failed for good
// (exit 3), and checks what a job that exited 0 left.
func TestNodeCheck(t *testing.T) {
	oc := localSmall(t)
	r := oc.Runs[0]
	var out, errs strings.Builder
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-return", "0", "-id", r.ID, "-run", r.Dir, "-model", r.ModelDir}, 0},
		{[]string{"-return", "1", "-id", r.ID, "-run", r.Dir, "-model", r.ModelDir}, 1},
		{[]string{"-return", "-1004", "-id", r.ID, "-run", r.Dir, "-model", r.ModelDir}, 1},
		{[]string{"-return", "3", "-id", r.ID, "-run", t.TempDir(), "-model", t.TempDir()}, 0},
		{[]string{"-return", "0", "-id", r.ID, "-run", t.TempDir(), "-model", r.ModelDir}, 1},
		{[]string{"-return", "0", "-id", oc.Runs[1].ID, "-run", r.Dir, "-model", r.ModelDir}, 1},
		{[]string{"-return", "0", "-id", r.ID, "-run", r.Dir, "-model", t.TempDir()}, 1},
		{[]string{"-return", "0", "extra"}, 2},
		// Not yet the last retry: fail the node so that DAGMan retries it.
		{[]string{"-return", "1", "-retry", "1", "-max-retries", "2", "-id", r.ID, "-run", r.Dir, "-model", r.ModelDir}, 1},
		{[]string{"-return", "0", "-retry", "0", "-max-retries", "2", "-id", r.ID, "-run", t.TempDir(), "-model", r.ModelDir}, 1},
	} {
		if got := RunNode(context.Background(), append([]string{"check"}, tc.args...), &out, &errs); got != tc.want {
			t.Errorf("node check %v: exit %d, want %d (%s)", tc.args, got, tc.want, errs.String())
		}
	}
}

// TestNodeCheckLastRetry: on a node's last attempt a failure is recorded
// in the run directory (FailedFile) and the node succeeds, so that select
// and cleanup go on without the run.
func TestNodeCheckLastRetry(t *testing.T) {
	for _, args := range [][]string{
		{"-return", "1", "-retry", "2", "-max-retries", "2"},
		{"-return", "0", "-retry", "2", "-max-retries", "2"}, // exited 0 but left no result
		{"-return", "3"},
	} {
		run := filepath.Join(t.TempDir(), "run_x")
		var out, errs strings.Builder
		if got := RunNode(context.Background(), append(append([]string{"check"}, args...), "-id", "x", "-run", run, "-model", t.TempDir()), &out, &errs); got != 0 {
			t.Errorf("node check %v: exit %d, want 0 (%s)", args, got, errs.String())
		}
		if _, err := os.Stat(filepath.Join(run, FailedFile)); err != nil {
			t.Errorf("node check %v: no %s: %v", args, FailedFile, err)
		}
	}
}

// TestCondorDAGFailedNode runs the small search's DAG with one training
// node that fails on every attempt (its config.json is damaged): select
// and cleanup choose among the other runs, the failed run is recorded as
// failed, and a best model is written. Unless the spec allows failed runs
// the cleanup node then fails for good, naming the run, so the DAG (and
// the example) ends in an error instead of silently choosing another model.
func TestCondorDAGFailedNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a DAG of processes")
	}
	want := localSmall(t)
	bad := want.Runs[want.Best].ID // fail the run the search would choose
	for _, allow := range []bool{false, true} {
		t.Run(map[bool]string{false: "refused", true: "allowed"}[allow], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dag")
			spec := loadSpec(t, smallSpec+fmt.Sprintf("retries: 1\nallow_failed: %v\n", allow))
			f, err := (&Condor{Spec: spec, Dir: dir, Executable: os.Args[0], AllowDynamic: true}).Write()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "train", bad, "config.json"), []byte("{damaged"), 0o644); err != nil {
				t.Fatal(err)
			}
			sum, err := dagman.Run(context.Background(), f.DAG, dagman.Config{Parallel: 2})
			if allow && err != nil {
				t.Fatalf("DAG with one failing node: %v (summary %+v)", err, sum)
			}
			if !allow {
				if !errors.Is(err, dagman.ErrNode) || !slices.Equal(sum.Failed, []string{"cleanup"}) {
					t.Fatalf("DAG with one failing node: %v (summary %+v), want the cleanup node to fail", err, sum)
				}
				// Every attempt of the cleanup node kept its own error file,
				// and each names the failed point by its slug.
				errs, _ := filepath.Glob(filepath.Join(dir, "cleanup", "cleanup.logs", "cleanup.retry*.err"))
				if len(errs) != 1+spec.Retries && len(errs) != 1 {
					t.Errorf("cleanup error files %v", errs)
				}
				for _, e := range errs {
					msg, _ := os.ReadFile(e)
					if !strings.Contains(string(msg), ErrFailedRuns.Error()) || !strings.Contains(string(msg), "1 of 4") || !strings.Contains(string(msg), want.Runs[want.Best].Slug) {
						t.Errorf("%s does not name the failed point %s:\n%s", e, want.Runs[want.Best].Slug, msg)
					}
				}
			}
			b, err := ReadBest(f.Results)
			if err != nil {
				t.Fatal(err)
			}
			var others []RunRecord
			for _, r := range want.Runs {
				if r.ID != bad {
					others = append(others, r)
				}
			}
			if w := others[Select(others, spec.Metric)]; b.RunID != w.ID || b.Runs != 4 || b.Completed != 3 {
				t.Errorf("best %s of %d runs, %d completed; want %s of 4, 3 completed", b.Slug, b.Runs, b.Completed, w.Slug)
			}
			if _, err := os.Stat(filepath.Join(dir, "train", bad, "run_"+bad, FailedFile)); err != nil {
				t.Errorf("the failed run is not recorded: %v", err)
			}
			// Both DAG attempts of the failed run are in the ledger.
			l, err := sweep.OpenLedgerReadOnly(filepath.Join(f.Results, LedgerFile))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if atts, err := l.Attempts(context.Background(), bad); err != nil || len(atts) != 2 || atts[1].State != sweep.Failed || !strings.Contains(atts[1].ErrorText, "failed") {
				t.Errorf("ledger attempts of the failed run: %+v, %v; want 2 failed", atts, err)
			}
			if _, _, err := LoadModel(filepath.Join(f.Results, BestDir)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestCondorRefuses(t *testing.T) {
	spec := loadSpec(t, smallSpec)
	for _, tc := range []struct {
		name string
		c    Condor
		msg  string
	}{
		{"dynamic executable", Condor{Spec: spec, Executable: "/bin/sh"}, "CGO_ENABLED=0"},
		{"missing log", Condor{Spec: loadSpec(t, strings.Replace(smallSpec, "synthetic: {jobs: 1500, seed: 3}", "logs: [/nonexistent/EventLog]", 1)),
			Executable: os.Args[0], AllowDynamic: true}, "not a readable file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Dir = filepath.Join(t.TempDir(), "dag")
			_, err := tc.c.Write()
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want %q", err, tc.msg)
			}
			if ents, _ := os.ReadDir(tc.c.Dir); len(ents) > 0 {
				t.Errorf("a refused DAG left %d files", len(ents))
			}
		})
	}
	// A log whose name has a space cannot be listed in
	// transfer_input_files (the logs are copied into the DAG directory
	// under their base names; a space or a $ in a directory above is no
	// matter, since every path in the files is relative): the DAG is
	// refused before anything is created, so the same directory takes the
	// corrected spec. A $ in the name would be read as a macro.
	_, logs := goldenLogs(t)
	b, _ := os.ReadFile(logs[1])
	odd := t.TempDir()
	spaced, dollar := filepath.Join(odd, "my log"), filepath.Join(odd, "Event$Log")
	os.WriteFile(spaced, b, 0o644)
	os.WriteFile(dollar, b, 0o644)
	parent := t.TempDir()
	for _, tc := range []struct{ name, dir, log, msg string }{
		{"space in a log name", filepath.Join(parent, "dag"), spaced, "transfer list item"},
		{"$ in a log name", filepath.Join(parent, "dag"), dollar, "holds a $"},
	} {
		s := loadSpec(t, strings.Replace(smallSpec, "synthetic: {jobs: 1500, seed: 3}", "logs: ['"+tc.log+"']", 1))
		_, err := (&Condor{Spec: s, Dir: tc.dir, Executable: os.Args[0], AllowDynamic: true}).Write()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.msg)
		}
		if ents, _ := os.ReadDir(parent); len(ents) > 0 {
			t.Errorf("%s: a refused DAG left %v", tc.name, ents)
		}
	}
	good := loadSpec(t, strings.Replace(smallSpec, "synthetic: {jobs: 1500, seed: 3}", "logs: ["+logs[1]+"]", 1))
	if _, err := (&Condor{Spec: good, Dir: filepath.Join(parent, "dag"), Executable: os.Args[0], AllowDynamic: true}).Write(); err != nil {
		t.Errorf("the same directory after a refused DAG: %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("after writing the DAG the parent holds %v, want only dag", ents)
	}
	// Two logs with one base name would overwrite each other in the job's
	// scratch directory.
	other := filepath.Join(t.TempDir(), "EventLog")
	os.WriteFile(other, b, 0o644)
	s := loadSpec(t, strings.Replace(smallSpec, "synthetic: {jobs: 1500, seed: 3}", "logs: ["+logs[1]+", "+other+"]", 1))
	if _, err := (&Condor{Spec: s, Dir: t.TempDir(), Executable: os.Args[0], AllowDynamic: true}).Write(); err == nil || !strings.Contains(err.Error(), "same base name") {
		t.Errorf("two logs named EventLog: %v", err)
	}
}

// localRuns caches the in-process search of smallSpec that the DAG tests
// compare against.
var localRuns = struct {
	once sync.Once
	oc   *Outcome
	err  error
}{}

func localSmall(t *testing.T) *Outcome {
	t.Helper()
	localRuns.once.Do(func() {
		out, err := os.MkdirTemp("", "heldjobs-local-*")
		if err != nil {
			localRuns.err = err
			return
		}
		s := &Search{Spec: loadSpec(t, smallSpec), Out: out, Backend: &sweep.Local{Func: Worker(filepath.Join(out, DatasetDir), nil)}, Parallel: 2}
		localRuns.oc, localRuns.err = s.Run(context.Background())
	})
	if localRuns.err != nil {
		t.Fatal(localRuns.err)
	}
	return localRuns.oc
}

// sameRuns checks that two engines trained the same models: every run's
// validation and test metrics are identical (timing aside).
func sameRuns(t *testing.T, engine string, got []RunRecord, want *Outcome) {
	t.Helper()
	if len(got) != len(want.Runs) {
		t.Fatalf("%s: %d runs, in-process %d", engine, len(got), len(want.Runs))
	}
	for i, w := range want.Runs {
		g := got[i]
		if g.ID != w.ID || g.Result == nil {
			t.Fatalf("%s: run %d is %s (result %v), in-process %s", engine, i, g.Slug, g.Result != nil, w.Slug)
		}
		for k, v := range w.Result.Metrics {
			if k == "seconds" || k == "model_bytes" {
				continue
			}
			if gv := g.Result.Metrics[k]; gv != v && !(gv != gv && v != v) {
				t.Errorf("%s: run %s: %s = %v, in-process %v", engine, w.Slug, k, gv, v)
			}
		}
	}
}

// TestCondorDAGLocal writes the small search as a DAG and runs it with
// dagman.Run: every node command of the DAG (parse, the training
// runs and their POST checks, select, cleanup) runs in DAG order, each job
// in a scratch directory holding only what its submit file transfers. The
// gathered tree must hold the same runs, with the same metrics, as the
// in-process search, the same best run, a ledger, the tracking tables and
// every node's job event log. A DAG interrupted after its first training
// run resumes from its rescue file without running finished nodes again.
func TestCondorDAGLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a seven-node DAG of processes")
	}
	want := localSmall(t)
	dir := filepath.Join(t.TempDir(), "dag")
	c := &Condor{Spec: loadSpec(t, smallSpec), Dir: dir, Executable: os.Args[0], AllowDynamic: true}
	f, err := c.Write()
	if err != nil {
		t.Fatal(err)
	}
	// Interrupt the DAG once its first training node has succeeded.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pw := &watchWriter{match: "node train_", then: cancel}
	sum, err := dagman.Run(ctx, f.DAG, dagman.Config{Parallel: 1, Progress: pw})
	if err == nil || sum.Rescue == "" {
		t.Fatalf("interrupted DAG: %v, summary %+v", err, sum)
	}
	if !slices.Contains(sum.Done, "parse") || len(sum.Done) < 2 {
		t.Fatalf("interrupted DAG finished %v; want parse and a training node", sum.Done)
	}
	first := sum.Done
	sum, err = dagman.Run(context.Background(), f.DAG, dagman.Config{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(first)
	slices.Sort(sum.Skipped)
	if !slices.Equal(first, sum.Skipped) || len(sum.Done)+len(sum.Skipped) != 7 {
		t.Errorf("rerun skipped %v and ran %v; the first run finished %v", sum.Skipped, sum.Done, first)
	}
	// The gathered tree.
	res := f.Results
	b, err := ReadBest(res)
	if err != nil {
		t.Fatal(err)
	}
	if b.RunID != want.Runs[want.Best].ID || b.Value != want.Model.Value {
		t.Errorf("the DAG chose %s (%v), the in-process search %s (%v)", b.Slug, b.Value, want.Model.Slug, want.Model.Value)
	}
	sel, err := ReadBest(filepath.Join(dir, "select", "best"))
	if err != nil || sel.RunID != b.RunID {
		t.Errorf("select node: %+v, %v", sel, err)
	}
	l, err := sweep.OpenLedgerReadOnly(filepath.Join(res, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, pts, _ := loadSpec(t, smallSpec).Sweep("")
	got, err := ledgerRecords(context.Background(), l, filepath.Join(res, WorkDir), pts)
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, "DAG", got, want)
	for _, r := range got {
		ss, err := l.Series(context.Background(), r.ID)
		if err != nil || len(ss["valid_loss"].Step) != int(r.metric("epochs")) {
			t.Errorf("run %s: ledger series %v, %v", r.Slug, ss["valid_loss"], err)
		}
	}
	// Every model names its run and its slug, as a model trained in
	// process does (issue 19 item 6: the DAG's had no slug, and the
	// decisions' summary printed "run ,").
	if _, info, err := LoadModel(filepath.Join(res, BestDir)); err != nil || info.RunID != b.RunID || info.Slug != b.Slug || info.Slug == "" {
		t.Errorf("bestmodel names run %q slug %q (%v), want %s %s", info.RunID, info.Slug, err, b.RunID, b.Slug)
	}
	for _, r := range got {
		if _, info, err := LoadModel(r.ModelDir); err != nil || info.RunID != r.ID || info.Slug != r.Slug {
			t.Errorf("model of run %s names run %q slug %q (%v)", r.Slug, info.RunID, info.Slug, err)
		}
	}
	if _, rows := readCSV(t, filepath.Join(res, TrackingDir, RunsTable+".csv")); len(rows) != 4 {
		t.Errorf("runs.csv has %d rows", len(rows))
	}
	// Every node's job event log, as eventlog reads it: the training
	// nodes' jobs terminated normally with return value 0.
	for _, r := range got {
		raw, err := os.ReadFile(filepath.Join(res, "logs", "train_"+r.ID+".log"))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := eventlog.NewReader(bytes.NewReader(raw)).ReadAll()
		if err != nil || len(evs) < 3 || evs[len(evs)-1].Code != eventlog.Terminated {
			t.Errorf("train_%s.log: %d events, %v", r.ID, len(evs), err)
			continue
		}
		if ti, err := evs[len(evs)-1].TerminateInfo(); err != nil || !ti.Normal || ti.ReturnValue != 0 {
			t.Errorf("train_%s.log termination %+v, %v", r.ID, ti, err)
		}
	}
}

// watchWriter calls then once a written line contains match and
// "succeeded".
type watchWriter struct {
	mu    sync.Mutex
	match string
	then  func()
	done  bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && bytes.Contains(p, []byte(w.match)) && bytes.Contains(p, []byte("succeeded")) {
		w.done = true
		w.then()
	}
	return len(p), nil
}

// TestNodeTrainRetry: a DAG training node on its second attempt ($(RETRY)
// = 1 through VARS) records attempt 2 and starts a fresh metric log: the
// run directory comes back with what the failed attempt left, whose epochs
// must not be mixed with this attempt's. (Before, every DAG attempt was
// attempt 1 and the metric log was appended to.)
func TestNodeTrainRetry(t *testing.T) {
	oc := localSmall(t)
	r := oc.Runs[0]
	dataDir := filepath.Join(filepath.Dir(oc.Ledger), DatasetDir)
	dir := t.TempDir()
	run := filepath.Join(dir, "run_"+r.ID)
	if err := (sweep.Task{RunID: r.ID, Slug: r.Slug, Attempt: 1, Params: r.Params, Dir: dir}).Prepare(); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(run, 0o755)
	stale := `{"series":"valid_loss","step":1,"value":99}` + "\n"
	os.WriteFile(filepath.Join(run, sweep.MetricFile), []byte(strings.Repeat(stale, 7)), 0o644)
	t.Setenv(sweep.EnvRunID, r.ID)
	t.Setenv(sweep.EnvRunDir, run)
	t.Setenv(sweep.EnvConfig, filepath.Join(dir, "config.json"))
	t.Setenv(sweep.EnvAttempt, "")
	var out, errs strings.Builder
	if code := RunNode(context.Background(), []string{"train", "-data", dataDir, "-model", filepath.Join(dir, "model"), "-retry", "1"}, &out, &errs); code != 0 {
		t.Fatalf("node train: exit %d: %s", code, errs.String())
	}
	res, err := sweep.ReadResult(run)
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempt != 2 {
		t.Errorf("attempt %d, want 2 (retry 1)", res.Attempt)
	}
	b, _ := os.ReadFile(filepath.Join(run, sweep.MetricFile))
	if strings.Contains(string(b), `"value":99`) {
		t.Error("the metric log keeps the failed attempt's epochs")
	}
	if n := strings.Count(string(b), `"valid_loss"`); n != int(res.Metrics["epochs"]) {
		t.Errorf("metric log has %d valid_loss points, the run trained %v epochs", n, res.Metrics["epochs"])
	}
}

// TestParseMemory checks the parse node's memory estimate against peaks
// measured with /usr/bin/time -v on "heldjobs node parse" (one 10x10x60s
// shape, synthetic global logs written by go run ./examples/heldjobs -jobs
// N): it covers each, and stays within twice the largest.
func TestParseMemory(t *testing.T) {
	for _, m := range []struct {
		logBytes int64
		peakMB   float64
	}{
		{7215206, 109}, {28910499, 330}, {86566294, 932},
	} {
		est := float64(parseMemoryMB(m.logBytes, 1))
		if est < m.peakMB || est > 2*max(m.peakMB, 512) {
			t.Errorf("log of %d bytes: estimate %v MB for a measured peak of %v MB", m.logBytes, est, m.peakMB)
		}
	}
	if a, b := parseMemoryMB(1<<30, 1), parseMemoryMB(1<<30, 3); b <= a {
		t.Errorf("three shapes %d MB, one %d MB", b, a)
	}
}

// TestPoolSpec reads the spec's condor section and refuses, naming the
// key, what the submit files must not carry: a command the pipeline
// writes itself, a name the submit language cannot read, a value over two
// lines, resources for the training nodes outside the top-level key.
func TestPoolSpec(t *testing.T) {
	s := loadSpec(t, smallSpec+"condor:\n  submit: {+ProjectName: '\"p\"', requirements: 'HasX'}\n  parse: {resources: {memory: 6G, time: 1h}, submit: {requirements: 'HasY'}}\n  time_retry: 1.5\n  checkpoint: 20m\n  hold_limit: 10m\n")
	p := s.Condor
	if p == nil || len(p.Submit) != 2 || p.Submit[0] != [2]string{"+ProjectName", `"p"`} || p.Parse.Resources.MemoryMB != 6144 ||
		p.Parse.Resources.Time != time.Hour || p.TimeFactor != 1.5 || p.Checkpoint != 20*time.Minute || p.HoldLimit != 10*time.Minute {
		t.Fatalf("condor section %+v", p)
	}
	if got := mergeSubmit(p.Submit, p.Parse.Submit); !slices.Equal(got, [][2]string{{"+ProjectName", `"p"`}, {"requirements", "HasY"}}) {
		t.Errorf("parse's commands %v", got)
	}
	if s := loadSpec(t, smallSpec+"condor: {time_retry: none}\n"); !s.Condor.NoTimeRetry {
		t.Error("time_retry: none")
	}
	for _, tc := range []struct{ text, key, msg string }{
		{"condor: {submit: {executable: /bin/evil}}", "condor.submit", "writes executable itself"},
		{"condor: {train: {submit: {Arguments: x}}}", "condor.train.submit", "writes Arguments itself"},
		{"condor: {parse: {submit: {log: x}}}", "condor.parse.submit", "writes log itself"},
		{"condor: {submit: {request_memory: 9000}}", "condor.submit", "writes request_memory itself"},
		{"condor: {train: {submit: {checkpoint_exit_code: 77}}}", "condor.train.submit", "given twice"},
		{"condor: {submit: {transfer_checkpoint_files: x}}", "condor.train.submit", "given twice"},
		{"condor: {submit: {'a b': 1}}", "condor.submit", "not a command name"},
		{"condor: {submit: {requirements: \"a\\nqueue\"}}", "condor.submit", "one non-empty line"},
		{"condor: {train: {resources: {memory: 1G}}}", "condor.train.resources", "top-level resources"},
		{"condor: {select: {resources: {memory: lots}}}", "condor.select.resources.memory", ""},
		{"condor: {time_retry: 0.5}", "condor.time_retry", "factor from 1 to 100"},
		{"condor: {checkpoint: -1h}", "condor.checkpoint", "positive duration"},
		{"condor: {gpu: 1}", "condor.gpu", "unknown"},
	} {
		_, err := LoadSpec(strings.NewReader(smallSpec + tc.text + "\n"))
		var se *SpecError
		if !errors.As(err, &se) || se.Key != tc.key || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want a SpecError at %s with %q", tc.text, err, tc.key, tc.msg)
		}
	}
}

// TestCondorDAGMovedAndExtended writes a DAG of two points, runs it,
// moves the directory and runs nothing more there; then writes the
// four-point spec into the moved directory and runs it from its new
// place: only the two new points train (the finished ones are marked DONE
// and keep their results, to the bit), and the gathered tree equals the
// in-process search of the four points.
func TestCondorDAGMovedAndExtended(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two DAGs of processes")
	}
	want := localSmall(t)
	first := filepath.Join(t.TempDir(), "dag")
	small := loadSpec(t, strings.Replace(smallSpec, "hidden: [4, 8]", "hidden: [4]", 1))
	f, err := (&Condor{Spec: small, Dir: first, Executable: os.Args[0], AllowDynamic: true}).Write()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dagman.Run(context.Background(), f.DAG, dagman.Config{Parallel: 2}); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, r := range f.Runs {
		id := filepath.Base(r)
		b, err := os.ReadFile(filepath.Join(r, "run_"+id, sweep.ResultFile))
		if err != nil {
			t.Fatal(err)
		}
		before[id] = b
	}
	moved := filepath.Join(t.TempDir(), "elsewhere", "dag")
	os.MkdirAll(filepath.Dir(moved), 0o755)
	if err := os.Rename(first, moved); err != nil {
		t.Fatal(err)
	}
	// A spec that differs in more than the space is refused.
	if _, err := (&Condor{Spec: loadSpec(t, strings.Replace(smallSpec, "epochs: 3", "epochs: 4", 1)), Dir: moved, Executable: os.Args[0], AllowDynamic: true}).Write(); err == nil || !strings.Contains(err.Error(), "differs in more than space") {
		t.Fatalf("extending with other epochs: %v", err)
	}
	g, err := (&Condor{Spec: loadSpec(t, smallSpec), Dir: moved, Executable: os.Args[0], AllowDynamic: true}).Write()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Reused) != 2 || len(g.Runs) != 4 {
		t.Fatalf("extension reuses %v of %d runs, want 2 of 4", g.Reused, len(g.Runs))
	}
	sum, err := dagman.Run(context.Background(), g.DAG, dagman.Config{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	var trained []string
	for _, n := range sum.Done {
		if strings.HasPrefix(n, "train_") {
			trained = append(trained, n)
		}
	}
	if len(trained) != 2 || !slices.Contains(sum.Skipped, "parse") || len(sum.Skipped) != 3 {
		t.Errorf("extended DAG trained %v and skipped %v; want the 2 new points trained, parse and the 2 old ones skipped", trained, sum.Skipped)
	}
	for id, b := range before {
		if slices.Contains(trained, "train_"+id) {
			t.Errorf("finished run %s trained again", id)
		}
		a, err := os.ReadFile(filepath.Join(moved, "train", id, "run_"+id, sweep.ResultFile))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("run %s's result changed in the extension (%v)", id, err)
		}
	}
	l, err := sweep.OpenLedgerReadOnly(filepath.Join(g.Results, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, pts, _ := loadSpec(t, smallSpec).Sweep("")
	got, err := ledgerRecords(context.Background(), l, filepath.Join(g.Results, WorkDir), pts)
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, "extended DAG", got, want)
	if b, err := ReadBest(g.Results); err != nil || b.RunID != want.Runs[want.Best].ID {
		t.Errorf("extended DAG's best %+v, %v; want %s", b, err, want.Runs[want.Best].Slug)
	}
}

// FuzzPoolSpec reads specs whose condor section is fuzzed: no panic, and
// every error a *SpecError wrapping ErrSpec.
func FuzzPoolSpec(f *testing.F) {
	f.Add("condor: {submit: {+ProjectName: '\"p\"', requirements: 'HasX'}, parse: {resources: {memory: 6G}}, time_retry: 1.5}")
	f.Add("condor: {train: {submit: {container_image: x}}, time_retry: none, checkpoint: 20m, hold_limit: 1h}")
	f.Add("condor: {submit: {executable: x}}")
	f.Add("condor:\n  cleanup: {submit: {a: &x b, c: *x}}")
	f.Fuzz(func(t *testing.T, section string) {
		_, err := LoadSpec(strings.NewReader(smallSpec + section + "\n"))
		var se *SpecError
		if err != nil && (!errors.Is(err, ErrSpec) || !errors.As(err, &se)) {
			t.Fatalf("error %v is not a SpecError wrapping ErrSpec", err)
		}
	})
}
