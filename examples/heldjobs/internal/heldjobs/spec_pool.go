package heldjobs

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/crosscluster/crosscluster/internal/walk"
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/condor"
	"go.yaml.in/yaml/v3"
)

// PoolSpec is the spec's condor section: what the DAG's files ask of an
// HTCondor pool beyond the search itself.
//
//	condor:
//	  submit:                       # extra submit commands of every node
//	    +ProjectName: '"MyProject"'
//	    requirements: (OpSysMajorVer == 9)
//	  parse:   {resources: {memory: 8G, disk: 20G, time: 2h}, submit: {...}}
//	  train:   {submit: {container_image: osdf:///ospool/.../image.sif}}
//	  select:  {resources: {memory: 1G}}
//	  cleanup: {resources: {disk: 8G}}
//	  time_retry: 2                 # a node held for its time limit is retried with 2x the time; none: not retried
//	  checkpoint: 1h                # a training job checkpoints and restarts about this often
//	  hold_limit: 30m               # a held job is removed (its node fails, RETRY applies) after this long
//
// The training nodes' resources are the spec's resources (the same keys
// on every engine); a node kind's submit commands replace the global ones
// of the same name.
type PoolSpec struct {
	Submit                        [][2]string `json:",omitempty"`
	Parse, Train, Select, Cleanup PoolNode
	// TimeFactor multiplies a node's allowed_job_duration on each retry
	// (1: the same limit); zero means DefaultTimeFactor. NoTimeRetry
	// instead records a training run whose job was held for its time
	// limit as failed without retrying it.
	TimeFactor  float64 `json:",omitempty"`
	NoTimeRetry bool    `json:",omitempty"`
	// Checkpoint is how long a training job runs before it ends an epoch
	// with a checkpoint exit (ExitCheckpoint), so that HTCondor stores
	// its checkpoint; zero means DefaultCheckpoint.
	Checkpoint time.Duration `json:",omitempty"`
	// HoldLimit is how long a node job may stay on hold before it is
	// removed; zero means DefaultHoldLimit.
	HoldLimit time.Duration `json:",omitempty"`
}

// PoolNode is one node kind's part of the condor section.
type PoolNode struct {
	Resources sweep.Resources `json:",omitempty"`
	Submit    [][2]string     `json:",omitempty"`
}

// Defaults of the condor section.
const (
	// DefaultTimeFactor: a node held for its time limit is retried with
	// twice the time.
	DefaultTimeFactor = 2.0
	// DefaultCheckpoint follows the HTCondor manual's advice for
	// self-checkpointing jobs: a checkpoint about once an hour.
	DefaultCheckpoint = time.Hour
	// DefaultHoldLimit is how long a node job may stay on hold (over its
	// memory request, over its time, an input that did not transfer)
	// before it is removed and its node retried: long enough for a user
	// who watches the DAG to condor_release a job held for a reason they
	// can mend.
	DefaultHoldLimit = 30 * time.Minute
)

// withDefaults returns the section with its zero fields filled (a nil
// section is all defaults).
func (p *PoolSpec) withDefaults() PoolSpec {
	var q PoolSpec
	if p != nil {
		q = *p
	}
	if q.TimeFactor == 0 {
		q.TimeFactor = DefaultTimeFactor
	}
	if q.Checkpoint == 0 {
		q.Checkpoint = DefaultCheckpoint
	}
	if q.HoldLimit == 0 {
		q.HoldLimit = DefaultHoldLimit
	}
	return q
}

// poolKinds are the node kinds of the condor section, in DAG order.
var poolKinds = []string{"parse", "train", "select", "cleanup"}

func (p *PoolSpec) node(kind string) *PoolNode {
	switch kind {
	case "parse":
		return &p.Parse
	case "train":
		return &p.Train
	case "select":
		return &p.Select
	}
	return &p.Cleanup
}

