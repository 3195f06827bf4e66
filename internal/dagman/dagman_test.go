package dagman

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/condor"
)

// jobScript is the job of the DAG runner tests: its first argument says
// what to do; "flaky" counts its runs in a file outside the scratch
// directory (given as an absolute path) and fails the first time.
const jobScript = `#!/bin/sh
mode=$1
case $mode in
ok) echo done > out/done ;;
flaky)
  n=$(cat "$2" 2>/dev/null || echo 0)
  echo $((n + 1)) > "$2"
  [ "$n" -ge 1 ] || { echo "first run fails" >&2; exit 1; }
  echo done > out/done ;;
nooutput) exit 0 ;;
fatal) echo "cannot go on" >&2; exit 3 ;;
inspect) env | sort > out/env; ls -A | sort > out/ls; cat in.txt > out/in.txt ;;
gate) [ -e "$2" ] || { echo "gate closed" >&2; exit 1; }; echo done > out/done ;;
slow) sleep "$2"; echo done > out/done ;;
esac
`

// scriptDAG writes a DAG whose nodes run jobScript with the given modes.
type scriptNode struct {
	name, mode, arg string
	retry, unless   int
	parents         []string
	post            []string
}

func writeScriptDAG(t *testing.T, dir string, nodes []scriptNode) string {
	t.Helper()
	script := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(script, []byte(jobScript), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &condor.DAG{Submits: map[string]*condor.Submit{}}
	for _, n := range nodes {
		nd := filepath.Join(dir, n.name)
		if err := os.MkdirAll(filepath.Join(nd, "out"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(nd, "in.txt"), []byte("input of "+n.name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sub := filepath.Join(dir, n.name+".sub")
		args := []string{n.mode}
		if n.arg != "" {
			args = append(args, n.arg)
		}
		outputs := []string{"out"}
		if n.mode == "nooutput" {
			outputs = []string{"res"}
		}
		d.Submits[sub] = &condor.Submit{Executable: script, Arguments: args, InitialDir: nd, Inputs: []string{"in.txt", "out"},
			Outputs: outputs, Environment: []string{"NODE=$(JOB)", "TRY=$(RETRY)", "COLOUR=$(colour)"},
			Log: n.name + ".log", Output: n.name + ".out", Error: n.name + ".err"}
		d.Nodes = append(d.Nodes, condor.Node{Name: n.name, Submit: sub, Vars: [][2]string{{"colour", "blue"}},
			Retry: n.retry, UnlessExit: n.unless, Parents: n.parents, Post: n.post})
	}
	path := filepath.Join(dir, "test.dag")
	if err := d.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCondorDAGText(t *testing.T) {
	dir := t.TempDir()
	s := &condor.Submit{Comment: "a job", Executable: "/bin/x", Arguments: []string{"-a", "it's"}, InitialDir: "$(dir)",
		Inputs: []string{"config.json", "/data/a.npz"}, Outputs: []string{"out"}, Environment: []string{"A=$(run_id)"},
		Resources: sweep.Resources{CPUs: 2, MemoryMB: 512, DiskMB: 3, GPUs: 1}, Log: "x.log", Output: "x.out", Error: "x.err"}
	want := `# a job
universe = vanilla
executable = /bin/x
transfer_executable = true
arguments = "'-a' 'it''s'"
initialdir = $(dir)
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
transfer_input_files = config.json, /data/a.npz
transfer_output_files = out
output = x.out
error = x.err
log = x.log
environment = "A=$(run_id)"
request_cpus = 2
request_memory = 512
request_disk = 3072
request_gpus = 1
queue
`
	if got := s.SubmitText(); got != want {
		t.Errorf("submit text:\n%s\nwant:\n%s", got, want)
	}
	sub := filepath.Join(dir, "x.sub")
	d := &condor.DAG{Submits: map[string]*condor.Submit{sub: s}, Nodes: []condor.Node{
		{Name: "a", Submit: sub, Retry: 2},
		{Name: "b", Submit: sub, Vars: [][2]string{{"dir", "/w/b"}, {"run_id", "b1"}}, Retry: 1, UnlessExit: 3, Post: []string{"/bin/check", "$RETURN"}, Parents: []string{"a"}},
		{Name: "c", Submit: sub, Parents: []string{"a", "b"}},
	}}
	wantDAG := "JOB a " + sub + "\nRETRY a 2\nJOB b " + sub + "\nVARS b dir=\"/w/b\" run_id=\"b1\"\nSCRIPT POST b /bin/check $RETURN\nRETRY b 1 UNLESS-EXIT 3\nJOB c " + sub + "\n" +
		"PARENT a CHILD b\nPARENT a b CHILD c\n"
	if got := d.DAGText(); got != wantDAG {
		t.Errorf("DAG text:\n%s\nwant:\n%s", got, wantDAG)
	}
	if err := d.Write(filepath.Join(dir, "x.dag")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(d *condor.DAG)
		msg  string
	}{
		{"cycle", func(d *condor.DAG) { d.Nodes[0].Parents = []string{"c"} }, "cycle"},
		{"unknown parent", func(d *condor.DAG) { d.Nodes[2].Parents = []string{"z"} }, "unknown parent z"},
		{"duplicate node", func(d *condor.DAG) { d.Nodes[1].Name = "a" }, "two nodes named a"},
		{"bad node name", func(d *condor.DAG) { d.Nodes[1].Name = "a b" }, "node name"},
		{"no submit", func(d *condor.DAG) { d.Nodes[1].Submit = "/nowhere.sub" }, "no submit description"},
		{"space in input", func(d *condor.DAG) { d.Submits[sub].Inputs = []string{"my file"} }, "transfer list item"},
		{"comma in output", func(d *condor.DAG) { d.Submits[sub].Outputs = []string{"a,b"} }, "transfer list item"},
		{"path in output", func(d *condor.DAG) { d.Submits[sub].Outputs = []string{"a/b"} }, "a name in the scratch directory"},
		{"space in executable", func(d *condor.DAG) { d.Submits[sub].Executable = "x y" }, "executable"},
		// Extra submit commands: a name the submit language reads, one
		// line, nothing the description writes itself, no name twice.
		{"extra owning executable", func(d *condor.DAG) { d.Submits[sub].Extra = [][2]string{{"Executable", "/bin/evil"}} }, `"Executable": the description writes`},
		{"extra owning output", func(d *condor.DAG) { d.Submits[sub].Extra = [][2]string{{"output", "x"}} }, `"output": the description writes`},
		{"extra owning arguments", func(d *condor.DAG) { d.Submits[sub].Extra = [][2]string{{"args", "x"}} }, `"args": the description writes`},
		{"extra newline", func(d *condor.DAG) {
			d.Submits[sub].Extra = [][2]string{{"requirements", "true\nexecutable = /bin/evil"}}
		}, "one non-empty line"},
		{"extra bad name", func(d *condor.DAG) { d.Submits[sub].Extra = [][2]string{{"a b", "1"}} }, "not a command name"},
		{"extra twice", func(d *condor.DAG) {
			d.Submits[sub].Extra = [][2]string{{"+ProjectName", `"a"`}, {"MY.projectname", `"b"`}}
		}, "given twice"},
		{"extra empty", func(d *condor.DAG) { d.Submits[sub].Extra = [][2]string{{"requirements", " "}} }, "one non-empty line"},
		{"space in environment", func(d *condor.DAG) { d.Submits[sub].Environment = []string{"A=b c"} }, "environment entry"},
		{"quote in VARS", func(d *condor.DAG) { d.Nodes[1].Vars = [][2]string{{"a", `x"y`}} }, "VARS"},
		// A $ would be read as a macro by HTCondor and the path changed
		// (condor_submit(1), "Submit Description File Commands": $(name)
		// macros; DAGMan VARS values expand $(JOB) and $(RETRY), SCRIPT
		// arguments $JOB, $RETURN, $RETRY, $MAX_RETRIES).
		{"$ in initialdir", func(d *condor.DAG) { d.Submits[sub].InitialDir = "/w/$HOME" }, "holds a $"},
		{"$ in input", func(d *condor.DAG) { d.Submits[sub].Inputs = []string{"/data/a$(b)"} }, "holds a $"},
		{"$ in log", func(d *condor.DAG) { d.Submits[sub].Log = "price$.log" }, "holds a $"},
		{"$ in argument", func(d *condor.DAG) { d.Submits[sub].Arguments = []string{"-x", "$$(dir)"} }, "holds a $"},
		{"$ in VARS", func(d *condor.DAG) { d.Nodes[1].Vars = [][2]string{{"dir", "/w/$(x)"}} }, "holds a $ other than"},
		{"$ in POST", func(d *condor.DAG) { d.Nodes[1].Post = []string{"/bin/check", "/w/a$b"} }, "holds a $ other than"},
		{"POST macro run on", func(d *condor.DAG) { d.Nodes[1].Post = []string{"/bin/check", "$RETURNS"} }, "holds a $ other than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *d
			c.Nodes = slices.Clone(d.Nodes)
			cs := *s
			c.Submits = map[string]*condor.Submit{sub: &cs}
			tc.edit(&c)
			err := c.Write(filepath.Join(t.TempDir(), "y.dag"))
			if !errors.Is(err, condor.ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want condor.ErrInvalid with %q", err, tc.msg)
			}
		})
	}
}

// TestRunCondorDAG runs a DAG of shell jobs: dependency order, file
// transfer into a scratch directory that holds only the inputs, the submit
// file's environment, RETRY, UNLESS-EXIT, POST scripts, a missing output
// failing the node, the job event logs, and the rescue file that makes a
// rerun skip what succeeded.
func TestRunCondorDAG(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "flaky.count")
	gate := filepath.Join(dir, "gate.open")
	dag := writeScriptDAG(t, dir, []scriptNode{
		{name: "first", mode: "inspect"},
		{name: "flaky", mode: "flaky", arg: counter, retry: 2, parents: []string{"first"}},
		{name: "fatal", mode: "fatal", retry: 5, unless: 3, parents: []string{"first"}},
		{name: "nooutput", mode: "nooutput", retry: 1, parents: []string{"first"}},
		// The job fails, the POST script succeeds: the node succeeds.
		{name: "rescued", mode: "fatal", post: []string{"/bin/true"}, parents: []string{"first"}},
		{name: "gated", mode: "gate", arg: gate, parents: []string{"flaky"}},
		{name: "last", mode: "ok", parents: []string{"gated", "fatal"}},
	})
	sum, err := Run(context.Background(), dag, Config{Parallel: 3})
	if !errors.Is(err, ErrNode) {
		t.Fatalf("error %v, want ErrNode", err)
	}
	slices.Sort(sum.Done)
	slices.Sort(sum.Failed)
	if want := []string{"first", "flaky", "rescued"}; !slices.Equal(sum.Done, want) {
		t.Errorf("done %v, want %v", sum.Done, want)
	}
	if want := []string{"fatal", "gated", "nooutput"}; !slices.Equal(sum.Failed, want) {
		t.Errorf("failed %v, want %v", sum.Failed, want)
	}
	// flaky ran twice, nooutput twice (RETRY 1); fatal once (UNLESS-EXIT).
	if sum.Retried != 2 {
		t.Errorf("%d retries, want 2", sum.Retried)
	}
	if b, _ := os.ReadFile(counter); strings.TrimSpace(string(b)) != "2" {
		t.Errorf("flaky ran %q times, want 2", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "fatal", "fatal.err")); !strings.Contains(string(b), "cannot go on") {
		t.Errorf("fatal.err: %q", b)
	}
	// The scratch directory held the executable and the inputs only, and
	// the job saw only the submit file's environment.
	ls, _ := os.ReadFile(filepath.Join(dir, "first", "out", "ls"))
	if got := strings.Fields(string(ls)); !slices.Equal(got, []string{"in.txt", "job.sh", "out"}) {
		t.Errorf("scratch directory held %v", got)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "first", "out", "env"))
	var names []string
	for _, ln := range strings.Split(strings.TrimSpace(string(env)), "\n") {
		k, v, _ := strings.Cut(ln, "=")
		switch k {
		case "NODE", "TRY", "COLOUR":
			if want := map[string]string{"NODE": "first", "TRY": "0", "COLOUR": "blue"}[k]; v != want {
				t.Errorf("job environment %s=%s, want %s", k, v, want)
			}
		case "PWD", "SHLVL", "_": // set by the shell itself
			continue
		}
		names = append(names, k)
	}
	if !slices.Equal(names, []string{"COLOUR", "NODE", "TRY", "_CONDOR_SCRATCH_DIR"}) {
		t.Errorf("job environment %v", names)
	}
	// Each node's event log: submitted, executing, terminated with its
	// return value.
	log, _ := os.ReadFile(filepath.Join(dir, "fatal", "fatal.log"))
	for _, want := range []string{"000 (", "001 (", "005 (", "Normal termination (return value 3)"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("fatal.log lacks %q:\n%s", want, log)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "nooutput", "nooutput.log")); !strings.Contains(string(log), "012 (") {
		t.Errorf("nooutput.log has no hold event:\n%s", log)
	}
	// The rescue file marks what succeeded; a rerun skips it.
	if sum.Rescue != dag+".rescue001" {
		t.Errorf("rescue file %q", sum.Rescue)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sum2, err := Run(context.Background(), dag, Config{Parallel: 3})
	if !errors.Is(err, ErrNode) {
		t.Fatalf("rerun: %v", err)
	}
	slices.Sort(sum2.Skipped)
	slices.Sort(sum2.Done)
	if want := []string{"first", "flaky", "rescued"}; !slices.Equal(sum2.Skipped, want) {
		t.Errorf("rerun skipped %v, want %v", sum2.Skipped, want)
	}
	if want := []string{"gated"}; !slices.Equal(sum2.Done, want) {
		t.Errorf("rerun did %v, want %v (fatal still fails, so last does not run)", sum2.Done, want)
	}
	if b, _ := os.ReadFile(counter); strings.TrimSpace(string(b)) != "2" {
		t.Errorf("the rerun ran flaky again (%q runs)", b)
	}
	if sum2.Rescue != dag+".rescue002" {
		t.Errorf("second rescue file %q", sum2.Rescue)
	}
}

func TestRunCondorDAGRefusesUnknown(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "a.sub")
	for _, tc := range []struct{ name, dag, sub, msg string }{
		{"dag command", "JOB a " + sub + "\nSPLICE s other.dag\n", "", "not a DAG line"},
		{"submit command", "JOB a " + sub + "\n", "universe = vanilla\nexecutable = /bin/true\nshould_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\ninitialdir = /tmp\noutput = o\nerror = e\nlog = l\ntransfer_output_remaps = \"a=b\"\nqueue\n", "transfer_output_remaps"},
		{"shared file system", "JOB a " + sub + "\n", "universe = vanilla\nexecutable = /bin/true\nshould_transfer_files = NO\nwhen_to_transfer_output = ON_EXIT\ninitialdir = /tmp\noutput = o\nerror = e\nlog = l\nqueue\n", "should_transfer_files"},
		{"no queue", "JOB a " + sub + "\n", "universe = vanilla\n", "no queue"},
		{"node before JOB", "VARS a x=\"1\"\n", "", "not defined by a JOB line"},
		{"empty", "# nothing\n", "", "no JOB line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".dag")
			os.WriteFile(path, []byte(tc.dag), 0o644)
			os.WriteFile(sub, []byte(tc.sub), 0o644)
			_, err := Run(context.Background(), path, Config{})
			if !errors.Is(err, condor.ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want condor.ErrInvalid with %q", err, tc.msg)
			}
		})
	}
}

