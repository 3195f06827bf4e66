package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/examples/heldjobs/internal/heldjobs"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/sweep"
	"github.com/google/go-cmp/cmp"
)

func testOptions(out string) options {
	return options{out: out, jobs: 1500, seed: 3, j: 3, m: 6, e: 46, frame: time.Minute, hidden: 8, layers: 1,
		batch: 32, epochs: 4, patience: 2, lr: 3e-3, threshold: 0.5, snapshot: 0.9, engine: "native", cell: "lstm"}
}

// TestRunShapeWindow: a -m -frame window longer than ten years is refused
// before anything is written (issue 19 item 4).
func TestRunShapeWindow(t *testing.T) {
	o := testOptions(filepath.Join(t.TempDir(), "out"))
	o.m, o.frame = 1000, 2e6*time.Hour
	err := run(context.Background(), o)
	if !errors.Is(err, heldjobs.ErrSpec) || !strings.Contains(err.Error(), "ten years") {
		t.Errorf("run with a window of 2e9 hours: %v, want heldjobs.ErrSpec", err)
	}
	if _, err := os.Stat(o.out); !os.IsNotExist(err) {
		t.Errorf("a refused run created %s", o.out)
	}
}

// TestRun runs the workflow on the built-in synthetic log and on rotated
// log files (-logs) and checks that every output opens and agrees with the
// others.
func TestRun(t *testing.T) {
	logs := t.TempDir()
	paths, _, err := synth.CondorRotated(logs, "EventLog", synth.CondorLogConfig{Seed: 4, Jobs: 1500, HoldRate: 0.4}, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		logs string
	}{
		{"synthetic", ""},
		{"rotated-files", strings.Join(paths, ",")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t.TempDir())
			o.logs = tc.logs
			if err := run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(o.out, "model.json"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := lstm.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if a := m.Architecture(); a.Inputs != o.j*o.e || a.Hidden != o.hidden || !a.NewestFirst {
				t.Errorf("saved architecture %+v", a)
			}
			raw, err := os.ReadFile(filepath.Join(o.out, "model_torch.npz"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lstm.ImportTorch(bytes.NewReader(raw), int64(len(raw))); err != nil {
				t.Error(err)
			}
			rows := readCSV(t, filepath.Join(o.out, "decisions.csv"))
			for _, r := range rows[1:] {
				p, err := strconv.ParseFloat(r[3], 64)
				if err != nil || p < 0 || p > 1 {
					t.Errorf("bad probability in %v", r)
				}
				if want := map[bool]string{true: "release", false: "remove"}[p >= o.threshold]; r[4] != want {
					t.Errorf("decision %q for p=%v", r[4], p)
				}
			}
			var metrics struct {
				OnHold int `json:"on_hold"`
				Train  struct {
					Epochs int `json:"epochs"`
				} `json:"training"`
				SplitOrder string                        `json:"split_order"`
				Scores     map[string]map[string]float64 `json:"test_f1_beside_baselines"`
			}
			b, err := os.ReadFile(filepath.Join(o.out, "metrics.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &metrics); err != nil {
				t.Fatal(err)
			}
			// Real logs are split in time by default, the synthetic log at random.
			if want := map[bool]string{true: "time-ordered", false: "random"}[tc.logs != ""]; metrics.SplitOrder != want {
				t.Errorf("split %q, want %q", metrics.SplitOrder, want)
			}
			if len(metrics.Scores) != 4 || metrics.Scores["hold-code rule"]["f1_hi"] < metrics.Scores["hold-code rule"]["f1"] {
				t.Errorf("test scores beside the baselines: %v", metrics.Scores)
			}
			if metrics.OnHold != len(rows)-1 {
				t.Errorf("metrics.json says %d jobs on hold, decisions.csv has %d", metrics.OnHold, len(rows)-1)
			}
			if hist := readCSV(t, filepath.Join(o.out, "history.csv")); len(hist)-1 != metrics.Train.Epochs {
				t.Errorf("history.csv has %d epochs, metrics.json %d", len(hist)-1, metrics.Train.Epochs)
			}
			png, err := os.ReadFile(filepath.Join(o.out, "loss.png"))
			if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Errorf("loss.png is not a PNG (%v)", err)
			}
		})
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// heldJobsMinF1 is the test-set F1 the default workflow must reach on the
// synthetic log. internal/synth makes the outcome depend, noisily, on the
// events before the first hold; the default run scores about 0.86 (seeds 1
// to 5: 0.85 to 0.88, docs/heldjobs.md) and this smaller one 0.79 to 0.85
// (seeds 1 to 6; 0.85 at seed 3, the one used here), while a model that
// cannot see that history stays near 0.56 (the generator before that
// change), so 0.75 fails when the model or the tensors lose it.
const heldJobsMinF1 = 0.75

// TestLearns trains a small model on a mid-sized synthetic log and checks
// that it beats chance clearly on the held-out jobs.
func TestLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model for a few seconds")
	}
	o := testOptions(t.TempDir())
	o.jobs, o.j, o.m, o.hidden, o.batch, o.epochs, o.patience = 8000, 4, 10, 16, 64, 20, 5
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var metrics struct {
		Test struct {
			F1 float64 `json:"f1"`
		} `json:"test"`
	}
	b, err := os.ReadFile(filepath.Join(o.out, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &metrics); err != nil {
		t.Fatal(err)
	}
	if metrics.Test.F1 < heldJobsMinF1 {
		t.Errorf("test F1 %.4f, want at least %v", metrics.Test.F1, heldJobsMinF1)
	}
}

// TestSearchSweep runs a tiny hyperparameter search through the sweep
// package (a ledger under -out, one Local run per trial) and checks that
// the chosen trial is the one with the highest validation F1 in the sweep's
// result files, that the example continues with that trial's model, and
// that running it again resumes: no trial is trained twice, and a widened
// search trains only the new trials.
func TestSearchSweep(t *testing.T) {
	o := testOptions(t.TempDir())
	o.search, o.workers = true, 2
	o.searchShapes, o.searchHidden, o.searchLayers, o.searchLR, o.searchBatch = "3x6x60s,2x4x120s", "4,8", "1", "3e-3", "32"

	// First invocation: every trial is trained.
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	first := checkSearch(t, o, 4, 4)

	// Second invocation: every trial comes from the ledger.
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	second := checkSearch(t, o, 4, 0)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the rerun changed the trials' result files (-first +second):\n%s", diff)
	}

	// A widened search trains only its new trials.
	o.searchHidden = "4,8,12"
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	third := checkSearch(t, o, 6, 2)
	for id, r := range first {
		if third[id] != r {
			t.Errorf("run %s: result file changed by the widened search: %+v, then %+v", id, r, third[id])
		}
	}
}

// resultFile identifies one version of a run's result.json.
type resultFile struct {
	ModTime time.Time
	Size    int64
}

// checkSearch checks the outputs of a search of want trials of which
// trained were trained by the last invocation, and returns each run's
// result file.
func checkSearch(t *testing.T, o options, want, trained int) map[string]resultFile {
	t.Helper()
	var metrics struct {
		Model struct {
			Inputs, Hidden, Layers int
		} `json:"model"`
		Search struct {
			Ledger  string `json:"ledger"`
			Trials  int    `json:"trials"`
			Trained int    `json:"trained_this_invocation"`
			Best    struct {
				RunID string `json:"run_id"`
			} `json:"best"`
		} `json:"search"`
	}
	b, err := os.ReadFile(filepath.Join(o.out, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &metrics); err != nil {
		t.Fatal(err)
	}
	if metrics.Search.Trials != want || metrics.Search.Trained != trained {
		t.Errorf("metrics.json: %d trials, %d trained by this invocation; want %d and %d",
			metrics.Search.Trials, metrics.Search.Trained, want, trained)
	}

	// Every run of the ledger completed on its first attempt, once.
	l, err := sweep.OpenLedgerReadOnly(metrics.Search.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	runs, err := l.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != want {
		t.Fatalf("ledger has %d runs, want %d", len(runs), want)
	}
	work := filepath.Join(filepath.Dir(metrics.Search.Ledger), "work")
	files := map[string]resultFile{}
	type scored struct {
		id       string
		f1, loss float64
	}
	var best *scored
	for _, r := range runs {
		if r.State != sweep.Completed || r.Attempt != 1 || r.Completions != 1 {
			t.Errorf("run %s: %s, attempt %d, completions %d; want completed once, on attempt 1", r.Slug, r.State, r.Attempt, r.Completions)
			continue
		}
		dir := sweep.AttemptDir(work, r.ID, r.Attempt)
		fi, err := os.Stat(filepath.Join(dir, sweep.ResultFile))
		if err != nil {
			t.Fatal(err)
		}
		files[r.ID] = resultFile{fi.ModTime(), fi.Size()}
		res, err := sweep.ReadResult(dir)
		if err != nil {
			t.Fatal(err)
		}
		s := scored{r.ID, res.Metrics["valid_f1"], res.Metrics["valid_loss"]}
		if best == nil || s.f1 > best.f1 || s.f1 == best.f1 && s.loss < best.loss {
			best = &s
		}
	}
	if best == nil {
		t.Fatal("no completed run")
	}
	if metrics.Search.Best.RunID != best.id {
		t.Errorf("chosen run %s, but run %s has the highest validation F1 (%v, loss %v)", metrics.Search.Best.RunID, best.id, best.f1, best.loss)
	}

	// search.csv lists every trial and marks the same one.
	rows := readCSV(t, filepath.Join(o.out, "search.csv"))
	if len(rows) != want+1 {
		t.Fatalf("search.csv has %d rows, want %d trials and a header", len(rows), want+1)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	var marked []string
	var hidden, j int
	for _, r := range rows[1:] {
		if r[col["best"]] == "true" {
			marked = append(marked, r[col["run_id"]])
			hidden, _ = strconv.Atoi(r[col["hidden"]])
			j, _ = strconv.Atoi(r[col["j"]])
		}
	}
	if len(marked) != 1 || marked[0] != best.id {
		t.Errorf("search.csv marks %v as best, want [%s]", marked, best.id)
	}
	// The example continued with that trial's model.
	if m := metrics.Model; m.Hidden != hidden || m.Inputs != j*o.e {
		t.Errorf("saved model %+v, the best trial has hidden %d and j %d", m, hidden, j)
	}
	return files
}
