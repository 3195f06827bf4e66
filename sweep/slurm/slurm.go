package slurm

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crosscluster/crosscluster/internal/sh"
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/internal/atomicfile"
)

// Backend runs tasks as Slurm job arrays: one "sbatch --parsable
// --array=0-(N-1)%P" per submitted batch over a run-list file, each array
// task running Command in its attempt directory with the Env* variables.
// State comes from squeue (all states, so recently finished tasks are
// included), then from the job-completion log (jobcomp/filetxt) when
// accounting is off, then from sacct; the result file decides success.
// Cancel uses scancel.
type Backend struct {
	// Command is the worker program and arguments.
	Command []string
	// Dir receives the batch scripts and run lists (required).
	Dir string
	// Name prefixes the job names; empty means "sweep".
	Name string
	// MaxParallel is the array throttle P; ≤ 0 means no throttle.
	MaxParallel int
	// SignalBefore, when positive, asks Slurm to send SIGTERM to the batch
	// shell (the worker, which is exec'd) this long before the time limit
	// (sbatch --signal=B:TERM@seconds), so workers can checkpoint.
	SignalBefore time.Duration
	// JobCompLog is the job-completion log; empty means
	// defaultJobCompLog.
	JobCompLog string

	mu    sync.Mutex
	batch int
}

// defaultJobCompLog is where .ci/slurm-up.sh points jobcomp/filetxt.
const defaultJobCompLog = "/var/log/slurm/jobcomp.log"

// ErrCommand is wrapped by errors from Slurm commands.
var ErrCommand = errors.New("slurm command failed")

func (s *Backend) check() {
	if len(s.Command) == 0 || s.Dir == "" {
		panic("slurm: Backend needs Command and Dir")
	}
}

func runCmd(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// Killed because ctx ended: say so in a way errors.Is sees.
			return out, fmt.Errorf("slurm: %w: %s %s: %w", ErrCommand, name, strings.Join(args, " "), cerr)
		}
		return out, fmt.Errorf("slurm: %w: %s %s: %v: %s", ErrCommand, name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// batchScript returns the sbatch script that runs line
// SLURM_ARRAY_TASK_ID+1 of runList ("dir<TAB>run id<TAB>attempt"). Before
// running anything the task claims its attempt for this batch (claim.<batch>
// in the attempt directory, a symbolic link to the task's id): a claim a
// restarted controller made first ("fenced", see Backend.Adopt) means the
// batch was given up, and the task exits without running the worker. A
// task Slurm requeues finds its own claim and runs again.
func batchScript(command []string, runList, batch string) string {
	var argv []string
	for _, a := range command {
		argv = append(argv, sh.Quote(a))
	}
	return `#!/bin/sh
# crosscluster sweep array task: runs one line of the run list.
line=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" ` + sh.Quote(runList) + `)
dir=$(printf '%s\n' "$line" | cut -f1)
[ -n "$dir" ] || { echo "no run-list line for task $SLURM_ARRAY_TASK_ID" >&2; exit 2; }
id="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
claim="$dir/claim.` + batch + `"
if ! ln -s "$id" "$claim" 2>/dev/null && [ "$(readlink "$claim")" != "$id" ]; then
  echo "slurm $id: this attempt was given up before it started ($(readlink "$claim")); not running" >> "$dir/log"
  exit 0
fi
` + sweep.EnvRunID + `=$(printf '%s\n' "$line" | cut -f2)
` + sweep.EnvAttempt + `=$(printf '%s\n' "$line" | cut -f3)
` + sweep.EnvRunDir + `=$dir
` + sweep.EnvConfig + `=$dir/config.json
` + sweep.EnvHeartbeat + `=$dir/` + heartbeatFile + `
export ` + sweep.EnvRunID + ` ` + sweep.EnvAttempt + ` ` + sweep.EnvRunDir + ` ` + sweep.EnvConfig + ` ` + sweep.EnvHeartbeat + `
cd "$dir" || exit 2
echo "slurm $id on $(hostname)" >> "$dir/log"
exec ` + strings.Join(argv, " ") + ` >> "$dir/log" 2>&1
`
}

// slurmTime formats a time limit as sbatch --time takes it: minutes
// rounded up, as [D-]HH:MM:SS.
func slurmTime(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	days, s := s/86400, s%86400
	t := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if days > 0 {
		t = strconv.FormatInt(days, 10) + "-" + t
	}
	return t
}

// sbatchArgs returns the sbatch arguments for a batch of n tasks that ask
// for res; Slurm's own output of task i goes to <Dir>/<jobName>_<i>.out.
func (s *Backend) sbatchArgs(jobName string, n int, res sweep.Resources, script string) []string {
	arr := fmt.Sprintf("0-%d", n-1)
	if s.MaxParallel > 0 {
		arr += "%" + strconv.Itoa(s.MaxParallel)
	}
	// In --output a '%' starts one of Slurm's filename patterns: the
	// directory's own are written "%%".
	out := strings.ReplaceAll(filepath.Join(s.Dir, jobName), "%", "%%") + "_%a.out"
	args := []string{"--parsable", "--array=" + arr, "--job-name=" + jobName, "--output=" + out}
	if res.Partition != "" {
		args = append(args, "--partition="+res.Partition)
	}
	if res.Account != "" {
		args = append(args, "--account="+res.Account)
	}
	if res.Time > 0 {
		args = append(args, "--time="+slurmTime(res.Time))
	}
	if res.CPUs > 0 {
		args = append(args, "--cpus-per-task="+strconv.Itoa(res.CPUs))
	}
	if res.MemoryMB > 0 {
		args = append(args, "--mem="+strconv.Itoa(res.MemoryMB)+"M")
	}
	if res.GPUs > 0 {
		args = append(args, "--gres=gpu:"+strconv.Itoa(res.GPUs))
	}
	if s.SignalBefore > 0 {
		args = append(args, fmt.Sprintf("--signal=B:TERM@%d", int(s.SignalBefore.Seconds())))
	}
	return append(args, script)
}

// Submit writes a run list and batch script under Dir and submits them as
// job arrays: one per run of consecutive tasks asking for the same
// resources. Each task's backend id is "<array job id>_<index>"; its
// attempt directory gets slurm.out, a link to Slurm's own output for it.
// When ctx ends, Submit stops before the next sbatch (one under way is
// not killed: it may have submitted) and returns the ids of the tasks
// submitted.
func (s *Backend) Submit(ctx context.Context, tasks []sweep.Task) ([]string, error) {
	s.check()
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("slurm: slurm dir: %w", err)
	}
	var ids []string
	for start := 0; start < len(tasks); {
		end := start + 1
		for end < len(tasks) && tasks[end].Resources == tasks[start].Resources {
			end++
		}
		got, err := s.submitBatch(ctx, tasks[start:end])
		ids = append(ids, got...)
		if err != nil {
			return ids, err
		}
		start = end
	}
	return ids, nil
}

