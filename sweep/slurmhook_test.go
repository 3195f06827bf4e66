package sweep_test

import (
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/slurm"
)

func init() {
	sweep.SlurmBackend = func(o sweep.SlurmOptions) sweep.Backend {
		return &slurm.Backend{Command: o.Command, Dir: o.Dir, Name: o.Name, MaxParallel: o.MaxParallel}
	}
}
