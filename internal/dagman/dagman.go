package dagman

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crosscluster/crosscluster/internal/lastline"
	"github.com/crosscluster/crosscluster/sweep/condor"
)

// Config configures Run.
type Config struct {
	// Parallel bounds the jobs running at once; ≤ 0 means 1.
	Parallel int
	// Progress, when not nil, gets a line per node attempt.
	Progress io.Writer
	// Evict, when not nil, is asked at every start of a node's job (start
	// counts from 0 within one attempt, checkpoint restarts included); a
	// positive answer evicts the job that long after it starts, if it is
	// still running: it is killed, its sandbox is lost, and it starts
	// again in a fresh one from its inputs and the checkpoint HTCondor
	// spooled at its last checkpoint exit, as the same attempt.
	Evict func(node string, start int) time.Duration
}

// Summary is what Run did.
type Summary struct {
	Done    []string // nodes that succeeded, in the order they finished
	Skipped []string // nodes a rescue file marked done
	Failed  []string // nodes that failed after their retries
	Retried int      // node attempts run again
	// Evicted counts the jobs evicted (Config.Evict), Checkpoints the
	// checkpoint exits (checkpoint_exit_code) whose files were spooled.
	Evicted, Checkpoints int
	Rescue               string // the rescue file written, if any
}

// ErrNode is wrapped by Run's error when a node fails for
// good.
var ErrNode = errors.New("DAG node failed")

// Run runs a DAG that condor.DAG.Write wrote on this machine, as
// DAGMan and an HTCondor pool without a shared file system would: nodes in
// dependency order (at most Parallel at once), each job in a fresh scratch
// directory holding only its transferred inputs and its executable, with
// only the submit file's environment (and _CONDOR_SCRATCH_DIR), standard
// output and error to the submit file's files, its listed outputs copied
// back to its initial directory when it exits (a listed output the job did
// not create fails the node, where a pool would hold the job), a job event
// log of submit (000), execute (001) and termination (005) events, then
// the node's POST script in the DAG file's directory with $JOB, $RETURN,
// $RETRY and $MAX_RETRIES. A failed node runs again up to its RETRY count
// unless it ended with its UNLESS-EXIT value; the nodes below a node that
// failed for good do not run, the others do. Like DAGMan, it then writes a
// rescue file, <dag>.rescueNNN, marking the nodes that succeeded DONE, and
// a later call skips them: a rerun resumes.
//
// Relative paths are DAGMan's: a submit file, an executable, an initial
// directory and a POST script relative to the DAG file's directory (as
// when condor_submit_dag runs there), inputs, outputs and logs relative
// to the initial directory. $(Cluster) and $(Process) in a submit file are
// the job's id.
//
// A job whose submit file sets checkpoint_exit_code and exits with it
// has its transfer_checkpoint_files (else transfer_output_files) spooled
// and starts again in the same sandbox, as HTCondor's self-checkpointing
// jobs do; an evicted job (Config.Evict) starts again in a fresh sandbox
// from its inputs with the spooled checkpoint on top, logging an eviction
// event (004) first. A job that runs longer than its allowed_job_duration
// (a number of seconds, or $CHOICE(retry, ...) of the node's retry number)
// is killed and held with code 46; with periodic_remove it is removed at
// once (a pool waits for the expression to become true) and the node
// fails with $RETURN -1002, so that RETRY applies.
//
// Only what condor.DAG writes is understood: any other DAG line, and any
// submit command that is neither one it honours nor one that only matters
// on a pool (requirements, +ProjectName, container_image, policy
// expressions; accepted and ignored), is an error wrapping
// condor.ErrInvalid, before anything runs. Cancelling ctx kills the
// running jobs and writes the rescue file.
func Run(ctx context.Context, dagPath string, opt Config) (Summary, error) {
	var sum Summary
	dagPath, err := filepath.Abs(dagPath)
	if err != nil {
		return sum, fmt.Errorf("dagman: %w", err)
	}
	nodes, err := readDAG(dagPath)
	if err != nil {
		return sum, err
	}
	order, err := (&condor.DAG{Nodes: nodes}).Order()
	if err != nil {
		return sum, err
	}
	subs := map[string]*parsedSubmit{}
	for _, n := range nodes {
		if subs[n.Submit] == nil {
			if subs[n.Submit], err = readSubmit(n.Submit); err != nil {
				return sum, err
			}
		}
	}
	done, last, err := readRescue(dagPath)
	if err != nil {
		return sum, err
	}
	for _, i := range order {
		if done[nodes[i].Name] {
			sum.Skipped = append(sum.Skipped, nodes[i].Name)
		}
	}
	r := &dagRun{nodes: nodes, subs: subs, dir: filepath.Dir(dagPath), opt: opt, done: done, state: make([]nodeState, len(nodes))}
	runErr := r.run(ctx, order, &sum)
	if len(sum.Failed) > 0 || runErr != nil {
		sum.Rescue = fmt.Sprintf("%s.rescue%03d", dagPath, last+1)
		var b strings.Builder
		fmt.Fprintf(&b, "# Rescue DAG file, written by dagman.Run for %s\n", dagPath)
		fmt.Fprintf(&b, "# Nodes failed: %s\n", strings.Join(sum.Failed, " "))
		for _, i := range order {
			if r.done[nodes[i].Name] {
				fmt.Fprintf(&b, "DONE %s\n", nodes[i].Name)
			}
		}
		if err := writeRescue(sum.Rescue, []byte(b.String())); err != nil {
			return sum, err
		}
	}
	if runErr != nil {
		return sum, runErr
	}
	if len(sum.Failed) > 0 {
		return sum, fmt.Errorf("dagman: %w: %s (rescue file %s)", ErrNode, strings.Join(sum.Failed, ", "), sum.Rescue)
	}
	return sum, nil
}

