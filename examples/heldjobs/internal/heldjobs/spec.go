package heldjobs

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/walk"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/sweep"
	"go.yaml.in/yaml/v3"
)

// Metric is what chooses the best run of a search, and the best epoch of
// each run (early stopping watches it on the validation set).
type Metric string

// The metrics a spec may name.
const (
	F1        Metric = "f1"
	Precision Metric = "precision"
	Recall    Metric = "recall"
	Accuracy  Metric = "accuracy"
	ROCAUC    Metric = "roc_auc"
	ValidLoss Metric = "valid_loss"
)

// Metrics lists the metrics in the order the documentation gives them.
func Metrics() []Metric { return []Metric{F1, Precision, Recall, Accuracy, ROCAUC, ValidLoss} }

// Lower reports whether smaller values of m are better (validation loss).
func (m Metric) Lower() bool { return m == ValidLoss }

// Key is the name of the run metric (in result.json and the ledger) that
// holds m on the validation set: "valid_f1", ..., "valid_loss".
func (m Metric) Key() string {
	if m == ValidLoss {
		return "valid_loss"
	}
	return "valid_" + string(m)
}

func (m Metric) valid() bool { return slices.Contains(Metrics(), m) }

// Shape is one way of building the tensors: J jobs per sample (the held
// job and J-1 co-existing ones), M frames of length Frame.
type Shape struct {
	J, M  int
	Frame time.Duration
}

// String is the shape's literal in specs and file names, "10x10x60s".
func (s Shape) String() string {
	f := s.Frame.String()
	if s.Frame%time.Second == 0 {
		f = strconv.FormatInt(int64(s.Frame/time.Second), 10) + "s"
	}
	return fmt.Sprintf("%dx%dx%s", s.J, s.M, f)
}

// ParseShape reads a shape literal "JxMxFRAME" (FRAME a Go duration). J
// and M are 1 to 1000, the frame at least 1s, and the window M×FRAME at
// most ten years (87600h).
func ParseShape(lit string) (Shape, error) {
	parts := strings.Split(lit, "x")
	if len(parts) != 3 {
		return Shape{}, fmt.Errorf("%w: shape %q: want JxMxFRAME, as 10x10x60s", ErrSpec, lit)
	}
	j, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	f, err3 := time.ParseDuration(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return Shape{}, fmt.Errorf("%w: shape %q: want JxMxFRAME, as 10x10x60s", ErrSpec, lit)
	}
	sh := Shape{J: j, M: m, Frame: f}
	if err := sh.check(); err != nil {
		return Shape{}, fmt.Errorf("%w: shape %q: %s", ErrSpec, lit, err)
	}
	return sh, nil
}

// check says what is wrong with a shape, or nil.
func (s Shape) check() error {
	switch {
	case s.J < 1 || s.M < 1 || s.J > maxShapeDim || s.M > maxShapeDim || s.Frame < time.Second:
		return fmt.Errorf("want J and M from 1 to %d and a frame of at least 1s, as 10x10x60s", maxShapeDim)
	case s.Frame > maxWindow/time.Duration(s.M):
		return fmt.Errorf("%d frames of %s span more than %s (ten years), the longest window", s.M, s.Frame, maxWindow)
	}
	return nil
}

// maxShapeDim bounds J and M: a tensor of J×M×E floats per sample must fit.
const maxShapeDim = 1000

// maxWindow bounds a shape's window M×Frame: ten years of 365 days, longer
// than any pool keeps its logs, and far below the 292 years an int64 of
// nanoseconds holds, so that eventlog.Builder and Decide, which compute the
// window's start as a time.Duration, cannot overflow.
const maxWindow = 10 * 365 * 24 * time.Hour

// Space is the search space: every combination of the lists' values is a
// point. Beyond lists, a parameter may be searched only where another has
// some value, or drawn from a distribution (spec_space.go): each parameter
// (shape, hidden, layers, lr, batch, and model when the cell is searched)
// is defined by its list, by Axes with disjoint conditions, or by Dists.
type Space struct {
	Shape        []Shape
	Hidden       []int
	Layers       []int
	LearningRate []float64
	Batch        []int
	// Model lists the recurrent cells searched, "lstm" and "gru", as the
	// first grid axis; empty means Spec.Model for every run.
	Model []string `json:",omitempty"`
	// Axes are conditional grid axes in sweep's vocabulary: sweep.Axis
	// with Key a parameter of the space and When naming parameters before
	// it (model, shape, hidden, layers, lr, batch, in that order).
	Axes []sweep.Axis `json:",omitempty"`
	// Dists are drawn parameters (sweep.Dist: uniform or log_uniform for
	// lr, int_uniform for hidden, layers, batch, choice for any). With
	// one, the search draws every parameter Spec.Random times
	// (sweep.Samples seeded with Data.Seed; lists and Axes as choices) and
	// a repeated draw is run once.
	Dists []sweep.Dist `json:",omitempty"`
}

