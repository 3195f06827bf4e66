package condor

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// condorCommands are the submit commands the generated files may use, each
// with the condor_submit(1) manual section (HTCondor 23.x, "Submit
// Description File Commands") that defines it and what it must hold here.
var condorCommands = map[string]*regexp.Regexp{
	// COMMANDS FOR MATCHMAKING / universe: vanilla runs a program on any
	// execute point.
	"universe": regexp.MustCompile(`^vanilla$`),
	// executable: the program; with file transfer it is copied to the
	// execute point (transfer_executable, default true).
	"executable":          regexp.MustCompile(`^/\S+$`),
	"transfer_executable": regexp.MustCompile(`^true$`),
	// arguments: the "new syntax" (whole value in double quotes,
	// arguments separated by spaces, single quotes around arguments with
	// spaces, '' for a quote inside).
	"arguments": regexp.MustCompile(`^"('([^']|'')*')( '([^']|'')*')*"$`),
	// initialdir: the access point's directory for relative paths of this
	// job (its input files, output, error and log).
	"initialdir": regexp.MustCompile(`^\$\(dir\)$`),
	// COMMANDS FOR FILE TRANSFER: YES makes the job work without a shared
	// file system; ON_EXIT transfers output when the job exits.
	"should_transfer_files":   regexp.MustCompile(`^YES$`),
	"when_to_transfer_output": regexp.MustCompile(`^ON_EXIT$`),
	// transfer_input_files: comma-separated, relative to initialdir; a
	// directory without a trailing slash is transferred with its name.
	"transfer_input_files": regexp.MustCompile(`^config\.json, out$`),
	// transfer_output_files: "If the directory d1 is not created by the job
	// before exit, then the job is placed on hold. If the directory d1 is
	// created by the job before exit, but is empty, this is not an error."
	// out/ comes with the input, so it always exists.
	"transfer_output_files": regexp.MustCompile(`^out$`),
	// output, error: the job's standard streams; log: the job event log,
	// one per job here (relative to initialdir).
	"output": regexp.MustCompile(`^log$`),
	"error":  regexp.MustCompile(`^log\.err$`),
	"log":    regexp.MustCompile(`^condor\.log$`),
	// environment: the "new syntax", double-quoted NAME=value pairs
	// separated by spaces.
	"environment": regexp.MustCompile(`^"(\w+=\S+)( \w+=\S+)*"$`),
	// request_cpus, request_memory (MiB without a unit), request_disk (KiB
	// without a unit), request_gpus: from the queue list or VARS.
	"request_cpus":   regexp.MustCompile(`^\$\(cpus\)$`),
	"request_memory": regexp.MustCompile(`^\$\(memory_mb\)$`),
	"request_disk":   regexp.MustCompile(`^\$\(disk_kb\)$`),
	"request_gpus":   regexp.MustCompile(`^\$\(gpus\)$`),
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCondorFiles -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n got:\n%s\nwant:\n%s", name, path, got, want)
	}
}

func TestCondorFiles(t *testing.T) {
	dir := t.TempDir()
	c := &Batch{Command: []string{"/bin/worker", "-x", "it's"}, Dir: filepath.Join(dir, "condor"), Retries: 2,
		Defaults: sweep.Resources{MemoryMB: 512}}
	var tasks []sweep.Task
	for i, id := range []string{"aaaa", "bbbb", "cccc"} {
		tasks = append(tasks, sweep.Task{RunID: id, Attempt: i + 1, Dir: filepath.Join(dir, "runs", id), Params: map[string]sweep.Value{"seed": sweep.IntValue(int64(i))}})
	}
	tasks[2].Resources = sweep.Resources{CPUs: 4, GPUs: 1, MemoryMB: 8192, DiskMB: 20480, Time: time.Hour}
	err := c.Write(tasks)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), dir, "/work")
	}
	sub, nsub, list, dag := read(filepath.Join(c.Dir, "sweep.sub")), read(filepath.Join(c.Dir, "node.sub")), read(filepath.Join(c.Dir, "runs.txt")), read(filepath.Join(c.Dir, "sweep.dag"))
	golden(t, "sweep.sub", sub)
	golden(t, "node.sub", nsub)
	golden(t, "runs.txt", list)
	golden(t, "sweep.dag", dag)

	// Every line of both submit files is a comment, a command the manual
	// defines holding what it must, or the final queue statement.
	for name, text := range map[string]string{"sweep.sub": sub, "node.sub": nsub} {
		lines := strings.Split(strings.TrimSpace(text), "\n")
		seen := map[string]bool{}
		for _, ln := range lines[:len(lines)-1] {
			if strings.HasPrefix(ln, "#") {
				continue
			}
			k, v, ok := strings.Cut(ln, " = ")
			re := condorCommands[k]
			if !ok || re == nil || !re.MatchString(v) {
				t.Errorf("%s: line %q is not a checked submit command", name, ln)
			}
			seen[k] = true
		}
		for k := range condorCommands {
			if !seen[k] && k != "arguments" {
				t.Errorf("%s lacks %s", name, k)
			}
		}
		// The queue statement (condor_submit(1), "queue ... from file")
		// defines every macro the commands use; the node file's come from
		// the DAG's VARS.
		last := lines[len(lines)-1]
		if name == "sweep.sub" && last != "queue dir, run_id, attempt, cpus, memory_mb, disk_kb, gpus from /work/condor/runs.txt" {
			t.Errorf("queue line %q", last)
		}
		if name == "node.sub" && last != "queue" {
			t.Errorf("node submit file ends with %q, want a plain queue", last)
		}
		for _, m := range regexp.MustCompile(`\$\((\w+)\)`).FindAllStringSubmatch(text, -1) {
			switch m[1] {
			case "dir", "run_id", "attempt", "cpus", "memory_mb", "disk_kb", "gpus":
			default:
				t.Errorf("%s: undefined macro %s", name, m[0])
			}
		}
	}
	// The run list has one line per task with seven comma-separated
	// fields, the resources defaulted (1 CPU, 512 MiB from Defaults, 1 GiB
	// of disk in KiB, no GPU) or as the task asks.
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if len(rows) != 3 || rows[0] != "/work/runs/aaaa, aaaa, 1, 1, 512, 1048576, 0" || rows[2] != "/work/runs/cccc, cccc, 3, 4, 8192, 20971520, 1" {
		t.Errorf("run list %q", rows)
	}
	// The DAG (DAGMan: JOB name file, VARS name macro="value"..., RETRY
	// name n) has the three lines for every node.
	nodes := map[string]int{}
	for _, ln := range strings.Split(strings.TrimSpace(dag), "\n") {
		fs := strings.Fields(ln)
		switch fs[0] {
		case "JOB":
			if len(fs) != 3 || fs[2] != "/work/condor/node.sub" {
				t.Errorf("JOB line %q", ln)
			}
			nodes[fs[1]] |= 1
		case "VARS":
			if !regexp.MustCompile(`^VARS \w+( \w+="[^"]*"){7}$`).MatchString(ln) {
				t.Errorf("VARS line %q", ln)
			}
			nodes[fs[1]] |= 2
		case "RETRY":
			if len(fs) != 3 || fs[2] != "2" {
				t.Errorf("RETRY line %q", ln)
			}
			nodes[fs[1]] |= 4
		default:
			t.Errorf("unexpected DAG line %q", ln)
		}
	}
	if len(nodes) != 3 {
		t.Errorf("%d DAG nodes, want 3", len(nodes))
	}
	for n, bits := range nodes {
		if bits != 7 {
			t.Errorf("node %s lacks JOB, VARS or RETRY (%b)", n, bits)
		}
	}
	// The attempt directories hold what the job transfers in.
	for _, tk := range tasks {
		if _, err := os.Stat(filepath.Join(tk.Dir, "config.json")); err != nil {
			t.Errorf("task config not written: %v", err)
		}
		if fi, err := os.Stat(filepath.Join(tk.Dir, "out")); err != nil || !fi.IsDir() {
			t.Errorf("out/ not created: %v", err)
		}
	}
	if err := (&Batch{Command: []string{"w"}, Dir: dir}).Write([]sweep.Task{{RunID: "z", Dir: "/a b"}}); err == nil || !strings.Contains(err.Error(), "run z") {
		t.Errorf("path with a space: %v", err)
	}
}

