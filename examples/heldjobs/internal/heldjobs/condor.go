package heldjobs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/condor"
)

// Condor writes a search as an HTCondor DAG for a pool without a shared
// file system (the OSPool, most campus pools). Everything the pool needs is
// under Dir, and every path in the files is relative to Dir, so the
// directory can be moved or copied to another access point and submitted
// there (cd Dir && condor_submit_dag heldjobs.dag, or condor_submit_dag
// -usedagdir Dir/heldjobs.dag):
//
//	heldjobs.dag          the DAG: parse, train_<run id> (one per point), select, cleanup
//	heldjobs              the executable (a copy of Executable), shipped with every job
//	spec.json             the validated spec, log paths reduced to their base names
//	eventlogs/            a copy of every input event log
//	parse.sub             builds the dataset: the logs come in with transfer_input_files,
//	                      parse/dataset/ (index.json and one .npz per shape) goes out
//	train.sub             one run: config.json, its shape's .npz and index.json come in;
//	                      run_<id>/ (result.json, metrics.jsonl, the checkpoint) and
//	                      model_<id>/ go out
//	select.sub            reads every run's result and writes select/best/bestmodel.info
//	                      and bestmodel.json
//	cleanup.sub           gathers everything into cleanup/results/: the tree a local
//	                      Search writes (ledger.db, work/, bestmodel/, bestmodel.info and
//	                      .json, tracking/), plus the nodes' logs under logs/
//
// Each node keeps its job event log and every attempt's standard output
// and error in <node>.logs/ beside its outputs (<node>.retry<N>.<cluster>.out
// and .err: a retry does not overwrite the attempt before it). Every node
// has a RETRY count (Spec.Retries). The parse, select and cleanup nodes stop
// retrying on exit 3 (UNLESS-EXIT 3: data with too few labelled jobs, no
// run to choose from; running them again cannot help). A training node's
// POST script (Executable node check) fails the node, so that it is
// retried, unless the run left a readable result and a model that loads;
// on the node's last attempt, and for a run that exits 3 (its loss
// diverged, which the same seed repeats), it records the run as failed
// (FailedFile) and lets the node succeed, and the search goes on without
// it, as it does on the other engines; the cleanup node then fails,
// naming every failed point, unless the spec allows failures.
//
// A training job checkpoints after every epoch and, once it has run for
// the spec's condor.checkpoint interval, exits with ExitCheckpoint, the
// submit file's checkpoint_exit_code: HTCondor stores run_<id>/ (its
// transfer_checkpoint_files) and starts the job again, which continues
// from its checkpoint; an evicted job restarts from the last checkpoint
// stored, and a retried node from the checkpoint its failed attempt
// brought back. A node with a time limit is retried with the limit
// multiplied by the spec's condor.time_retry factor on each retry
// (allowed_job_duration = $CHOICE(retry, ...)).
//
// After a failure DAGMan's rescue DAG reruns only what did not finish.
// Writing a larger spec into the same Dir extends the DAG: the new points'
// nodes are added, the runs that finished are kept (a rescue file marks
// their nodes DONE) and only the rest, select and cleanup run again.
// dagman.Run runs the same directory on this machine.
type Condor struct {
	Spec *Spec
	Dir  string
	// Executable is this program built for the execute points: a static
	// Linux binary (CGO_ENABLED=0), checked with condor.CheckStatic unless
	// AllowDynamic (for a pool whose execute points are known to have its
	// libraries, or for a local run).
	Executable   string
	AllowDynamic bool
}

// CondorFiles are the paths Condor.Write produced.
type CondorFiles struct {
	DAG, Executable, Spec string
	Results               string   // where the cleanup node leaves the tree
	Runs                  []string // every point's run directory
	// Reused are the run ids of an extended DAG whose finished runs are
	// kept (their nodes marked DONE), in point order.
	Reused []string
}

// DAG exit value of a node that must not be retried (divergence, data).
const exitNoRetry = 3

