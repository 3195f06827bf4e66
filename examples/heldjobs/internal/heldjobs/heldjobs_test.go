package heldjobs

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/internal/testenv"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/sweep"
)

// TestMain makes the test binary a node command (the process, Slurm and
// DAG tests start it as their worker) when its first argument is "node".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "node" {
		os.Exit(RunNode(context.Background(), os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// smallSpec is a four-point search on a small synthetic log: two shapes ×
// two hidden sizes, three epochs; every run takes well under a second.
const smallSpec = `
name: small
data:
  synthetic: {jobs: 1500, seed: 3}
  seed: 3
space:
  shape: [3x6x60s, 2x4x120s]
  hidden: [4, 8]
  layers: [1]
  lr: [3e-3]
  batch: [32]
epochs: 3
patience: 2
metric: f1
`

func loadSpec(t *testing.T, text string) *Spec {
	t.Helper()
	s, err := LoadSpec(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadSpec(t *testing.T) {
	s := loadSpec(t, smallSpec+"random: 3\nresources: {cpus: 2, memory: 3G, disk: 5G}\nretries: 4\nthreshold: 0.6\nengine: native32\n")
	if s.Space.Size() != 4 || s.Random != 3 || s.Epochs != 3 || s.Patience != 2 || s.Metric != F1 || s.Retries != 4 ||
		s.Resources.CPUs != 2 || s.Resources.MemoryMB != 3072 || s.Resources.DiskMB != 5120 || s.Threshold != 0.6 || s.Engine != "native32" {
		t.Errorf("spec %+v", s)
	}
	if sh := s.Space.Shape[1]; sh != (Shape{J: 2, M: 4, Frame: 120e9}) || sh.String() != "2x4x120s" {
		t.Errorf("shape %+v %s", sh, sh)
	}
	// Defaults.
	d := loadSpec(t, "space: {shape: [4x10x60s], hidden: [8], layers: [1], lr: [0.001], batch: [64]}\n")
	if d.Epochs != DefaultEpochs || d.Patience != DefaultPatience || d.Metric != F1 || d.Retries != DefaultRetries ||
		d.Data.E != 46 || d.Data.Train != 0.6 || d.Data.Valid != 0.2 || d.Data.Synthetic.Jobs != defaultJobs || d.Engine != "native" {
		t.Errorf("defaults %+v", d)
	}
	// Random draws: distinct grid points, the same for the same seed.
	_, pts, err := s.Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	_, again, _ := s.Sweep("x")
	if len(pts) != 3 || fmt.Sprint(pts) != fmt.Sprint(again) {
		t.Errorf("draws %v, again %v", pts, again)
	}
	// A worker process recovers each run's slug from its parameters.
	for _, p := range pts {
		if got := slugOf(p.Params); got != p.Slug {
			t.Errorf("slugOf(params of %s) = %q", p.Slug, got)
		}
	}
	if got := slugOf(map[string]sweep.Value{"x": sweep.ValueOf("1")}); got != "" {
		t.Errorf("slugOf of a run of another sweep = %q, want \"\"", got)
	}
	seen := map[string]bool{}
	for _, p := range pts {
		if seen[p.ID] {
			t.Errorf("point %s drawn twice", p.Slug)
		}
		seen[p.ID] = true
	}
}

// TestSpaceSizeOverflow: a space of 2^64 points is refused by the point
// limit; before, Space.Size wrapped around to 0, the spec passed, and
// Sweep tried to expand it.
func TestSpaceSizeOverflow(t *testing.T) {
	const k = 1 << 16
	var sp Space
	for i := range 4096 {
		sp.Hidden = append(sp.Hidden, i+1)
	}
	for i := range 16 {
		sp.Layers = append(sp.Layers, i+1)
	}
	for i := range k {
		sp.Shape = append(sp.Shape, Shape{J: 1, M: 1, Frame: time.Duration(i+1) * time.Second})
		sp.LearningRate = append(sp.LearningRate, float64(i+1)*1e-5)
		sp.Batch = append(sp.Batch, i+1)
	}
	if n := sp.Size(); n != math.MaxInt {
		t.Errorf("Size of a 2^64-point space = %d, want math.MaxInt", n)
	}
	s := Spec{Space: sp, Epochs: 1}
	err := s.Validate()
	var se *SpecError
	if !errors.As(err, &se) || se.Key != "space" {
		t.Errorf("2^64 points: %v, want a spec error at key space", err)
	}
	// In Go, Retries -1 is the default and other negative values are refused.
	ok := Spec{Space: Space{Shape: []Shape{{J: 1, M: 1, Frame: time.Second}}, Hidden: []int{1}, Layers: []int{1}, LearningRate: []float64{1}, Batch: []int{1}}, Retries: -1}
	if err := ok.Validate(); err != nil || ok.Retries != DefaultRetries {
		t.Errorf("Retries -1: %v, retries %d, want the default %d", err, ok.Retries, DefaultRetries)
	}
	ok.Retries = -5
	if err := ok.Validate(); !errors.As(err, &se) || se.Key != "retries" {
		t.Errorf("Retries -5: %v, want a spec error at key retries", err)
	}
	small := Space{Shape: make([]Shape, 3), Hidden: make([]int, 2), Layers: make([]int, 1), LearningRate: make([]float64, 5), Batch: make([]int, 7)}
	if n := small.Size(); n != 210 {
		t.Errorf("Size = %d, want 210", n)
	}
}

func TestLoadSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, key, msg string
	}{
		{"empty document", "", "(document)", "empty"},
		{"unknown key", smallSpec + "epoch: 4\n", "epoch", `line 15: unexpected structure: unknown key "epoch" (did you mean "epochs"?)`},
		{"null value", strings.Replace(smallSpec, "name: small", "name:", 1), "name", "line 2: unexpected structure: want a value, got null"},
		{"not a list", strings.Replace(smallSpec, "hidden: [4, 8]", "hidden: 4", 1), "space.hidden", "line 8: unexpected structure: want a list"},
		{"infinite", smallSpec + "threshold: .inf\n", "threshold", "want a number"},
		{"NaN", smallSpec + "threshold: NaN\n", "threshold", "want a finite number, got NaN"},
		{"unknown nested key", strings.Replace(smallSpec, "hidden:", "hiden:", 1), "space.hiden", "unknown key"},
		{"unknown data key", strings.Replace(smallSpec, "seed: 3\nspace", "sed: 3\nspace", 1), "data.sed", "unknown key"},
		{"no space", "epochs: 3\n", "space", "empty"},
		{"empty axis", strings.Replace(smallSpec, "hidden: [4, 8]", "hidden: []", 1), "space.hidden", "empty"},
		{"missing axis", strings.Replace(smallSpec, "  hidden: [4, 8]\n", "", 1), "space.hidden", "empty"},
		{"metric", smallSpec + "metric: auc\n", "metric", "duplicate"},
		{"no such metric", strings.Replace(smallSpec, "metric: f1", "metric: auc", 1), "metric", `"auc" does not exist`},
		{"bad shape", strings.Replace(smallSpec, "3x6x60s", "3x6", 1), "space.shape[0]", "JxMxFRAME"},
		{"repeated value", strings.Replace(smallSpec, "hidden: [4, 8]", "hidden: [4, 4]", 1), "space.hidden[1]", "repeats"},
		{"too many draws", smallSpec + "random: 5\n", "random", "only 4 points"},
		{"no such model", smallSpec + "model: rnn\n", "model", `"rnn": want lstm or gru`},
		{"empty model", smallSpec + "model: \"\"\n", "model", "empty"},
		{"bad number", strings.Replace(smallSpec, "lr: [3e-3]", "lr: [fast]", 1), "space.lr[0]", `line 10: unexpected structure: want a number, got "fast"`},
		{"bad split", strings.Replace(smallSpec, "seed: 3\nspace", "seed: 3\n  split: [0.8, 0.2]\nspace", 1), "data.split", "test set"},
		{"bad engine", smallSpec + "engine: gpu\n", "engine", "native"},
		{"logs and synthetic", strings.Replace(smallSpec, "seed: 3\nspace", "seed: 3\n  logs: [a.log]\nspace", 1), "data", "choose one"},
		{"bad resources", smallSpec + "resources: {memory: lots}\n", "resources.memory", ""},
		{"not yaml", "space: [", "(document)", ""},
		// A key given with the value that stands for the default in Go is
		// refused, not silently replaced by the default (issue 19 item 1).
		{"negative retries", smallSpec + "retries: -5\n", "retries", `want a non-negative integer, got "-5"`},
		{"retries -1", smallSpec + "retries: -1\n", "retries", `want a non-negative integer, got "-1"`},
		{"zero threshold", smallSpec + "threshold: 0\n", "threshold", "strictly between 0 and 1"},
		{"threshold one", smallSpec + "threshold: 1\n", "threshold", "strictly between 0 and 1"},
		{"zero epochs", strings.Replace(smallSpec, "epochs: 3", "epochs: 0", 1), "epochs", "0: want at least 1"},
		{"zero patience", strings.Replace(smallSpec, "patience: 2", "patience: 0", 1), "patience", "0: want at least 1"},
		{"negative patience", strings.Replace(smallSpec, "patience: 2", "patience: -3", 1), "patience", `want a non-negative integer, got "-3"`},
		{"zero e", strings.Replace(smallSpec, "seed: 3\nspace", "seed: 3\n  e: 0\nspace", 1), "data.e", "0: want 1 to 1000"},
		{"zero split", strings.Replace(smallSpec, "seed: 3\nspace", "seed: 3\n  split: [0, 0]\nspace", 1), "data.split", "[0, 0]"},
		{"zero jobs", strings.Replace(smallSpec, "jobs: 1500", "jobs: 0", 1), "data.synthetic.jobs", "0: want 10"},
		{"zero snapshot", strings.Replace(smallSpec, "seed: 3}", "seed: 3, snapshot: 0}", 1), "data.synthetic.snapshot", "0: want a quantile"},
		{"empty metric", strings.Replace(smallSpec, "metric: f1", "metric: ''", 1), "metric", "empty"},
		{"empty engine", smallSpec + "engine: ''\n", "engine", "empty"},
		{"empty name", strings.Replace(smallSpec, "name: small", "name: ''", 1), "name", "empty"},
		{"logs and zero synthetic", "data: {logs: [a.log], synthetic: {jobs: 0}}\nspace: {shape: [1x1x1s], hidden: [1], layers: [1], lr: [1], batch: [1]}\n", "data", "choose one"},
		{"logs and empty synthetic", "data: {logs: [a.log], synthetic: {}}\nspace: {shape: [1x1x1s], hidden: [1], layers: [1], lr: [1], batch: [1]}\n", "data", "choose one"},
		{"second document", smallSpec + "---\nepochs: 5\n", "(document)", "second YAML document at line 16"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantSpecError(t, tc.text, tc.key, tc.msg) })
	}
}

// wantSpecError checks that LoadSpec refuses text with a *SpecError
// wrapping ErrSpec at key whose message holds msg.
func wantSpecError(t *testing.T, text, key, msg string) {
	t.Helper()
	_, err := LoadSpec(strings.NewReader(text))
	var se *SpecError
	if !errors.As(err, &se) || !errors.Is(err, ErrSpec) {
		t.Fatalf("error %v, want a *SpecError wrapping ErrSpec", err)
	}
	if se.Key != key || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), "heldjobs: spec key ") {
		t.Errorf("error %q (key %q), want key %q and %q", err, se.Key, key, msg)
	}
}

