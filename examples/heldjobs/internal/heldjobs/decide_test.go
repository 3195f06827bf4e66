package heldjobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/lstm"
	"github.com/crosscluster/crosscluster/stats"
	"github.com/crosscluster/crosscluster/sweep"
)

// testLog returns the events of a synthetic global log, read as
// ReadLogs would read the file.
func testLog(t *testing.T, seed uint64, jobs int) []eventlog.Event {
	t.Helper()
	var buf bytes.Buffer
	if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: seed, Jobs: jobs, HoldRate: 0.4, Header: true}); err != nil {
		t.Fatal(err)
	}
	r := eventlog.NewReader(&buf)
	r.Location = time.UTC
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// upTo keeps the events written at or before t.
func upTo(evs []eventlog.Event, t time.Time) []eventlog.Event {
	var out []eventlog.Event
	for _, e := range evs {
		if !e.Time.After(t) {
			out = append(out, e)
		}
	}
	return out
}

func testModel(info ModelInfo) *lstm.Model {
	return lstm.New(lstm.Architecture{Inputs: info.J * info.E, Hidden: 6, Layers: 1, NewestFirst: !info.Forward}, rand.New(rand.NewPCG(1, 2)))
}

// TestDecideAtDecisionTime checks that a decision uses nothing written
// after the job's hold: deciding a job on logs cut at the instant of its
// hold gives the same probability, to the bit, as deciding it on the whole
// logs, for every job on hold in a log where other jobs' events, and the
// held job's own job-ad updates, go on after the hold.
func TestDecideAtDecisionTime(t *testing.T) {
	all := testLog(t, 5, 1200)
	// A snapshot in which some jobs are still on hold.
	evs := upTo(all, all[len(all)*85/100].Time)
	info := ModelInfo{J: 4, M: 10, FrameSeconds: 60, E: 46, Threshold: 0.5, Seed: 9}
	m := testModel(info)
	full, err := Decide(m, info, eventlog.Group("pool", evs))
	if err != nil {
		t.Fatal(err)
	}
	if len(full) < 5 {
		t.Fatalf("only %d jobs on hold in the snapshot", len(full))
	}
	later := 0
	for i, d := range full {
		if i == 12 {
			break // enough, and each check regroups the log
		}
		cut := upTo(evs, d.HeldAt)
		if len(cut) < len(evs) {
			later++
		}
		at, err := Decide(m, info, eventlog.Group("pool", cut))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range at {
			if a.Job == d.Job {
				found = true
				if a.P != d.P || a.Release != d.Release {
					t.Errorf("job %v: P(release) %v on the whole log, %v on the log as it stood at its hold", d.Job, d.P, a.P)
				}
			}
		}
		if !found {
			t.Errorf("job %v is not decided on the log cut at its hold", d.Job)
		}
	}
	if later == 0 {
		t.Error("no job had events written after its hold: the test proves nothing")
	}
	// The decisions are not constant: the model reads the tensors.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, d := range full {
		lo, hi = min(lo, d.P), max(hi, d.P)
	}
	if hi-lo < 1e-4 {
		t.Errorf("every decision has P(release) in [%v, %v]", lo, hi)
	}
}

func TestDecideErrors(t *testing.T) {
	info := ModelInfo{J: 3, M: 6, FrameSeconds: 60, E: 46, Threshold: 0.5}
	m := testModel(info)
	// Logs without a job on hold.
	var noHold []eventlog.Event
	for _, e := range testLog(t, 6, 200) {
		if e.Code != eventlog.Held {
			noHold = append(noHold, e)
		}
	}
	if _, err := Decide(m, info, eventlog.Group("x", noHold)); !errors.Is(err, ErrNoHeldJob) {
		t.Errorf("no held job: %v", err)
	}
	// A forward-framed model would read events after the hold.
	fwd := info
	fwd.Forward = true
	if _, err := Decide(testModel(fwd), fwd, eventlog.Group("x", testLog(t, 6, 200))); !errors.Is(err, ErrModelDir) {
		t.Errorf("forward model: %v", err)
	}
}

