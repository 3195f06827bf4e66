package divergence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// l2RelTol allows for summation order: NumPy's norm sums squares pairwise,
// Compare keeps a scaled running sum (LAPACK dnrm2 style); with at most 20
// elements per step the results differ by a few ulps.
const l2RelTol = 1e-14

// want.json comes from testdata/gen.py with NumPy 1.24.2 (Debian
// python3-numpy): /usr/bin/python3 testdata/gen.py
type golden struct {
	NumPy string `json:"numpy"`
	Rows  []struct {
		A, B, Key, Norm, Max string
	} `json:"rows"`
	Series map[string][]string `json:"series_z_b_run_a_run_c"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/want.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func pyFloat(t *testing.T, s string) float64 {
	t.Helper()
	switch s {
	case "nan":
		return math.NaN()
	case "inf":
		return math.Inf(1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func fixtureRuns() []NamedRun {
	var runs []NamedRun
	for _, n := range []string{"run_a", "run_b", "run_c"} {
		runs = append(runs, NamedRun{Name: n, Path: filepath.Join("testdata", n+".npz")})
	}
	return runs
}

type cmpRow struct {
	A, B, Key string
	Max       float64
}

func TestCompareGolden(t *testing.T) {
	g := loadGolden(t)
	for _, norm := range []Norm{L2, LInf} {
		for _, chunk := range []int{0, 1, 7, 64} {
			t.Run(fmt.Sprintf("%v/chunk=%d", norm, chunk), func(t *testing.T) {
				var want []cmpRow
				for _, r := range g.Rows {
					if r.Norm == norm.String() {
						want = append(want, cmpRow{r.A, r.B, r.Key, pyFloat(t, r.Max)})
					}
				}
				rows := Compare(fixtureRuns(), nil, Options{Norm: norm, ChunkSize: chunk})
				var got []cmpRow
				for _, r := range rows {
					got = append(got, cmpRow{r.A, r.B, r.Key, r.Max})
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateApprox(l2RelTol, 0), cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("(-numpy +go):\n%s", diff)
				}
			})
		}
	}
}

func TestCompareWarnings(t *testing.T) {
	rows := Pairwise(fixtureRuns(), []string{"has_nan", "shape_differs", "only_some", "z_b", "nope"})
	got := map[string]string{}
	for _, r := range rows {
		got[r.A+"/"+r.B+"/"+r.Key] = r.Warning
		if r.Warning != "" && !math.IsNaN(r.Max) {
			t.Errorf("%v: warning with a number", r)
		}
	}
	for key, want := range map[string]string{
		"run_a/run_b/has_nan":       "NaN in the data",
		"run_a/run_c/has_nan":       "",
		"run_a/run_b/shape_differs": "shape mismatch: run_a [200 2] vs run_b [199 2]",
		"run_a/run_c/shape_differs": "",
		"run_a/run_c/only_some":     `run_c: key "only_some" missing in testdata/run_c.npz`,
		"run_a/run_b/z_b":           "",
		"run_b/run_c/nope":          `run_b: key "nope" missing in testdata/run_b.npz; run_c: key "nope" missing in testdata/run_c.npz`,
	} {
		if got[key] != want {
			t.Errorf("%s: warning %q, want %q", key, got[key], want)
		}
	}
}

func TestCompareBadFiles(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/run_a.npz")
	if err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.npz")
	os.WriteFile(trunc, good[:len(good)/2], 0o644)
	notzip := filepath.Join(dir, "text.npz")
	os.WriteFile(notzip, []byte("hello"), 0o644)
	// A member whose data are corrupted: the checksum fails at its end.
	corrupt := filepath.Join(dir, "corrupt.npz")
	{
		var buf bytes.Buffer
		z := npy.NewZipWriter(&buf, false)
		x := make([]float64, 1000)
		z.Add("omega_b", []int{1000}, x)
		z.Close()
		b := buf.Bytes()
		i := bytes.Index(b, []byte("\n")) + 4000 // inside the data
		b[i] ^= 0xff
		os.WriteFile(corrupt, b, 0o644)
	}
	other := filepath.Join(dir, "other.npz")
	{
		var buf bytes.Buffer
		z := npy.NewZipWriter(&buf, false)
		z.Add("omega_b", []int{1000}, make([]float64, 1000))
		z.Close()
		os.WriteFile(other, buf.Bytes(), 0o644)
	}
	rows := Pairwise([]NamedRun{
		{Name: "a", Path: "testdata/run_a.npz"},
		{Name: "t", Path: trunc},
		{Name: "x", Path: notzip},
		{Name: "missing", Path: filepath.Join(dir, "absent.npz")},
	}, []string{"omega_b"})
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if !math.IsNaN(r.Max) || r.Warning == "" {
			t.Errorf("%v: want NaN and a warning", r)
		}
	}
	if w := rows[0].Warning; !strings.Contains(w, "t: cannot open "+trunc) {
		t.Errorf("truncated archive: warning %q", w)
	}
	rows = Pairwise([]NamedRun{{Name: "t", Path: trunc}, {Name: "x", Path: notzip}}, nil)
	if len(rows) != 1 || rows[0].Key != "" || !math.IsNaN(rows[0].Max) || !strings.Contains(rows[0].Warning, "x: cannot open") {
		t.Errorf("no readable run: %v", rows)
	}
	rows = Pairwise([]NamedRun{{Name: "c", Path: corrupt}, {Name: "o", Path: other}}, nil)
	if len(rows) != 1 || !math.IsNaN(rows[0].Max) || !strings.Contains(rows[0].Warning, "c: reading "+corrupt) {
		t.Errorf("corrupt member: %v", rows)
	}
}

func TestTolerance(t *testing.T) {
	rows := Compare(fixtureRuns(), []string{"z_b", "has_nan"}, Options{Tolerance: map[string]float64{"z_b": 1e-9, "*": 1}})
	for _, r := range rows {
		want := r.Max <= r.Tolerance
		if !r.Bounded || r.Pass != want {
			t.Errorf("%v: Bounded %v Pass %v", r, r.Bounded, r.Pass)
		}
	}
	// run_c differs from run_a by a relative 3e-9, above the 1e-9 bound.
	if rows[2].A != "run_a" || rows[2].B != "run_c" || rows[2].Pass {
		t.Errorf("run_a vs run_c z_b should fail: %v", rows[2])
	}
	if rows[0].Pass != true {
		t.Errorf("run_a vs run_b z_b should pass: %v", rows[0])
	}
}

func TestSeries(t *testing.T) {
	g := loadGolden(t)
	a, err := Open("testdata/run_a.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, err := Open("testdata/run_c.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, norm := range []Norm{L2, LInf} {
		var want []float64
		for _, s := range g.Series[norm.String()] {
			want = append(want, pyFloat(t, s))
		}
		got, err := Series(a, c, "z_b", norm)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(l2RelTol, 0)); diff != "" {
			t.Errorf("%v (-numpy +go):\n%s", norm, diff)
		}
	}
	if _, err := Series(a, c, "only_some", L2); !errors.Is(err, ErrKey) {
		t.Errorf("missing key: %v", err)
	}
	b, err := Open("testdata/run_b.npz")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := Series(a, b, "shape_differs", L2); !errors.Is(err, ErrShape) {
		t.Errorf("shape mismatch: %v", err)
	}
	arr, err := a.Array("z_b")
	if err != nil || len(arr.Data) != 600 || !cmp.Equal(arr.Shape, []int{200, 3}) {
		t.Errorf("Array: %v %v", arr, err)
	}
}

func TestNormEdgeCases(t *testing.T) {
	big := math.MaxFloat64 / 2 // a - b is MaxFloat64; the norm exceeds it
	for _, tc := range []struct {
		name string
		a, b []float64
		row  int
		want float64
	}{
		{"norm overflows", []float64{big, big}, []float64{-big, -big}, 2, math.Inf(1)},
		{"near max", []float64{1e300, 1e300}, []float64{0, 0}, 2, math.Sqrt2 * 1e300},
		{"tiny", []float64{3e-320, 4e-320}, []float64{0, 0}, 2, 5e-320},
		{"inf", []float64{math.Inf(1), math.Inf(-1)}, []float64{0, 0}, 2, math.Inf(1)},
		{"nan", []float64{math.NaN(), 1}, []float64{0, 0}, 2, math.NaN()},
		{"zero", []float64{1, 2}, []float64{1, 2}, 2, 0},
		// Equal infinities on both hosts agree (issue 15 item 8: they gave NaN).
		{"equal inf", []float64{math.Inf(1), math.Inf(-1)}, []float64{math.Inf(1), math.Inf(-1)}, 2, 0},
		{"equal inf and a difference", []float64{math.Inf(1), 3}, []float64{math.Inf(1), 7}, 2, 4},
		{"opposite inf", []float64{math.Inf(1), 0}, []float64{math.Inf(-1), 0}, 2, math.Inf(1)},
	} {
		for _, norm := range []Norm{L2, LInf} {
			t.Run(tc.name+"/"+norm.String(), func(t *testing.T) {
				var s []float64
				p := acc{series: &s}
				p.add(tc.a, tc.b, tc.row, norm)
				want := tc.want
				if norm == LInf && tc.name == "norm overflows" {
					want = math.MaxFloat64
				} else if norm == LInf && tc.name == "near max" {
					want = 1e300
				} else if norm == LInf && tc.name == "tiny" {
					want = 4e-320
				}
				if diff := cmp.Diff([]float64{want}, s, cmpopts.EquateApprox(l2RelTol, 0), cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
		a, b := tc.a, tc.b
		p := acc{}
		p.addMaxAbs(a, b)
		if d := absDiff(a[0], b[0]); tc.name == "equal inf" && (p.max != 0 || p.nan || d != 0) {
			t.Errorf("addMaxAbs of equal infinities: max %v nan %v", p.max, p.nan)
		}
	}
}

func TestOutputs(t *testing.T) {
	rows := []Row{
		{A: "x", B: "y", Key: "z_b", Max: 1.5e-12, Steps: 10, Bounded: true, Tolerance: 1e-9, Pass: true},
		{A: "x", B: "y", Key: "omega_b", Max: math.NaN(), Warning: `y: key "omega_b" missing in y.npz`},
	}
	var text, js, csv bytes.Buffer
	if err := WriteText(&text, rows); err != nil {
		t.Fatal(err)
	}
	want := "x vs y  z_b  max=1.500000e-12  PASS tol=1.000000e-09\n" +
		"x vs y  omega_b  max=NaN  warning: y: key \"omega_b\" missing in y.npz\n"
	if diff := cmp.Diff(want, text.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if err := WriteJSON(&js, rows); err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back[0]["max"] != 1.5e-12 || back[0]["verdict"] != "PASS" || back[1]["max"] != nil || back[1]["max_text"] != "NaN" {
		t.Errorf("json: %s", js.String())
	}
	if err := WriteCSV(&csv, rows); err != nil {
		t.Fatal(err)
	}
	wantCSV := "a,b,key,max,steps,tolerance,verdict,warning\n" +
		"x,y,z_b,1.5000000000000001e-12,10,1.0000000000000001e-09,PASS,\n" +
		"x,y,omega_b,NaN,0,,,\"y: key \"\"omega_b\"\" missing in y.npz\"\n"
	if diff := cmp.Diff(wantCSV, csv.String()); diff != "" {
		t.Errorf("csv (-want +got):\n%s", diff)
	}
}

func TestDuplicateNamePanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "divergence: duplicate run name" {
			t.Errorf("panic %v", r)
		}
	}()
	Pairwise([]NamedRun{{Name: "a"}, {Name: "a"}}, nil)
}

// TestCompareStreams checks that Compare does not load whole arrays: with
// 1024-element chunks, comparing three runs of two keys of 2^18 float64
// (2 MiB each) must allocate less than half of one array.
func TestCompareStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes 12 MiB")
	}
	dir := t.TempDir()
	const n = 1 << 18
	var runs []NamedRun
	x := make([]float64, n)
	for h := range 3 {
		for i := range x {
			x[i] = math.Sin(float64(i)*1e-3) + float64(h)*1e-12
		}
		p := filepath.Join(dir, fmt.Sprintf("h%d.npz", h))
		if err := writeBenchArchive(p, x, h == 1); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, NamedRun{Name: fmt.Sprint(h), Path: p})
	}
	// limit: half of one array. The chunk buffers take 3 x 3 x 8 KiB per
	// key, the deflated member's read buffer and inflater about 300 KiB.
	const limit = 8 * n / 2
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rows := Compare(runs, []string{"omega_b", "z_b"}, Options{ChunkSize: 1024})
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	if got > limit {
		t.Errorf("allocated %d bytes, limit %d", got, limit)
	}
	t.Logf("allocated %d bytes to compare 6 arrays of %d bytes", got, 8*n)
	// Host h adds h·1e-12 to values in [-1, 1]: hosts 0 and 2 differ by
	// 2e-12 up to the rounding of each stored sum (half an ulp of 1, 1.1e-16,
	// each), well inside streamAbsTol.
	const streamAbsTol = 1e-15
	if len(rows) != 6 || math.Abs(rows[2].Max-2e-12) > streamAbsTol || rows[0].Warning != "" {
		t.Errorf("rows %v", rows)
	}
}

func TestCompareContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rows, err := CompareContext(ctx, fixtureRuns(), []string{"z_b", "omega_b"}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	for _, r := range rows {
		if r.A == "" || r.Key == "" || !math.IsNaN(r.Max) || !strings.Contains(r.Warning, "comparison stopped: context canceled") {
			t.Errorf("row %v: want named, NaN and a stopped warning", r)
		}
	}
	// Not cancelled, the same call matches Compare.
	rows, err = CompareContext(context.Background(), fixtureRuns(), []string{"z_b"}, Options{})
	if err != nil || cmp.Diff(Compare(fixtureRuns(), []string{"z_b"}, Options{}), rows, cmpopts.EquateNaNs()) != "" {
		t.Errorf("CompareContext(Background) = %v, %v; differs from Compare", rows, err)
	}
}

// cancelOnNext cancels a context when its source is asked for chunk n.
type cancelOnNext struct {
	source
	n      int
	cancel func()
}

func (c *cancelOnNext) next() ([]float64, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.source.next()
}

// TestStreamGroupStops: a context cancelled in the middle of a member stops
// the lockstep read at the next chunk, and the pair is reported stopped,
// not as the divergence of the part read.
func TestStreamGroupStops(t *testing.T) {
	x := make([]float64, 100)
	y := make([]float64, 100)
	for i := range y {
		y[i] = float64(i) // the largest difference, 99, is in the last chunk
	}
	runs := []NamedRun{{Name: "a", Path: "a.npz"}, {Name: "b", Path: "b.npz"}}
	for _, tc := range []struct {
		name   string
		cancel int // chunk at which the context is cancelled; 0: never
	}{{"not cancelled", 0}, {"cancelled at chunk 3", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ms := []member{
				{shape: []int{100}, src: &cancelOnNext{source: &memSource{data: x, chunk: 10}, n: tc.cancel, cancel: cancel}},
				{shape: []int{100}, src: &memSource{data: y}},
			}
			res := map[[2]int]pairResult{}
			streamGroup(ctx, ms, []int{0, 1}, L2, 10, res, runs)
			got := res[[2]int{0, 1}]
			if tc.cancel == 0 {
				if got.max != 99 || got.warn != "" {
					t.Errorf("got %+v, want max 99", got)
				}
				return
			}
			if !math.IsNaN(got.max) || !strings.Contains(got.warn, "comparison stopped") {
				t.Errorf("got %+v, want NaN and a stopped warning", got)
			}
		})
	}
}
