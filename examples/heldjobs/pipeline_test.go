package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/internal/dagman"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/internal/testenv"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/sweep/condor"
)

// The static binary of this example, built once for the tests that run it
// as a separate process (CGO_ENABLED=0, as the HTCondor jobs need it).
var static struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

func staticBinary(t *testing.T) string {
	t.Helper()
	static.once.Do(func() {
		dir, err := os.MkdirTemp("", "heldjobs-bin-*")
		if err != nil {
			static.err = err
			return
		}
		static.path = filepath.Join(dir, "heldjobs")
		gobin, err := exec.LookPath("go")
		if err != nil {
			static.err = err
			return
		}
		cmd := exec.Command(gobin, "build", "-o", static.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		static.out, static.err = cmd.CombinedOutput()
	})
	if static.err != nil {
		t.Fatalf("building the static binary: %v\n%s", static.err, static.out)
	}
	return static.path
}

// smallSpec is the four-point search of specs/small.yaml.
const smallSpec = "specs/small.yaml"

func specText(t *testing.T) string {
	t.Helper()
	return string(mustRead(t, smallSpec))
}

func writeSpec(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// newLogs writes a synthetic global log of another pool (another seed), as
// it stood at the time of its 85th-percentile event, with jobs on hold.
func newLogs(t *testing.T, seed uint64) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: seed, Jobs: 900, HoldRate: 0.35, Header: true}); err != nil {
		t.Fatal(err)
	}
	// Cut after 85% of the lines, at an event boundary.
	lines := strings.SplitAfter(buf.String(), "\n")
	n := len(lines) * 85 / 100
	for n < len(lines) && strings.TrimSpace(lines[n-1]) != "..." {
		n++
	}
	p := filepath.Join(t.TempDir(), "EventLog")
	if err := os.WriteFile(p, []byte(strings.Join(lines[:n], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runBinary(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(staticBinary(t), args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestDecisionsInNewProcess trains with a spec in this process, decides
// the jobs on hold in new logs with the saved best model, then does the
// same in a new process (the built binary, -model -logs): the decisions
// file is identical, byte for byte. Bad inputs fail with a clear message
// and write nothing.
func TestDecisionsInNewProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example")
	}
	out := t.TempDir()
	var buf bytes.Buffer
	if err := runSpec(context.Background(), options{spec: smallSpec, out: out, backend: "local", workers: 2}, &buf); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	model := filepath.Join(out, heldjobs.BestDir)
	logs := newLogs(t, 11)
	here := t.TempDir()
	if err := runDecide(options{model: model, logs: logs, out: here}, &buf); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(here, "decisions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(want), "\n") - 1; n < 5 {
		t.Fatalf("only %d decisions:\n%s", n, want)
	}
	there := t.TempDir()
	if msg, err := runBinary(t, "-model", model, "-logs", logs, "-out", there); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	got, err := os.ReadFile(filepath.Join(there, "decisions.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("decisions differ between this process and a new one:\n%s\nvs\n%s", want, got)
	}

	// Bad input: a clear error, nothing written.
	noHold := filepath.Join(t.TempDir(), "quiet.log")
	var quiet []string
	for _, ev := range strings.Split(string(mustRead(t, logs)), "...\n") {
		if !strings.HasPrefix(strings.TrimSpace(ev), "012 ") {
			quiet = append(quiet, ev)
		}
	}
	os.WriteFile(noHold, []byte(strings.Join(quiet, "...\n")), 0o644)
	other := t.TempDir()
	heldjobs.SaveModel(other, mustModel(t, model), heldjobs.ModelInfo{J: 3, M: 6, FrameSeconds: 60, E: 46, Threshold: 0.5})
	info := bytes.Replace(mustRead(t, filepath.Join(other, heldjobs.ModelInfoFile)), []byte(`"version": 2`), []byte(`"version": 7`), 1)
	os.WriteFile(filepath.Join(other, heldjobs.ModelInfoFile), info, 0o644)
	badSpec := writeSpec(t, specText(t)+"epoch: 3\n")
	emptySpec := writeSpec(t, strings.Replace(specText(t), "hidden: [4, 8]", "hidden: []", 1))
	noMetric := writeSpec(t, strings.Replace(specText(t), "metric: f1", "metric: auc", 1))
	noHoldSpec := writeSpec(t, strings.Replace(specText(t), "synthetic: {jobs: 1500, seed: 3}", "logs: ["+strconv.Quote(noHold)+"]", 1))
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"logs with no held job", []string{"-model", model, "-logs", noHold}, "no job on hold"},
		{"model of another version", []string{"-model", other, "-logs", logs}, "version 7; this program reads version 2"},
		{"not a model directory", []string{"-model", t.TempDir(), "-logs", logs}, "not a held-job model directory"},
		{"unknown spec key", []string{"-spec", badSpec}, `spec key epoch: bad search spec: line 17: unexpected structure: unknown key "epoch"`},
		{"empty space", []string{"-spec", emptySpec}, "spec key space.hidden: bad search spec: empty list"},
		{"no such metric", []string{"-spec", noMetric}, `spec key metric: bad search spec: "auc" does not exist`},
		// The search's dataset directory is not left behind, empty (issue 19 item 2).
		{"search of logs with no held job", []string{"-spec", noHoldSpec}, "only 0 labelled held jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			msg, err := runBinary(t, append(tc.args, "-out", dir)...)
			if err == nil || !strings.Contains(msg, tc.msg) {
				t.Errorf("exit %v, output %q; want a failure saying %q", err, msg, tc.msg)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a failed run created %s", dir)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustModel(t *testing.T, dir string) *lstm.Model {
	t.Helper()
	m, _, err := heldjobs.LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCondorStaticBinary writes the spec's DAG with the static binary
// (-backend condor, which refuses a dynamically linked one) and runs it on
// this machine with dagman.Run: every node is the real binary in a
// scratch directory. The gathered tree chooses the same run as the search
// in this process, and its cleanup node drew the validation curves.
func TestCondorStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example and runs a DAG of it")
	}
	spec := smallSpec
	out := t.TempDir()
	if msg, err := runBinary(t, "-spec", spec, "-backend", "condor", "-out", out); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	dag := filepath.Join(out, "condor", "heldjobs.dag")
	if err := condor.CheckStatic(filepath.Join(out, "condor", "heldjobs")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := dagman.Run(ctx, dag, dagman.Config{Parallel: 2}); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(out, "condor", "cleanup", "results")
	got, err := heldjobs.ReadBest(res)
	if err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	var buf bytes.Buffer
	if err := runSpec(context.Background(), options{spec: spec, out: local, backend: "local", workers: 2}, &buf); err != nil {
		t.Fatal(err)
	}
	want, err := heldjobs.ReadBest(local)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != want.RunID || got.Value != want.Value || got.Test["f1"] != want.Test["f1"] {
		t.Errorf("the DAG chose %s (%v, test F1 %v), this process %s (%v, test F1 %v)", got.Slug, got.Value, got.Test["f1"], want.Slug, want.Value, want.Test["f1"])
	}
	if png := mustRead(t, filepath.Join(res, curvesFile)); !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Error("the cleanup node drew no curves.png")
	}
}

// TestSlurmStaticBinary runs specs/small.yaml, unchanged, with the built
// binary on the Slurm cluster (-backend slurm: its workers are the same
// binary's "node train" in Slurm job arrays) and in this process: the same
// best run and the same scores. It needs CROSSCLUSTER_SLURM=1.
func TestSlurmStaticBinary(t *testing.T) {
	if os.Getenv("CROSSCLUSTER_SLURM") != "1" {
		testenv.Skip(t, "Slurm tests need CROSSCLUSTER_SLURM=1 and a cluster (.ci/slurm-up.sh starts one)")
	}
	out := t.TempDir()
	if msg, err := runBinary(t, "-spec", smallSpec, "-backend", "slurm", "-workers", "2", "-out", out); err != nil {
		t.Fatalf("%v: %s", err, msg)
	}
	got, err := heldjobs.ReadBest(out)
	if err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	var buf bytes.Buffer
	if err := runSpec(context.Background(), options{spec: smallSpec, out: local, backend: "local", workers: 2}, &buf); err != nil {
		t.Fatal(err)
	}
	want, err := heldjobs.ReadBest(local)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != want.RunID || got.Value != want.Value || got.Test["f1"] != want.Test["f1"] || got.Completed != 4 {
		t.Errorf("Slurm chose %s (%v, test F1 %v, %d completed), this process %s (%v, test F1 %v)",
			got.Slug, got.Value, got.Test["f1"], got.Completed, want.Slug, want.Value, want.Test["f1"])
	}
	if ents, _ := filepath.Glob(filepath.Join(out, "slurm", "*.sh")); len(ents) == 0 {
		t.Error("no sbatch script under -out/slurm: the runs did not go through Slurm")
	}
}