// Size is the number of points of the grid, or math.MaxInt when that
// number does not fit in an int (the product is checked before each
// multiplication, so it never wraps around). A space with Model or Axes is
// counted by expanding it (0 when it is not valid); a space with Dists
// has no grid, and its size is 0: the search draws Spec.Random points.
func (s Space) Size() int {
	if s.extended() {
		if len(s.Dists) > 0 {
			return 0
		}
		n, err := (&Spec{Space: s}).spaceSpec(&sweep.Spec{Name: "size"})
		if err != nil {
			return 0
		}
		return n
	}
	n := 1
	for _, k := range []int{len(s.Shape), len(s.Hidden), len(s.Layers), len(s.LearningRate), len(s.Batch)} {
		if k == 0 {
			return 0
		}
		if n > math.MaxInt/k {
			return math.MaxInt
		}
		n *= k
	}
	return n
}

// Synthetic asks for a generated schedd-wide event log instead of real
// logs (internal/synth), cut at the time of its Snapshot quantile event.
type Synthetic struct {
	Jobs     int
	Seed     uint64
	Snapshot float64
}

// Data says where the tensors come from and how they are split.
type Data struct {
	// Logs are HTCondor event log files (rotations of one log, or the
	// logs of several schedds); empty means Synthetic.
	Logs      []string
	Synthetic Synthetic
	// E is the number of event types (one-hot width per job).
	E int
	// Forward frames forward from each job's first event (eventlog's
	// Forward mode, which leaks the label) instead of the window ending at
	// the first hold.
	Forward bool
	// Train and Valid are the fractions of the labelled jobs in the
	// training and validation sets; the rest is the test set.
	Train, Valid float64
	// Seed seeds the split, the choice of context jobs, the weights and
	// the mini-batches.
	Seed uint64
}

// Spec is a held-job hyperparameter search: the data, the space, the
// training budget and the metric that chooses the best run. It runs
// unchanged on every engine (Run with a sweep backend, WriteCondor).
type Spec struct {
	Name   string
	Data   Data
	Space  Space
	Random int // draws without replacement from the grid; 0 means the whole grid
	// Epochs and Patience bound each run's training (early stopping on
	// Metric, measured on the validation set after every epoch).
	Epochs, Patience int
	Metric           Metric
	Threshold        float64 // P(release) at or above which a job is released
	Engine           string  // "native" (float64) or "native32"
	// Model is the recurrent cell, "lstm" or "gru" (lstm.GRU, which
	// always trains in float64); empty means lstm.
	Model string `json:",omitempty"`
	// Resources of each training run: on Slurm --cpus-per-task, --mem,
	// --time, --partition, --account; on HTCondor request_cpus,
	// request_memory, request_disk, request_gpus, allowed_job_duration
	// (Time) and accounting_group (Account, on every node); Partition is
	// Slurm's only.
	Resources sweep.Resources
	// Retries is the number of extra attempts of a run that fails for a
	// reason other than its data (killed, lost, out of memory, timed out):
	// the sweep's retry budget, and the DAG's RETRY count, 0 to 100. -1
	// means DefaultRetries (LoadSpec sets it when the spec has no retries
	// key); in a Spec built in Go, 0 means no retry, and any other
	// negative value is refused.
	Retries int
	// Prune stops runs that cannot catch up before their last epoch
	// (sweep's pruners on the validation curve of Metric); the zero value
	// prunes nothing.
	Prune Prune `json:",omitzero"`
	// AllowFailed lets a search some of whose runs failed for good succeed
	// with the best of the rest (a pruned run has not failed). Without it the search writes its outputs
	// and then returns an error wrapping ErrFailedRuns that names every run
	// that failed for good, so that a lost run cannot silently change which
	// model is chosen.
	AllowFailed bool
	// Condor is what the HTCondor DAG's files ask of a pool (PoolSpec);
	// nil means the defaults. The other engines ignore it.
	Condor *PoolSpec `json:",omitempty"`
}

// Defaults of a spec.
const (
	DefaultEpochs    = 40
	DefaultPatience  = 8
	DefaultThreshold = 0.5
	DefaultRetries   = 2
	defaultJobs      = 20000
	defaultSnapshot  = 0.9
)

// ErrSpec is wrapped by every error about a search spec.
var ErrSpec = errors.New("bad search spec")

// SpecError is a malformed spec; Key names the key ("space.hidden[1]").
type SpecError struct {
	Key string
	Err error
}