// ExitNoRetry is the exit value of a node command that failed in a way a
// retry cannot mend: the DAG's RETRY ... UNLESS-EXIT value.
const ExitNoRetry = exitNoRetry

// ExitCheckpoint is the exit value of a training job that stopped after
// storing its checkpoint so that HTCondor transfers it
// (checkpoint_exit_code); started again, it continues from it. 85 is the
// value of the HTCondor manual's examples.
const ExitCheckpoint = 85

// condorDefaults are the parse, select and cleanup nodes' resources when
// the spec gives none.
var condorDefaults = sweep.Resources{CPUs: 1, MemoryMB: 2048, DiskMB: 4096}

// The DAG directory's fixed names.
const (
	dagFile      = "heldjobs.dag"
	exeFile      = "heldjobs"
	specFile     = "spec.json"
	eventLogsDir = "eventlogs"
)

// Write writes the DAG directory; see Condor. Dir must be new or empty, or
// hold a DAG written from a spec that differs only in its space and random
// keys (and its pool settings): then the DAG is extended. The whole DAG is
// checked before anything is created (a refused DAG leaves nothing, and
// the same Dir takes a corrected spec); a new DAG is written into a
// temporary sibling of Dir that is renamed to Dir at the end.
func (c *Condor) Write() (*CondorFiles, error) {
	if c.Spec == nil || c.Dir == "" || c.Executable == "" {
		panic("heldjobs: Condor needs Spec, Dir and Executable")
	}
	spec := *c.Spec
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Prune.Rule != "" {
		return nil, &SpecError{Key: "prune", Err: fmt.Errorf("%w: the DAG runs every point to its end; prune on -backend local, process or slurm", ErrSpec)}
	}
	pool := spec.Condor.withDefaults()
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	if !c.AllowDynamic {
		if err := condor.CheckStatic(c.Executable); err != nil {
			return nil, fmt.Errorf("heldjobs: %w", err)
		}
	}
	// The logs travel with the parse job and arrive under their base
	// names: two with the same base name would overwrite each other.
	var logs []string
	var logBytes int64
	seen := map[string]string{}
	for _, l := range spec.Data.Logs {
		abs, err := filepath.Abs(l)
		if err != nil {
			return nil, fmt.Errorf("heldjobs: %w", err)
		}
		fi, err := os.Stat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("heldjobs: %w: data.logs: %s is not a readable file", ErrSpec, l)
		}
		logBytes += fi.Size()
		b := filepath.Base(abs)
		if other, dup := seen[b]; dup {
			return nil, fmt.Errorf("heldjobs: %w: data.logs: %s and %s have the same base name, and HTCondor transfers files by base name", ErrSpec, other, l)
		}
		seen[b] = l
		logs = append(logs, abs)
	}
	nodeSpec := spec
	nodeSpec.Data.Logs = nil
	for _, l := range logs {
		nodeSpec.Data.Logs = append(nodeSpec.Data.Logs, filepath.Base(l))
	}
	var prev *Spec
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		if prev, err = c.extensible(dir, &nodeSpec, logs); err != nil {
			return nil, err
		}
	}
	// The points and their run ids do not depend on the data.
	_, pts, err := spec.Sweep("")
	if err != nil {
		return nil, err
	}
	f := &CondorFiles{DAG: filepath.Join(dir, dagFile), Executable: filepath.Join(dir, exeFile),
		Spec: filepath.Join(dir, specFile), Results: filepath.Join(dir, "cleanup", "results")}
	js, err := json.MarshalIndent(&nodeSpec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}

	// The whole DAG is built and checked before anything is created, so a
	// refused DAG leaves nothing behind. Every path is relative: submit
	// files, the executable, initial directories and POST scripts to Dir
	// (DAGMan's working directory), a job's files to its initial
	// directory.
	res := func(r sweep.Resources) sweep.Resources {
		r.CPUs = cmp.Or(r.CPUs, condorDefaults.CPUs)
		r.MemoryMB = cmp.Or(r.MemoryMB, condorDefaults.MemoryMB)
		r.DiskMB = cmp.Or(r.DiskMB, condorDefaults.DiskMB)
		return r
	}
	parseRes, parseComment := res(pool.Parse.Resources), "held-job search: build the tensors of every shape from the event logs"
	if pool.Parse.Resources.MemoryMB == 0 && logBytes > 0 {
		est := parseMemoryMB(logBytes, len(spec.Space.shapes()))
		parseRes.MemoryMB = max(parseRes.MemoryMB, est)
		parseComment += fmt.Sprintf("; request_memory %d MB, the larger of %d and the estimate for the logs' %.1f MB and %d shape(s), 1.25 x (64 MB + 11 x log MB x shapes) = %d MB",
			parseRes.MemoryMB, condorDefaults.MemoryMB, float64(logBytes)/(1<<20), len(spec.Space.shapes()), est)
	}
	exe := exeFile
	dataset := filepath.Join("parse", "dataset")
	dirs := []string{dataset, "parse/parse.logs", "select/best", "select/select.logs", "cleanup/results", "cleanup/cleanup.logs", eventLogsDir}
	// streams names a node's event log and its attempts' output and error.
	streams := func(s *condor.Submit, node string) {
		s.Log = filepath.Join(node+".logs", node+".log")
		s.Output = filepath.Join(node+".logs", node+".retry$(retry).$(Cluster).out")
		s.Error = filepath.Join(node+".logs", node+".retry$(retry).$(Cluster).err")
	}
	parseInputs := []string{filepath.Join("..", specFile), "dataset"}
	for _, l := range logs {
		parseInputs = append(parseInputs, filepath.Join("..", eventLogsDir, filepath.Base(l)))
	}
	subs := map[string]*condor.Submit{
		"parse.sub": {
			Comment:    parseComment,
			Executable: exe, Arguments: []string{"node", "parse", "-spec", specFile, "-out", "dataset"},
			InitialDir: "parse", Inputs: parseInputs, Outputs: []string{"dataset"}, Resources: parseRes,
		},
		"train.sub": {
			Comment:    "held-job search: train one point; the macros come from the node's VARS",
			Executable: exe, Arguments: []string{"node", "train", "-data", ".", "-model", "model_$(run_id)", "-retry", "$(retry)",
				"-checkpoint-every", pool.Checkpoint.String()},
			InitialDir: "$(dir)",
			Inputs: []string{"config.json", "run_$(run_id)", "model_$(run_id)", filepath.Join("..", "..", dataset, IndexFile),
				filepath.Join("..", "..", dataset, "$(shape_file)")},
			Outputs: []string{"run_$(run_id)", "model_$(run_id)"},
			Environment: []string{sweep.EnvRunID + "=$(run_id)", sweep.EnvRunDir + "=run_$(run_id)",
				sweep.EnvConfig + "=config.json", sweep.EnvHeartbeat + "=run_$(run_id)/heartbeat"},
			Resources: spec.Resources,
			Extra:     [][2]string{{"checkpoint_exit_code", strconv.Itoa(ExitCheckpoint)}, {"transfer_checkpoint_files", "run_$(run_id)"}},
		},
	}
	streams(subs["parse.sub"], "parse")
	streams(subs["train.sub"], "train_$(run_id)")
	retryVar := [2]string{"retry", "$(RETRY)"}
	dag := &condor.DAG{Submits: subs}
	dag.Nodes = append(dag.Nodes, condor.Node{Name: "parse", Submit: "parse.sub", Vars: [][2]string{retryVar},
		Retry: spec.Retries, UnlessExit: exitNoRetry})
	selInputs := []string{filepath.Join("..", specFile), filepath.Join("..", dataset, IndexFile), "best"}
	cleanInputs := []string{filepath.Join("..", specFile), filepath.Join("..", dataset, IndexFile), filepath.Join("..", "select", "best"), "results",
		filepath.Join("..", "parse", "parse.logs"), filepath.Join("..", "select", "select.logs")}
	var trainNodes, again []string
	var tasks []sweep.Task
	done := map[string]bool{}
	for _, p := range pts {
		pt, err := PointOf(p.Params)
		if err != nil {
			return nil, err
		}
		rdir := filepath.Join("train", p.ID)
		run, model, logsDir := filepath.Join(rdir, "run_"+p.ID), filepath.Join(rdir, "model_"+p.ID), filepath.Join(rdir, "train_"+p.ID+".logs")
		name := "train_" + p.ID
		f.Runs = append(f.Runs, filepath.Join(dir, rdir))
		switch {
		case prev != nil && CheckRun(p.ID, filepath.Join(dir, run), filepath.Join(dir, model)) == nil:
			done[name] = true
			f.Reused = append(f.Reused, p.ID)
		case prev != nil && dirExists(filepath.Join(dir, rdir)):
			// An unfinished run keeps its directory (and its checkpoint);
			// one that failed for good is tried again.
			again = append(again, filepath.Join(run, FailedFile))
		default:
			dirs = append(dirs, run, model, logsDir)
			tasks = append(tasks, sweep.Task{RunID: p.ID, Slug: p.Slug, Attempt: 1, Params: p.Params, Dir: rdir})
		}
		trainNodes = append(trainNodes, name)
		post := []string{"./" + exe, "node", "check", "-return", "$RETURN", "-retry", "$RETRY", "-max-retries", "$MAX_RETRIES", "-id", p.ID,
			"-run", run, "-model", model}
		if pool.NoTimeRetry {
			post = append(post, "-log", filepath.Join(logsDir, name+".log"), "-no-time-retry")
		}
		dag.Nodes = append(dag.Nodes, condor.Node{
			Name: name, Submit: "train.sub",
			Vars:  [][2]string{{"dir", rdir}, {"run_id", p.ID}, {"shape_file", pt.Shape.String() + ".npz"}, retryVar},
			Retry: spec.Retries, Post: post, Parents: []string{"parse"},
		})
		up := filepath.Join("..", rdir)
		selInputs = append(selInputs, filepath.Join("..", run))
		cleanInputs = append(cleanInputs, filepath.Join(up, "run_"+p.ID), filepath.Join(up, "model_"+p.ID), filepath.Join(up, "train_"+p.ID+".logs"))
	}
	subs["select.sub"] = &condor.Submit{
		Comment:    "held-job search: choose the best run by the spec's metric",
		Executable: exe, Arguments: []string{"node", "select", "-spec", specFile, "-index", IndexFile, "-runs", ".", "-out", "best"},
		InitialDir: "select", Inputs: selInputs, Outputs: []string{"best"}, Resources: res(pool.Select.Resources),
	}
	subs["cleanup.sub"] = &condor.Submit{
		Comment:    "held-job search: gather every output into results/",
		Executable: exe, Arguments: []string{"node", "cleanup", "-spec", specFile, "-index", IndexFile, "-runs", ".", "-best", "best", "-out", "results"},
		InitialDir: "cleanup", Inputs: cleanInputs, Outputs: []string{"results"}, Resources: res(pool.Cleanup.Resources),
	}
	streams(subs["select.sub"], "select")
	streams(subs["cleanup.sub"], "cleanup")
	dag.Nodes = append(dag.Nodes,
		condor.Node{Name: "select", Submit: "select.sub", Vars: [][2]string{retryVar}, Retry: spec.Retries, UnlessExit: exitNoRetry, Parents: slices.Clone(trainNodes)},
		condor.Node{Name: "cleanup", Submit: "cleanup.sub", Vars: [][2]string{retryVar}, Retry: spec.Retries, UnlessExit: exitNoRetry, Parents: []string{"select"}},
	)
	// Each node's time limit, accounting group, hold limit and the
	// spec's submit commands.
	for _, kind := range poolKinds {
		sub := subs[kind+".sub"]
		sub.AccountingGroup = cmp.Or(sub.Resources.Account, spec.Resources.Account)
		sub.RemoveHeldAfter = pool.HoldLimit
		sub.Extra = append(mergeSubmit(pool.Submit, pool.node(kind).Submit), sub.Extra...)
		timeLimit(sub, sub.Resources.Time, spec.Retries, pool)
	}
	if prev != nil && fileExists(filepath.Join(dir, dataset, IndexFile)) {
		had, err := pointShapes(prev)
		if err != nil {
			return nil, err
		}
		want, err := pointShapes(&spec)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(want, func(s Shape) bool { return !slices.Contains(had, s) }) {
			done["parse"] = true // the dataset already holds every shape
		}
	}
	if err := dag.Check(); err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	w := &dagWriter{dir: dir, prev: prev != nil}
	return f, w.write(c.Executable, append(js, '\n'), logs, dirs, again, tasks, dag, done)
}

