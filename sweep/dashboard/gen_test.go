package dashboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// bigSweep runs a random search of n runs (n/2 draws of lr, weight decay
// and depth for each of two optimizers) through a controller in dir, each
// run streaming train_loss and val_loss for epochs epochs; the runs with
// lr above 0.5 (about 7.5%) fail with a log line. It returns the ledger
// opened read-only.
func bigSweep(tb testing.TB, dir string, n, epochs int) *sweep.Ledger {
	tb.Helper()
	path := filepath.Join(dir, "ledger.db")
	l, err := sweep.OpenLedger(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	spec, err := sweep.LoadSpec(strings.NewReader(fmt.Sprintf(`name: big
base: {epochs: %d}
grid:
  - {key: opt, values: [sgd, adamw]}
samples: {count: %d, seed: 1, params: [{key: lr, log_uniform: [0.0001, 1]}, {key: wd, log_uniform: [0.000001, 0.01]}, {key: layers, int_uniform: [1, 8]}]}
`, epochs, n/2)))
	if err != nil {
		tb.Fatal(err)
	}
	seq, _, err := spec.Points()
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if _, err := l.Enqueue(ctx, spec, seq); err != nil {
		tb.Fatal(err)
	}
	work := func(ctx context.Context, task sweep.Task) (*sweep.Result, error) {
		ml, err := sweep.OpenMetricLog(task.Dir)
		if err != nil {
			return nil, err
		}
		defer ml.Close()
		lr, wd := task.Params["lr"].Float(), task.Params["wd"].Float()
		floor := 0.05*math.Abs(math.Log10(lr)+2) + 0.01*float64(task.Params["layers"].Int()) + 2*wd
		v := 0.0
		for e := 1; e <= epochs; e++ {
			v = floor + 1/float64(e)
			if err := ml.Log("train_loss", float64(e), 0.9*v); err != nil {
				return nil, err
			}
			if err := ml.Log("val_loss", float64(e), v); err != nil {
				return nil, err
			}
		}
		if lr > 0.5 {
			return nil, errors.New("loss diverged at lr " + task.Params["lr"].Lit)
		}
		return &sweep.Result{Metrics: map[string]float64{"val_loss": v}}, nil
	}
	c := &sweep.Controller{Ledger: l, Backend: &sweep.Local{Func: work}, WorkDir: filepath.Join(dir, "work"), Parallel: 64, PollInterval: time.Millisecond,
		Retry: map[sweep.Class]int{sweep.ClassUnknown: 0, sweep.ClassDivergence: 0}}
	if _, err := c.Run(ctx); err != nil {
		tb.Fatal(err)
	}
	ro, err := sweep.OpenLedgerReadOnly(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ro.Close() })
	return ro
}
