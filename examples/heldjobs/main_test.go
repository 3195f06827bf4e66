package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/lstm"
)

func testOptions(out string) options {
	return options{out: out, jobs: 1500, seed: 3, j: 3, m: 6, e: 46, frame: time.Minute, hidden: 8, layers: 1,
		batch: 32, epochs: 4, patience: 2, lr: 3e-3, threshold: 0.5, snapshot: 0.9, engine: "native"}
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
			}
			b, err := os.ReadFile(filepath.Join(o.out, "metrics.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &metrics); err != nil {
				t.Fatal(err)
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