func (e *SpecError) Error() string { return "spec key " + e.Key + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

func specErr(key, format string, a ...any) error {
	return &SpecError{Key: key, Err: fmt.Errorf("%w: "+format, append([]any{ErrSpec}, a...)...)}
}

// LoadSpec reads a YAML search spec:
//
//	name: published                 # optional
//	data:
//	  logs: [EventLog.old, EventLog] # HTCondor event logs, or
//	  synthetic: {jobs: 20000, seed: 1, snapshot: 0.9}
//	  e: 46                          # event types (default 46)
//	  forward: false                 # default: frames end at the first hold
//	  split: [0.6, 0.2]              # train, validation (rest: test)
//	  seed: 1
//	space:
//	  shape: [10x10x60s, 10x5x120s]  # J x M x FRAME
//	  hidden: [32, 64]
//	  layers: [1, 2]
//	  lr: [1e-3, 3e-3]
//	  batch: [64, 256]
//	random: 16                       # draws from the grid (0: all of it)
//	epochs: 40
//	patience: 8
//	metric: f1                       # f1 precision recall accuracy roc_auc valid_loss
//	threshold: 0.5
//	engine: native                   # or native32
//	model: lstm                      # or gru
//	resources: {cpus: 1, memory: 2G, disk: 4G, time: 2h}
//	retries: 2
//	prune: {rule: asha, min_epochs: 1, eta: 3}  # or {rule: median, warmup: 2, startup: 5}
//
// Each parameter of the space may also be a range, a distribution or a
// conditional definition (Space; spec_space.go).
//
// Every key is checked: an unknown key, an empty axis, a metric that does
// not exist or a draw count larger than the grid is a *SpecError naming the
// key and wrapping ErrSpec. A key that is absent takes its default; a key
// that is given must hold a valid value, never one that would stand for the
// default (epochs: 0, patience: 0, threshold: 0, retries: -1, e: 0, ...),
// and data may give logs or synthetic, not both. The file holds one YAML
// document. Relative log paths stay as written; Run and
// WriteCondor resolve them against the working directory.
func LoadSpec(r io.Reader) (*Spec, error) {
	rd := specReader{w: walk.NewYAML("", specWalkErr), given: map[string]bool{}}
	s, err := rd.load(r)
	if err != nil {
		return nil, fmt.Errorf("heldjobs: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// specReader reads one spec document with the shared bounded walker; given
// records every key path the file gives ("epochs", "data.synthetic.jobs"),
// so that a key that is absent can be told from one given with a zero
// value.
type specReader struct {
	w     walk.YAML
	given map[string]bool
}

// specWalkErr is the spec's walk.ErrorFunc: a *SpecError naming the key
// ("(document)" at the root) and the line where the walker knows it.
func specWalkErr(_, path string, line int, err error) error {
	key := cmp.Or(path, "(document)")
	if line > 0 {
		return &SpecError{Key: key, Err: fmt.Errorf("%w: line %d: %w", ErrSpec, line, err)}
	}
	return &SpecError{Key: key, Err: fmt.Errorf("%w: %w", ErrSpec, err)}
}

// topKeys are the keys of a spec's top level.
var topKeys = []string{"name", "data", "space", "random", "epochs", "patience", "metric", "threshold", "engine", "model", "resources", "retries", "prune", "allow_failed", "condor"}

func (rd specReader) load(r io.Reader) (*Spec, error) {
	b, err := walk.ReadAll(r, "", specWalkErr)
	if err != nil {
		return nil, err
	}
	root, err := rd.w.Parse(b)
	if err != nil {
		return nil, err
	}
	if root == nil || root.Kind == 0 {
		return nil, specErr("(document)", "empty")
	}
	if err := oneDocument(b); err != nil {
		return nil, err
	}
	s := &Spec{}
	err = rd.fields(root, "", topKeys, func(key, k string, v *yaml.Node) error {
		switch k {
		case "name":
			return rd.str(v, key, &s.Name)
		case "data":
			return rd.data(v, key, &s.Data)
		case "space":
			return rd.space(v, key, &s.Space)
		case "random":
			return rd.integer(v, key, &s.Random)
		case "epochs":
			return rd.integer(v, key, &s.Epochs)
		case "patience":
			return rd.integer(v, key, &s.Patience)
		case "metric":
			var m string
			err := rd.str(v, key, &m)
			s.Metric = Metric(m)
			return err
		case "threshold":
			return rd.float(v, key, &s.Threshold)
		case "engine":
			return rd.str(v, key, &s.Engine)
		case "model":
			return rd.str(v, key, &s.Model)
		case "resources":
			res, err := sweepResources(walk.Deref(v), key)
			s.Resources = res
			return err
		case "retries":
			return rd.integer(v, key, &s.Retries)
		case "prune":
			return rd.prune(v, key, &s.Prune)
		case "condor":
			s.Condor = &PoolSpec{}
			return rd.pool(v, key, s.Condor)
		}
		return rd.boolean(v, key, &s.AllowFailed) // allow_failed
	})
	if err != nil {
		return nil, err
	}
	if !rd.given["space"] {
		return nil, specErr("space", "missing: the search space is empty")
	}
	if err := explicit(s, rd.given); err != nil {
		return nil, err
	}
	if !rd.given["retries"] {
		s.Retries = -1 // the default, set by withDefaults
	}
	return s, nil
}

// oneDocument refuses a second YAML document in the file: a parser reads
// the first document of a stream, so the second would be silently ignored.
func oneDocument(b []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var first, next yaml.Node
	if err := dec.Decode(&first); err != nil {
		return specErr("(document)", "%v", err)
	}
	switch err := dec.Decode(&next); {
	case err == nil:
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		return specErr("(document)", "a second YAML document at line %d: a spec file holds one", line)
	case !errors.Is(err, io.EOF):
		return specErr("(document)", "after the first document: %v", err)
	}
	return nil
}

// sweepResources reads the resources block, which is sweep's: it borrows
// sweep's parser through a one-key sweep spec so that units and errors are
// the same.
func sweepResources(v *yaml.Node, key string) (sweep.Resources, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "name"}, {Kind: yaml.ScalarNode, Value: "resources"},
		{Kind: yaml.ScalarNode, Value: "resources"}, v,
		{Kind: yaml.ScalarNode, Value: "base"}, {Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "x"}, {Kind: yaml.ScalarNode, Value: "1"}}},
	}}); err != nil {
		return sweep.Resources{}, specErr(key, "%v", err)
	}
	ss, err := sweep.LoadSpec(&buf)
	if err != nil {
		var se *sweep.SpecError
		if errors.As(err, &se) {
			return sweep.Resources{}, specErr(se.Key, "%v", se.Err)
		}
		return sweep.Resources{}, specErr(key, "%v", err)
	}
	return ss.Resources, nil
}