// searchIn runs the small search in-process into out.
func searchIn(t *testing.T, spec *Spec, out string, backend sweep.Backend) *Outcome {
	t.Helper()
	if backend == nil {
		backend = &sweep.Local{Func: Worker(filepath.Join(out, DatasetDir), nil)}
	}
	s := &Search{Spec: spec, Out: out, Backend: backend, Parallel: 2, PollInterval: 20e6}
	oc, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return oc
}

func readCSV(t *testing.T, path string) (map[string]int, [][]string) {
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
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	return col, rows[1:]
}

// TestSearchLocal runs the small search in this process and checks the
// choice against the runs' own results, the best-model files, the tracking
// tables, and that a rerun trains nothing.
func TestSearchLocal(t *testing.T) {
	out := t.TempDir()
	spec := loadSpec(t, smallSpec)
	oc := searchIn(t, spec, out, nil)
	if oc.Sweep.Completed != 4 || len(oc.Runs) != 4 {
		t.Fatalf("summary %+v, %d runs", oc.Sweep, len(oc.Runs))
	}
	// The best run has the highest validation F1 of the result files.
	bestID, bestF1 := "", -1.0
	for _, r := range oc.Runs {
		res, err := sweep.ReadResult(r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Metrics["valid_f1"]; f > bestF1 {
			bestID, bestF1 = r.ID, f
		}
	}
	b, err := ReadBest(out)
	if err != nil {
		t.Fatal(err)
	}
	if b.RunID != oc.Runs[oc.Best].ID || b.Value != bestF1 {
		t.Errorf("bestmodel.json names %s (%v); the highest validation F1 is %v (run %s)", b.RunID, b.Value, bestF1, bestID)
	}
	info, err := os.ReadFile(filepath.Join(out, BestInfoFile))
	if err != nil || !strings.Contains(string(info), "run_id: "+b.RunID+"\n") || !strings.Contains(string(info), "model: bestmodel\n") {
		t.Errorf("bestmodel.info:\n%s (%v)", info, err)
	}
	if b.Params["hidden"] == nil || b.Params["shape"] == nil || b.Params["epochs"] == nil || b.Epoch < 1 || b.Test["f1"] == 0 {
		t.Errorf("bestmodel.json lacks parameters or scores: %+v", b)
	}
	m, mi, err := LoadModel(filepath.Join(out, BestDir))
	if err != nil {
		t.Fatal(err)
	}
	if mi.RunID != b.RunID || m.Architecture().Hidden != int(b.Params["hidden"].(float64)) {
		t.Errorf("best model %+v, architecture %+v", mi, m.Architecture())
	}
	// Tracking: one row per run, one per run and epoch.
	col, rows := readCSV(t, filepath.Join(out, TrackingDir, RunsTable+".csv"))
	if len(rows) != 4 {
		t.Fatalf("runs.csv has %d rows", len(rows))
	}
	epochs := 0
	for _, r := range rows {
		n, _ := strconv.Atoi(r[col["epochs"]])
		epochs += n
		if (r[col["best"]] == "true") != (r[col["run_id"]] == b.RunID) {
			t.Errorf("runs.csv marks %s best=%s", r[col["slug"]], r[col["best"]])
		}
	}
	ecol, erows := readCSV(t, filepath.Join(out, TrackingDir, EpochsTable+".csv"))
	if len(erows) != epochs {
		t.Errorf("epochs.csv has %d rows, the runs trained %d epochs", len(erows), epochs)
	}
	for _, r := range erows {
		if r[ecol["valid_loss"]] == "" || r[ecol["train_loss"]] == "" || r[ecol["epoch_seconds"]] == "" {
			t.Errorf("epochs.csv row %v lacks a metric", r)
		}
	}
	// A rerun resumes: nothing is trained again.
	again := searchIn(t, spec, out, nil)
	if again.Sweep.Completed != 0 || again.Runs[again.Best].ID != b.RunID {
		t.Errorf("rerun: %+v, best %s", again.Sweep, again.Runs[again.Best].Slug)
	}
	// A widened axis trains only its new points.
	wide := loadSpec(t, strings.Replace(smallSpec, "hidden: [4, 8]", "hidden: [4, 8, 12]", 1))
	if w := searchIn(t, wide, out, nil); w.Sweep.Completed != 2 || len(w.Runs) != 6 {
		t.Errorf("widened search: %+v, %d runs", w.Sweep, len(w.Runs))
	}
	// Other data in the same directory is refused before anything runs.
	other := loadSpec(t, strings.Replace(smallSpec, "synthetic: {jobs: 1500, seed: 3}", "synthetic: {jobs: 1500, seed: 4}", 1))
	_, err = (&Search{Spec: other, Out: out, Backend: &sweep.Local{Func: Worker(filepath.Join(out, DatasetDir), nil)}}).Run(context.Background())
	if !errors.Is(err, ErrDataset) || !strings.Contains(err.Error(), "other data") {
		t.Errorf("a search of other data in the same directory: %v", err)
	}
}

// TestTrackingPandas reads the tracking tables of a search with pandas
// (testdata/read_tracking.py), when /usr/bin/python3 has it: both forms,
// CSV with the metadata's dtypes and JSON Lines, hold the same table, and
// pandas finds the best run and its kept epoch's validation loss as the
// ledger has them.
func TestTrackingPandas(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import pandas").Run(); err != nil {
		testenv.Skipf(t, "%s with pandas is needed (%v)", py, err)
	}
	oc := localSmall(t)
	out := filepath.Dir(filepath.Dir(oc.Runs[0].Dir))
	out = filepath.Dir(filepath.Dir(out)) // <out>/work/runs/<id>/a1 -> <out>
	b, err := exec.Command(py, filepath.Join("testdata", "read_tracking.py"), filepath.Join(out, TrackingDir)).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var got struct {
		Runs, Epochs  int
		BestEpoch     int `json:"best_epoch"`
		EpochsSum     int `json:"epochs_sum"`
		Best          string
		KeptValidLoss float64 `json:"kept_valid_loss"`
		Dtypes        map[string]string
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	best := oc.Runs[oc.Best]
	if got.Runs != 4 || got.Epochs != got.EpochsSum || got.Best != best.ID || got.BestEpoch != int(best.metric("best_epoch")) || got.KeptValidLoss != best.metric("valid_loss") {
		t.Errorf("pandas read %+v; the best run is %s with validation loss %v", got, best.ID, best.metric("valid_loss"))
	}
	if want := map[string]string{"attempt": "int64", "best": "bool", "lr": "float64", "valid_f1": "float64", "shape": "object"}; fmt.Sprint(got.Dtypes) != fmt.Sprint(want) {
		t.Errorf("pandas dtypes %v, want %v", got.Dtypes, want)
	}
}

// TestSearchMetrics runs the small search with the metric set to ROC AUC
// and to the validation loss: each run keeps the first epoch with the best
// value of that metric in its own per-epoch series, and the search chooses
// the run with the best kept value.
func TestSearchMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two small searches")
	}
	for _, m := range []Metric{ROCAUC, ValidLoss} {
		t.Run(string(m), func(t *testing.T) {
			spec := loadSpec(t, strings.NewReplacer("metric: f1", "metric: "+string(m), "epochs: 3", "epochs: 8", "patience: 2", "patience: 3").Replace(smallSpec))
			oc := searchIn(t, spec, t.TempDir(), nil)
			bestV := math.NaN()
			for _, r := range oc.Runs {
				s := r.Result.Series[m.Key()]
				kept := 0
				for i, v := range s.Value {
					if kept == 0 || better(m, v, s.Value[kept-1]) {
						kept = i + 1
					}
				}
				if got := int(r.metric("best_epoch")); got != kept {
					t.Errorf("run %s kept epoch %d; its %s series %v is best first at epoch %d", r.Slug, got, m.Key(), s.Value, kept)
				}
				if v := r.metric(m.Key()); v != s.Value[kept-1] {
					t.Errorf("run %s: %s %v, its series at epoch %d has %v", r.Slug, m.Key(), v, kept, s.Value[kept-1])
				}
				if v := r.metric(m.Key()); math.IsNaN(bestV) || better(m, v, bestV) {
					bestV = v
				}
			}
			if oc.Model.Value != bestV || oc.Model.Metric != m {
				t.Errorf("bestmodel.json: %s %v, the best run's %v", oc.Model.Metric, oc.Model.Value, bestV)
			}
		})
	}
}

