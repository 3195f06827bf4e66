package sweep

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Condor writes HTCondor input for a batch of tasks, for sites that use
// HTCondor: a submit file whose "queue dir, run_id, attempt from <list>"
// statement starts one job per task, and a DAG with one node per task and a
// RETRY line, for DAGMan to retry failed nodes. Each job runs Command with
// the Env* variables in its attempt directory, like the other backends.
// The files are generated and checked by the tests; this package does not
// call condor_submit (HTCondor could not be installed where it was written).
type Condor struct {
	Command []string
	// Dir receives the generated files.
	Dir string
	// RequestCPUs and RequestMemoryMB are written when positive.
	RequestCPUs, RequestMemoryMB int
	// Retries is the DAG's RETRY count per node.
	Retries int
}

// CondorFiles are the paths Condor.Write produced.
type CondorFiles struct {
	Submit, RunList, NodeSubmit, DAG string
}

var condorSafe = regexp.MustCompile(`^[A-Za-z0-9_./+-]+$`)

// condorArgs quotes argv in HTCondor's "new" arguments syntax: the whole
// value in double quotes, each argument in single quotes, ' doubled and "
// doubled.
func condorArgs(argv []string) string {
	var parts []string
	for _, a := range argv {
		a = strings.ReplaceAll(a, `"`, `""`)
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", "''")+"'")
	}
	return `"` + strings.Join(parts, " ") + `"`
}

func (c *Condor) common(b *strings.Builder) {
	fmt.Fprintf(b, "universe = vanilla\n")
	fmt.Fprintf(b, "executable = %s\n", c.Command[0])
	if len(c.Command) > 1 {
		fmt.Fprintf(b, "arguments = %s\n", condorArgs(c.Command[1:]))
	}
	b.WriteString("initialdir = $(dir)\n")
	b.WriteString("output = $(dir)/log\n")
	b.WriteString("error = $(dir)/log.err\n")
	fmt.Fprintf(b, "log = %s\n", filepath.Join(c.Dir, "condor.log"))
	fmt.Fprintf(b, "environment = \"%s=$(run_id) %s=$(attempt) %s=$(dir) %s=$(dir)/config.json %s=$(dir)/%s\"\n",
		EnvRunID, EnvAttempt, EnvRunDir, EnvConfig, EnvHeartbeat, HeartbeatFile)
	if c.RequestCPUs > 0 {
		fmt.Fprintf(b, "request_cpus = %d\n", c.RequestCPUs)
	}
	if c.RequestMemoryMB > 0 {
		fmt.Fprintf(b, "request_memory = %dMB\n", c.RequestMemoryMB)
	}
	b.WriteString("should_transfer_files = NO\n")
}

// Write prepares the tasks' attempt directories and writes sweep.sub,
// runs.txt, node.sub and sweep.dag under Dir. Paths with characters that
// HTCondor's queue-from lists cannot carry (spaces, commas, quotes) are an
// error naming the run.
func (c *Condor) Write(tasks []Task) (CondorFiles, error) {
	if len(c.Command) == 0 || c.Dir == "" {
		panic("sweep: Condor needs Command and Dir")
	}
	f := CondorFiles{
		Submit:     filepath.Join(c.Dir, "sweep.sub"),
		RunList:    filepath.Join(c.Dir, "runs.txt"),
		NodeSubmit: filepath.Join(c.Dir, "node.sub"),
		DAG:        filepath.Join(c.Dir, "sweep.dag"),
	}
	var list, dag strings.Builder
	for _, t := range tasks {
		if !condorSafe.MatchString(t.Dir) {
			return f, fmt.Errorf("sweep: run %s: attempt directory %q has characters HTCondor queue lists cannot hold", t.RunID, t.Dir)
		}
		if err := prepare(t); err != nil {
			return f, err
		}
		fmt.Fprintf(&list, "%s, %s, %d\n", t.Dir, t.RunID, t.Attempt)
		node := "run_" + t.RunID
		fmt.Fprintf(&dag, "JOB %s %s\n", node, f.NodeSubmit)
		fmt.Fprintf(&dag, "VARS %s dir=\"%s\" run_id=\"%s\" attempt=\"%d\"\n", node, t.Dir, t.RunID, t.Attempt)
		fmt.Fprintf(&dag, "RETRY %s %d\n", node, c.Retries)
	}
	var sub, nsub strings.Builder
	sub.WriteString("# crosscluster sweep: one job per line of runs.txt\n")
	c.common(&sub)
	fmt.Fprintf(&sub, "queue dir, run_id, attempt from %s\n", f.RunList)
	nsub.WriteString("# crosscluster sweep: one DAG node; dir, run_id, attempt come from VARS\n")
	c.common(&nsub)
	nsub.WriteString("queue\n")
	for path, text := range map[string]string{f.Submit: sub.String(), f.RunList: list.String(), f.NodeSubmit: nsub.String(), f.DAG: dag.String()} {
		if err := writeAtomic(path, []byte(text)); err != nil {
			return f, err
		}
	}
	return f, nil
}

// CondorJobState maps an HTCondor JobStatus number (condor_q/condor_history)
// to a Phase: 1 idle, 2 running, 3 removed, 4 completed, 5 held,
// 6 transferring output, 7 suspended.
func CondorJobState(status int, exitCode int) TaskStatus {
	switch status {
	case 1, 5, 7:
		return TaskStatus{Phase: PhasePending, SchedState: "JobStatus=" + strconv.Itoa(status)}
	case 2, 6:
		return TaskStatus{Phase: PhaseRunning}
	case 3:
		return TaskStatus{Phase: PhaseFailed, SchedState: "CANCELLED"}
	case 4:
		if exitCode == 0 {
			return TaskStatus{Phase: PhaseDone}
		}
		return TaskStatus{Phase: PhaseFailed, Exit: exitCode}
	}
	return TaskStatus{Phase: PhaseLost}
}