type nodeState int

const (
	nodeWaiting nodeState = iota
	nodeRunning
	nodeSucceeded
	nodeFailed
)

type dagRun struct {
	nodes []condor.Node
	subs  map[string]*parsedSubmit
	dir   string
	opt   Config

	mu    sync.Mutex
	done  map[string]bool
	state []nodeState
	jobID int
}

func (r *dagRun) say(format string, a ...any) {
	if r.opt.Progress != nil {
		r.mu.Lock()
		fmt.Fprintf(r.opt.Progress, format+"\n", a...)
		r.mu.Unlock()
	}
}

func (r *dagRun) run(ctx context.Context, order []int, sum *Summary) error {
	idx := map[string]int{}
	for i, n := range r.nodes {
		idx[n.Name] = i
		if r.done[n.Name] {
			r.state[i] = nodeSucceeded
		}
	}
	type result struct {
		i       int
		ok      bool
		retries int
		js      jobStats
	}
	ended := make(chan result)
	running := 0
	par := max(r.opt.Parallel, 1)
	var ctxErr error
	for {
		// Start every node whose parents all succeeded, in DAG order.
		if ctxErr == nil {
			for _, i := range order {
				if running >= par {
					break
				}
				if r.state[i] != nodeWaiting {
					continue
				}
				ready := true
				for _, p := range r.nodes[i].Parents {
					ready = ready && r.state[idx[p]] == nodeSucceeded
				}
				if !ready {
					continue
				}
				r.state[i] = nodeRunning
				running++
				go func(i int) {
					ok, retries, js := r.runNode(ctx, i)
					ended <- result{i, ok, retries, js}
				}(i)
			}
		}
		if running == 0 {
			break
		}
		res := <-ended
		running--
		sum.Retried += res.retries
		sum.Evicted += res.js.evicted
		sum.Checkpoints += res.js.checkpoints
		name := r.nodes[res.i].Name
		if res.ok {
			r.state[res.i] = nodeSucceeded
			r.mu.Lock()
			r.done[name] = true
			r.mu.Unlock()
			sum.Done = append(sum.Done, name)
		} else {
			r.state[res.i] = nodeFailed
			if ctx.Err() == nil {
				sum.Failed = append(sum.Failed, name)
			}
		}
		if ctx.Err() != nil && ctxErr == nil {
			ctxErr = fmt.Errorf("dagman: DAG %s: %w", r.dir, ctx.Err())
		}
	}
	return ctxErr
}

// jobStats counts what happened to a node's jobs.
type jobStats struct{ evicted, checkpoints int }

