package sweep_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crosscluster/crosscluster/sweep"
)

func ExampleSpec_Expand() {
	spec, err := sweep.LoadSpec(strings.NewReader(`
name: demo
base: {epochs: 50}
grid:
  - {key: lr, values: [0.05, 0.1]}
  - {key: wd, values: [1e-4, 1e-3]}
  - {key: seed, short: s, values: [0]}
variants:
  - {name: base}
  - {name: adamw, set: {optimizer: adamw}}
`))
	if err != nil {
		panic(err)
	}
	pts, err := spec.Expand()
	if err != nil {
		panic(err)
	}
	for _, p := range pts {
		fmt.Println(p.Slug)
	}
	// Output:
	// base-lr0.05-wd1e-4-s0
	// base-lr0.05-wd1e-3-s0
	// base-lr0.1-wd1e-4-s0
	// base-lr0.1-wd1e-3-s0
	// adamw-lr0.05-wd1e-4-s0
	// adamw-lr0.05-wd1e-3-s0
	// adamw-lr0.1-wd1e-4-s0
	// adamw-lr0.1-wd1e-3-s0
}

func ExampleLoadSpec_error() {
	_, err := sweep.LoadSpec(strings.NewReader("name: demo\ngrid: [{key: lr, values: [0.1, [2]]}]"))
	fmt.Println(err)
	// Output: sweep: spec key grid[0].values[1]: malformed spec: line 2: unexpected structure: want a scalar
}

func ExampleController() {
	dir, err := os.MkdirTemp("", "sweep-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	spec := &sweep.Spec{Name: "demo", Axes: []sweep.Axis{{Key: "x", Values: []sweep.Value{sweep.ValueOf(1), sweep.ValueOf(2), sweep.ValueOf(3)}}}}
	pts, _ := spec.Expand()
	l, err := sweep.OpenLedger(filepath.Join(dir, "ledger.db"))
	if err != nil {
		panic(err)
	}
	defer l.Close()
	if _, err := l.Enqueue(ctx, spec, slices.Values(pts)); err != nil {
		panic(err)
	}
	square := func(ctx context.Context, t sweep.Task) (*sweep.Result, error) {
		x := t.Params["x"].Float()
		return &sweep.Result{Metrics: map[string]float64{"y": x * x}}, nil
	}
	c := &sweep.Controller{Ledger: l, Backend: &sweep.Local{Func: square}, WorkDir: dir, Parallel: 2}
	sum, err := c.Run(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(sum.Completed, "completed")
	report, _, _ := l.CheckCompleteness(ctx, dir, slices.Values(pts))
	fmt.Println(report)
	// Output:
	// 3 completed
	// 3/3 runs completed (0 failed, 0 missing, 0 pruned, 0 non-finite)
}
