package heldjobs

import (
	"math"

	"github.com/crosscluster/crosscluster/internal/walk"
	"github.com/crosscluster/crosscluster/sweep"
	"go.yaml.in/yaml/v3"
)

// Prune chooses one of sweep's pruners for a search. The pruner watches
// every run's validation curve of the spec's metric, one step per epoch,
// as the runs stream it, and the controller stops a run it gives up on and
// records it as pruned, with the pruner's reason, in the ledger and the
// tracking tables:
//
//	prune: {rule: asha, min_epochs: 1, eta: 3}   # sweep.ASHA: rungs at epochs 1, 3, 9, …
//	prune: {rule: median, warmup: 2, startup: 5} # sweep.MedianRule
//
// Pruning needs the controller: local, process and Slurm searches prune,
// the DAG runs every point to its end.
type Prune struct {
	Rule      string  // "asha" or "median"; "" prunes nothing
	MinEpochs int     // ASHA: the first rung's epoch; 0 means 1
	Eta       float64 // ASHA: the reduction factor, at least 2; 0 means 3
	Warmup    int     // median rule: no check before this epoch
	Startup   int     // median rule: completed runs before any check; 0 means 5
}

// pruner is the sweep.Pruner of p for metric m over runs of at most epochs
// epochs, or nil.
func (p Prune) pruner(m Metric, epochs int) sweep.Pruner {
	switch p.Rule {
	case "asha":
		return sweep.ASHA{Series: m.Key(), Maximize: !m.Lower(), MinStep: float64(max(p.MinEpochs, 1)), Eta: p.Eta, MaxStep: float64(epochs)}
	case "median":
		return sweep.MedianRule{Series: m.Key(), Maximize: !m.Lower(), Warmup: float64(p.Warmup), Startup: p.Startup}
	}
	return nil
}

func (p Prune) check() error {
	switch {
	case p.Rule != "" && p.Rule != "asha" && p.Rule != "median":
		return specErr("prune.rule", "%q: want asha or median", p.Rule)
	case p.MinEpochs < 0:
		return specErr("prune.min_epochs", "%d: want at least 1", p.MinEpochs)
	case p.Eta != 0 && !(p.Eta >= 2 && !math.IsInf(p.Eta, 0)):
		return specErr("prune.eta", "%v: want a finite reduction factor of at least 2", p.Eta)
	case p.Warmup < 0:
		return specErr("prune.warmup", "%d: want 0 or more epochs", p.Warmup)
	case p.Startup < 0:
		return specErr("prune.startup", "%d: want at least 1 run", p.Startup)
	case p.Rule != "asha" && (p.MinEpochs != 0 || p.Eta != 0):
		return specErr("prune", "min_epochs and eta are ASHA's (rule: asha)")
	case p.Rule != "median" && (p.Warmup != 0 || p.Startup != 0):
		return specErr("prune", "warmup and startup are the median rule's (rule: median)")
	}
	return nil
}

// prune reads the prune section; a key given must hold a value other than
// the one that stands for its default.
func (rd specReader) prune(n *yaml.Node, key string, p *Prune) error {
	err := rd.fields(n, key, []string{"rule", "min_epochs", "eta", "warmup", "startup"}, func(key, k string, v *yaml.Node) error {
		switch k {
		case "rule":
			return rd.str(v, key, &p.Rule)
		case "min_epochs":
			if err := rd.integer(v, key, &p.MinEpochs); err != nil {
				return err
			}
			if p.MinEpochs == 0 {
				return rd.w.Err(v, key, walk.ErrSchema, "0: want at least 1, or no key for the default 1")
			}
		case "eta":
			if err := rd.float(v, key, &p.Eta); err != nil {
				return err
			}
			if p.Eta == 0 {
				return rd.w.Err(v, key, walk.ErrSchema, "0: want at least 2, or no key for the default 3")
			}
		case "warmup":
			return rd.integer(v, key, &p.Warmup)
		default:
			if err := rd.integer(v, key, &p.Startup); err != nil {
				return err
			}
			if p.Startup == 0 {
				return rd.w.Err(v, key, walk.ErrSchema, "0: want at least 1, or no key for the default 5")
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p.Rule == "" {
		return rd.w.Err(n, walk.Dot(key, "rule"), walk.ErrSchema, "missing: want asha or median")
	}
	return nil
}