// TestModelDir saves a model directory, reads it back, and refuses every
// damaged or foreign one with ErrModelDir.
func TestModelDir(t *testing.T) {
	info := ModelInfo{Shape: "3x6x60s", J: 3, M: 6, FrameSeconds: 60, E: 46, Threshold: 0.5, Seed: 2, RunID: "abc", Metric: F1, Value: 0.8}
	m := testModel(info)
	dir := t.TempDir()
	if _, err := SaveModel(dir, m, info); err != nil {
		t.Fatal(err)
	}
	back, bi, err := LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if bi.RunID != "abc" || bi.Version != modelVersion || !equalParams(back.Params(), m.Params()) {
		t.Errorf("read back %+v", bi)
	}
	edit := func(t *testing.T, f func(map[string]any)) string {
		d := t.TempDir()
		if err := copyDir(dir, d); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(d, ModelInfoFile))
		var raw map[string]any
		json.Unmarshal(b, &raw)
		f(raw)
		b, _ = json.Marshal(raw)
		os.WriteFile(filepath.Join(d, ModelInfoFile), b, 0o644)
		return d
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		msg  string
	}{
		{"not a model directory", func(t *testing.T) string { return t.TempDir() }, "not a held-job model directory"},
		{"another version", func(t *testing.T) string { return edit(t, func(r map[string]any) { r["version"] = 3 }) }, "version 3; this program reads version 2"},
		{"another format", func(t *testing.T) string { return edit(t, func(r map[string]any) { r["format"] = "x" }) }, "format"},
		{"shape that does not fit", func(t *testing.T) string { return edit(t, func(r map[string]any) { r["j"] = 4 }) }, "inputs"},
		{"bad threshold", func(t *testing.T) string { return edit(t, func(r map[string]any) { r["threshold"] = 1.5 }) }, "out of range"},
		// M×frame of 1000×1e9 s overflowed a time.Duration (issue 19 item 4).
		{"window over ten years", func(t *testing.T) string {
			return edit(t, func(r map[string]any) { r["m"] = 1000; r["frame_seconds"] = 1e9 })
		}, "out of range"},
		{"damaged model", func(t *testing.T) string {
			d := edit(t, func(map[string]any) {})
			os.WriteFile(filepath.Join(d, ModelFile), []byte(`{"format":"crosscluster-lstm","version":1,"inputs":`), 0o644)
			return d
		}, "model.json"},
		{"not JSON", func(t *testing.T) string {
			d := edit(t, func(map[string]any) {})
			os.WriteFile(filepath.Join(d, ModelInfoFile), []byte("model"), 0o644)
			return d
		}, ModelInfoFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := LoadModel(tc.dir(t))
			if !errors.Is(err, ErrModelDir) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %v, want ErrModelDir with %q", err, tc.msg)
			}
		})
	}
}

func equalParams(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSelectTies checks the choice of the best run on ties, whatever the
// order of the runs.
func TestSelectTies(t *testing.T) {
	rec := func(id string, metrics map[string]float64) RunRecord {
		return RunRecord{ID: id, Slug: id, State: sweep.Completed, Result: &sweep.Result{Metrics: metrics}}
	}
	for _, tc := range []struct {
		name string
		m    Metric
		runs []RunRecord
		want string
	}{
		{"higher F1", F1, []RunRecord{
			rec("a", map[string]float64{"valid_f1": 0.8, "valid_loss": 0.3}),
			rec("b", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.5}),
		}, "b"},
		{"F1 tie: lower loss", F1, []RunRecord{
			rec("a", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.4}),
			rec("b", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.3}),
		}, "b"},
		{"F1 and loss tie: fewer weights", F1, []RunRecord{
			rec("a", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.3, "n_params": 200}),
			rec("b", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.3, "n_params": 100}),
		}, "b"},
		{"then earlier epoch", F1, []RunRecord{
			rec("a", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.3, "n_params": 100, "best_epoch": 7}),
			rec("b", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.3, "n_params": 100, "best_epoch": 4}),
		}, "b"},
		{"then smaller id", F1, []RunRecord{
			rec("b", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.3}),
			rec("a", map[string]float64{"valid_f1": 0.9, "valid_loss": 0.3}),
		}, "a"},
		{"loss: lower wins, ties to higher F1", ValidLoss, []RunRecord{
			rec("a", map[string]float64{"valid_f1": 0.7, "valid_loss": 0.3}),
			rec("b", map[string]float64{"valid_f1": 0.8, "valid_loss": 0.3}),
			rec("c", map[string]float64{"valid_f1": 0.99, "valid_loss": 0.31}),
		}, "b"},
		{"ROC AUC", ROCAUC, []RunRecord{
			rec("a", map[string]float64{"valid_roc_auc": 0.7, "valid_f1": 0.9}),
			rec("b", map[string]float64{"valid_roc_auc": 0.8, "valid_f1": 0.1}),
		}, "b"},
		{"NaN never wins", Precision, []RunRecord{
			rec("a", map[string]float64{"valid_precision": math.NaN()}),
			rec("b", map[string]float64{"valid_precision": 0.1}),
		}, "b"},
		{"failed runs are out", Recall, []RunRecord{
			{ID: "a", State: sweep.Failed},
			rec("b", map[string]float64{"valid_recall": 0.1}),
		}, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k := range len(tc.runs) {
				// Every rotation of the runs gives the same choice.
				rot := append(append([]RunRecord(nil), tc.runs[k:]...), tc.runs[:k]...)
				if i := Select(rot, tc.m); i < 0 || rot[i].ID != tc.want {
					t.Errorf("rotation %d: chose %d, want %s", k, i, tc.want)
				}
			}
		})
	}
	if Select([]RunRecord{{ID: "a", State: sweep.Failed}}, F1) != -1 {
		t.Error("no completed run: want -1")
	}
}