func (s *Backend) submitBatch(ctx context.Context, tasks []sweep.Task) ([]string, error) {
	s.mu.Lock()
	s.batch++
	name := fmt.Sprintf("%s-%d-%d", cmp.Or(s.Name, "sweep"), time.Now().UnixNano(), s.batch)
	s.mu.Unlock()
	if strings.ContainsRune(s.Dir, '\\') {
		// sbatch reads a backslash in --output as an escape: the tasks
		// could not open their output file and would fail (Slurm 22.05).
		return nil, fmt.Errorf("slurm: Slurm directory %q holds a backslash, which sbatch's --output reads as an escape: choose one without", s.Dir)
	}
	var list strings.Builder
	for i, t := range tasks {
		if strings.ContainsAny(t.Dir, "\t\n") {
			return nil, fmt.Errorf("slurm: run %s: attempt directory contains a tab or newline", t.RunID)
		}
		if err := t.Prepare(); err != nil {
			return nil, err
		}
		// Written before sbatch so a restarted controller can find the job
		// by name, or fence it (Adopt).
		if err := writeAtomic(filepath.Join(t.Dir, "batch"), fmt.Appendf(nil, "%s %d\n", name, i)); err != nil {
			return nil, err
		}
		out := filepath.Join(s.Dir, fmt.Sprintf("%s_%d.out", name, i))
		link := filepath.Join(t.Dir, "slurm.out")
		_ = os.Remove(link)
		if err := os.Symlink(out, link); err != nil {
			return nil, fmt.Errorf("slurm: run %s: %w", t.RunID, err)
		}
		fmt.Fprintf(&list, "%s\t%s\t%d\n", t.Dir, t.RunID, t.Attempt)
	}
	runList := filepath.Join(s.Dir, name+".list")
	script := filepath.Join(s.Dir, name+".sh")
	if err := writeAtomic(runList, []byte(list.String())); err != nil {
		return nil, err
	}
	if err := writeAtomic(script, []byte(batchScript(s.Command, runList, name))); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("slurm: slurm batch %s: not submitted: %w", name, err)
	}
	// sbatch is not killed when ctx ends: killed half-way it may have
	// submitted the array without our knowing its id.
	out, err := runCmd(context.WithoutCancel(ctx), "sbatch", s.sbatchArgs(name, len(tasks), tasks[0].Resources, script)...)
	if err != nil {
		return nil, err
	}
	jobID, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	if _, err := strconv.Atoi(jobID); err != nil {
		return nil, fmt.Errorf("slurm: %w: sbatch printed %q, not a job id", ErrCommand, out)
	}
	ids := make([]string, len(tasks))
	for i := range tasks {
		ids[i] = jobID + "_" + strconv.Itoa(i)
	}
	return ids, nil
}