// pool reads the condor section.
func (rd specReader) pool(n *yaml.Node, prefix string, p *PoolSpec) error {
	return rd.fields(n, prefix, append([]string{"submit", "time_retry", "checkpoint", "hold_limit"}, poolKinds...), func(key, k string, v *yaml.Node) error {
		switch k {
		case "submit":
			return rd.submitCommands(v, key, &p.Submit)
		case "time_retry":
			var lit string
			if err := rd.str(v, key, &lit); err != nil {
				return err
			}
			if lit == "none" {
				p.NoTimeRetry = true
				return nil
			}
			f, err := strconv.ParseFloat(lit, 64)
			if err != nil || math.IsNaN(f) || f < 1 || f > 100 {
				return specErr(key, "%q: want a factor from 1 to 100, or none", lit)
			}
			p.TimeFactor = f
			return nil
		case "checkpoint", "hold_limit":
			var lit string
			if err := rd.str(v, key, &lit); err != nil {
				return err
			}
			d, err := time.ParseDuration(lit)
			if err != nil || d <= 0 {
				return specErr(key, "%q: want a positive duration (30m, 2h)", lit)
			}
			if k == "checkpoint" {
				p.Checkpoint = d
			} else {
				p.HoldLimit = d
			}
			return nil
		}
		pn := p.node(k)
		return rd.fields(v, key, []string{"resources", "submit"}, func(key, kk string, v *yaml.Node) error {
			if kk == "submit" {
				return rd.submitCommands(v, key, &pn.Submit)
			}
			if k == "train" {
				return specErr(key, "the training nodes ask for the spec's resources (the top-level resources key)")
			}
			res, err := sweepResources(walk.Deref(v), key)
			var se *SpecError
			if errors.As(err, &se) && strings.HasPrefix(se.Key, "resources") {
				se.Key = key + strings.TrimPrefix(se.Key, "resources")
			}
			pn.Resources = res
			return err
		})
	})
}

// submitCommands reads a mapping of submit commands in file order; values
// are written as given (a ClassAd string keeps its quotes: '"MyProject"').
func (rd specReader) submitCommands(n *yaml.Node, key string, dst *[][2]string) error {
	m, err := rd.w.Mapping(n, key)
	if err != nil {
		return err
	}
	for _, kv := range m {
		var v string
		if err := rd.str(kv[1], walk.Dot(key, kv[0].Value), &v); err != nil {
			return err
		}
		*dst = append(*dst, [2]string{kv[0].Value, v})
	}
	return nil
}

// validate checks the section against what the submit files can carry,
// through condor's own check of a stand-in description per node kind, so
// that a command the pipeline writes itself (executable, arguments,
// output, log, request_memory, ...), a bad name or a value with a newline
// is refused when the spec is read, naming its key.
func (p *PoolSpec) validate(account string) error {
	if p == nil {
		return nil
	}
	switch {
	case p.TimeFactor != 0 && (math.IsNaN(p.TimeFactor) || p.TimeFactor < 1 || p.TimeFactor > 100):
		return specErr("condor.time_retry", "%v: want a factor from 1 to 100", p.TimeFactor)
	case p.NoTimeRetry && p.TimeFactor != 0:
		return specErr("condor.time_retry", "both a factor and none")
	case p.Checkpoint < 0 || p.HoldLimit < 0:
		return specErr("condor", "negative checkpoint interval or hold limit")
	}
	check := func(key string, extra [][2]string, res sweep.Resources) error {
		d := &condor.DAG{Submits: map[string]*condor.Submit{"x.sub": {Executable: "x", InitialDir: "x", Log: "l", Output: "o", Error: "e",
			AccountingGroup: account, AllowedJobDuration: res.Time, RemoveHeldAfter: time.Second, Extra: extra}},
			Nodes: []condor.Node{{Name: "x", Submit: "x.sub"}}}
		if err := d.Check(); err != nil {
			msg := err.Error()
			if _, after, ok := strings.Cut(msg, "x.sub: "); ok {
				msg = after
			}
			return specErr(key, "%s", msg)
		}
		return nil
	}
	if err := check("condor.submit", p.Submit, sweep.Resources{}); err != nil {
		return err
	}
	for _, k := range poolKinds {
		pn := p.node(k)
		var own [][2]string
		if k == "train" {
			if pn.Resources != (sweep.Resources{}) {
				return specErr("condor.train.resources", "the training nodes ask for the spec's resources")
			}
			// The training jobs' own checkpoint commands.
			own = [][2]string{{"checkpoint_exit_code", strconv.Itoa(ExitCheckpoint)}, {"transfer_checkpoint_files", "x"}}
		}
		if err := check("condor."+k+".submit", append(mergeSubmit(p.Submit, pn.Submit), own...), pn.Resources); err != nil {
			return err
		}
		if pn.Resources.Time < 0 {
			return specErr("condor."+k+".resources.time", "negative")
		}
	}
	return nil
}

// mergeSubmit returns the global commands with a node kind's own replacing
// those of the same name (names compare as HTCondor's do, without case;
// +Name and MY.Name are one attribute), the kind's new ones after.
func mergeSubmit(global, own [][2]string) [][2]string {
	norm := func(k string) string {
		k = strings.ToLower(k)
		if strings.HasPrefix(k, "+") {
			return "my." + k[1:]
		}
		return k
	}
	out := make([][2]string, 0, len(global)+len(own))
	mine := map[string]bool{}
	for _, kv := range own {
		mine[norm(kv[0])] = true
	}
	for _, kv := range global {
		if !mine[norm(kv[0])] {
			out = append(out, kv)
		}
	}
	return append(out, own...)
}