// TestBootstrapF1 checks the interval's properties: it holds the F1 of
// the data, it is reproducible from the seed, it narrows as the sample
// grows (about as 1/√n), and a perfect classifier has a zero-width one.
func TestBootstrapF1(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	make := func(n int) ([]float64, []int) {
		p, y := make([]float64, n), make([]int, n)
		for i := range p {
			y[i] = r.IntN(2)
			p[i] = min(1, max(0, 0.5+0.3*float64(2*y[i]-1)+0.35*r.NormFloat64()))
		}
		return p, y
	}
	p, y := make(400)
	f1 := lstm.Score(p, y, 0.5).F1
	lo, hi := BootstrapF1(p, y, 0.5, 1000, 0.95, 7)
	if !(lo < f1 && f1 < hi) {
		t.Errorf("interval [%v, %v] does not hold F1 %v", lo, hi, f1)
	}
	if lo2, hi2 := BootstrapF1(p, y, 0.5, 1000, 0.95, 7); lo2 != lo || hi2 != hi {
		t.Error("same seed, different interval")
	}
	p4, y4 := make(6400)
	lo4, hi4 := BootstrapF1(p4, y4, 0.5, 1000, 0.95, 7)
	// 16 times the jobs: a quarter of the width, within sampling noise.
	if ratio := (hi4 - lo4) / (hi - lo); ratio < 0.15 || ratio > 0.4 {
		t.Errorf("width ratio for 16x the data %v, want about 0.25", ratio)
	}
	// A perfect classifier scores 1 on every resample that draws a
	// released job (all of them, with 60 jobs).
	perfect, labels := make(60)
	for i := range perfect {
		perfect[i] = 0.2 + 0.6*float64(labels[i])
	}
	if lo, hi := BootstrapF1(perfect, labels, 0.5, 200, 0.95, 1); lo != 1 || hi != 1 {
		t.Errorf("perfect classifier: [%v, %v]", lo, hi)
	}
	if lo, hi := BootstrapF1(nil, nil, 0.5, 10, 0.95, 1); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("empty: [%v, %v]", lo, hi)
	}
}

// TestBootstrapF1Draws: BootstrapF1 resamples as stats.Bootstrap documents
// (resample i from PCG(seed, i), TestBootstrapDraws) and gives, bit for bit,
// the interval of a plain resampling loop written out below, an oracle
// independent of stats.Bootstrap; the golden bits are that loop's output.
func TestBootstrapF1Draws(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	const n = 400
	p, y := make([]float64, n), make([]int, n)
	for i := range p {
		y[i] = r.IntN(2)
		p[i] = min(1, max(0, 0.5+0.3*float64(2*y[i]-1)+0.35*r.NormFloat64()))
	}
	reference := func(b int, seed uint64) (float64, float64) {
		f1s := make([]float64, b)
		pb, yb := make([]float64, n), make([]int, n)
		for i := range f1s {
			rr := rand.New(rand.NewPCG(seed, uint64(i)))
			for k := range pb {
				j := rr.IntN(n)
				pb[k], yb[k] = p[j], y[j]
			}
			f1s[i] = lstm.Score(pb, yb, 0.5).F1
		}
		return stats.Quantile(f1s, 0.025), stats.Quantile(f1s, 0.975)
	}
	for _, tc := range []struct {
		b    int
		seed uint64
	}{{1, 3}, {17, 0}, {2000, 7}} {
		lo, hi := BootstrapF1(p, y, 0.5, tc.b, 0.95, tc.seed)
		wlo, whi := reference(tc.b, tc.seed)
		if math.Float64bits(lo) != math.Float64bits(wlo) || math.Float64bits(hi) != math.Float64bits(whi) {
			t.Errorf("b=%d seed=%d: [%v, %v], the resampling loop gives [%v, %v]", tc.b, tc.seed, lo, hi, wlo, whi)
		}
	}
	lo, hi := BootstrapF1(p, y, 0.5, 2000, 0.95, 7)
	if math.Float64bits(lo) != 0x3fe8b0b7341a068e || math.Float64bits(hi) != 0x3feb4d846e7fafc9 {
		t.Errorf("2000 resamples, seed 7: [%v, %v], want [0.7715717332468601, 0.853212562387392]", lo, hi)
	}
}

