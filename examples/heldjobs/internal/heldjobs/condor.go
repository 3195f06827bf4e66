package heldjobs

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/condor"
)

// Condor writes a search as an HTCondor DAG for a pool without a shared
// file system (the OSPool, most campus pools). Everything the pool needs is
// under Dir:
//
//	heldjobs.dag          the DAG: parse, train_<run id> (one per point), select, cleanup
//	heldjobs              the executable (a copy of Executable), shipped with every job
//	spec.json             the validated spec, log paths reduced to their base names
//	parse.sub             builds the dataset: the logs come in with transfer_input_files,
//	                      parse/dataset/ (index.json and one .npz per shape) goes out
//	train.sub             one run: config.json, its shape's .npz and index.json come in;
//	                      run_<id>/ (result.json, metrics.jsonl) and model_<id>/ go out
//	select.sub            reads every run's result and writes select/best/bestmodel.info
//	                      and bestmodel.json
//	cleanup.sub           gathers everything into cleanup/results/: the tree a local
//	                      Search writes (ledger.db, work/, bestmodel/, bestmodel.info and
//	                      .json, tracking/), plus the nodes' logs under logs/
//
// Every node has its own job event log and a RETRY count (Spec.Retries).
// The parse, select and cleanup nodes stop retrying on exit 3 (UNLESS-EXIT
// 3: data with too few labelled jobs, no run to choose from; running them
// again cannot help). A training node's POST script (Executable node
// check) fails the node, so that it is retried, unless the run left a
// readable result and a model that loads; on the node's last attempt, and
// for a run that exits 3 (its loss diverged, which the same seed repeats),
// it records the run as failed (FailedFile) and lets the node succeed, and
// the search goes on without it, as it does on the other engines. Submit with
// condor_submit_dag heldjobs.dag; after a failure DAGMan's rescue DAG
// reruns only what did not finish. dagman.Run runs the same
// directory on this machine.
type Condor struct {
	Spec *Spec
	Dir  string
	// Executable is this program built for the execute points: a static
	// Linux binary (CGO_ENABLED=0), checked with condor.CheckStatic unless
	// AllowDynamic (for a pool whose execute points are known to have its
	// libraries, or for a local run).
	Executable   string
	AllowDynamic bool
	// Parse, Select and Cleanup are the nodes' resources; zero means 1
	// CPU, 2 GiB of memory and 4 GiB of disk. The training nodes ask for
	// Spec.Resources. A node's Time is its allowed_job_duration; the
	// spec's Account is every node's accounting_group (unless the node's
	// own resources name one).
	Parse, Select, Cleanup sweep.Resources
	// HoldLimit is how long a node job may stay on hold before it is
	// removed (periodic_remove), which fails the node so that DAGMan
	// retries it within Spec.Retries; zero means DefaultHoldLimit.
	HoldLimit time.Duration
}

// DefaultHoldLimit is how long a node job may stay on hold (over its
// memory request, over its time, an input that did not transfer) before
// it is removed and its node retried: long enough for a user who watches
// the DAG to condor_release a job held for a reason they can mend.
const DefaultHoldLimit = 30 * time.Minute

// CondorFiles are the paths Condor.Write produced.
type CondorFiles struct {
	DAG, Executable, Spec string
	Results               string // where the cleanup node leaves the tree
	Runs                  []string
}

// DAG exit value of a node that must not be retried (divergence, data).
const exitNoRetry = 3

// ExitNoRetry is the exit value of a node command that failed in a way a
// retry cannot mend: the DAG's RETRY ... UNLESS-EXIT value.
const ExitNoRetry = exitNoRetry