// argumentsValue is the value of the arguments command condor.Submit
// writes for argv.
func argumentsValue(t *testing.T, argv []string) string {
	for _, ln := range strings.Split((&condor.Submit{Arguments: argv}).SubmitText(), "\n") {
		if v, ok := strings.CutPrefix(ln, "arguments = "); ok {
			return v
		}
	}
	t.Fatalf("no arguments line for %q", argv)
	return ""
}

// FuzzCondorArgs: what condor.Submit writes, parseCondorArgs reads back; and
// parseCondorArgs never panics on anything else.
func FuzzCondorArgs(f *testing.F) {
	f.Add("a", "it's", `say "hi"`)
	f.Add("", " ", "''")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		argv := []string{a, b, c}
		got, err := parseCondorArgs(argumentsValue(t, argv))
		if err != nil || !slices.Equal(got, argv) {
			t.Fatalf("%q: read back %q, %v", argv, got, err)
		}
		_, _ = parseCondorArgs(a)
	})
}

// FuzzReadDAG: readDAG never panics, and its errors wrap condor.ErrInvalid.
func FuzzReadDAG(f *testing.F) {
	f.Add("JOB a /x.sub\nVARS a k=\"v\"\nRETRY a 2 UNLESS-EXIT 3\nSCRIPT POST a /bin/true $RETURN\nJOB b /y.sub\nPARENT a CHILD b\n")
	f.Add("PARENT CHILD\n")
	f.Add("RETRY a x\n")
	f.Add("universe = vanilla\nexecutable = x\nshould_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\ninitialdir = d\noutput = o.$(Cluster)\nerror = e\nlog = l\ncheckpoint_exit_code = 85\ntransfer_checkpoint_files = s\nallowed_job_duration = $CHOICE(retry, 1, 2)\n+ProjectName = \"p\"\nqueue\n")
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(t.TempDir(), "f.dag")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readDAG(path); err != nil && !errors.Is(err, condor.ErrInvalid) {
			t.Fatalf("error %v does not wrap condor.ErrInvalid", err)
		}
		sub := filepath.Join(t.TempDir(), "f.sub")
		os.WriteFile(sub, []byte(text), 0o644)
		if ps, err := readSubmit(sub); err != nil && !errors.Is(err, condor.ErrInvalid) {
			t.Fatalf("error %v does not wrap condor.ErrInvalid", err)
		} else if err == nil {
			_, _, _ = ps.expand(map[string]string{})
		}
	})
}