type slurmState struct {
	state string
	exit  int
}

// squeueStates returns the state of every array task of the given array
// jobs that squeue still knows.
func squeueStates(ctx context.Context, jobs []string) (map[string]slurmState, error) {
	out := map[string]slurmState{}
	if len(jobs) == 0 {
		return out, nil
	}
	b, err := runCmd(ctx, "squeue", "-h", "-r", "--states=all", "-j", strings.Join(jobs, ","), "-o", "%i|%T")
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return out, nil
		}
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		id, st, ok := strings.Cut(strings.TrimSpace(sc.Text()), "|")
		if ok {
			out[id] = slurmState{state: st}
		}
	}
	return out, nil
}

// parseJobComp reads a jobcomp/filetxt log and returns the final state and
// exit code of each array task, keyed "<array job id>_<task id>" (and plain
// job ids for jobs outside arrays). Later lines win (requeued tasks).
func parseJobComp(b []byte) map[string]slurmState {
	out := map[string]slurmState{}
	for _, line := range strings.Split(string(b), "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		if f["JobState"] == "" {
			continue
		}
		key := f["JobId"]
		if a, t := f["ArrayJobId"], f["ArrayTaskId"]; a != "" && a != "0" && t != "" && t != "4294967294" {
			key = a + "_" + t
		}
		if key == "" {
			continue
		}
		code, _, _ := strings.Cut(f["ExitCode"], ":")
		n, _ := strconv.Atoi(code)
		out[key] = slurmState{state: f["JobState"], exit: n}
	}
	return out
}

// Poll reports on the tasks.
func (s *Backend) Poll(ctx context.Context, tasks []sweep.Task) ([]sweep.TaskStatus, error) {
	s.check()
	jobSet := map[string]bool{}
	var jobs []string
	for _, t := range tasks {
		j, _, _ := strings.Cut(t.BackendID, "_")
		if !jobSet[j] {
			jobSet[j] = true
			jobs = append(jobs, j)
		}
	}
	sq, err := squeueStates(ctx, jobs)
	if err != nil {
		return nil, err
	}
	var comp map[string]slurmState
	out := make([]sweep.TaskStatus, len(tasks))
	for i, t := range tasks {
		st, ok := sq[t.BackendID]
		if ok && isFinal(st.state) {
			// squeue has no exit code; prefer the completion record.
			if comp == nil {
				comp = s.jobComp(ctx, jobs)
			}
			if c, ok := comp[t.BackendID]; ok {
				st = c
			}
		}
		if !ok {
			if comp == nil {
				comp = s.jobComp(ctx, jobs)
			}
			st, ok = comp[t.BackendID]
		}
		if !ok {
			// Pending array tasks that end together (scancel of a pending
			// range) are reported once under the array job's own id.
			j, _, _ := strings.Cut(t.BackendID, "_")
			if st, ok = sq[j]; !ok {
				st, ok = comp[j]
			}
		}
		if !ok {
			out[i].State = "" // lost: Slurm has no trace of it
			continue
		}
		out[i] = slurmStatus(st)
		if out[i].State == sweep.Running {
			out[i].Heartbeat = heartbeatOf(t.Dir)
		}
	}
	return out, nil
}

func isFinal(state string) bool {
	switch state {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD":
		return false
	}
	return true
}

func slurmStatus(st slurmState) sweep.TaskStatus {
	switch st.state {
	case "PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD":
		return sweep.TaskStatus{State: sweep.Queued, SchedState: st.state}
	case "RUNNING", "COMPLETING", "SUSPENDED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED":
		return sweep.TaskStatus{State: sweep.Running, SchedState: st.state}
	case "COMPLETED":
		return sweep.TaskStatus{State: sweep.Completed, SchedState: st.state}
	}
	return sweep.TaskStatus{State: sweep.Failed, SchedState: st.state, Exit: st.exit}
}