// runNode runs a node's attempts and reports whether it succeeded and how
// many times it was retried.
func (r *dagRun) runNode(ctx context.Context, i int) (bool, int, jobStats) {
	n := r.nodes[i]
	var js jobStats
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return false, attempt, js
		}
		code, why := r.runJob(ctx, n, attempt, &js)
		if ctx.Err() != nil {
			return false, attempt, js
		}
		if len(n.Post) > 0 {
			code, why = r.runPost(ctx, n, attempt, code, why)
		}
		if code == 0 {
			r.say("node %s: succeeded (attempt %d)", n.Name, attempt+1)
			return true, attempt, js
		}
		r.say("node %s: failed (attempt %d): %s", n.Name, attempt+1, why)
		if attempt >= n.Retry || (n.UnlessExit != 0 && code == n.UnlessExit) {
			return false, attempt, js
		}
	}
}

// maxStarts bounds the starts of one job (checkpoint restarts and
// evictions): a job that exits with its checkpoint code every time would
// otherwise run for ever.
const maxStarts = 10000

// runJob runs one attempt of the node's job and returns its exit value
// (non-zero and a reason when it could not run or its outputs are
// missing).
func (r *dagRun) runJob(ctx context.Context, n condor.Node, retry int, js *jobStats) (int, string) {
	ps := r.subs[n.Submit]
	r.mu.Lock()
	r.jobID++
	cluster := r.jobID
	r.mu.Unlock()
	macros := map[string]string{"JOB": n.Name, "RETRY": strconv.Itoa(retry),
		"Cluster": strconv.Itoa(cluster), "ClusterId": strconv.Itoa(cluster), "Process": "0", "ProcId": "0"}
	// DAGMan expands $(JOB) and $(RETRY) in VARS values.
	vr := strings.NewReplacer("$(JOB)", n.Name, "$(RETRY)", strconv.Itoa(retry))
	for _, kv := range n.Vars {
		macros[kv[0]] = vr.Replace(kv[1])
	}
	s, jx, err := ps.expand(macros)
	if err != nil {
		return 1, err.Error()
	}
	// The submit file's relative paths are relative to DAGMan's directory,
	// the job's relative to its initial directory.
	fromDAG := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(r.dir, p)
	}
	s.Executable, s.InitialDir = fromDAG(s.Executable), fromDAG(s.InitialDir)
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(s.InitialDir, p)
	}
	logf := &condorUserLog{path: abs(s.Log), cluster: cluster}
	logf.event(0, "Job submitted from host: <127.0.0.1:0?sock=sweep>")
	spool, err := os.MkdirTemp("", "condor-spool-*")
	if err != nil {
		return 1, err.Error()
	}
	defer os.RemoveAll(spool)
	stdout, err := os.Create(abs(s.Output))
	if err != nil {
		return 1, err.Error()
	}
	defer stdout.Close()
	stderr, err := os.Create(abs(s.Error))
	if err != nil {
		return 1, err.Error()
	}
	defer stderr.Close()
	var scratch string
	defer func() {
		if scratch != "" {
			os.RemoveAll(scratch)
		}
	}()
	code, signaled, why := 0, false, ""
	fresh := true
	for start := 0; ; start++ {
		if start >= maxStarts {
			return 1, fmt.Sprintf("the job started %d times without ending", start)
		}
		if fresh {
			// A new sandbox: the executable, the inputs, and on top of them
			// the spooled checkpoint, as HTCondor starts an evicted job.
			if scratch != "" {
				os.RemoveAll(scratch)
			}
			if scratch, err = r.sandbox(s, abs, spool); err != nil {
				return 1, err.Error()
			}
			fresh = false
		}
		cmd := exec.CommandContext(ctx, filepath.Join(scratch, filepath.Base(s.Executable)), s.Arguments...)
		cmd.Dir = scratch
		cmd.Env = append(slices.Clone(s.Environment), "_CONDOR_SCRATCH_DIR="+scratch)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		logf.event(1, "Job executing on host: <127.0.0.1:0?sock=sweep>")
		r.say("node %s: running %s %s (attempt %d, start %d)", n.Name, filepath.Base(s.Executable), strings.Join(s.Arguments, " "), retry+1, start+1)
		evicted, timedOut, err := runEvictable(cmd, r.evictAfter(n.Name, start), jx.limit)
		if ctx.Err() != nil {
			return 1, ctx.Err().Error()
		}
		if timedOut {
			// allowed_job_duration: "Jobs which exceed this duration will
			// go on hold, with hold code 46"; periodic_remove then removes
			// the held job (here at once), which DAGMan reports to the POST
			// script as $RETURN -1002.
			logf.event(12, fmt.Sprintf("Job was held.\n\tThe job exceeded allowed job duration of %d seconds\n\tCode %d Subcode 0", int(jx.limit.Seconds()), holdTimeLimit))
			if !jx.remove {
				return 1, "held for exceeding allowed_job_duration; without periodic_remove a pool keeps it on hold"
			}
			logf.event(9, "Job was aborted.\n\tremoved by periodic_remove after its hold")
			return removedReturn, fmt.Sprintf("held for exceeding allowed_job_duration (%v) and removed", jx.limit)
		}
		if evicted {
			js.evicted++
			logf.event(4, "Job was evicted.\n\t(0) Job was not checkpointed.")
			r.say("node %s: evicted (attempt %d, start %d)", n.Name, retry+1, start+1)
			fresh = true
			continue
		}
		code, signaled, why = 0, false, ""
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				return 1, err.Error()
			}
			code = ee.ExitCode()
			why = "exit " + strconv.Itoa(code)
			if code < 0 { // killed by a signal
				why, code, signaled = ee.String(), 1, true
			}
		}
		if jx.ckptCode != 0 && !signaled && code == jx.ckptCode {
			// A checkpoint: spool its files (replacing the last ones) and
			// start again in the same sandbox.
			if err := spoolFiles(scratch, spool, jx.ckptFiles); err != nil {
				return 1, "spooling the checkpoint: " + err.Error()
			}
			js.checkpoints++
			continue
		}
		break
	}
	// ON_EXIT: the outputs come back whatever the exit code.
	for _, out := range s.Outputs {
		src := filepath.Join(scratch, out)
		if _, err := os.Lstat(src); err != nil {
			logf.event(12, "Job was held.\n\tTransfer output files failure: "+out+" was not created")
			return 1, fmt.Sprintf("output %s was not created (a pool would hold the job)", out)
		}
		dst := abs(out)
		if err := os.RemoveAll(dst); err != nil {
			return 1, err.Error()
		}
		if err := copyPath(src, dst); err != nil {
			return 1, "transferring output " + out + ": " + err.Error()
		}
	}
	logf.terminated(code, signaled)
	return code, why
}