// explicit refuses a key given in the file with the value that, in a Spec
// built in Go, stands for "use the default": withDefaults cannot tell the
// two apart, so without this "epochs: 0" would silently train 40 epochs.
func explicit(s *Spec, given map[string]bool) error {
	if given["data.logs"] && given["data.synthetic"] {
		return specErr("data", "both logs and synthetic: choose one")
	}
	for _, c := range []struct {
		key  string
		zero bool
		want string
	}{
		{"name", s.Name == "", "empty: want a name, or no key for the default heldjobs"},
		{"epochs", s.Epochs == 0, fmt.Sprintf("0: want at least 1, or no key for the default %d", DefaultEpochs)},
		{"patience", s.Patience == 0, fmt.Sprintf("0: want at least 1, or no key for the default %d", DefaultPatience)},
		{"threshold", s.Threshold == 0, fmt.Sprintf("0: want a probability strictly between 0 and 1, or no key for the default %v", DefaultThreshold)},
		{"retries", s.Retries < 0, fmt.Sprintf("%d: want 0 to 100, or no key for the default %d", s.Retries, DefaultRetries)},
		{"metric", s.Metric == "", "empty: want one of " + strings.Join(mapS(Metrics(), func(m Metric) string { return string(m) }), ", ") + ", or no key for the default f1"},
		{"engine", s.Engine == "", "empty: want native or native32, or no key for the default native"},
		{"model", s.Model == "", "empty: want lstm or gru, or no key for the default lstm"},
		{"data.e", s.Data.E == 0, fmt.Sprintf("0: want 1 to 1000, or no key for the default %d", eventlog.DefaultE)},
		{"data.split", s.Data.Train == 0 && s.Data.Valid == 0, "[0, 0]: want positive train and validation fractions, or no key for the default [0.6, 0.2]"},
		{"data.synthetic.jobs", s.Data.Synthetic.Jobs == 0, fmt.Sprintf("0: want 10 to 10,000,000, or no key for the default %d", defaultJobs)},
		{"data.synthetic.snapshot", s.Data.Synthetic.Snapshot == 0, fmt.Sprintf("0: want a quantile in (0, 1], or no key for the default %v", defaultSnapshot)},
	} {
		if given[c.key] && c.zero {
			return specErr(c.key, "%s", c.want)
		}
	}
	return nil
}