// jobComp reads the completion log, or sacct when there is none.
func (s *Backend) jobComp(ctx context.Context, jobs []string) map[string]slurmState {
	if b, err := os.ReadFile(cmp.Or(s.JobCompLog, defaultJobCompLog)); err == nil {
		return parseJobComp(b)
	}
	out := map[string]slurmState{}
	b, err := runCmd(ctx, "sacct", "-n", "-P", "-X", "-j", strings.Join(jobs, ","), "-o", "JobID,State,ExitCode")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		p := strings.Split(line, "|")
		if len(p) != 3 {
			continue
		}
		code, _, _ := strings.Cut(p[2], ":")
		n, _ := strconv.Atoi(code)
		state, _, _ := strings.Cut(p[1], " ")
		out[p[0]] = slurmState{state: state, exit: n}
	}
	return out
}

// Cancel runs scancel on the tasks. A task that has already ended counts
// as stopped.
func (s *Backend) Cancel(ctx context.Context, tasks []sweep.Task) error {
	s.check()
	var ids []string
	for _, t := range tasks {
		if t.BackendID != "" {
			ids = append(ids, t.BackendID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := runCmd(ctx, "scancel", ids...)
	if err != nil && ctx.Err() == nil {
		msg := err.Error()
		if strings.Contains(msg, "already completing or completed") || strings.Contains(msg, "Invalid job id") {
			return nil
		}
	}
	return err
}

// Adopt reports under which id each task a previous controller left
// running still runs. A task with a recorded id keeps it (Slurm runs it on
// its own). One without (the controller died around sbatch) is looked up
// by its batch's job name in squeue and the job-completion log; if Slurm
// does not know it, its attempt is fenced (claim.<batch> in the attempt
// directory), so that an sbatch still under way runs nothing, unless the
// task has claimed it first, which gives its id.
func (s *Backend) Adopt(ctx context.Context, tasks []sweep.Task) ([]string, error) {
	s.check()
	ids := make([]string, len(tasks))
	var byName map[string]string
	for i, t := range tasks {
		if t.BackendID != "" {
			ids[i] = t.BackendID
			continue
		}
		b, err := os.ReadFile(filepath.Join(t.Dir, "batch"))
		if errors.Is(err, os.ErrNotExist) {
			continue // sbatch never ran for this attempt
		}
		if err != nil {
			return nil, fmt.Errorf("slurm: adopt run %s: %w", t.RunID, err)
		}
		var name string
		var idx int
		if _, err := fmt.Sscanf(string(b), "%s %d", &name, &idx); err != nil {
			return nil, fmt.Errorf("slurm: adopt run %s: %s: %w", t.RunID, filepath.Join(t.Dir, "batch"), err)
		}
		job := ""
		out, err := runCmd(ctx, "squeue", "-h", "--states=all", "-n", name, "-o", "%F")
		if err != nil {
			return nil, err
		}
		job, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
		if job == "" {
			if byName == nil {
				byName = s.jobsByName()
			}
			job = byName[name]
		}
		if job != "" {
			ids[i] = job + "_" + strconv.Itoa(idx)
			continue
		}
		claim := filepath.Join(t.Dir, "claim."+name)
		err = os.Symlink("fenced", claim)
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("slurm: adopt run %s: %w", t.RunID, err)
		}
		target, err := os.Readlink(claim)
		if err != nil {
			return nil, fmt.Errorf("slurm: adopt run %s: %w", t.RunID, err)
		}
		if target != "fenced" {
			ids[i] = target
		}
	}
	return ids, nil
}

// jobsByName maps job names to array job ids from the completion log.
func (s *Backend) jobsByName() map[string]string {
	out := map[string]string{}
	lb, err := os.ReadFile(cmp.Or(s.JobCompLog, defaultJobCompLog))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(lb), "\n") {
		var n, a string
		for _, kv := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(kv, "Name="); ok {
				n = v
			} else if v, ok := strings.CutPrefix(kv, "ArrayJobId="); ok {
				a = v
			}
		}
		if n != "" && a != "" && a != "0" {
			out[n] = a
		}
	}
	return out
}

// heartbeatFile is the file a worker touches (sweep.EnvHeartbeat names it).
const heartbeatFile = "heartbeat"

func heartbeatOf(dir string) time.Time {
	fi, err := os.Stat(filepath.Join(dir, heartbeatFile))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

func writeAtomic(path string, b []byte) error {
	if err := atomicfile.Write(path, b, true); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	return nil
}