// evictAfter asks Config.Evict about a start.
func (r *dagRun) evictAfter(node string, start int) time.Duration {
	if r.opt.Evict == nil {
		return 0
	}
	return r.opt.Evict(node, start)
}

// sandbox makes a job's scratch directory: the executable, the inputs,
// and the spooled checkpoint's files over them.
func (r *dagRun) sandbox(s *condor.Submit, abs func(string) string, spool string) (string, error) {
	scratch, err := os.MkdirTemp("", "condor-scratch-*")
	if err != nil {
		return "", err
	}
	if err := copyPath(s.Executable, filepath.Join(scratch, filepath.Base(s.Executable))); err != nil {
		os.RemoveAll(scratch)
		return "", errors.New("transferring the executable: " + err.Error())
	}
	for _, in := range s.Inputs {
		src := strings.TrimSuffix(abs(in), "/")
		dst := filepath.Join(scratch, filepath.Base(src))
		if strings.HasSuffix(in, "/") {
			dst = scratch // a trailing slash transfers the contents
		}
		if err := copyPath(src, dst); err != nil {
			os.RemoveAll(scratch)
			return "", errors.New("transferring input " + in + ": " + err.Error())
		}
	}
	ents, err := os.ReadDir(spool)
	if err != nil {
		os.RemoveAll(scratch)
		return "", err
	}
	for _, e := range ents {
		dst := filepath.Join(scratch, e.Name())
		if err := os.RemoveAll(dst); err != nil {
			os.RemoveAll(scratch)
			return "", err
		}
		if err := copyPath(filepath.Join(spool, e.Name()), dst); err != nil {
			os.RemoveAll(scratch)
			return "", errors.New("transferring the checkpoint: " + err.Error())
		}
	}
	return scratch, nil
}