// snapshotDecisions decides the jobs on hold in a snapshot of a synthetic
// log with an untrained model.
func snapshotDecisions(t *testing.T) ([]eventlog.Event, []*eventlog.Job, ModelInfo, *lstm.Model, []lstm.Decision) {
	t.Helper()
	all := testLog(t, 5, 1200)
	evs := upTo(all, all[len(all)*85/100].Time)
	jobs := eventlog.Group("pool", evs)
	info := ModelInfo{J: 4, M: 10, FrameSeconds: 60, E: 46, Threshold: 0.5, Seed: 9}
	m := testModel(info)
	ds, err := Decide(m, info, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return evs, jobs, info, m, ds
}

// TestDecideAsTrained: a job held once is decided on the tensor it would
// have as a training sample (the same context jobs, drawn by the same rule
// and seed), so the decision's P(release) is the model's prediction on
// Build's sample of the job, to the bit. (Before the rule was shared,
// Decide and Build drew different context jobs for most jobs.)
func TestDecideAsTrained(t *testing.T) {
	_, jobs, info, m, ds := snapshotDecisions(t)
	b := builder(Data{E: info.E, Seed: info.Seed}, info.shape())
	b.Unlabeled = true
	samples, err := b.Build(jobs)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[eventlog.Key]*eventlog.Sample{}
	for i := range samples {
		byKey[samples[i].Job] = &samples[i]
	}
	nHolds := map[eventlog.Key]int{}
	for _, j := range jobs {
		nHolds[j.Key] = len(j.Holds())
	}
	checked := 0
	for _, d := range ds {
		if nHolds[d.Job] != 1 {
			continue
		}
		checked++
		if p := m.Predict(byKey[d.Job].Seq()); p != d.P {
			t.Errorf("job %v: Decide P(release) %v, the training sample's %v", d.Job, d.P, p)
		}
	}
	if checked < 5 {
		t.Errorf("only %d jobs held once checked", checked)
	}
}

// TestDecideRenamedLog: the same log under another file name, or read
// with another rotation, gives the same decisions (the context draw is
// seeded by the job id, not the log's name).
func TestDecideRenamedLog(t *testing.T) {
	var buf bytes.Buffer
	if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: 5, Jobs: 800, HoldRate: 0.4, Header: true}); err != nil {
		t.Fatal(err)
	}
	// A snapshot: the log up to the event end nearest 85% of its bytes.
	raw := buf.Bytes()[:bytes.LastIndex(buf.Bytes()[:buf.Len()*85/100], []byte("...\n"))+4]
	dir := t.TempDir()
	var got [][]lstm.Decision
	info := ModelInfo{J: 4, M: 10, FrameSeconds: 60, E: 46, Threshold: 0.5, Seed: 9}
	m := testModel(info)
	for _, name := range []string{"EventLog", "schedd-b.log"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		jobs, err := ReadLogs([]string{p})
		if err != nil {
			t.Fatal(err)
		}
		d, err := Decide(m, info, jobs)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if len(got[0]) != len(got[1]) || len(got[0]) == 0 {
		t.Fatalf("%d and %d decisions", len(got[0]), len(got[1]))
	}
	for i := range got[0] {
		a, b := got[0][i], got[1][i]
		if a.Job.JobID != b.Job.JobID || a.P != b.P || !a.HeldAt.Equal(b.HeldAt) {
			t.Errorf("decision %d: %v P(release) %v as EventLog, %v %v as schedd-b.log", i, a.Job, a.P, b.Job, b.P)
		}
	}
}

// TestDecideCurrentHold: a job released, run again and held again is
// decided at the hold it is in now, with that hold's time and code, on
// its history up to then (the same decision as on the log cut there).
func TestDecideCurrentHold(t *testing.T) {
	evs, jobs, info, m, ds := snapshotDecisions(t)
	byKey := map[eventlog.Key]*eventlog.Job{}
	for _, j := range jobs {
		byKey[j.Key] = j
	}
	multi := 0
	for _, d := range ds {
		holds := byKey[d.Job].Holds()
		if len(holds) < 2 {
			continue
		}
		multi++
		var last eventlog.Event
		for _, ev := range byKey[d.Job].Events {
			if ev.Code == eventlog.Held {
				last = ev
			}
		}
		hi, _ := last.HoldInfo()
		if !d.HeldAt.Equal(last.Time) || d.HoldCode != hi.Code {
			t.Errorf("job %v: decided at %v code %d, its current hold is at %v code %d", d.Job, d.HeldAt, d.HoldCode, last.Time, hi.Code)
		}
		at, err := Decide(m, info, eventlog.Group("pool", upTo(evs, last.Time)))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range at {
			if a.Job == d.Job && a.P != d.P {
				t.Errorf("job %v: P(release) %v, %v on the log cut at its current hold", d.Job, d.P, a.P)
			}
		}
	}
	if multi == 0 {
		t.Fatal("no job on hold was held before: the test proves nothing")
	}
	t.Logf("%d of %d jobs on hold were held before", multi, len(ds))
}