// TestCondorSubmitPolicy: the time limit, accounting group and hold limit
// are written when set (whole seconds, rounded up), left out when zero,
// read back by the local runner, and a group the submit language cannot
// carry is refused.
func TestCondorSubmitPolicy(t *testing.T) {
	base := condor.Submit{Executable: "/bin/x", InitialDir: "/d", Log: "l", Output: "o", Error: "e"}
	plain := base.SubmitText()
	s := base
	s.AllowedJobDuration, s.AccountingGroup, s.RemoveHeldAfter = 90*time.Minute+time.Millisecond, "group_a.b", 30*time.Minute
	text := s.SubmitText()
	want := "allowed_job_duration = 5401\naccounting_group = group_a.b\nperiodic_remove = JobStatus == 5 && time() - EnteredCurrentStatus > 1800\nqueue\n"
	if !strings.HasSuffix(text, want) || strings.TrimSuffix(text, want) != strings.TrimSuffix(plain, "queue\n") {
		t.Errorf("submit text:\n%s\nwant the plain one with\n%s", text, want)
	}
	if strings.Contains(plain, "allowed_job_duration") || strings.Contains(plain, "accounting_group") || strings.Contains(plain, "periodic_remove") {
		t.Errorf("zero fields written:\n%s", plain)
	}
	path := filepath.Join(t.TempDir(), "x.sub")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSubmit(path); err != nil {
		t.Errorf("the local runner refuses the policy commands: %v", err)
	}
	for _, bad := range []condor.Submit{
		func() condor.Submit { b := base; b.AccountingGroup = "my group"; return b }(),
		func() condor.Submit { b := base; b.AccountingGroup = "g$(x)"; return b }(),
		func() condor.Submit { b := base; b.RemoveHeldAfter = -time.Second; return b }(),
	} {
		d := &condor.DAG{Nodes: []condor.Node{{Name: "a", Submit: "/s/a.sub"}}, Submits: map[string]*condor.Submit{"/s/a.sub": &bad}}
		if err := d.Check(); !errors.Is(err, condor.ErrInvalid) {
			t.Errorf("group %q, hold %v: %v, want condor.ErrInvalid", bad.AccountingGroup, bad.RemoveHeldAfter, err)
		}
	}
}