// TestCondorJobRunsWithoutSharedFS runs a generated job as HTCondor would
// without a shared file system: a fresh scratch directory holding only the
// transferred inputs, the job's environment from the submit file, the
// command run there, then out/ copied back. The worker's result lands in
// ResultDir.
func TestCondorJobRunsWithoutSharedFS(t *testing.T) {
	dir := t.TempDir()
	cmd := workerCommand(t)
	c := &Batch{Command: cmd, Dir: filepath.Join(dir, "condor")}
	task := sweep.Task{RunID: "run1", Attempt: 1, Dir: filepath.Join(dir, "runs", "run1", "a1"), Params: map[string]sweep.Value{"seed": sweep.IntValue(4), "batch_size": sweep.IntValue(8)}}
	err := c.Write([]sweep.Task{task})
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := os.ReadFile(filepath.Join(c.Dir, "sweep.sub"))
	env := map[string]string{}
	for _, ln := range strings.Split(string(sub), "\n") {
		if v, ok := strings.CutPrefix(ln, "environment = "); ok {
			for _, kv := range strings.Fields(strings.Trim(v, `"`)) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = strings.NewReplacer("$(run_id)", task.RunID, "$(attempt)", "1").Replace(v)
			}
		}
	}
	scratch := t.TempDir()
	copyFile(t, filepath.Join(task.Dir, "config.json"), filepath.Join(scratch, "config.json"))
	if err := os.Mkdir(filepath.Join(scratch, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	runInDir(t, scratch, cmd, env)
	res, err := sweep.ReadResult(filepath.Join(scratch, "out"))
	if err != nil {
		t.Fatalf("the job wrote no result in out/: %v", err)
	}
	copyFile(t, filepath.Join(scratch, "out", sweep.ResultFile), filepath.Join(filepath.Join(task.Dir, "out"), sweep.ResultFile))
	back, err := sweep.ReadResult(filepath.Join(task.Dir, "out"))
	if err != nil || back.RunID != task.RunID || res.Metrics["best"] != 5 {
		t.Errorf("result on the access point: %+v, %v", back, err)
	}
}

// The test binary doubles as a sweep worker when roleEnv says so.
const roleEnv = "CONDOR_TEST_ROLE"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "worker" {
		os.Exit(testWorker())
	}
	os.Exit(m.Run())
}

// testWorker writes the result a sweep worker would: metric best = seed+1.
func testWorker() int {
	t, ok, err := sweep.WorkerTask()
	if !ok || err != nil {
		fmt.Fprintln(os.Stderr, "not a worker:", err)
		return 2
	}
	x := float64(t.Params["seed"].Int() + 1)
	if err := sweep.WriteResult(t.Dir, &sweep.Result{RunID: t.RunID, Attempt: t.Attempt, Metrics: map[string]float64{"best": x}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// workerCommand is the argv that makes this test binary a worker.
func workerCommand(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", roleEnv + "=worker", exe}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runInDir runs argv in dir with env added to an environment free of
// sweep worker variables, and fails the test if it fails.
func runInDir(t *testing.T, dir string, argv []string, env map[string]string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWEEP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", argv, err, out)
	}
}