// spoolFiles replaces the spool's contents with the named files and
// directories of the sandbox.
func spoolFiles(scratch, spool string, names []string) error {
	ents, err := os.ReadDir(spool)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(spool, e.Name())); err != nil {
			return err
		}
	}
	for _, name := range names {
		if err := copyPath(filepath.Join(scratch, name), filepath.Join(spool, filepath.Base(name))); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// holdTimeLimit is the HoldReasonCode of a job that ran longer than its
// allowed_job_duration; removedReturn is the exit value DAGMan gives the
// POST script ($RETURN) of a job removed from the queue.
const (
	holdTimeLimit = 46
	removedReturn = -1002
)

// runEvictable runs cmd; after a positive evict it kills the process if
// it is still running and reports the eviction, and after a positive limit
// it kills it and reports that it ran out of time, whichever comes first.
func runEvictable(cmd *exec.Cmd, evict, limit time.Duration) (evicted, timedOut bool, err error) {
	if err := cmd.Start(); err != nil {
		return false, false, err
	}
	var mu sync.Mutex
	exited := false
	kill := func(flag *bool) func() {
		return func() {
			mu.Lock()
			defer mu.Unlock()
			if !exited && !evicted && !timedOut && cmd.Process.Kill() == nil {
				*flag = true
			}
		}
	}
	if evict > 0 {
		t := time.AfterFunc(evict, kill(&evicted))
		defer t.Stop()
	}
	if limit > 0 {
		t := time.AfterFunc(limit, kill(&timedOut))
		defer t.Stop()
	}
	err = cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	exited = true
	return evicted, timedOut, err
}

// runPost runs the node's POST script and returns its exit value.
func (r *dagRun) runPost(ctx context.Context, n condor.Node, retry, jobCode int, jobWhy string) (int, string) {
	repl := strings.NewReplacer("$JOB", n.Name, "$RETURN", strconv.Itoa(jobCode), "$RETRY", strconv.Itoa(retry),
		"$MAX_RETRIES", strconv.Itoa(n.Retry))
	argv := make([]string, len(n.Post))
	for i, a := range n.Post {
		argv[i] = repl.Replace(a)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return 0, ""
	}
	var ee *exec.ExitError
	code := 1
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		code = ee.ExitCode()
	}
	why := "POST script exit " + strconv.Itoa(code)
	if msg := lastline.Of(string(out)); msg != "" {
		why += ": " + msg
	} else if jobWhy != "" {
		why += " (job: " + jobWhy + ")"
	}
	return code, why
}

// condorUserLog writes a job event log in HTCondor's classic text format.
type condorUserLog struct {
	path    string
	cluster int
}

func (l *condorUserLog) event(code int, body string) {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%03d (%03d.000.000) %s %s\n...\n", code, l.cluster, time.Now().Format("2006-01-02 15:04:05"), body)
}

func (l *condorUserLog) terminated(code int, signaled bool) {
	if signaled {
		l.event(5, "Job terminated.\n\t(0) Abnormal termination (signal 9)\n\t(0) No core file")
		return
	}
	l.event(5, fmt.Sprintf("Job terminated.\n\t(1) Normal termination (return value %d)", code))
}

// parsedSubmit is a submit description as read back, macros unexpanded.
type parsedSubmit struct {
	path string
	cmds map[string]string
}

// submitCommands are the commands Run understands: those condor.Submit
// writes and the self-checkpointing ones it honours (true), and those that
// only matter on a pool, accepted and ignored (false): matchmaking,
// accounting, policy expressions, the container an execute point would
// run the job in. Job attributes (+Name, MY.Name) are accepted too.
var submitCommands = map[string]bool{
	"universe": true, "executable": true, "transfer_executable": true, "arguments": true, "initialdir": true,
	"should_transfer_files": true, "when_to_transfer_output": true, "transfer_input_files": true,
	"transfer_output_files": true, "output": true, "error": true, "log": true, "environment": true,
	"checkpoint_exit_code": true, "transfer_checkpoint_files": true,
	"request_cpus": false, "request_memory": false, "request_disk": false, "request_gpus": false,
	"requirements": false, "rank": false, "container_image": false, "accounting_group": false,
	"accounting_group_user": false, "retry_request_memory": false, "retry_request_memory_increase": false, "retry_request_memory_max": false,
	"allowed_job_duration": true, "allowed_execute_duration": false, "periodic_remove": true,
	"periodic_hold": false, "periodic_release": false, "on_exit_hold": false, "on_exit_remove": false,
	"priority": false, "batch_name": false, "notification": false, "notify_user": false,
	"job_max_vacate_time": false, "concurrency_limits": false, "max_transfer_input_mb": false,
	"max_transfer_output_mb": false, "gpus_minimum_capability": false, "gpus_maximum_capability": false,
	"gpus_minimum_memory": false, "require_gpus": false,
}

