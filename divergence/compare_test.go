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
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crosscluster/crosscluster/internal/npy"
	"github.com/crosscluster/crosscluster/internal/testenv"
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
					if r.Norm == norm.name() {
						want = append(want, cmpRow{r.A, r.B, r.Key, pyFloat(t, r.Max)})
					}
				}
				rows := compareRows(fixtureRuns(), nil, Options{Norm: norm, chunkSize: chunk})
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
		"run_a/run_b/has_nan":       "NaN on one side only",
		"run_a/run_c/has_nan":       "",
		"run_a/run_b/shape_differs": `key "shape_differs": shape mismatch: run_a [200 2] in testdata/run_a.npz vs run_b [199 2] in testdata/run_b.npz`,
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
	rows := compareRows(fixtureRuns(), []string{"z_b", "has_nan"}, Options{Tolerance: map[string]float64{"z_b": 1e-9, "*": 1}})
	for _, r := range rows {
		want := r.Max <= r.tolerance
		if !r.bounded || r.Pass != want {
			t.Errorf("%v: Bounded %v Pass %v", r, r.bounded, r.Pass)
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
		for _, s := range g.Series[norm.name()] {
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
	arr, err := a.array("z_b")
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
			t.Run(tc.name+"/"+norm.name(), func(t *testing.T) {
				var s []float64
				p := newAcc()
				p.series = &s
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
		// The fast path (L∞ or one element per step) agrees with the
		// step-by-step one, step included.
		p := newAcc()
		p.addFast(tc.a, tc.b)
		fast := p.result(1, 2, true)
		slow := newAcc()
		slow.add(tc.a, tc.b, 2, LInf)
		want := slow.result(1, 2, false)
		if !cmp.Equal(fast.max, want.max, cmpopts.EquateNaNs()) || fast.maxStep != want.maxStep {
			t.Errorf("%s: fast path max %v at step %d, step path %v at %d", tc.name, fast.max, fast.maxStep, want.max, want.maxStep)
		}
	}
}

func TestOutputs(t *testing.T) {
	rows := []Row{
		{A: "x", B: "y", Key: "z_b", Max: 1.5e-12, MaxStep: 7, steps: 10, bounded: true, hasTolerance: true, tolerance: 1e-9, Pass: true,
			Elements: 20, MaxAbs: 1e-12, MaxAbsAt: []int{7, 1}, MaxRel: 2e-12, MaxRelAt: []int{3, 0}},
		{A: "x", B: "y", Key: "omega_b", Max: math.NaN(), MaxStep: -1, MaxAbs: math.NaN(), MaxRel: math.NaN(), Warning: `y: key "omega_b" missing in y.npz`},
		{A: "x", B: "y", Key: "n", Max: 1, MaxStep: 0, steps: 3, exact: true, bounded: true, closeness: &Closeness{RTol: 1e-7},
			Elements: 3, Mismatched: 1, MaxAbs: 1, MaxAbsAt: []int{0}, MaxRel: 1.1102230246251565e-16, MaxRelAt: []int{0}},
	}
	var text, js, csv bytes.Buffer
	if err := writeText(&text, rows); err != nil {
		t.Fatal(err)
	}
	want := "x vs y  z_b  max=1.500000e-12 at step 7  PASS tol=1.000000e-09\n" +
		"x vs y  omega_b  max=NaN  warning: y: key \"omega_b\" missing in y.npz\n" +
		"x vs y  n  max=1.000000e+00 at step 0 (integers, exact)  FAIL  allclose(rtol=1e-07, atol=0): 1 of 3 elements differ, max abs 1.000000e+00 at (0,), max rel 1.110223e-16 at (0,)\n"
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
	if back[0]["max"] != 1.5e-12 || back[0]["verdict"] != "PASS" || back[0]["max_step"] != 7.0 || back[1]["max"] != nil ||
		back[1]["max_text"] != "NaN" || back[1]["max_step"] != nil || back[2]["mismatched"] != 1.0 || back[2]["rtol"] != 1e-7 ||
		fmt.Sprint(back[0]["max_abs_at"]) != "[7 1]" || back[0]["rtol"] != nil || back[2]["verdict"] != "FAIL" {
		t.Errorf("json: %s", js.String())
	}
	if err := WriteCSV(&csv, rows); err != nil {
		t.Fatal(err)
	}
	wantCSV := "a,b,key,max,steps,tolerance,verdict,warning,max_step,exact,elements,max_abs,max_abs_at,max_rel,max_rel_at,nan_both,rtol,atol,mismatched,note\n" +
		"x,y,z_b,1.5000000000000001e-12,10,1.0000000000000001e-09,PASS,,7,false,20,9.9999999999999998e-13,7 1,2e-12,3 0,0,,,,\n" +
		"x,y,omega_b,NaN,0,,,\"y: key \"\"omega_b\"\" missing in y.npz\",,false,0,NaN,,NaN,,0,,,,\n" +
		"x,y,n,1,3,,FAIL,,0,true,3,1,0,1.1102230246251565e-16,0,0,9.9999999999999995e-08,0,1,\n"
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
	rows := compareRows(runs, []string{"omega_b", "z_b"}, Options{chunkSize: 1024})
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
	rows, err := Compare(ctx, fixtureRuns(), []string{"z_b", "omega_b"}, Options{})
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
	rows, err = Compare(context.Background(), fixtureRuns(), []string{"z_b"}, Options{})
	if err != nil || cmp.Diff(compareRows(fixtureRuns(), []string{"z_b"}, Options{}), rows, cmpopts.EquateNaNs(), cmp.AllowUnexported(Row{})) != "" {
		t.Errorf("Compare(Background) = %v, %v; differs from Compare", rows, err)
	}
}

// cancelOnNext cancels a context when its source is asked for chunk n.
type cancelOnNext struct {
	source[float64]
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
	for _, tc := range []struct {
		name   string
		cancel int // chunk at which the context is cancelled; 0: never
	}{{"not cancelled", 0}, {"cancelled at chunk 3", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srcs := []source[float64]{
				&cancelOnNext{source: &memSource[float64]{data: x, chunk: 10}, n: tc.cancel, cancel: cancel},
				&memSource[float64]{data: y, chunk: 10},
			}
			res := groupStream(ctx, srcs, []string{"a", "b"}, []string{"a.npz", "b.npz"}, []int{100}, L2, nil, nil, nil, addFloats)
			got := res[0][1]
			if tc.cancel == 0 {
				if got.max != 99 || got.maxStep != 99 || got.warn != "" {
					t.Errorf("got %+v, want max 99 at step 99", got)
				}
				return
			}
			if !math.IsNaN(got.max) || !strings.Contains(got.warn, "comparison stopped") {
				t.Errorf("got %+v, want NaN and a stopped warning", got)
			}
		})
	}
}

// allclose.json comes from testdata/gen_allclose.py with NumPy 1.24.2
// (Debian python3-numpy): cd divergence/testdata && /usr/bin/python3 gen_allclose.py
type allcloseCase struct {
	RTol, ATol           float64
	Exact                bool
	Elements, Mismatched int
	NaNBoth              int    `json:"nan_both"`
	MaxAbs               string `json:"max_abs"`
	MaxAbsAt             []int  `json:"max_abs_at"`
	MaxRel               string `json:"max_rel"`
	MaxRelAt             []int  `json:"max_rel_at"`
	MaxL2                string `json:"max_l2"`
	StepL2               int    `json:"step_l2"`
	MaxLinf              string `json:"max_linf"`
	StepLinf             int    `json:"step_linf"`
	NumPyMessage         string `json:"numpy_message"`
	NumPyFloatMismatched *int   `json:"numpy_float_mismatched"`
}

// TestAllcloseGolden: the element-wise comparison reports what
// numpy.testing.assert_allclose computes (mismatched elements, the largest
// absolute and relative differences and where they are), and integers are
// compared exactly: beyond 2^53, where NumPy's float64 comparison misses a
// difference of 1, and at the int64 extremes, where NumPy's abs(a - b)
// wraps around (issue 15 item 8).
func TestAllcloseGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/allclose.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		NumPy string
		Cases map[string]allcloseCase
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	runs := []NamedRun{{Name: "a", Path: "testdata/allclose_a.npz"}, {Name: "b", Path: "testdata/allclose_b.npz"}}
	mismatchRE := regexp.MustCompile(`Mismatched elements: (\d+) / (\d+)`)
	for name, c := range g.Cases {
		for _, norm := range []Norm{L2, LInf} {
			for _, chunk := range []int{1, 7, 0} {
				t.Run(fmt.Sprintf("%s/%v/chunk=%d", name, norm, chunk), func(t *testing.T) {
					rows := compareRows(runs, []string{name}, Options{Norm: norm, chunkSize: chunk,
						Close: map[string]Closeness{name: {RTol: c.RTol, ATol: c.ATol}}})
					r := rows[0]
					wantMax, wantStep := pyFloat(t, c.MaxL2), c.StepL2
					if norm == LInf {
						wantMax, wantStep = pyFloat(t, c.MaxLinf), c.StepLinf
					}
					approx := cmpopts.EquateApprox(l2RelTol, 0)
					if !cmp.Equal(wantMax, r.Max, approx, cmpopts.EquateNaNs()) || r.MaxStep != wantStep {
						t.Errorf("Max %v at step %d, want %v at %d", r.Max, r.MaxStep, wantMax, wantStep)
					}
					if r.exact != c.Exact || r.Elements != c.Elements || r.Mismatched != c.Mismatched || r.nanBoth != c.NaNBoth {
						t.Errorf("exact %v elements %d mismatched %d nan both %d, want %v %d %d %d",
							r.exact, r.Elements, r.Mismatched, r.nanBoth, c.Exact, c.Elements, c.Mismatched, c.NaNBoth)
					}
					// The element-wise maxima are single differences and
					// quotients: equal bit for bit.
					if !cmp.Equal(pyFloat(t, c.MaxAbs), r.MaxAbs, cmpopts.EquateNaNs()) || !cmp.Equal(c.MaxAbsAt, r.MaxAbsAt) {
						t.Errorf("MaxAbs %v at %v, want %s at %v", r.MaxAbs, r.MaxAbsAt, c.MaxAbs, c.MaxAbsAt)
					}
					if !cmp.Equal(pyFloat(t, c.MaxRel), r.MaxRel, cmpopts.EquateNaNs()) || !cmp.Equal(c.MaxRelAt, r.MaxRelAt) {
						t.Errorf("MaxRel %v at %v, want %s at %v", r.MaxRel, r.MaxRelAt, c.MaxRel, c.MaxRelAt)
					}
					// NaN on both sides is equal (equal_nan=True): the
					// row passes and warns only for a one-sided NaN.
					if want := c.Mismatched == 0; r.Pass != want || !r.bounded || (r.Warning == "") != (pyFloat(t, c.MaxL2) == pyFloat(t, c.MaxL2)) {
						t.Errorf("Pass %v Bounded %v, want Pass %v (warning %q)", r.Pass, r.bounded, want, r.Warning)
					}
					// Without a Closeness the norm is the same, through the
					// paths that skip the element-wise statistics.
					plain := compareRows(runs, []string{name}, Options{Norm: norm, chunkSize: chunk})[0]
					if !cmp.Equal(r.Max, plain.Max, cmpopts.EquateNaNs()) || r.MaxStep != plain.MaxStep || plain.Elements != 0 || plain.bounded ||
						plain.nanBoth != c.NaNBoth {
						t.Errorf("without Closeness: Max %v at %d (elements %d, NaN both %d), with: %v at %d", plain.Max, plain.MaxStep, plain.Elements, plain.nanBoth, r.Max, r.MaxStep)
					}
				})
			}
		}
		// NumPy's own message agrees on the count, which for integers is
		// its float64 count (what the exact comparison corrects).
		m := mismatchRE.FindStringSubmatch(c.NumPyMessage)
		want := c.Mismatched
		if c.NumPyFloatMismatched != nil {
			want = *c.NumPyFloatMismatched
		}
		switch {
		case c.NumPyMessage == "" && want != 0,
			m != nil && (m[1] != strconv.Itoa(want) || m[2] != strconv.Itoa(c.Elements)),
			m == nil && c.NumPyMessage != "" && !strings.Contains(c.NumPyMessage, "location mismatch"):
			t.Errorf("%s: NumPy's message %q does not agree with %d of %d mismatched", name, c.NumPyMessage, want, c.Elements)
		}
	}
	if exactGain := g.Cases["int64_beyond_2_53"]; *exactGain.NumPyFloatMismatched >= exactGain.Mismatched {
		t.Errorf("the integer case no longer shows a difference float64 misses: %+v", exactGain)
	}
}

// TestUint64BeyondInt64: integers that int64 cannot hold are compared
// exactly as unsigned, streamed and read whole, in Compare and Series, and
// a key that is uint64 in one run and int64 in another is compared with
// sign and magnitude apart; valid data never give NaN (review 2 item 5:
// identical uint64 arrays FAILed with NaN). TestAllcloseGolden checks the
// same against Python's integers.
func TestUint64BeyondInt64(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n+".npz") }
	writeNPZ(t, p("u0"), "u", []int{3}, []uint64{1, 2, math.MaxUint64}, "v", []int{2}, []uint64{math.MaxUint64, 0})
	writeNPZ(t, p("u1"), "u", []int{3}, []uint64{1, 2, math.MaxUint64}, "v", []int{2}, []uint64{math.MaxUint64 - 2048, 0})
	writeNPZ(t, p("i"), "u", []int{3}, []int64{1, 2, -1}, "v", []int{2}, []int64{math.MinInt64, 0})
	runs := []NamedRun{{Name: "u0", Path: p("u0")}, {Name: "u1", Path: p("u1")}, {Name: "i", Path: p("i")}}
	type want struct {
		max  float64
		at   []int
		pass bool
	}
	wants := map[string]want{
		"u0/u1/u": {0, nil, true},
		"u0/u1/v": {2048, []int{0}, false},
		"u0/i/u":  {1 << 64, []int{2}, false},       // MaxUint64 - (-1)
		"u0/i/v":  {1<<64 + 1<<63, []int{0}, false}, // MaxUint64 + 2^63, rounded once
		"u1/i/u":  {1 << 64, []int{2}, false},
		"u1/i/v":  {1<<64 + 1<<63 - 4096, []int{0}, false}, // MaxUint64 - 2048 + 2^63, rounded once
	}
	for _, chunk := range []int{1, 0} {
		for _, r := range compareRows(runs, nil, Options{chunkSize: chunk, Close: map[string]Closeness{"*": {}}}) {
			w := wants[r.A+"/"+r.B+"/"+r.Key]
			if r.Max != w.max || !r.exact || r.Pass != w.pass || r.Warning != "" || !cmp.Equal(r.MaxAbsAt, w.at) || r.MaxAbs != w.max {
				t.Errorf("chunk %d: %v, want max %v at %v, pass %v", chunk, r, w.max, w.at, w.pass)
			}
		}
	}
	a := openRun(t, p("u0"))
	for _, o := range []string{"u1", "i"} {
		s, err := Series(a, openRun(t, p(o)), "v", LInf)
		if w := wants["u0/"+o+"/v"]; err != nil || len(s) != 2 || s[0] != w.max || s[1] != 0 {
			t.Errorf("Series u0 vs %s: %v, %v; want [%v 0]", o, s, err, w.max)
		}
	}
}

