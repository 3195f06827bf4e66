package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestExportFormat(t *testing.T) {
	d := &Dataset{
		Columns: []Column{{Name: "slug"}, {Name: "n", Kind: Int}, {Name: "x", Kind: Float}, {Name: "ok", Kind: Bool}},
		Rows: [][]any{
			{"a", int64(1), 0.5, true},
			{"b,c", int64(-2), math.NaN(), false},
			{"d", int64(3), math.Inf(1), true},
			{"e", int64(4), math.Inf(-1), nil},
			{"", int64(5), 1e-7, true},
			{"g", nil, 2.0, false},
		},
	}
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	series := map[string]map[string]Series{"a": {
		"val_loss":  {Step: []float64{0.25, 0.5, 0.75, 1}, Value: []float64{0.9, 0.8, math.NaN(), 0.6}},
		"train_acc": {Step: []float64{1}, Value: []float64{0.5}},
	}}
	// A further format, as sweep/parquet plugs in: its bytes land in
	// study.txt and the metadata lists it.
	txt := func(w io.Writer, d *Dataset) error { _, err := fmt.Fprintf(w, "%d rows\n", len(d.Rows)); return err }
	if err := Export(context.Background(), dir, "study", d, ExportConfig{JSONL: true, Series: series, Now: now,
		Skipped: []Problem{{RunID: "z", Slug: "bad", Err: "corrupt"}}, Formats: map[string]func(io.Writer, *Dataset) error{"txt": txt}}); err != nil {
		t.Fatal(err)
	}
	// Every file is created as os.Create would (0666 less the umask), not
	// 0600: readable by the group on a shared cluster (issue 15 item 9).
	probe := filepath.Join(t.TempDir(), "probe")
	probeFile, err := os.OpenFile(probe, os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	probeFile.Close()
	st, _ := os.Stat(probe)
	wantPerm := st.Mode().Perm()
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err != nil || info.Mode().Perm() != wantPerm {
				t.Errorf("%s: mode %v, want %v as os.Create gives (%v)", path, info.Mode().Perm(), wantPerm, err)
			}
		}
		return nil
	})
	b, _ := os.ReadFile(filepath.Join(dir, "study.csv"))
	want := "slug,n,x,ok\na,1,0.5,true\n\"b,c\",-2,,false\nd,3,inf,true\ne,4,-inf,\n\"\",5,0.0000001,true\ng,,2.0,false\n"
	if string(b) != want {
		t.Errorf("csv:\n%s\nwant:\n%s", b, want)
	}
	jb, _ := os.ReadFile(filepath.Join(dir, "study.jsonl"))
	wantJ := `{"slug":"a","n":1,"x":0.5,"ok":true}
{"slug":"b,c","n":-2,"x":null,"ok":false}
{"slug":"d","n":3,"x":"inf","ok":true}
{"slug":"e","n":4,"x":"-inf","ok":null}
{"slug":"","n":5,"x":1e-07,"ok":true}
{"slug":"g","n":null,"x":2,"ok":false}
`
	if string(jb) != wantJ {
		t.Errorf("jsonl:\n%s\nwant:\n%s", jb, wantJ)
	}
	var md metadata
	mb, _ := os.ReadFile(filepath.Join(dir, "study_metadata.json"))
	if err := json.Unmarshal(mb, &md); err != nil {
		t.Fatal(err)
	}
	wantMD := metadata{TotalRuns: 6, ExportDate: "2026-11-21T09:00:00Z", Columns: []string{"slug", "n", "x", "ok"},
		ColumnTypes:  map[string]string{"slug": "string", "n": "int", "x": "float", "ok": "bool"},
		PandasDtypes: map[string]string{"slug": "object", "n": "Int64", "x": "float64", "ok": "boolean"},
		Files:        []string{"study.csv", "study.jsonl", "study.txt", "study_trajectories/"},
		Skipped:      []Problem{{RunID: "z", Slug: "bad", Err: "corrupt"}}}
	if diff := cmp.Diff(wantMD, md); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	tb, _ := os.ReadFile(filepath.Join(dir, "study_trajectories", "a.csv"))
	if want := "step,train_acc,val_loss\n0.25,,0.9\n0.5,,0.8\n0.75,,\n1.0,0.5,0.6\n"; string(tb) != want {
		t.Errorf("trajectory %q, want %q", tb, want)
	}
	if tx, _ := os.ReadFile(filepath.Join(dir, "study.txt")); string(tx) != "6 rows\n" {
		t.Errorf("study.txt %q", tx)
	}
}

// TestFloatsExact: every float survives the CSV text bit for bit, in
// fixed-point notation.
func TestFloatsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := []float64{1e-7, 1e-300, 5e-324, 0.1, 1.0 / 3, 1e22, 123456789.123456789, math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	for range 2000 {
		vals = append(vals, math.Float64frombits(rng.Uint64()))
	}
	for _, x := range vals {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		s := string(appendFloat(nil, x))
		if strings.ContainsAny(s, "eE") {
			t.Fatalf("%v written as %q, not fixed-point", x, s)
		}
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(x) {
			t.Fatalf("%v (%x) written as %q reads back as %v", x, math.Float64bits(x), s, back)
		}
	}
}