// TestParseNoHeldJob: logs without a held job are refused before anything
// is written; before, Parse created DIR/dataset first and left it empty.
func TestParseNoHeldJob(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: 2, Jobs: 300, HoldRate: -1, Header: true}); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "EventLog")
	if err := os.WriteFile(log, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := loadSpec(t, strings.Replace(smallSpec, "synthetic: {jobs: 1500, seed: 3}", "logs: ["+strconv.Quote(log)+"]", 1))
	out := filepath.Join(dir, "out")
	_, err := Parse(spec, filepath.Join(out, DatasetDir), nil)
	if !errors.Is(err, ErrDataset) || !strings.Contains(err.Error(), "only 0 labelled held jobs") {
		t.Errorf("Parse of logs with no held job: %v, want ErrDataset", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Parse left %s (%v)", out, err)
	}
	// Nor inside an output directory that exists already.
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(spec, filepath.Join(out, DatasetDir), nil); !errors.Is(err, ErrDataset) {
		t.Errorf("Parse of logs with no held job: %v, want ErrDataset", err)
	}
	if ents, err := os.ReadDir(out); err != nil || len(ents) != 0 {
		t.Errorf("a failed Parse left %v in %s (%v)", ents, out, err)
	}
}

// tree reads the regular files under dir, by relative path ("d/" for a
// directory).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReplaceDir: bestmodel/ holds the files of one run, never a mix of
// two (issue 19 item 3). Before, the best model was copied file by file,
// in name order, over the old one: a failure or a kill between two files
// left the new run's first files beside the old run's others, and a file
// only the old run had stayed for good. Here the old copy has a directory
// where the new one has a file, which stopped the file-by-file copy
// half-way.
func TestReplaceDir(t *testing.T) {
	root := t.TempDir()
	src, dst := filepath.Join(root, "model_new"), filepath.Join(root, "bestmodel")
	newFiles := map[string]string{"a.json": "new a", "b.json": "new b", "sub/c": "new c", "sub/": ""}
	oldFiles := map[string]string{"a.json": "old a", "b.json/": "", "b.json/x": "old x", "only_old": "old"}
	writeTree(t, src, newFiles)
	writeTree(t, dst, oldFiles)
	// Siblings a killed replace left behind are removed.
	writeTree(t, root, map[string]string{".bestmodel.new-1/a.json": "partial", ".bestmodel.old-2/a.json": "older"})
	err := replaceDir(src, dst)
	got := tree(t, dst)
	if fmt.Sprint(got) != fmt.Sprint(newFiles) && fmt.Sprint(got) != fmt.Sprint(oldFiles) {
		t.Fatalf("replaceDir (error %v) left a mix of two copies: %v", err, got)
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(newFiles) {
		t.Fatalf("replaceDir: %v, dst %v, want %v", err, got, newFiles)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 2 {
		t.Errorf("left beside bestmodel: %v", ents)
	}
	if fmt.Sprint(tree(t, src)) != fmt.Sprint(newFiles) {
		t.Errorf("source changed: %v", tree(t, src))
	}
	// A source that cannot be read leaves dst as it was.
	if err := replaceDir(filepath.Join(root, "missing"), dst); err == nil {
		t.Errorf("replaceDir of a missing source: no error")
	}
	if got := tree(t, dst); fmt.Sprint(got) != fmt.Sprint(newFiles) {
		t.Errorf("a failed replaceDir changed dst: %v", got)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 2 {
		t.Errorf("a failed replaceDir left %v", ents)
	}
	// Into a directory that does not exist yet.
	fresh := filepath.Join(root, "out", "bestmodel")
	if err := replaceDir(src, fresh); err != nil || fmt.Sprint(tree(t, fresh)) != fmt.Sprint(newFiles) {
		t.Errorf("replaceDir into a new directory: %v, %v", err, tree(t, fresh))
	}
}

// TestParseShapeWindow: a shape whose window M×FRAME is longer than ten
// years is refused, in a spec file and in a Spec built in Go (issue 19
// item 4). Before, 2x1000x2000000h was accepted and its window, 2×10^9
// hours, overflowed the int64 nanoseconds of eventlog.Builder and Decide.
func TestParseShapeWindow(t *testing.T) {
	for _, tc := range []struct {
		lit string
		ok  bool
	}{
		{"10x10x60s", true},
		{"1x1x87600h", true},  // exactly ten years
		{"1x10x8760h", true},  // ten frames of a year
		{"1x10x8761h", false}, // one hour per frame too many
		{"1x1x87601h", false}, // one frame of more than ten years
		{"2x1000x2000000h", false},
		{"1x1000x2562047h", false}, // the longest Go duration: M×FRAME wraps int64
	} {
		t.Run(tc.lit, func(t *testing.T) {
			sh, err := ParseShape(tc.lit)
			if tc.ok {
				if err != nil || sh.String() == "" {
					t.Errorf("ParseShape(%q): %v", tc.lit, err)
				}
				return
			}
			if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), strconv.Quote(tc.lit)) || !strings.Contains(err.Error(), "ten years") {
				t.Errorf("ParseShape(%q): %v, want an ErrSpec naming the shape and the ten-year limit", tc.lit, err)
			}
		})
	}
	// A spec file and a Spec built in Go.
	_, err := LoadSpec(strings.NewReader(strings.Replace(smallSpec, "2x4x120s", "2x1000x2000000h", 1)))
	var se *SpecError
	if !errors.As(err, &se) || se.Key != "space.shape[1]" {
		t.Errorf("spec with 2x1000x2000000h: %v, want a spec error at space.shape[1]", err)
	}
	s := Spec{Space: Space{Shape: []Shape{{J: 2, M: 1000, Frame: 2e6 * time.Hour}}, Hidden: []int{1}, Layers: []int{1}, LearningRate: []float64{1}, Batch: []int{1}}}
	if err := s.Validate(); !errors.As(err, &se) || se.Key != "space.shape[0]" || !strings.Contains(err.Error(), "ten years") {
		t.Errorf("Spec with a window of 2e9 hours: %v, want a spec error at space.shape[0]", err)
	}
}

// TestSearchGRU runs the small search with model: gru: every run trains a
// GRU, the best model directory holds one and decides with it, and the run
// identities differ from the LSTM search's.
func TestSearchGRU(t *testing.T) {
	spec := loadSpec(t, strings.Replace(smallSpec, "epochs: 3", "epochs: 3\nmodel: gru", 1))
	out := t.TempDir()
	oc := searchIn(t, spec, out, nil)
	if oc.Sweep.Completed != 4 {
		t.Fatalf("summary %+v", oc.Sweep)
	}
	m, mi, err := LoadModel(filepath.Join(out, BestDir))
	if err != nil {
		t.Fatal(err)
	}
	if m.Architecture().Cell != lstm.GRU {
		t.Fatalf("best model is a %v", m.Architecture().Cell)
	}
	all := testLog(t, 5, 1200)
	jobs := eventlog.Group("pool", upTo(all, all[len(all)*85/100].Time))
	ds, err := Decide(m, mi, jobs)
	if err != nil || len(ds) == 0 {
		t.Fatalf("Decide with the GRU: %d decisions, %v", len(ds), err)
	}
	lstmSpec := loadSpec(t, smallSpec)
	_, lp, err := lstmSpec.Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	_, gp, err := spec.Sweep("x")
	if err != nil {
		t.Fatal(err)
	}
	if lp[0].ID == gp[0].ID {
		t.Error("the GRU search's runs have the LSTM search's identities")
	}
}