// jobAttr is a job ClassAd attribute set in a submit file.
var jobAttr = regexp.MustCompile(`^(\+|my\.)[a-z_][a-z0-9_.]*$`)

func readSubmit(path string) (*parsedSubmit, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dagman: %w: %w", condor.ErrInvalid, err)
	}
	ps := &parsedSubmit{path: path, cmds: map[string]string{}}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	queued := false
	for i, ln := range lines {
		ln = strings.TrimSpace(ln)
		switch {
		case ln == "" || strings.HasPrefix(ln, "#"):
			continue
		case queued:
			return nil, fmt.Errorf("dagman: %w: %s:%d: text after queue", condor.ErrInvalid, path, i+1)
		case ln == "queue":
			queued = true
			continue
		}
		k, v, ok := strings.Cut(ln, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if _, known := submitCommands[k]; !ok || !known && !jobAttr.MatchString(k) {
			return nil, fmt.Errorf("dagman: %w: %s:%d: %q is not a submit command the local runner understands", condor.ErrInvalid, path, i+1, ln)
		}
		ps.cmds[k] = v
	}
	if !queued {
		return nil, fmt.Errorf("dagman: %w: %s: no queue statement", condor.ErrInvalid, path)
	}
	for k, want := range map[string]string{"universe": "vanilla", "should_transfer_files": "YES", "when_to_transfer_output": "ON_EXIT"} {
		if ps.cmds[k] != want {
			return nil, fmt.Errorf("dagman: %w: %s: %s = %q, the local runner needs %s", condor.ErrInvalid, path, k, ps.cmds[k], want)
		}
	}
	for _, k := range []string{"executable", "initialdir", "output", "error", "log"} {
		if ps.cmds[k] == "" {
			return nil, fmt.Errorf("dagman: %w: %s: no %s", condor.ErrInvalid, path, k)
		}
	}
	return ps, nil
}

var submitMacro = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// jobExtras are the commands beyond condor.Submit's fields that Run
// honours.
type jobExtras struct {
	ckptCode  int      // checkpoint_exit_code, 0 when unset
	ckptFiles []string // transfer_checkpoint_files, else transfer_output_files
	// limit is allowed_job_duration (an integer of seconds, or
	// $CHOICE(index, item, ...) of them); remove says a held job is
	// removed (periodic_remove is set), at once here.
	limit  time.Duration
	remove bool
}

// choice evaluates HTCondor's $CHOICE(index, item1, item2, ...) function
// macro, the index a macro name or an integer, items counted from 0; any
// other value is returned unchanged.
func choice(v string, macros map[string]string) (string, error) {
	inner, ok := strings.CutPrefix(v, "$CHOICE(")
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, ")")
	items := strings.Split(inner, ",")
	if !ok || len(items) < 2 {
		return "", fmt.Errorf("%q: want $CHOICE(index, item1, item2, ...)", v)
	}
	idx := strings.TrimSpace(items[0])
	if m, ok := macros[idx]; ok {
		idx = m
	}
	i, ok := atoiOK(idx)
	if !ok || i < 0 || i >= len(items)-1 {
		return "", fmt.Errorf("%q: index %s is out of the list's bounds", v, idx)
	}
	return strings.TrimSpace(items[i+1]), nil
}