func TestCollectCompleteness(t *testing.T) {
	ctx := context.Background()
	l, _ := openTemp(t)
	work := t.TempDir()
	spec := gridSpec("cc", 5, nil)
	pts := mustEnqueue(t, l, spec)
	fn := func(ctx context.Context, task Task) (*Result, error) {
		switch task.Params["seed"].Int() {
		case 1:
			return nil, errors.New("boom")
		case 2:
			return &Result{Metrics: map[string]float64{"best": math.NaN()}}, nil
		}
		return &Result{Metrics: map[string]float64{"best": 1}, Curves: map[string][]float64{"epoch": {1, 2}}}, nil
	}
	// Run only 4 of the 5: cancel the last before starting.
	if err := l.cancel(ctx, pts[4].ID, "test"); err != nil {
		t.Fatal(err)
	}
	c := &Controller{Ledger: l, Backend: &Local{Func: fn}, WorkDir: work, Parallel: 2}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	comp, err := l.completeness(ctx, work, slices.Values(pts))
	if err != nil {
		t.Fatal(err)
	}
	if got := comp.String(); got != "2/5 runs completed (1 failed, 1 missing, 0 pruned, 1 non-finite)" {
		t.Errorf("completeness %q", got)
	}
	if !cmp.Equal(comp.failed, []string{"base-s1"}) || !cmp.Equal(comp.missing, []string{"base-s4"}) || !cmp.Equal(comp.nonFinite, []string{"base-s2"}) {
		t.Errorf("lists %+v", comp)
	}
	arch := t.TempDir()
	res, _, err := l.Collect(ctx, work, arch)
	if err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, arch)
	if len(m.Runs) != 3 || len(res) != 3 {
		t.Fatalf("collected %d runs", len(m.Runs))
	}
	if n, err := VerifyArchive(ctx, arch); err != nil || n != 3 {
		t.Fatalf("verify: %d, %v", n, err)
	}
	// Tamper with one archived file.
	os.WriteFile(filepath.Join(arch, m.Runs[0].File), []byte("{}"), 0o644)
	if _, err := VerifyArchive(ctx, arch); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), m.Runs[0].Slug) {
		t.Errorf("tampered archive: %v", err)
	}
	// A damaged result does not stop the collection: the run is skipped
	// and reported, the others are archived.
	rs, _ := l.Runs(ctx, Completed)
	bad := rs[0]
	os.WriteFile(filepath.Join(AttemptDir(work, bad.ID, bad.Attempt), ResultFile), []byte(`{"run_id": "x", "metr`), 0o644)
	arch2 := t.TempDir()
	res, skipped, err := l.Collect(ctx, work, arch2)
	if err != nil {
		t.Fatalf("Collect with one damaged result: %v", err)
	}
	if m := readManifest(t, arch2); !cmp.Equal(m.Skipped, skipped) {
		t.Errorf("manifest lists skipped %+v, Collect returned %+v", m.Skipped, skipped)
	}
	if len(res) != 2 || len(skipped) != 1 || skipped[0].RunID != bad.ID || !strings.Contains(skipped[0].Err, ResultFile) {
		t.Errorf("collected %d, skipped %+v; want 2 and the damaged run named with its file", len(res), skipped)
	}
}

func TestResultRoundTrip(t *testing.T) {
	r := &Result{RunID: "x", Attempt: 2, Metrics: map[string]float64{"a": math.NaN(), "b": math.Inf(-1), "c": 1.25},
		Series: map[string]Series{"val_loss": {Step: []float64{0.25, 0.5}, Value: []float64{1, 0.5}}, "acc": {Step: []float64{1}, Value: []float64{0.7}}},
		Curves: map[string][]float64{"y": {math.Inf(1), 0}, "z": {1, 2, 3}}}
	dir := t.TempDir()
	if err := WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "{", `{"run_id":"x"}`, `{"run_id":"x","done":true,"metrics":{"a":"zz"}}`, `{"run_id":"x","done":true,"series":{"a":{"step":[1],"value":[1,2]}}}`, `{"run_id":"x","done":true} {}`} {
		os.WriteFile(filepath.Join(dir, ResultFile), []byte(bad), 0o644)
		if _, err := ReadResult(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), ResultFile) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzUnmarshalResult(f *testing.F) {
	b, _ := marshalResult(&Result{RunID: "x", Metrics: map[string]float64{"a": math.NaN()}, Series: map[string]Series{"y": {Step: []float64{1, 2}, Value: []float64{1, 2}}}})
	f.Add(b)
	f.Add([]byte(`{"run_id":"x","done":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := unmarshalResult(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		b2, err := marshalResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := unmarshalResult(b2); err != nil {
			t.Fatalf("re-read: %v", err)
		}
	})
}

// readManifest reads an archive's manifest.json.
func readManifest(t *testing.T, dir string) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