// openRun opens an archive for the test's duration.
func openRun(t *testing.T, path string) *Run {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// writeNPZ writes an archive with the given members (key → shape, data).
func writeNPZ(t *testing.T, path string, members ...any) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := npy.NewZipWriter(f, false)
	for i := 0; i < len(members); i += 3 {
		if err := z.Add(members[i].(string), members[i+1].([]int), members[i+2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExactPerPair: whether a pair is compared exactly is decided per
// pair, not for the whole group of runs of one shape: two int64 runs that
// differ by 1 beyond 2^53 differ, whether or not a third run holds the key
// as float64 (review 2 item 2: a vs b max=0 PASS once c was added). The
// pairs with the float run are compared in float64, as NumPy does:
// float64(2^60 + 1) is 2^60, so both are 0.
func TestExactPerPair(t *testing.T) {
	dir := t.TempDir()
	const big = 1 << 60
	a, b, c := filepath.Join(dir, "a.npz"), filepath.Join(dir, "b.npz"), filepath.Join(dir, "c.npz")
	writeNPZ(t, a, "x", []int{2}, []int64{big + 1, 5})
	writeNPZ(t, b, "x", []int{2}, []int64{big, 5})
	writeNPZ(t, c, "x", []int{2}, []float64{big, 5})
	runs := []NamedRun{{Name: "a", Path: a}, {Name: "b", Path: b}, {Name: "c", Path: c}}
	type got struct {
		A, B         string
		Max          float64
		Exact, Pass  bool
		Mismatched   int
		MaxAbsAt     []int
		WarningEmpty bool
	}
	want := []got{
		{"a", "b", 1, true, false, 1, []int{0}, true},
		{"a", "c", 0, false, true, 0, nil, true},
		{"b", "c", 0, false, true, 0, nil, true},
	}
	for _, chunk := range []int{1, 0} {
		for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
			var rs []NamedRun
			for _, i := range order {
				rs = append(rs, runs[i])
			}
			rows := compareRows(rs, []string{"x"}, Options{chunkSize: chunk, Tolerance: map[string]float64{"*": 0}, Close: map[string]Closeness{"*": {}}})
			var gs []got
			for _, r := range rows {
				if r.A > r.B {
					r.A, r.B = r.B, r.A
				}
				gs = append(gs, got{r.A, r.B, r.Max, r.exact, r.Pass, r.Mismatched, r.MaxAbsAt, r.Warning == ""})
			}
			slices.SortFunc(gs, func(x, y got) int { return strings.Compare(x.A+x.B, y.A+y.B) })
			if d := cmp.Diff(want, gs); d != "" {
				t.Errorf("chunk %d, order %v (-want +got):\n%s", chunk, order, d)
			}
		}
	}
	// Without the float run, the same.
	rows := compareRows(runs[:2], []string{"x"}, Options{Tolerance: map[string]float64{"*": 0}})
	if r := rows[0]; r.Max != 1 || !r.exact || r.Pass {
		t.Errorf("a vs b alone: %v", r)
	}
}

// TestSeriesNaNBothSides: Series treats NaN on both sides as equal, as
// Compare does (equal_nan=True), and a NaN on one side makes its step NaN
// (review 2 item 7). The cases are gen_allclose.py's.
func TestSeriesNaNBothSides(t *testing.T) {
	a, b := openRun(t, "testdata/allclose_a.npz"), openRun(t, "testdata/allclose_b.npz")
	for _, norm := range []Norm{L2, LInf} {
		s, err := Series(a, b, "nan_same_places_only", norm)
		if err != nil || len(s) != 5 || slices.ContainsFunc(s, func(v float64) bool { return v != 0 }) {
			t.Errorf("%v: NaN at the same places: %v, %v; want 5 zeros", norm, s, err)
		}
		s, err = Series(a, b, "nan_one_side", norm)
		if err != nil || len(s) != 8 || !math.IsNaN(s[5]) || slices.ContainsFunc(slices.Delete(s, 5, 6), math.IsNaN) {
			t.Errorf("%v: NaN on one side at 5: %v, %v", norm, s, err)
		}
	}
}

// TestEmptyArrays: equal shapes with no elements agree, as
// numpy.testing.assert_allclose(np.zeros((0, 3)), np.zeros((0, 3))) passes:
// Max 0, Pass under every bound, and a note that nothing was compared
// (review 2 item 6: FAIL with NaN).
func TestEmptyArrays(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		writeNPZ(t, filepath.Join(dir, fmt.Sprint(i, ".npz")),
			"rows0", []int{0, 3}, []float64{}, "cols0", []int{3, 0}, []float64{}, "flat", []int{0}, []float64{}, "ints", []int{0, 2}, []int64{})
	}
	runs := []NamedRun{{Name: "a", Path: filepath.Join(dir, "0.npz")}, {Name: "b", Path: filepath.Join(dir, "1.npz")}}
	wantSteps := map[string]int{"rows0": 0, "cols0": 3, "flat": 0, "ints": 0}
	for _, norm := range []Norm{L2, LInf} {
		rows := compareRows(runs, nil, Options{Norm: norm, Tolerance: map[string]float64{"*": 0}, Close: map[string]Closeness{"*": {}}})
		if len(rows) != 4 {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows {
			if r.Max != 0 || r.MaxStep != -1 || !r.Pass || r.Warning != "" || !strings.Contains(r.note, "no elements") ||
				r.steps != wantSteps[r.Key] || r.Elements != 0 || r.MaxAbsAt != nil {
				t.Errorf("%v: %+v", norm, r)
			}
			if !strings.Contains(r.String(), "note: no elements") {
				t.Errorf("%q does not show the note", r.String())
			}
		}
	}
	a, b := openRun(t, runs[0].Path), openRun(t, runs[1].Path)
	for key, n := range wantSteps {
		s, err := Series(a, b, key, L2)
		if err != nil || len(s) != n || slices.ContainsFunc(s, func(v float64) bool { return v != 0 }) {
			t.Errorf("Series %s: %v, %v; want %d zeros", key, s, err, n)
		}
	}
}

// TestSameFile: two runs that are one file, by the same path or another
// (a hard link here), are not compared: their rows warn and fail instead of
// passing with 0 (review 2 suspected item c).
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.npz")
	writeNPZ(t, a, "x", []int{2}, []float64{1, 2})
	link := filepath.Join(dir, "link.npz")
	if err := os.Link(a, link); err != nil {
		testenv.Skip(t, "no hard links here:", err)
	}
	other := filepath.Join(dir, "other.npz")
	writeNPZ(t, other, "x", []int{2}, []float64{1, 2})
	rows := compareRows([]NamedRun{{Name: "a", Path: a}, {Name: "same", Path: a}, {Name: "link", Path: link}, {Name: "other", Path: other}},
		nil, Options{Tolerance: map[string]float64{"*": 0}})
	for _, r := range rows {
		one := r.B != "other"
		if one != (math.IsNaN(r.Max) && !r.Pass && strings.Contains(r.Warning, "are one file")) || !one && !(r.Max == 0 && r.Pass) {
			t.Errorf("%v (one file: %v)", r, one)
		}
	}
}

// compareRows is Compare without cancellation.
func compareRows(runs []NamedRun, keys []string, opt Options) []Row {
	rows, _ := Compare(context.Background(), runs, keys, opt)
	return rows
}
