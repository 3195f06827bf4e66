package divergence_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/crosscluster/crosscluster/divergence"
)

// The fixture runs come from testdata/gen.py (NumPy 1.24.2); run_b and
// run_c carry relative noise of 1e-12 and 3e-9 on run_a's values; the
// maxima printed here equal NumPy's in testdata/want.json (TestCompareGolden).
func ExampleCompare() {
	var runs []divergence.NamedRun
	for _, n := range []string{"run_a", "run_b", "run_c"} {
		runs = append(runs, divergence.NamedRun{Name: n, Path: filepath.Join("testdata", n+".npz")})
	}
	rows, err := divergence.Compare(context.Background(), runs, []string{"z_b", "only_some"}, divergence.Options{
		Tolerance: map[string]float64{"z_b": 1e-9},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Println(r)
	}
	// Output:
	// run_a vs run_b  z_b  max=4.800461e-12 at step 6  PASS tol=1.000000e-09
	// run_a vs run_b  only_some  max=4.410250e-12 at step 163
	// run_a vs run_c  z_b  max=1.606225e-08 at step 159  FAIL tol=1.000000e-09
	// run_a vs run_c  only_some  max=NaN  warning: run_c: key "only_some" missing in testdata/run_c.npz
	// run_b vs run_c  z_b  max=1.606351e-08 at step 159  FAIL tol=1.000000e-09
	// run_b vs run_c  only_some  max=NaN  warning: run_c: key "only_some" missing in testdata/run_c.npz
}

// Element by element, as numpy.testing.assert_allclose(a, b, rtol, atol)
// checks it; the integer case holds int64 values beyond 2^53, compared
// exactly (NumPy's float64 comparison sees one of the two differences).
// The numbers equal NumPy's in testdata/allclose.json (TestAllcloseGolden).
func ExampleCompare_allclose() {
	runs := []divergence.NamedRun{
		{Name: "a", Path: "testdata/allclose_a.npz"},
		{Name: "b", Path: "testdata/allclose_b.npz"},
	}
	rows, err := divergence.Compare(context.Background(), runs, []string{"float_rtol_atol", "int64_beyond_2_53"}, divergence.Options{
		Close: map[string]divergence.Closeness{"*": {RTol: 1e-9, ATol: 1e-12}, "int64_beyond_2_53": {}}, // {}: exactly equal
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("%s: %s, %d of %d elements differ, max abs %.3e at %v, max rel %.3e at %v\n",
			r.Key, map[bool]string{true: "PASS", false: "FAIL"}[r.Pass], r.Mismatched, r.Elements, r.MaxAbs, r.MaxAbsAt, r.MaxRel, r.MaxRelAt)
	}
	// Output:
	// float_rtol_atol: FAIL, 180 of 200 elements differ, max abs 4.615e-08 at [4 1], max rel 2.957e-08 at [4 1]
	// int64_beyond_2_53: FAIL, 2 of 12 elements differ, max abs 1.000e+00 at [1 0], max rel 1.110e-16 at [1 0]
}

func ExampleSeries() {
	a, err := divergence.Open("testdata/run_a.npz")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, err := divergence.Open("testdata/run_b.npz")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	s, err := divergence.Series(a, b, "omega_b", divergence.L2)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d steps, first %.3e\n", len(s), s[0])
	// Output: 200 steps, first 1.041e-12
}

// Open reads only the archive's directory.
func ExampleOpen() {
	r, err := divergence.Open("testdata/run_a.npz")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println(r.Keys())
	_, err = divergence.Open("testdata/missing.npz")
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// [z_b omega_b field fort counts scalar has_nan shape_differs only_some]
	// true
}

// Pairwise compares every pair of runs on each key with the L2 norm per
// step; the maxima equal NumPy's (testdata/want.json, TestCompareGolden).
// A key whose shapes differ between the runs gets a warning and NaN.
func ExamplePairwise() {
	runs := []divergence.NamedRun{
		{Name: "a", Path: "testdata/run_a.npz"},
		{Name: "b", Path: "testdata/run_b.npz"},
	}
	for _, r := range divergence.Pairwise(runs, []string{"z_b", "omega_b", "scalar", "shape_differs"}) {
		fmt.Printf("%s-%s %-13s max %.6e", r.A, r.B, r.Key, r.Max)
		if r.Warning != "" {
			fmt.Print("; ", r.Warning)
		}
		fmt.Println()
	}
	// Output:
	// a-b z_b           max 4.800461e-12
	// a-b omega_b       max 5.018430e-12
	// a-b scalar        max 7.733814e-13
	// a-b shape_differs max NaN; key "shape_differs": shape mismatch: a [200 2] in testdata/run_a.npz vs b [199 2] in testdata/run_b.npz
}

// A Go program writes its run's archive with a Writer; the comparison
// reads it like numpy.savez's.
func ExampleWriter() {
	dir, err := os.MkdirTemp("", "run")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	write := func(name string, eps float64) string {
		path := filepath.Join(dir, name+".npz")
		f, err := os.Create(path)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		w := divergence.NewWriter(f)
		x := []float64{1, 2, 3, 4 + eps, 5, 6} // 3 steps of 2 values; 4+1e-12 rounds to 4+1.000089e-12
		if err := w.Add("x", []int{3, 2}, x); err != nil {
			panic(err)
		}
		if err := w.Close(); err != nil {
			panic(err)
		}
		return path
	}
	rows := divergence.Pairwise([]divergence.NamedRun{
		{Name: "a", Path: write("a", 0)},
		{Name: "b", Path: write("b", 1e-12)},
	}, nil)
	fmt.Println(rows[0])
	// Output: a vs b  x  max=1.000089e-12 at step 1
}
