package condor

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/crosscluster/crosscluster/sweep"
)

// Condor writes HTCondor input for a batch of tasks, for pools without a
// shared file system (the OSPool, most campus pools): a submit file whose
// "queue ... from runs.txt" statement starts one job per task, and a DAG
// with one node per task and a RETRY line, for DAGMan to retry failed
// nodes. HTCondor could not be installed where this was written, so
// nothing here calls condor_submit; the tests check every line against the
// HTCondor manual (condor_submit(1), "Submitting jobs without a shared file
// system"; DAGMan's JOB, VARS and RETRY).
//
// Each job runs Command (transferred to the execute point, so it must run
// there: a static binary, CGO_ENABLED=0 for Go) in its scratch directory,
// which HTCondor fills from the attempt directory: config.json and an
// empty directory out/. The job's environment points the worker there:
// SWEEP_CONFIG=config.json, SWEEP_RUN_DIR=out, SWEEP_HEARTBEAT=out/heartbeat.
// The worker writes result.json and metrics.jsonl into out/, which is
// transferred back on exit to <attempt dir>/out: a directory,
// because a listed output file that a failed job did not write would put
// the job on hold, while a directory that exists (it came with the input)
// never does. Standard output and error go to <attempt dir>/log and
// log.err, and each job has its own event log, <attempt dir>/condor.log.
type Batch struct {
	Command []string
	// Dir receives the generated files.
	Dir string
	// Defaults are the resources of a task that asks for none; HTCondor
	// pools want request_cpus, request_memory and request_disk on every
	// job, so zero fields here mean 1 CPU, 1024 MiB of memory and
	// 1024 MiB of disk.
	Defaults sweep.Resources
	// Retries is the DAG's RETRY count per node.
	Retries int
}

// batchFiles are the paths Batch.Write writes.
type batchFiles struct {
	Submit, RunList, NodeSubmit, DAG string
}

const condorOut = "out"

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

// resources returns what a task asks for, with the pool defaults.
func (c *Batch) resources(t sweep.Task) sweep.Resources {
	r := over(over(poolDefaults, c.Defaults), t.Resources)
	return r
}

func (c *Batch) common(b *strings.Builder) {
	b.WriteString("universe = vanilla\n")
	fmt.Fprintf(b, "executable = %s\n", c.Command[0])
	b.WriteString("transfer_executable = true\n")
	if len(c.Command) > 1 {
		fmt.Fprintf(b, "arguments = %s\n", condorArgs(c.Command[1:]))
	}
	b.WriteString("initialdir = $(dir)\n")
	b.WriteString("should_transfer_files = YES\n")
	b.WriteString("when_to_transfer_output = ON_EXIT\n")
	fmt.Fprintf(b, "transfer_input_files = config.json, %s\n", condorOut)
	fmt.Fprintf(b, "transfer_output_files = %s\n", condorOut)
	b.WriteString("output = log\n")
	b.WriteString("error = log.err\n")
	b.WriteString("log = condor.log\n")
	fmt.Fprintf(b, "environment = \"%s=$(run_id) %s=$(attempt) %s=%s %s=config.json %s=%s/%s\"\n",
		sweep.EnvRunID, sweep.EnvAttempt, sweep.EnvRunDir, condorOut, sweep.EnvConfig, sweep.EnvHeartbeat, condorOut, "heartbeat")
	b.WriteString("request_cpus = $(cpus)\n")
	b.WriteString("request_memory = $(memory_mb)\n")
	b.WriteString("request_disk = $(disk_kb)\n")
	b.WriteString("request_gpus = $(gpus)\n")
}

// Write prepares the tasks' attempt directories (config.json and an empty
// out/) and writes under Dir: sweep.sub (the submit file, one job per line
// of runs.txt, for condor_submit), runs.txt, node.sub (the submit file of
// one DAG node) and sweep.dag (for condor_submit_dag). Paths with
// characters that HTCondor's queue-from lists cannot carry (spaces, commas,
// quotes) are an error naming the run.
func (c *Batch) Write(tasks []sweep.Task) error {
	if len(c.Command) == 0 || c.Dir == "" {
		panic("condor: Batch needs Command and Dir")
	}
	f := batchFiles{
		Submit:     filepath.Join(c.Dir, "sweep.sub"),
		RunList:    filepath.Join(c.Dir, "runs.txt"),
		NodeSubmit: filepath.Join(c.Dir, "node.sub"),
		DAG:        filepath.Join(c.Dir, "sweep.dag"),
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return fmt.Errorf("condor: %w", err)
	}
	var list, dag strings.Builder
	for _, t := range tasks {
		if !condorSafe.MatchString(t.Dir) {
			return fmt.Errorf("condor: run %s: attempt directory %q has characters HTCondor queue lists cannot hold", t.RunID, t.Dir)
		}
		if err := t.Prepare(); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(t.Dir, condorOut), 0o755); err != nil {
			return fmt.Errorf("condor: run %s: %w", t.RunID, err)
		}
		r := c.resources(t)
		// request_disk is in KiB.
		fmt.Fprintf(&list, "%s, %s, %d, %d, %d, %d, %d\n", t.Dir, t.RunID, t.Attempt, r.CPUs, r.MemoryMB, r.DiskMB*1024, r.GPUs)
		node := "run_" + t.RunID
		fmt.Fprintf(&dag, "JOB %s %s\n", node, f.NodeSubmit)
		fmt.Fprintf(&dag, "VARS %s dir=\"%s\" run_id=\"%s\" attempt=\"%d\" cpus=\"%d\" memory_mb=\"%d\" disk_kb=\"%d\" gpus=\"%d\"\n",
			node, t.Dir, t.RunID, t.Attempt, r.CPUs, r.MemoryMB, r.DiskMB*1024, r.GPUs)
		fmt.Fprintf(&dag, "RETRY %s %d\n", node, c.Retries)
	}
	var sub, nsub strings.Builder
	sub.WriteString("# crosscluster sweep: one job per line of runs.txt\n")
	c.common(&sub)
	fmt.Fprintf(&sub, "queue dir, run_id, attempt, cpus, memory_mb, disk_kb, gpus from %s\n", f.RunList)
	nsub.WriteString("# crosscluster sweep: one DAG node; the macros come from its VARS line\n")
	c.common(&nsub)
	nsub.WriteString("queue\n")
	for path, text := range map[string]string{f.Submit: sub.String(), f.RunList: list.String(), f.NodeSubmit: nsub.String(), f.DAG: dag.String()} {
		if err := writeAtomic(path, []byte(text)); err != nil {
			return err
		}
	}
	return nil
}

// poolDefaults are the requests of a job that asks for nothing: HTCondor
// pools want request_cpus, request_memory and request_disk on every job.
var poolDefaults = sweep.Resources{CPUs: 1, MemoryMB: 1024, DiskMB: 1024}

// over returns r with the non-zero fields of o.
func over(r, o sweep.Resources) sweep.Resources {
	r.CPUs = cmp.Or(o.CPUs, r.CPUs)
	r.GPUs = cmp.Or(o.GPUs, r.GPUs)
	r.MemoryMB = cmp.Or(o.MemoryMB, r.MemoryMB)
	r.DiskMB = cmp.Or(o.DiskMB, r.DiskMB)
	r.Time = cmp.Or(o.Time, r.Time)
	r.Partition = cmp.Or(o.Partition, r.Partition)
	r.Account = cmp.Or(o.Account, r.Account)
	return r
}
