package main

import (
	"bufio"
	"encoding/json"
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
			if err := run(out, data, e, "inclusive", "published", "knn", 1); err != nil {
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

// TestDataWithoutExperiment: a -data directory that does not hold the
// experiment's directory is refused before anything is written, saying
// what it should hold.
func TestDataWithoutExperiment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	err := run(out, t.TempDir(), "reliabuild", "inclusive", "corrected", "knn", 1)
	if err == nil || !strings.Contains(err.Error(), "has no reliabuild/ directory") {
		t.Errorf("err %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("%s was created", out)
	}
}