func (rd specReader) data(n *yaml.Node, prefix string, d *Data) error {
	return rd.fields(n, prefix, []string{"logs", "synthetic", "e", "forward", "split", "seed"}, func(key, k string, v *yaml.Node) error {
		switch k {
		case "logs":
			items, err := rd.w.Seq(v, key)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				return specErr(key, "empty list")
			}
			for i, c := range items {
				var p string
				if err := rd.str(c, walk.Idx(key, i), &p); err != nil {
					return err
				}
				d.Logs = append(d.Logs, p)
			}
			return nil
		case "synthetic":
			return rd.fields(v, key, []string{"jobs", "seed", "snapshot"}, func(key, k string, v *yaml.Node) error {
				switch k {
				case "jobs":
					return rd.integer(v, key, &d.Synthetic.Jobs)
				case "seed":
					return rd.uint(v, key, &d.Synthetic.Seed)
				}
				return rd.float(v, key, &d.Synthetic.Snapshot)
			})
		case "e":
			return rd.integer(v, key, &d.E)
		case "forward":
			return rd.boolean(v, key, &d.Forward)
		case "split":
			items, err := rd.w.Seq(v, key)
			if err != nil {
				return err
			}
			if len(items) != 2 {
				return rd.w.Err(v, key, walk.ErrSchema, "want [train, validation] fractions, got %d values", len(items))
			}
			if err := rd.float(items[0], walk.Idx(key, 0), &d.Train); err != nil {
				return err
			}
			return rd.float(items[1], walk.Idx(key, 1), &d.Valid)
		}
		return rd.uint(v, key, &d.Seed)
	})
}

