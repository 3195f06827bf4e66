package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
	"github.com/crosscluster/crosscluster/internal/pubdata"
)

// TestPublishedFigures runs the example on the published data under the
// published rules and checks that every figure of the published
// plot-results.py scripts is written and drawn, and that jobs.csv holds one
// row per submission of every level.
func TestPublishedFigures(t *testing.T) {
	if raceEnabled {
		// About 35 s for reliabuild alone under the race detector; the
		// example starts no goroutines of its own, and the library's tests
		// cover the engine and its concurrent loading under -race.
		t.Skip("skipped under -race")
	}
	data := pubdata.Need(t, "rainbow")
	exps := []string{"reliabuild"}
	if !testing.Short() {
		exps = append(exps, "spack-build") // 31,622 builds: a few seconds
	}
	figs := map[string][]string{
		"reliabuild": {"build-success.png", "marginal-score.png", "percent-matched.png", "count-unmatched.png"},
		"spack-build": {"build-success.png", "clusters-matched.png", "additional-runtime.png", "additional-cost.png",
			"additional-cost-per-job.png", "count-unmatched.png", "additional-runtime-hists.png", "additional-cost-hists.png",
			"runtimes-by-package.png", "costs-by-package.png"},
	}
	for _, e := range exps {
		t.Run(e, func(t *testing.T) {
			out := t.TempDir()
			cfg, err := parseFlags([]string{"-out", out, "-data", data, "-experiment", e, "-rules", "published"}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if err := run(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			for _, f := range figs[e] {
				plottest.Check(t, filepath.Join(out, f), 0, 0)
			}
			b, err := os.ReadFile(filepath.Join(out, "scores.json"))
			if err != nil {
				t.Fatal(err)
			}
			var scores struct {
				Levels []struct {
					Name string
					Jobs int
				}
			}
			if err := json.Unmarshal(b, &scores); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(out, "jobs.csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows := map[string]int{}
			sc := bufio.NewScanner(f)
			sc.Scan()
			if sc.Text()+"\n" != jobsHeader {
				t.Fatalf("jobs.csv header %q", sc.Text())
			}
			for sc.Scan() {
				rows[strings.SplitN(sc.Text(), ",", 2)[0]]++
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			for _, l := range scores.Levels {
				if rows[l.Name] != l.Jobs {
					t.Errorf("%s: %d rows in jobs.csv, %d submissions in scores.json", l.Name, rows[l.Name], l.Jobs)
				}
			}
		})
	}
}

// TestFlags: every flag is checked before any work; a refused command
// line writes nothing.
func TestFlags(t *testing.T) {
	data := t.TempDir() // holds neither experiment
	if err := os.Mkdir(filepath.Join(data, "reliabuild"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // "" when the command line is valid
	}{
		{"defaults", nil, ""},
		{"all set", []string{"-experiment", "spack-build", "-bounds", "exclusive", "-rules", "published", "-model", "linear", "-seed", "7"}, ""},
		{"stray argument", []string{"data/rainbow"}, `unexpected argument "data/rainbow"`},
		{"stray after flags", []string{"-seed", "2", "extra"}, `unexpected argument "extra"`},
		{"unknown model", []string{"-model", "gbm"}, `unknown -model "gbm"`},
		{"unknown bounds", []string{"-bounds", "open"}, `unknown -bounds "open"`},
		{"unknown rules", []string{"-rules", "fixed"}, `unknown -rules "fixed"`},
		{"unknown experiment", []string{"-experiment", "all"}, `unknown -experiment "all"`},
		{"negative seed", []string{"-seed", "-1"}, `invalid value "-1" for flag -seed`},
		{"empty out", []string{"-out", ""}, "-out is empty"},
		{"unknown flag", []string{"-sed", "1"}, "flag provided but not defined: -sed"},
		{"data without spack-build", []string{"-data", data}, "has no spack-build/ directory"},
		{"data with reliabuild", []string{"-data", data, "-experiment", "reliabuild"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := parseFlags(append([]string{"-out", out}, tc.args...), io.Discard)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("parseFlags: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parseFlags: %v, want an error containing %q", err, tc.want)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Errorf("%s was created by a refused command line", out)
			}
		})
	}
}

// TestInterruptedLeavesNoPartialFile: a run cancelled while the first
// experiment is being scored leaves no jobs.csv (and no temporary file)
// behind, and reports the cancellation.
func TestInterruptedLeavesNoPartialFile(t *testing.T) {
	out := t.TempDir()
	cfg, err := parseFlags([]string{"-out", out, "-experiment", "reliabuild"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := run(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	names, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n.Name() == "jobs.csv" || n.Name() == "scores.json" || n.Name() == "scores.csv" || strings.Contains(n.Name(), ".tmp") {
			t.Errorf("%s left behind by a cancelled run", n.Name())
		}
	}
}

// TestDataWithoutExperiment: a -data directory that does not hold the
// experiment's directory is refused before anything is written, saying
// what it should hold.
func TestDataWithoutExperiment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	_, err := parseFlags([]string{"-out", out, "-data", t.TempDir(), "-experiment", "reliabuild"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "has no reliabuild/ directory") {
		t.Errorf("err %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("%s was created", out)
	}
}