// expand returns the job's description with the node's macros substituted.
func (ps *parsedSubmit) expand(macros map[string]string) (*condor.Submit, jobExtras, error) {
	var jx jobExtras
	var missing []string
	get := func(k string) string {
		return submitMacro.ReplaceAllStringFunc(ps.cmds[k], func(m string) string {
			name := submitMacro.FindStringSubmatch(m)[1]
			v, ok := macros[name]
			if !ok {
				missing = append(missing, name)
			}
			return v
		})
	}
	list := func(k string) []string {
		var out []string
		for f := range strings.SplitSeq(get(k), ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	s := &condor.Submit{Executable: get("executable"), InitialDir: get("initialdir"), Inputs: list("transfer_input_files"),
		Outputs: list("transfer_output_files"), Log: get("log"), Output: get("output"), Error: get("error")}
	if a := get("arguments"); a != "" {
		args, err := parseCondorArgs(a)
		if err != nil {
			return nil, jx, fmt.Errorf("dagman: %w: %s: arguments: %w", condor.ErrInvalid, ps.path, err)
		}
		s.Arguments = args
	}
	if e := get("environment"); e != "" {
		s.Environment = strings.Fields(strings.Trim(e, `"`))
	}
	if c := get("checkpoint_exit_code"); c != "" {
		n, ok := atoiOK(c)
		if !ok || n <= 0 || n > 255 {
			return nil, jx, fmt.Errorf("dagman: %w: %s: checkpoint_exit_code %q is not an exit code from 1 to 255", condor.ErrInvalid, ps.path, c)
		}
		jx.ckptCode, jx.ckptFiles = n, list("transfer_checkpoint_files")
		if len(jx.ckptFiles) == 0 {
			jx.ckptFiles = s.Outputs
		}
	}
	if d := get("allowed_job_duration"); d != "" {
		v, err := choice(d, macros)
		n, ok := atoiOK(v)
		if err != nil {
			return nil, jx, fmt.Errorf("dagman: %w: %s: allowed_job_duration %q: %v", condor.ErrInvalid, ps.path, d, err)
		}
		if !ok || n <= 0 {
			return nil, jx, fmt.Errorf("dagman: %w: %s: allowed_job_duration %q is not a positive number of seconds", condor.ErrInvalid, ps.path, d)
		}
		jx.limit = time.Duration(n) * time.Second
	}
	jx.remove = ps.cmds["periodic_remove"] != ""
	if len(missing) > 0 {
		return nil, jx, fmt.Errorf("dagman: %w: %s: undefined macros %v", condor.ErrInvalid, ps.path, missing)
	}
	return s, jx, nil
}

// parseCondorArgs reads the "new syntax" of arguments that condorArgs
// writes: the whole value in double quotes, arguments in single quotes
// with ” for a quote and "" for a double quote.
func parseCondorArgs(v string) ([]string, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, errors.New("not in double quotes")
	}
	v = strings.ReplaceAll(v[1:len(v)-1], `""`, `"`)
	var out []string
	for i := 0; i < len(v); {
		switch {
		case v[i] == ' ':
			i++
		case v[i] == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(v); j++ {
				if v[j] == '\'' {
					if j+1 < len(v) && v[j+1] == '\'' {
						b.WriteByte('\'')
						j++
						continue
					}
					break
				}
				b.WriteByte(v[j])
			}
			if j >= len(v) {
				return nil, errors.New("unterminated single quote")
			}
			out = append(out, b.String())
			i = j + 1
		default:
			j := strings.IndexByte(v[i:], ' ')
			if j < 0 {
				j = len(v) - i
			}
			out = append(out, v[i:i+j])
			i += j
		}
	}
	return out, nil
}

// readDAG reads a DAG file of JOB, VARS, SCRIPT POST, RETRY and PARENT ...
// CHILD lines.
func readDAG(path string) ([]condor.Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dagman: %w: %w", condor.ErrInvalid, err)
	}
	defer f.Close()
	var nodes []condor.Node
	idx := map[string]int{}
	node := func(name string, line int) (*condor.Node, error) {
		i, ok := idx[name]
		if !ok {
			return nil, fmt.Errorf("dagman: %w: %s:%d: node %s not defined by a JOB line before", condor.ErrInvalid, path, line, name)
		}
		return &nodes[i], nil
	}
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		bad := fmt.Errorf("dagman: %w: %s:%d: %q is not a DAG line the local runner understands", condor.ErrInvalid, path, ln, sc.Text())
		switch fs[0] {
		case "JOB":
			if len(fs) != 3 {
				return nil, bad
			}
			if _, dup := idx[fs[1]]; dup {
				return nil, fmt.Errorf("dagman: %w: %s:%d: node %s defined twice", condor.ErrInvalid, path, ln, fs[1])
			}
			sub := fs[2]
			if !filepath.IsAbs(sub) {
				sub = filepath.Join(filepath.Dir(path), sub)
			}
			idx[fs[1]] = len(nodes)
			nodes = append(nodes, condor.Node{Name: fs[1], Submit: sub})
		case "VARS":
			if len(fs) < 3 {
				return nil, bad
			}
			n, err := node(fs[1], ln)
			if err != nil {
				return nil, err
			}
			for _, kv := range fs[2:] {
				k, v, ok := strings.Cut(kv, "=")
				val, quoted := unquoteVar(v)
				if !ok || !quoted || !condorMacro.MatchString(k) {
					return nil, bad
				}
				n.Vars = append(n.Vars, [2]string{k, val})
			}
		case "RETRY":
			if len(fs) != 3 && !(len(fs) == 5 && fs[3] == "UNLESS-EXIT") {
				return nil, bad
			}
			n, err := node(fs[1], ln)
			if err != nil {
				return nil, err
			}
			var ok bool
			if n.Retry, ok = atoiOK(fs[2]); !ok || n.Retry < 0 {
				return nil, bad
			}
			if len(fs) == 5 {
				if n.UnlessExit, ok = atoiOK(fs[4]); !ok {
					return nil, bad
				}
			}
		case "SCRIPT":
			if len(fs) < 4 || fs[1] != "POST" {
				return nil, bad
			}
			n, err := node(fs[2], ln)
			if err != nil {
				return nil, err
			}
			n.Post = fs[3:]
		case "PARENT":
			c := slices.Index(fs, "CHILD")
			if c < 2 || c == len(fs)-1 {
				return nil, bad
			}
			for _, child := range fs[c+1:] {
				n, err := node(child, ln)
				if err != nil {
					return nil, err
				}
				for _, p := range fs[1:c] {
					if _, err := node(p, ln); err != nil {
						return nil, err
					}
					n.Parents = append(n.Parents, p)
				}
			}
		default:
			return nil, bad
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dagman: %w: %s: %w", condor.ErrInvalid, path, err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("dagman: %w: %s has no JOB line", condor.ErrInvalid, path)
	}
	return nodes, nil
}