// timeLimit sets a node's allowed_job_duration: t, or with retries and a
// time factor other than 1 the limit of each retry, t x factor^retry,
// chosen by the node's retry number ($CHOICE(retry, ...)).
func timeLimit(sub *condor.Submit, t time.Duration, retries int, pool PoolSpec) {
	if t <= 0 {
		return
	}
	if retries == 0 || pool.TimeFactor == 1 || pool.NoTimeRetry {
		sub.AllowedJobDuration = t
		return
	}
	limits := make([]string, retries+1)
	for k := range limits {
		limits[k] = strconv.FormatInt(int64(math.Ceil(t.Seconds()*math.Pow(pool.TimeFactor, float64(k)))), 10)
	}
	sub.Extra = append(sub.Extra, [2]string{"allowed_job_duration", "$CHOICE(retry, " + strings.Join(limits, ", ") + ")"})
}

// extensible checks that dir holds a DAG that the spec can extend: written
// from a spec that differs only in the space, random draws and pool
// settings, from the same logs. It returns the DAG's spec.
func (c *Condor) extensible(dir string, nodeSpec *Spec, logs []string) (*Spec, error) {
	prev, err := readNodeSpec(filepath.Join(dir, specFile))
	if err != nil || !fileExists(filepath.Join(dir, dagFile)) {
		return nil, fmt.Errorf("heldjobs: %s is not empty and holds no DAG to extend; write a DAG into a new directory", dir)
	}
	fixed := func(s Spec) ([]byte, error) {
		s.Space, s.Random, s.Condor, s.Resources, s.Retries, s.AllowFailed = Space{}, 0, nil, sweep.Resources{}, 0, false
		return json.Marshal(&s)
	}
	a, err := fixed(*prev)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	b, err := fixed(*nodeSpec)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	if !bytes.Equal(a, b) {
		return nil, fmt.Errorf("heldjobs: %w: %s holds a DAG of a spec that differs in more than space, random and the pool settings (data, epochs, metric, ...); write into a new directory", ErrSpec, dir)
	}
	for _, l := range logs {
		fi, err1 := os.Stat(l)
		fc, err2 := os.Stat(filepath.Join(dir, eventLogsDir, filepath.Base(l)))
		if err1 != nil || err2 != nil || fi.Size() != fc.Size() {
			return nil, fmt.Errorf("heldjobs: %w: data.logs: %s changed since the DAG in %s was written; write into a new directory", ErrSpec, l, dir)
		}
	}
	return prev, nil
}