func (rd specReader) space(n *yaml.Node, prefix string, sp *Space) error {
	return rd.fields(n, prefix, spaceOrder, func(key, k string, v *yaml.Node) error {
		switch d := walk.Deref(v); {
		case d != nil && d.Kind == yaml.MappingNode:
			return rd.definition(v, key, k, sp)
		case d != nil && d.Kind == yaml.SequenceNode && len(d.Content) > 0 && walk.Deref(d.Content[0]) != nil && walk.Deref(d.Content[0]).Kind == yaml.MappingNode:
			items, err := rd.w.Seq(v, key)
			if err != nil {
				return err
			}
			for i, it := range items {
				if err := rd.definition(it, walk.Idx(key, i), k, sp); err != nil {
					return err
				}
			}
			return nil
		}
		items, err := rd.w.Seq(v, key)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return specErr(key, "empty list: the search space is empty")
		}
		for i, c := range items {
			ik := walk.Idx(key, i)
			var err error
			switch k {
			case ParamModel:
				var name string
				err = rd.str(c, ik, &name)
				sp.Model = append(sp.Model, name)
			case ParamShape:
				var lit string
				if err = rd.str(c, ik, &lit); err == nil {
					var sh Shape
					if sh, err = ParseShape(lit); err != nil {
						err = &SpecError{Key: ik, Err: err}
					}
					sp.Shape = append(sp.Shape, sh)
				}
			case ParamHidden:
				var x int
				err = rd.integer(c, ik, &x)
				sp.Hidden = append(sp.Hidden, x)
			case ParamLayers:
				var x int
				err = rd.integer(c, ik, &x)
				sp.Layers = append(sp.Layers, x)
			case ParamLR:
				var x float64
				err = rd.float(c, ik, &x)
				sp.LearningRate = append(sp.LearningRate, x)
			default: // batch
				var x int
				err = rd.integer(c, ik, &x)
				sp.Batch = append(sp.Batch, x)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// fields calls f for each key of the mapping n, in document order, after
// refusing a key that is not in known (naming the nearest known one) and a
// key given twice; prefix is the mapping's own key path ("" for the
// document). Each key's path is recorded in rd.given.
func (rd specReader) fields(n *yaml.Node, prefix string, known []string, f func(key, k string, v *yaml.Node) error) error {
	m, err := rd.w.Mapping(n, prefix)
	if err != nil {
		return err
	}
	if err := rd.w.Keys(m, prefix, cmp.Or(prefix, "a spec"), known); err != nil {
		return err
	}
	for _, kv := range m {
		key := walk.Dot(prefix, kv[0].Value)
		rd.given[key] = true
		if err := f(key, kv[0].Value, kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// str reads a scalar that is not null ("name:" with no value).
func (rd specReader) str(n *yaml.Node, key string, dst *string) error {
	s, err := rd.w.Scalar(n, key)
	if err != nil {
		return err
	}
	if walk.Deref(n).Tag == "!!null" {
		return rd.w.Err(n, key, walk.ErrSchema, "want a value, got null")
	}
	*dst = s
	return nil
}

func (rd specReader) integer(n *yaml.Node, key string, dst *int) error {
	x, err := rd.w.Integer(n, key)
	*dst = x
	return err
}

// uint reads a seed: any uint64, beyond walk's int.
func (rd specReader) uint(n *yaml.Node, key string, dst *uint64) error {
	s, err := rd.w.Scalar(n, key)
	if err != nil {
		return err
	}
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return rd.w.Err(n, key, walk.ErrSchema, "want a non-negative integer, got %q", s)
	}
	*dst = x
	return nil
}

func (rd specReader) float(n *yaml.Node, key string, dst *float64) error {
	x, err := rd.w.Number(n, key)
	if err != nil {
		return err
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return rd.w.Err(n, key, walk.ErrSchema, "want a finite number, got %v", x)
	}
	*dst = x
	return nil
}

// boolean reads true or false (Go's strconv.ParseBool spellings).
func (rd specReader) boolean(n *yaml.Node, key string, dst *bool) error {
	s, err := rd.w.Scalar(n, key)
	if err != nil {
		return err
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return rd.w.Err(n, key, walk.ErrSchema, "want true or false, got %q", s)
	}
	*dst = b
	return nil
}

// withDefaults fills the zero fields.
func (s Spec) withDefaults() Spec {
	if s.Name == "" {
		s.Name = "heldjobs"
	}
	if s.Data.E == 0 {
		s.Data.E = eventlog.DefaultE
	}
	if s.Data.Train == 0 && s.Data.Valid == 0 {
		s.Data.Train, s.Data.Valid = 0.6, 0.2
	}
	if len(s.Data.Logs) == 0 {
		if s.Data.Synthetic.Jobs == 0 {
			s.Data.Synthetic.Jobs = defaultJobs
		}
		if s.Data.Synthetic.Snapshot == 0 {
			s.Data.Synthetic.Snapshot = defaultSnapshot
		}
	}
	if s.Epochs == 0 {
		s.Epochs = DefaultEpochs
	}
	if s.Patience == 0 {
		s.Patience = DefaultPatience
	}
	if s.Metric == "" {
		s.Metric = F1
	}
	if s.Threshold == 0 {
		s.Threshold = DefaultThreshold
	}
	if s.Engine == "" {
		s.Engine = "native"
	}
	if s.Retries == -1 {
		s.Retries = DefaultRetries
	}
	return s
}

// maxPoints bounds a search: each point trains a model.
const maxPoints = 100000

// Validate fills the defaults and checks the spec; an error is a
// *SpecError wrapping ErrSpec.
func (s *Spec) Validate() error {
	d := s.withDefaults()
	*s = d
	err := func() error {
		sp := s.Space
		for _, k := range spaceOrder[1:] {
			if !sp.defines(k) {
				return specErr("space."+k, "no value: the search space is empty")
			}
		}
		for i, sh := range sp.Shape {
			if err := sh.check(); err != nil {
				return specErr(fmt.Sprintf("space.shape[%d]", i), "%s: %s", sh, err)
			}
		}
		for i, h := range sp.Hidden {
			if h < 1 || h > 4096 {
				return specErr(fmt.Sprintf("space.hidden[%d]", i), "%d: want 1 to 4096", h)
			}
		}
		for i, l := range sp.Layers {
			if l < 1 || l > 16 {
				return specErr(fmt.Sprintf("space.layers[%d]", i), "%d: want 1 to 16", l)
			}
		}
		for i, lr := range sp.LearningRate {
			if !(lr > 0) || lr > 10 {
				return specErr(fmt.Sprintf("space.lr[%d]", i), "%v: want a positive rate up to 10", lr)
			}
		}
		for i, b := range sp.Batch {
			if b < 1 {
				return specErr(fmt.Sprintf("space.batch[%d]", i), "%d: want at least 1", b)
			}
		}
		for _, ax := range []struct {
			key  string
			lits []string
		}{
			{"space.shape", mapS(sp.Shape, Shape.String)},
			{"space.hidden", mapS(sp.Hidden, strconv.Itoa)},
			{"space.layers", mapS(sp.Layers, strconv.Itoa)},
			{"space.lr", mapS(sp.LearningRate, func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) })},
			{"space.batch", mapS(sp.Batch, strconv.Itoa)},
		} {
			seen := map[string]int{}
			for i, l := range ax.lits {
				if j, ok := seen[l]; ok {
					return specErr(fmt.Sprintf("%s[%d]", ax.key, i), "%s repeats %s[%d]", l, ax.key, j)
				}
				seen[l] = i
			}
		}
		if len(sp.Model) > 0 && s.Model != "" {
			return specErr("space.model", "the cell is searched (space.model) and fixed (model): give one")
		}
		var n int
		if sp.extended() {
			var err error
			if n, err = s.spaceSpec(&sweep.Spec{Name: "check"}); err != nil {
				return err
			}
		} else {
			n = sp.Size()
		}
		if n > maxPoints {
			if n == math.MaxInt {
				return specErr("space", "more points than an int holds; at most %d", maxPoints)
			}
			return specErr("space", "%d points; at most %d", n, maxPoints)
		}
		if s.Random < 0 {
			return specErr("random", "%d: want 0 (the whole grid) or a number of draws", s.Random)
		}
		if s.Random > n && len(sp.Dists) == 0 {
			return specErr("random", "%d draws, but the space has only %d points (random: 0 runs them all)", s.Random, n)
		}
		if !s.Metric.valid() {
			return specErr("metric", "%q does not exist (one of %s)", s.Metric, strings.Join(mapS(Metrics(), func(m Metric) string { return string(m) }), ", "))
		}
		if s.Epochs < 1 {
			return specErr("epochs", "%d: want at least 1", s.Epochs)
		}
		if s.Patience < 0 {
			return specErr("patience", "%d: want at least 1 (in a Spec built in Go, 0 means the default %d)", s.Patience, DefaultPatience)
		}
		if !(s.Threshold > 0 && s.Threshold < 1) {
			return specErr("threshold", "%v: want a probability strictly between 0 and 1", s.Threshold)
		}
		if s.Engine != "native" && s.Engine != "native32" {
			return specErr("engine", "%q: want native or native32", s.Engine)
		}
		if _, err := cellOf(s.Model); err != nil && s.Model != "" {
			return specErr("model", "%q: want lstm or gru", s.Model)
		}
		if err := s.Prune.check(); err != nil {
			return err
		}
		if s.Retries < 0 || s.Retries > 100 {
			return specErr("retries", "%d: want 0 to 100 (in a Spec built in Go, -1 means the default %d)", s.Retries, DefaultRetries)
		}
		dt := s.Data
		if dt.E < 1 || dt.E > 1000 {
			return specErr("data.e", "%d: want 1 to 1000", dt.E)
		}
		if !(dt.Train > 0) || !(dt.Valid > 0) || dt.Train+dt.Valid >= 1 {
			return specErr("data.split", "[%v, %v]: want positive train and validation fractions that leave a test set", dt.Train, dt.Valid)
		}
		if len(dt.Logs) > 0 && dt.Synthetic != (Synthetic{}) {
			return specErr("data", "both logs and synthetic: choose one")
		}
		if len(dt.Logs) == 0 {
			if dt.Synthetic.Jobs < 10 || dt.Synthetic.Jobs > 10_000_000 {
				return specErr("data.synthetic.jobs", "%d: want 10 to 10,000,000", dt.Synthetic.Jobs)
			}
			if !(dt.Synthetic.Snapshot > 0 && dt.Synthetic.Snapshot <= 1) {
				return specErr("data.synthetic.snapshot", "%v: want a quantile in (0, 1]", dt.Synthetic.Snapshot)
			}
		}
		for i, l := range dt.Logs {
			if strings.TrimSpace(l) == "" {
				return specErr(fmt.Sprintf("data.logs[%d]", i), "empty path")
			}
		}
		return s.Condor.validate(s.Resources.Account)
	}()
	if err != nil {
		return fmt.Errorf("heldjobs: %w", err)
	}
	return nil
}

func mapS[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// The parameter names of a search point in the sweep spec and the ledger
// (Run.Params), beside the base parameters.
const (
	ParamShape  = "shape" // a Shape's literal, "10x10x60s"
	ParamHidden = "hidden"
	ParamLayers = "layers"
	ParamLR     = "lr"
	ParamBatch  = "batch"
)

// Point is one point of the search: a run.
type Point struct {
	Shape          Shape
	Hidden, Layers int
	LearningRate   float64
	Batch          int
}

// String formats the point as key=value pairs.
func (p Point) String() string {
	return fmt.Sprintf("shape=%s hidden=%d layers=%d lr=%g batch=%d", p.Shape, p.Hidden, p.Layers, p.LearningRate, p.Batch)
}

// PointOf reads a point from a run's parameters.
func PointOf(params map[string]sweep.Value) (Point, error) {
	sv, ok := params[ParamShape]
	if !ok {
		return Point{}, fmt.Errorf("heldjobs: %w: run parameters have no %q", ErrSpec, ParamShape)
	}
	sh, err := ParseShape(sv.Lit)
	if err != nil {
		return Point{}, fmt.Errorf("heldjobs: %w", err)
	}
	p := Point{Shape: sh, Hidden: int(params[ParamHidden].Int()), Layers: int(params[ParamLayers].Int()),
		LearningRate: params[ParamLR].Float(), Batch: int(params[ParamBatch].Int())}
	if p.Hidden < 1 || p.Layers < 1 || !(p.LearningRate > 0) || p.Batch < 1 {
		return Point{}, fmt.Errorf("heldjobs: %w: run parameters %v", ErrSpec, p)
	}
	return p, nil
}

// Sweep returns the search as a sweep spec and the points to run, in grid
// order: every point of the grid, or, with Random, that many distinct
// points drawn without replacement by a generator seeded with Data.Seed
// (as scikit-learn's ParameterSampler does when every parameter is a
// list). The base parameters are everything else that decides a run's
// outcome (data, seed, budget, metric, engine), so they are part of every
// run's identity; dataID is the identity of the data (Dataset.ID), recorded
// as the sweep's input so that a ledger refuses results of other data.
func (s *Spec) Sweep(dataID string) (*sweep.Spec, []sweep.Point, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	sp := s.Space
	lits := func(xs []string) []sweep.Value {
		out := make([]sweep.Value, len(xs))
		for i, x := range xs {
			out[i] = sweep.ParseValue(x)
		}
		return out
	}
	shapes := make([]sweep.Value, len(sp.Shape))
	for i, sh := range sp.Shape {
		shapes[i] = sweep.ValueOf(sh.String())
	}
	ss := &sweep.Spec{
		Name:      s.Name,
		Base:      s.baseParams(),
		Resources: s.Resources,
		Inputs:    map[string]string{"dataset": dataID},
	}
	if sp.extended() {
		if _, err := s.spaceSpec(ss); err != nil {
			return nil, nil, fmt.Errorf("heldjobs: %w", err)
		}
	} else {
		ss.Axes = pointAxes(shapes, lits(mapS(sp.Hidden, strconv.Itoa)), lits(mapS(sp.Layers, strconv.Itoa)),
			lits(mapS(sp.LearningRate, func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) })), lits(mapS(sp.Batch, strconv.Itoa)))
	}
	pts, err := ss.Expand()
	if err != nil {
		return nil, nil, fmt.Errorf("heldjobs: %w", err)
	}
	if s.Random > 0 && ss.Samples == nil {
		idx := make([]int, len(pts))
		for i := range idx {
			idx[i] = i
		}
		r := rand.New(rand.NewPCG(s.Data.Seed, 0x5eed))
		for k := 0; k < s.Random; k++ {
			j := k + r.IntN(len(idx)-k)
			idx[k], idx[j] = idx[j], idx[k]
		}
		keep := idx[:s.Random]
		slices.Sort(keep)
		chosen := make([]sweep.Point, len(keep))
		for i, k := range keep {
			chosen[i] = pts[k]
		}
		pts = chosen
	}
	return ss, pts, nil
}

// pointAxes are the axes of a search's sweep spec, which name its runs'
// slugs ("base-s10x10x60s-h64-l2-lr0.01-b256").
func pointAxes(shape, hidden, layers, lr, batch []sweep.Value) []sweep.Axis {
	return []sweep.Axis{
		{Key: ParamShape, Short: "s", Values: shape},
		{Key: ParamHidden, Short: "h", Values: hidden},
		{Key: ParamLayers, Short: "l", Values: layers},
		{Key: ParamLR, Short: "lr", Values: lr},
		{Key: ParamBatch, Short: "b", Values: batch},
	}
}

// slugOf is the slug Sweep gives the run of params: a worker started as a
// process (the DAG's training nodes, Slurm, worker processes) is told its
// run id and parameters, not its slug. It is "" when params are not those
// of a search point.
func slugOf(params map[string]sweep.Value) string {
	if _, err := PointOf(params); err != nil {
		return ""
	}
	one := func(k string) []sweep.Value { return []sweep.Value{params[k]} }
	ss := &sweep.Spec{Name: "slug", Axes: pointAxes(one(ParamShape), one(ParamHidden), one(ParamLayers), one(ParamLR), one(ParamBatch))}
	pts, err := ss.Expand()
	if err != nil || len(pts) != 1 {
		return ""
	}
	return pts[0].Slug
}

// baseParams are the parameters every run shares.
func (s *Spec) baseParams() map[string]sweep.Value {
	d := s.Data
	p := map[string]sweep.Value{
		"e": sweep.ValueOf(int64(d.E)), "forward": sweep.ValueOf(d.Forward),
		"split_train": sweep.ValueOf(d.Train), "split_valid": sweep.ValueOf(d.Valid),
		"seed": sweep.ValueOf(int64(d.Seed)), "epochs": sweep.ValueOf(int64(s.Epochs)),
		"patience": sweep.ValueOf(int64(s.Patience)), "metric": sweep.ValueOf(string(s.Metric)),
		"threshold": sweep.ValueOf(s.Threshold), "engine": sweep.ValueOf(s.Engine),
	}
	if s.Model != "" && s.Model != lstm.LSTM.String() {
		// Only when not the LSTM, so that an LSTM run keeps the identity
		// it had before models were selectable.
		p["model"] = sweep.ValueOf(s.Model)
	}
	return p
}