// readRescue reads the newest rescue file of a DAG: the nodes marked DONE
// and its number (0 when there is none).
func readRescue(dagPath string) (map[string]bool, int, error) {
	done := map[string]bool{}
	matches, _ := filepath.Glob(dagPath + ".rescue[0-9][0-9][0-9]")
	if len(matches) == 0 {
		return done, 0, nil
	}
	sort.Strings(matches)
	last := matches[len(matches)-1]
	n, _ := strconv.Atoi(last[len(last)-3:])
	b, err := os.ReadFile(last)
	if err != nil {
		return nil, 0, fmt.Errorf("dagman: %w: %w", condor.ErrInvalid, err)
	}
	for i, ln := range strings.Split(string(b), "\n") {
		fs := strings.Fields(ln)
		switch {
		case len(fs) == 0 || strings.HasPrefix(fs[0], "#"):
		case len(fs) == 2 && fs[0] == "DONE":
			done[fs[1]] = true
		default:
			return nil, 0, fmt.Errorf("dagman: %w: %s:%d: %q is not a rescue line the local runner understands", condor.ErrInvalid, last, i+1, ln)
		}
	}
	return done, n, nil
}

// copyPath copies a file (keeping its mode) or a directory tree.
func copyPath(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return copyFileMode(src, dst, fi.Mode().Perm())
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		return copyFileMode(p, target, info.Mode().Perm())
	})
}

// copyFileMode copies a file with no fork of this process in between the
// copy's open and close (see holdForks): the copy may be an executable the
// runner, or a job, starts next.
func copyFileMode(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	release := holdForks()
	defer release()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// unquoteVar reads one VARS value as the DAG file has it.
func unquoteVar(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	return v[1 : len(v)-1], true
}

func atoiOK(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// condorMacro is a submit macro's or DAG variable's name.
var condorMacro = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// writeRescue writes a rescue file through a temporary file and a rename,
// so a reader never sees half of one.
func writeRescue(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o666); err != nil {
		return fmt.Errorf("dagman: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("dagman: %w", err)
	}
	return nil
}