// dagWriter writes a DAG directory: a new one into a temporary sibling
// renamed into place at the end, an extended one in place, file by file,
// each atomically.
type dagWriter struct {
	dir  string
	prev bool // extending
	root string
}

func (w *dagWriter) at(rel string) string { return filepath.Join(w.root, rel) }

// write writes the directory: dirs to create, again the failed.json files
// of the runs an extension tries again.
func (w *dagWriter) write(exe string, spec []byte, logs, dirs, again []string, tasks []sweep.Task, dag *condor.DAG, done map[string]bool) error {
	w.root = w.dir
	if !w.prev {
		parent := filepath.Dir(w.dir)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
		tmp, err := os.MkdirTemp(parent, "."+filepath.Base(w.dir)+".tmp*")
		if err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
		defer os.RemoveAll(tmp) // gone after the rename
		w.root = tmp
	}
	for _, d := range dirs {
		if err := os.MkdirAll(w.at(d), 0o755); err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
	}
	if !w.prev {
		for _, l := range logs {
			if err := copyFileMode(l, w.at(filepath.Join(eventLogsDir, filepath.Base(l))), 0o644); err != nil {
				return err
			}
		}
	} else {
		// What the last run of select and cleanup left, and the rescue
		// files of the DAG before: DAGMan would read the newest.
		for _, d := range []string{"select/best", "cleanup/results"} {
			if err := os.RemoveAll(w.at(d)); err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
			if err := os.MkdirAll(w.at(d), 0o755); err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
		}
		old, _ := filepath.Glob(w.at(dagFile) + ".rescue*")
		for _, o := range old {
			if err := os.Remove(o); err != nil {
				return fmt.Errorf("heldjobs: %w", err)
			}
		}
		for _, f := range again {
			if err := os.Remove(w.at(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("heldjobs: %w", err)
			}
		}
	}
	if err := copyFileMode(exe, w.at(exeFile), 0o755); err != nil {
		return err
	}
	if err := writeAtomic(w.at(specFile), spec); err != nil {
		return err
	}
	for _, t := range tasks {
		t.Dir = w.at(t.Dir)
		if err := t.Prepare(); err != nil {
			return fmt.Errorf("heldjobs: %w", err)
		}
	}
	for p, sub := range dag.Submits {
		if err := writeAtomic(w.at(p), []byte(sub.SubmitText())); err != nil {
			return err
		}
	}
	if len(done) > 0 {
		// DAGMan's rescue file marks the finished nodes DONE; condor_submit_dag
		// reads the newest rescue file with the DAG.
		var b strings.Builder
		fmt.Fprintf(&b, "# Rescue DAG of an extended search, written by heldjobs: the nodes whose runs finished before\n")
		for _, n := range dag.Nodes {
			if done[n.Name] {
				fmt.Fprintf(&b, "DONE %s\n", n.Name)
			}
		}
		if err := writeAtomic(w.at(dagFile+".rescue001"), []byte(b.String())); err != nil {
			return err
		}
	}
	if err := writeAtomic(w.at(dagFile), []byte(dag.DAGText())); err != nil {
		return err
	}
	if w.prev {
		return nil
	}
	if err := os.Chmod(w.root, 0o755); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	// rename(2) replaces an empty directory.
	if err := os.Rename(w.root, w.dir); err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	return nil
}

// pointShapes returns the shapes of a spec's points.
func pointShapes(s *Spec) ([]Shape, error) {
	_, pts, err := s.Sweep("")
	if err != nil {
		return nil, err
	}
	var out []Shape
	for _, p := range pts {
		pt, err := PointOf(p.Params)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, pt.Shape) {
			out = append(out, pt.Shape)
		}
	}
	return out, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// copyFileMode copies a file with the given mode, through a temporary
// file and a rename.
func copyFileMode(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("heldjobs: %w", err)
	}
	return nil
}

// readNodeSpec reads the spec.json Condor.Write wrote.
func readNodeSpec(path string) (*Spec, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("heldjobs: %w: %s: %v", ErrSpec, path, err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// parseMemoryMB estimates the parse node's memory from the size of its
// input logs: the peak resident set of "heldjobs node parse" grew by about
// 10.4 MB per MB of log for one 10x10x60s shape over 34 MB (synthetic
// global logs of 7.2, 28.9 and 86.6 MB peaked at 109, 330 and 932 MB;
// docs/heldjobs.md gives the commands). The estimate takes 11 MB per MB
// for every shape, whose tensors parse holds at once, over 64 MB, with a
// quarter on top, so that a multi-day global log is not held for memory.
func parseMemoryMB(logBytes int64, shapes int) int {
	mb := float64(logBytes) / (1 << 20)
	return int(math.Ceil(1.25 * (64 + 11*mb*float64(max(shapes, 1)))))
}
