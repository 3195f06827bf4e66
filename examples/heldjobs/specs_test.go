package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/sweep"
)

// TestSweptSpec runs the worked example of docs/heldjobs.md,
// specs/swept.yaml: eight draws, each LSTM with one or two layers and each
// GRU with one, hidden sizes from the range, rates in the log-uniform's
// interval; the search runs locally with -dashboard, printing its URL, and
// every run ends completed or pruned (by ASHA, with its reason).
func TestSweptSpec(t *testing.T) {
	const file = "specs/swept.yaml"
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := heldjobs.LoadSpec(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, pts, err := spec.Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 8 {
		t.Fatalf("%d points, want 8 (a drawn rate never repeats)", len(pts))
	}
	cells := map[string]int{}
	for _, p := range pts {
		pt, err := heldjobs.PointOf(p.Params)
		if err != nil {
			t.Fatal(err)
		}
		m := p.Params[heldjobs.ParamModel].Lit
		cells[m]++
		if m == "gru" && pt.Layers != 1 || m == "lstm" && pt.Layers != 1 && pt.Layers != 2 {
			t.Errorf("%s: %s with %d layers", p.Slug, m, pt.Layers)
		}
		if pt.Hidden%4 != 0 || pt.Hidden < 4 || pt.Hidden > 16 {
			t.Errorf("%s: hidden %d not in 4, 8, 12, 16", p.Slug, pt.Hidden)
		}
		if !(pt.LearningRate >= 1e-3 && pt.LearningRate < 3e-2) {
			t.Errorf("%s: rate %v outside [1e-3, 3e-2)", p.Slug, pt.LearningRate)
		}
	}
	if cells["lstm"] == 0 || cells["gru"] == 0 {
		t.Errorf("cells drawn %v, want both", cells)
	}

	out := t.TempDir()
	var buf bytes.Buffer
	o := options{spec: file, out: out, backend: "local", workers: 2, dashboard: "127.0.0.1:0"}
	if err := runSpec(context.Background(), o, &buf); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !regexp.MustCompile(`dashboard: http://127\.0\.0\.1:\d+/`).Match(buf.Bytes()) {
		t.Errorf("no dashboard URL in the output:\n%s", buf.String())
	}
	l, err := sweep.OpenLedgerReadOnly(filepath.Join(out, heldjobs.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, p := range pts {
		r, err := l.Get(context.Background(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State != sweep.Completed && !(r.State == sweep.Pruned && strings.HasPrefix(r.ErrorText, "ASHA: valid_loss")) {
			t.Errorf("run %s: %s %q", p.Slug, r.State, r.ErrorText)
		}
	}
}

// TestCondorRefusesPrune: the DAG runs every point to its end, so a spec
// with prune is refused on the condor backends with the key named.
func TestCondorRefusesPrune(t *testing.T) {
	for _, backend := range []string{"condor", "condor-local"} {
		var buf bytes.Buffer
		err := runSpec(context.Background(), options{spec: "specs/swept.yaml", out: t.TempDir(), backend: backend, workers: 1}, &buf)
		var se *heldjobs.SpecError
		if !errors.As(err, &se) || se.Key != "prune" || !errors.Is(err, heldjobs.ErrSpec) || !strings.Contains(err.Error(), "specs/swept.yaml") {
			t.Errorf("%s: %v, want a spec error at key prune naming the file", backend, err)
		}
	}
}