// TestRunCondorDAGPoolCommands: the commands that only matter on a pool
// (matchmaking, accounting, containers, job attributes) are written after
// the others and accepted by the local runner, which ignores them.
func TestRunCondorDAGPoolCommands(t *testing.T) {
	dir := t.TempDir()
	dag := writeScriptDAG(t, dir, []scriptNode{{name: "a", mode: "ok"}})
	sub := filepath.Join(dir, "a.sub")
	b, err := os.ReadFile(sub)
	if err != nil {
		t.Fatal(err)
	}
	extra := [][2]string{{"+ProjectName", `"Crosscluster"`}, {"requirements", `(OpSysMajorVer == 9) && (HasSingularity == true)`},
		{"container_image", "osdf:///ospool/ap40/data/u/image.sif"}, {"accounting_group", "group_physics.alice"},
		{"retry_request_memory", "RequestMemory * 2"}, {"MY.WantGPULab", "true"}}
	s := &condor.Submit{Executable: "/bin/x", InitialDir: "d", Log: "l", Output: "o", Error: "e", Extra: extra}
	text := s.SubmitText()
	for _, kv := range extra {
		if !strings.Contains(text, "\n"+kv[0]+" = "+kv[1]+"\n") {
			t.Errorf("submit text lacks %s:\n%s", kv[0], text)
		}
	}
	var lines []string
	for _, kv := range extra {
		lines = append(lines, kv[0]+" = "+kv[1])
	}
	withExtra := strings.Replace(string(b), "queue\n", strings.Join(lines, "\n")+"\nqueue\n", 1)
	if err := os.WriteFile(sub, []byte(withExtra), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), dag, Config{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "out", "done")); err != nil {
		t.Error(err)
	}
}

