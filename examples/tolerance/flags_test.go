package main

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/divergence"
	"github.com/crosscluster/crosscluster/internal/exampletest"
)

// TestFlags: every flag is checked before anything is done; a refused
// command line creates nothing (issue 26 item 13: -steps -5 ran and
// reported PASS; positional arguments were ignored).
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(hosts, []byte("hosts:\n  - {name: a, repo: r, command: c}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exampletest.Flags(t, []exampletest.Flag{
		{Name: "defaults", Args: nil, Want: ""},
		{Name: "Linf and no tolerance", Args: []string{"-norm", "Linf", "-tol", "-1"}, Want: ""},
		{Name: "allclose", Args: []string{"-rtol", "1e-5", "-atol", "1e-9"}, Want: ""},
		{Name: "registry", Args: []string{"-hosts", hosts, "-no-sync"}, Want: ""},
		{Name: "negative steps", Args: []string{"-steps", "-5"}, Want: "-steps -5"},
		{Name: "zero steps", Args: []string{"-steps", "0"}, Want: "-steps 0"},
		{Name: "unknown norm", Args: []string{"-norm", "L1"}, Want: `-norm "L1"`},
		{Name: "NaN tolerance", Args: []string{"-tol", "NaN"}, Want: "-tol NaN"},
		{Name: "infinite tolerance", Args: []string{"-tol", "+Inf"}, Want: "-tol +Inf"},
		{Name: "negative rtol", Args: []string{"-rtol", "-1"}, Want: "-rtol -1"},
		{Name: "infinite atol", Args: []string{"-atol", "Inf"}, Want: "-atol +Inf"},
		{Name: "zero budget", Args: []string{"-budget", "0s"}, Want: "-budget 0s"},
		{Name: "bad stem", Args: []string{"-stem", "a b"}, Want: `-stem "a b"`},
		{Name: "empty out", Args: []string{"-out", ""}, Want: "-out is empty"},
		{Name: "stray argument", Args: []string{"extra"}, Want: `unexpected argument "extra"`},
		{Name: "stray argument after flags", Args: []string{"-tol", "1", "x.npz"}, Want: `unexpected argument "x.npz"`},
		{Name: "sync and no-sync", Args: []string{"-no-sync", "-sync", dir}, Want: "-no-sync with -sync"},
		{Name: "allow-dirty without sync", Args: []string{"-no-sync", "-allow-dirty"}, Want: "-no-sync with -sync or -allow-dirty"},
		{Name: "missing registry", Args: []string{"-hosts", filepath.Join(dir, "none.yaml")}, Want: "-hosts"},
		{Name: "steps with registry", Args: []string{"-hosts", hosts, "-steps", "100"}, Want: "-steps sets the local boxes"},
		{Name: "sync not a directory", Args: []string{"-sync", filepath.Join(dir, "none")}, Want: "-sync"},
		{Name: "box variant out of range", Args: []string{"-box-variant", "3", "-box-out", "x.npz"}, Want: "-box-variant 3"},
		{Name: "box without output", Args: []string{"-box-variant", "1"}, Want: "-box-variant 1"},
		{Name: "not a number", Args: []string{"-steps", "many"}, Want: "invalid value"},
		{Name: "unknown flag", Args: []string{"-poll", "1s"}, Want: "not defined"},
	}, errUsage, func(args []string) error {
		_, _, err := parseFlags(args, io.Discard)
		return err
	})
}

// TestPlotsEveryKey: every key is tabulated and plotted, failing keys
// first, in the norm asked for; a registry without z_b is plotted too
// (issue 26 item 15: only z_b was drawn, always in L2).
func TestPlotsEveryKey(t *testing.T) {
	dir := t.TempDir()
	const steps = 6
	write := func(name string, eps float64) divergence.NamedRun {
		p := filepath.Join(dir, name+".npz")
		calm, wild := make([]float64, 3*steps), make([]float64, 3*steps)
		for i := range calm {
			calm[i] = 1 + eps*float64(i%3)
			wild[i] = 1 + 1e6*eps*float64(i%3+1)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := divergence.NewWriter(f)
		for _, k := range []struct {
			key string
			x   []float64
		}{{"calm", calm}, {"wild", wild}} {
			if err := w.Add(k.key, []int{steps, 3}, k.x); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return divergence.NamedRun{Name: name, Path: p}
	}
	runs := []divergence.NamedRun{write("a", 0), write("b", 1e-9)}
	for _, norm := range []string{"L2", "Linf"} {
		t.Run(norm, func(t *testing.T) {
			c, _, err := parseFlags([]string{"-norm", norm, "-tol", "1e-6"}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := divergence.Compare(context.Background(), runs, nil, divergence.Options{Norm: c.norm, Tolerance: map[string]float64{"*": c.tol}})
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			wrote, err := seriesOutputs(context.Background(), out, runs, rows, c)
			if err != nil {
				t.Fatal(err)
			}
			// wild fails (differences near 1e-3), calm passes: wild first.
			if want := []string{"series_wild.csv", "divergence_wild.png", "series_calm.csv", "divergence_calm.png"}; !slices.Equal(wrote, want) {
				t.Fatalf("wrote %v, want %v", wrote, want)
			}
			// The table holds the series in the norm asked for: step 0 of
			// calm differs by (0, 1e-9, 2e-9).
			b, err := os.ReadFile(filepath.Join(out, "series_calm.csv"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			got, err := strconv.ParseFloat(strings.Split(lines[1], ",")[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			want := math.Hypot(1e-9*1, 1e-9*2) // L2 of (0, 1e-9, 2e-9) up to rounding of 1+x
			if norm == "Linf" {
				want = 2e-9
			}
			if math.Abs(got-want) > 1e-15 {
				t.Errorf("%s series at step 0 = %g, want about %g", norm, got, want)
			}
		})
	}
}

// TestInterrupt: Ctrl-C during a run exits 130 with one line on standard
// error and leaves no file cut short under its final name.
func TestInterrupt(t *testing.T) {
	needLaunch(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Hosts that take a while and burn no CPU: the runs outlive the
	// controller (divergence.Replicate leaves launched runs going).
	slow := "sleep 15"
	hosts := hostsFile(t, t.TempDir(), map[string]string{"a": slow, "b": slow})
	out := t.TempDir()
	cmd := exec.Command(exe, "-out", out, "-hosts", hosts, "-no-sync", "-budget", "1m")
	cmd.Env = append(os.Environ(), "TOLERANCE_TEST_MAIN=1")
	stderr := exampletest.InterruptAtLine(t, cmd, "replicating", 300*time.Millisecond) // the boxes are running
	var last string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.Contains(l, ": launched ") && !strings.Contains(l, ": at ") { // progress lines
			last += l + "\n"
		}
	}
	if strings.Count(last, "\n") != 1 || !strings.Contains(last, "interrupted") {
		t.Errorf("stderr, progress lines aside, should be one line saying it was interrupted:\n%s", last)
	}
	for _, f := range []string{"hosts.json", "pairs.json", "pairs.csv"} {
		if _, err := os.Stat(filepath.Join(out, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written although the run was interrupted before it", f)
		}
	}
	partial, _ := filepath.Glob(filepath.Join(out, "*.partial*"))
	if len(partial) > 0 {
		t.Errorf("temporary files left: %v", partial)
	}
}