// Write writes the DAG directory; see Condor. Dir must be new or empty:
// a DAG directory is not rewritten under a running or finished DAG. The
// whole DAG is checked before anything is created (a refused DAG leaves
// nothing, and the same Dir takes a corrected spec), then written into a
// temporary sibling of Dir that is renamed to Dir at the end.
func (c *Condor) Write() (*CondorFiles, error) {
	if c.Spec == nil || c.Dir == "" || c.Executable == "" {
		panic("heldjobs: Condor needs Spec, Dir and Executable")
	}
	spec := *c.Spec
	if err := spec.Validate(); err != nil {
		return nil, err
	}
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
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("heldjobs: %s is not empty; write a DAG into a new directory", dir)
	}
	// The points and their run ids do not depend on the data.
	_, pts, err := spec.Sweep("")
	if err != nil {
		return nil, err
	}
	nodeSpec := spec
	nodeSpec.Data.Logs = nil
	for _, l := range logs {
		nodeSpec.Data.Logs = append(nodeSpec.Data.Logs, filepath.Base(l))
	}
	f := &CondorFiles{DAG: filepath.Join(dir, "heldjobs.dag"), Executable: filepath.Join(dir, "heldjobs"),
		Spec: filepath.Join(dir, "spec.json"), Results: filepath.Join(dir, "cleanup", "results")}
	js, err := json.MarshalIndent(&nodeSpec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}

	// The whole DAG is built and checked before anything is created, so a
	// refused DAG leaves nothing behind.
	def := func(r sweep.Resources) sweep.Resources {
		if r == (sweep.Resources{}) {
			return sweep.Resources{CPUs: 1, MemoryMB: 2048, DiskMB: 4096}
		}
		return r
	}
	parseRes, parseComment := def(c.Parse), "held-job search: build the tensors of every shape from the event logs"
	if c.Parse == (sweep.Resources{}) && logBytes > 0 {
		est := parseMemoryMB(logBytes, len(spec.Space.Shape))
		parseRes.MemoryMB = max(parseRes.MemoryMB, est)
		parseComment += fmt.Sprintf("; request_memory %d MB, the larger of %d and the estimate for the logs' %.1f MB and %d shape(s), 1.25 x (64 MB + 11 x log MB x shapes) = %d MB",
			parseRes.MemoryMB, def(sweep.Resources{}).MemoryMB, float64(logBytes)/(1<<20), len(spec.Space.Shape), est)
	}
	exe := f.Executable
	parseDir, selectDir, cleanupDir := filepath.Join(dir, "parse"), filepath.Join(dir, "select"), filepath.Join(dir, "cleanup")
	dataset := filepath.Join(parseDir, "dataset")
	dirs := []string{dataset, filepath.Join(selectDir, "best"), filepath.Join(cleanupDir, "results")}
	subs := map[string]*condor.Submit{
		filepath.Join(dir, "parse.sub"): {
			Comment:    parseComment,
			Executable: exe, Arguments: []string{"node", "parse", "-spec", "spec.json", "-out", "dataset"},
			InitialDir: parseDir, Inputs: append([]string{f.Spec, "dataset"}, logs...), Outputs: []string{"dataset"},
			Log: "parse.log", Output: "parse.out", Error: "parse.err", Resources: parseRes,
		},
		filepath.Join(dir, "train.sub"): {
			Comment:    "held-job search: train one point; the macros come from the node's VARS",
			Executable: exe, Arguments: []string{"node", "train", "-data", ".", "-model", "model_$(run_id)", "-retry", "$(retry)"},
			InitialDir: "$(dir)",
			Inputs: []string{"config.json", "run_$(run_id)", "model_$(run_id)", filepath.Join(dataset, IndexFile),
				filepath.Join(dataset, "$(shape_file)")},
			Outputs: []string{"run_$(run_id)", "model_$(run_id)"},
			Environment: []string{sweep.EnvRunID + "=$(run_id)", sweep.EnvRunDir + "=run_$(run_id)",
				sweep.EnvConfig + "=config.json", sweep.EnvHeartbeat + "=run_$(run_id)/heartbeat"},
			Log: "train_$(run_id).log", Output: "train_$(run_id).out", Error: "train_$(run_id).err", Resources: spec.Resources,
		},
	}
	dag := &condor.DAG{Submits: subs}
	dag.Nodes = append(dag.Nodes, condor.Node{Name: "parse", Submit: filepath.Join(dir, "parse.sub"),
		Retry: spec.Retries, UnlessExit: exitNoRetry})
	selInputs := []string{f.Spec, filepath.Join(dataset, IndexFile), "best"}
	cleanInputs := []string{f.Spec, filepath.Join(dataset, IndexFile), filepath.Join(selectDir, "best"), "results",
		filepath.Join(parseDir, "parse.log"), filepath.Join(parseDir, "parse.out"), filepath.Join(parseDir, "parse.err"),
		filepath.Join(selectDir, "select.log"), filepath.Join(selectDir, "select.out"), filepath.Join(selectDir, "select.err")}
	var trainNodes []string
	var tasks []sweep.Task
	for _, p := range pts {
		pt, err := PointOf(p.Params)
		if err != nil {
			return nil, err
		}
		rdir := filepath.Join(dir, "train", p.ID)
		dirs = append(dirs, filepath.Join(rdir, "run_"+p.ID), filepath.Join(rdir, "model_"+p.ID))
		tasks = append(tasks, sweep.Task{RunID: p.ID, Slug: p.Slug, Attempt: 1, Params: p.Params, Dir: rdir})
		name := "train_" + p.ID
		trainNodes = append(trainNodes, name)
		f.Runs = append(f.Runs, rdir)
		dag.Nodes = append(dag.Nodes, condor.Node{
			Name: name, Submit: filepath.Join(dir, "train.sub"),
			Vars:  [][2]string{{"dir", rdir}, {"run_id", p.ID}, {"shape_file", pt.Shape.String() + ".npz"}, {"retry", "$(RETRY)"}},
			Retry: spec.Retries,
			Post: []string{exe, "node", "check", "-return", "$RETURN", "-retry", "$RETRY", "-max-retries", "$MAX_RETRIES", "-id", p.ID,
				"-run", filepath.Join(rdir, "run_"+p.ID), "-model", filepath.Join(rdir, "model_"+p.ID)},
			Parents: []string{"parse"},
		})
		runDir, modelDir := filepath.Join(rdir, "run_"+p.ID), filepath.Join(rdir, "model_"+p.ID)
		selInputs = append(selInputs, runDir)
		cleanInputs = append(cleanInputs, runDir, modelDir, filepath.Join(rdir, "train_"+p.ID+".log"),
			filepath.Join(rdir, "train_"+p.ID+".out"), filepath.Join(rdir, "train_"+p.ID+".err"))
	}
	subs[filepath.Join(dir, "select.sub")] = &condor.Submit{
		Comment:    "held-job search: choose the best run by the spec's metric",
		Executable: exe, Arguments: []string{"node", "select", "-spec", "spec.json", "-index", IndexFile, "-runs", ".", "-out", "best"},
		InitialDir: selectDir, Inputs: selInputs, Outputs: []string{"best"},
		Log: "select.log", Output: "select.out", Error: "select.err", Resources: def(c.Select),
	}
	subs[filepath.Join(dir, "cleanup.sub")] = &condor.Submit{
		Comment:    "held-job search: gather every output into results/",
		Executable: exe, Arguments: []string{"node", "cleanup", "-spec", "spec.json", "-index", IndexFile, "-runs", ".", "-best", "best", "-out", "results"},
		InitialDir: cleanupDir, Inputs: cleanInputs, Outputs: []string{"results"},
		Log: "cleanup.log", Output: "cleanup.out", Error: "cleanup.err", Resources: def(c.Cleanup),
	}
	dag.Nodes = append(dag.Nodes,
		condor.Node{Name: "select", Submit: filepath.Join(dir, "select.sub"), Retry: spec.Retries, UnlessExit: exitNoRetry, Parents: slices.Clone(trainNodes)},
		condor.Node{Name: "cleanup", Submit: filepath.Join(dir, "cleanup.sub"), Retry: spec.Retries, UnlessExit: exitNoRetry, Parents: []string{"select"}},
	)
	// Each node's time limit, the accounting group and the hold limit.
	hold := cmp.Or(c.HoldLimit, DefaultHoldLimit)
	for _, sub := range subs {
		sub.AllowedJobDuration = sub.Resources.Time
		sub.AccountingGroup = cmp.Or(sub.Resources.Account, spec.Resources.Account)
		sub.RemoveHeldAfter = hold
	}
	if err := dag.Check(); err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}

	// Everything goes into a temporary sibling of dir, renamed to dir at
	// the end: an interrupted Write leaves no half-written DAG directory.
	// The files name their final paths; at maps one to where it is
	// written now.
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	at := func(p string) string { return filepath.Join(tmp, strings.TrimPrefix(p, dir)) }
	for _, d := range dirs {
		if err := os.MkdirAll(at(d), 0o755); err != nil {
			return nil, fmt.Errorf("heldjobs: %w", err)
		}
	}
	if err := copyFileExec(c.Executable, at(f.Executable)); err != nil {
		return nil, err
	}
	if err := writeAtomic(at(f.Spec), append(js, '\n')); err != nil {
		return nil, err
	}
	for _, t := range tasks {
		t.Dir = at(t.Dir)
		if err := t.Prepare(); err != nil {
			return nil, fmt.Errorf("heldjobs: %w", err)
		}
	}
	for p, sub := range subs {
		if err := writeAtomic(at(p), []byte(sub.SubmitText())); err != nil {
			return nil, err
		}
	}
	if err := writeAtomic(at(f.DAG), []byte(dag.DAGText())); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	// rename(2) replaces an empty directory.
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	ok = true
	return f, nil
}

// copyFileExec copies an executable.
func copyFileExec(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
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