// ckptScript counts to 5 in state/n, one step per start: each start
// takes the count left by the last (in its sandbox after a checkpoint
// exit, from the spool after an eviction), waits a moment, stores the
// next and exits 85 (checkpoint_exit_code) until it reaches 5. Every start
// appends to a file outside the sandbox so the test sees them all.
const ckptScript = `#!/bin/sh
n=$(cat state/n 2>/dev/null || echo 0)
echo "start from $n" >> "$1"
sleep 0.3
n=$((n + 1))
mkdir -p state
echo $n > state/n.tmp && mv state/n.tmp state/n
[ "$n" -ge 5 ] || exit 85
echo $n > out/done
`

// TestRunCondorDAGCheckpointEviction: a self-checkpointing job
// (checkpoint_exit_code, transfer_checkpoint_files) restarts in its
// sandbox after each checkpoint exit; evicted at its third start it
// starts again in a fresh sandbox from the spooled checkpoint, not from
// its input (count 0) and not from the evicted start's progress; it ends
// with the count of an uninterrupted run, in one attempt, and its event
// log records the eviction.
func TestRunCondorDAGCheckpointEviction(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "ckpt.sh")
	if err := os.WriteFile(script, []byte(ckptScript), 0o755); err != nil {
		t.Fatal(err)
	}
	starts := filepath.Join(dir, "starts")
	nd := filepath.Join(dir, "a")
	for _, d := range []string{filepath.Join(nd, "out"), filepath.Join(nd, "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d := &condor.DAG{Submits: map[string]*condor.Submit{"a.sub": {Executable: "ckpt.sh", Arguments: []string{starts}, InitialDir: "a",
		Inputs: []string{"out", "state"}, Outputs: []string{"out", "state"}, Log: "a.log", Output: "a.$(Cluster).out", Error: "a.$(Cluster).err",
		Extra: [][2]string{{"checkpoint_exit_code", "85"}, {"transfer_checkpoint_files", "state"}}}},
		Nodes: []condor.Node{{Name: "a", Submit: "a.sub"}}}
	dag := filepath.Join(dir, "ckpt.dag")
	if err := d.Write(dag); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), dag, Config{Evict: func(node string, start int) time.Duration {
		if start == 2 {
			return 100 * time.Millisecond
		}
		return 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Evicted != 1 || sum.Checkpoints != 4 || sum.Retried != 0 {
		t.Errorf("summary %+v, want 1 eviction, 4 checkpoints, no retry", sum)
	}
	b, _ := os.ReadFile(starts)
	if want := "start from 0\nstart from 1\nstart from 2\nstart from 2\nstart from 3\nstart from 4\n"; string(b) != want {
		t.Errorf("starts:\n%s\nwant:\n%s", b, want)
	}
	if b, _ := os.ReadFile(filepath.Join(nd, "out", "done")); string(b) != "5\n" {
		t.Errorf("out/done %q, want 5", b)
	}
	if _, err := os.Stat(filepath.Join(nd, "a.1.out")); err != nil {
		t.Errorf("output named with $(Cluster): %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(nd, "a.log"))
	if !strings.Contains(string(log), "004 (001.000.000)") || !strings.Contains(string(log), "Job was evicted.") {
		t.Errorf("event log without the eviction:\n%s", log)
	}
}

// TestRunCondorDAGTimeLimit: a job over its allowed_job_duration is held
// with code 46 and, with periodic_remove, removed, so its node fails and
// is retried; the retry's limit is the next item of $CHOICE(retry, ...),
// long enough for the job, which then succeeds.
func TestRunCondorDAGTimeLimit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte(jobScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "a", "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &condor.DAG{Submits: map[string]*condor.Submit{"a.sub": {Executable: "job.sh", Arguments: []string{"slow", "2"}, InitialDir: "a",
		Inputs: []string{"out"}, Outputs: []string{"out"}, Log: "a.log", Output: "a.$(retry).out", Error: "a.$(retry).err",
		RemoveHeldAfter: time.Minute, Extra: [][2]string{{"allowed_job_duration", "$CHOICE(retry, 1, 60)"}}}},
		Nodes: []condor.Node{{Name: "a", Submit: "a.sub", Vars: [][2]string{{"retry", "$(RETRY)"}}, Retry: 1}}}
	dag := filepath.Join(dir, "t.dag")
	if err := d.Write(dag); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), dag, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Retried != 1 {
		t.Errorf("summary %+v, want one retry", sum)
	}
	f, err := os.Open(filepath.Join(dir, "a", "a.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := eventlog.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var codes []eventlog.Code
	holds := 0
	for _, e := range evs {
		codes = append(codes, e.Code)
		if e.Code == eventlog.Held {
			if hi, err := e.HoldInfo(); err != nil || hi.Code != 46 {
				t.Errorf("hold %+v, %v; want code 46", hi, err)
			}
			holds++
		}
	}
	if holds != 1 || codes[len(codes)-1] != eventlog.Terminated || !slices.Contains(codes, eventlog.Aborted) {
		t.Errorf("events %v: want one hold, a removal, then a termination", codes)
	}
	for _, name := range []string{"a.0.out", "a.1.out"} {
		if _, err := os.Stat(filepath.Join(dir, "a", name)); err != nil {
			t.Errorf("attempt output %s: %v", name, err)
		}
	}
}
