// Command gopipe writes the overlap benchmark data as NumPy .npy files and
// runs the Go overlap pipeline on them, for a side-by-side run against
// bench/overlap/peer.py (see bench/overlap/README.md).
//
//	go run ./internal/bench/overlap/gopipe -gen DIR -shape tied -n 1000000  # writes DIR/tied/{X,y}_1000000.npy and names.json
//	go build -o /tmp/gopipe ./internal/bench/overlap/gopipe
//	/usr/bin/time -v /tmp/gopipe -run DIR -shape tied -n 1000000   # times the pipeline, prints JSON
//
// The data are the same as overlap's BenchmarkPipeline: one of
// synth.OverlapShapes (synth, continuous, tied, imbalanced, wide) from
// internal/synth with seed 20260101, the source jobs (y = 0) first, or
// "fresco": the public Stampede February (source) and March 2018 (target)
// accounting months of the test data ($CROSSCLUSTER_TESTDATA/fresco, read
// in place), their six job features replicated to n rows.
//
// -calls K times K consecutive fits in one process with one
// overlap.Fitter, as a program that fits in a loop does, and reports their
// median (steady state) beside the first call; without it the one fit of a
// fresh process is timed with overlap.Fit.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/overlap"
	"github.com/crosscluster/crosscluster/regime"
)

const seed = 20260101 // as overlap's benchSeed

func main() {
	gen := flag.String("gen", "", "write X_<n>.npy and y_<n>.npy into this directory")
	run := flag.String("run", "", "read X_<n>.npy and y_<n>.npy from this directory and time the pipeline")
	nf := flag.Float64("n", 1e6, "number of jobs")
	shape := flag.String("shape", "synth", fmt.Sprintf("data shape, one of %v or fresco", synth.OverlapShapes))
	reps := flag.Int("reps", 1, "pipeline repetitions; the fastest is reported")
	calls := flag.Int("calls", 0, "steady state: time this many consecutive fits with one overlap.Fitter and report their median")
	flag.Parse()
	n := int(*nf)
	var err error
	switch {
	case *gen != "":
		err = generate(filepath.Join(*gen, *shape), *shape, n)
	case *run != "":
		err = pipeline(filepath.Join(*run, *shape), n, *reps, *calls)
	default:
		err = errors.New("give -gen DIR or -run DIR")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gopipe:", err)
		os.Exit(1)
	}
}

func generate(dir, shape string, n int) error {
	var x []float64
	var yi []int
	var names []string
	var err error
	if shape == "fresco" {
		x, yi, names, err = fresco(n)
	} else {
		x, yi, names, err = synth.OverlapBench(shape, n, seed)
	}
	if err != nil {
		return err
	}
	y := make([]float64, n)
	for i, v := range yi {
		y[i] = float64(v)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeNpy(filepath.Join(dir, fmt.Sprintf("X_%d.npy", n)), x, n, len(names)); err != nil {
		return err
	}
	if err := writeNpy(filepath.Join(dir, fmt.Sprintf("y_%d.npy", n)), y, n, 0); err != nil {
		return err
	}
	b, err := json.Marshal(names)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "names.json"), b, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %d jobs × %d features (%s) to %s\n", n, len(names), shape, dir)
	return nil
}

// fresco returns the Stampede February (source) and March 2018 (target)
// accounting months' job features, replicated to n rows (synth.Replicate).
func fresco(n int) ([]float64, []int, []string, error) {
	dir, err := pubdata.Dir("fresco")
	if err != nil {
		return nil, nil, nil, err
	}
	var jobs []regime.Job
	var y []int
	for k, name := range []string{"stampede_feb_2018_job_accounting.csv", "stampede_mar_2018_job_accounting.csv"} {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, nil, err
		}
		js, err := regime.ReadStampede(bufio.NewReader(f), path)
		f.Close()
		if err != nil {
			return nil, nil, nil, err
		}
		jobs = append(jobs, js...)
		for range js {
			y = append(y, k)
		}
	}
	names := regime.JobFeatures()
	m, err := regime.Matrix(jobs, names)
	if err != nil {
		return nil, nil, nil, err
	}
	x, y := synth.Replicate(m.RawMatrix().Data, y, len(names), n)
	return x, y, names, nil
}

// writeNpy writes float64 data as a version 1.0 .npy (shape (rows, cols),
// or (rows,) when cols is 0).
func writeNpy(path string, data []float64, rows, cols int) error {
	shape := fmt.Sprintf("(%d,)", rows)
	if cols > 0 {
		shape = fmt.Sprintf("(%d, %d)", rows, cols)
	}
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString("\x93NUMPY\x01\x00")
	binary.Write(w, binary.LittleEndian, uint16(len(header)))
	w.WriteString(header)
	buf := make([]byte, 8)
	for _, v := range data {
		binary.LittleEndian.PutUint64(buf, math.Float64bits(v))
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cpuTime is the user+system CPU time of the process (all threads) in
// seconds, as Python's time.process_time.
func cpuTime() float64 {
	d, ok := cputime.Self()
	if !ok {
		return math.NaN()
	}
	return d.Seconds()
}

// sysTime is the part of cpuTime spent in the kernel (page faults of fresh
// memory, mostly), in seconds.
func sysTime() float64 {
	d, ok := cputime.System()
	if !ok {
		return math.NaN()
	}
	return d.Seconds()
}

// readNpy reads a float64 .npy written by writeNpy.
func readNpy(path string, want int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	pre := make([]byte, 10)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if string(pre[:8]) != "\x93NUMPY\x01\x00" {
		return nil, fmt.Errorf("%s: not a version 1.0 .npy", path)
	}
	hdr := make([]byte, binary.LittleEndian.Uint16(pre[8:]))
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !strings.Contains(string(hdr), "'<f8'") || strings.Contains(string(hdr), "True") {
		return nil, fmt.Errorf("%s: want little-endian float64, C order", path)
	}
	out := make([]float64, want)
	buf := make([]byte, 8)
	for i := range out {
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("%s: value %d: %w", path, i, err)
		}
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf))
	}
	return out, nil
}

func pipeline(dir string, n, reps, calls int) error {
	t0 := time.Now()
	b, err := os.ReadFile(filepath.Join(dir, "names.json"))
	if err != nil {
		return err
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "names.json"), err)
	}
	d := len(names)
	xd, err := readNpy(filepath.Join(dir, fmt.Sprintf("X_%d.npy", n)), d*n)
	if err != nil {
		return err
	}
	yd, err := readNpy(filepath.Join(dir, fmt.Sprintf("y_%d.npy", n)), n)
	if err != nil {
		return err
	}
	x := mat.NewDense(n, d, xd)
	y := make([]int, n)
	for i, v := range yd {
		y[i] = int(v)
	}
	load := time.Since(t0)
	best, bestCPU, bestSys := math.Inf(1), math.Inf(1), math.Inf(1)
	var res *overlap.Result
	var steady map[string]any
	reps = max(1, reps)
	if calls > 0 {
		reps = 0
		var f overlap.Fitter
		wall, cpu, sys := make([]float64, calls), make([]float64, calls), make([]float64, calls)
		for k := range calls {
			t, c, s := time.Now(), cpuTime(), sysTime()
			res, err = f.Fit(x, y, overlap.Band{Lo: 0.2, Hi: 0.8}, overlap.WithFeatureNames(names...))
			if err != nil {
				return err
			}
			wall[k], cpu[k], sys[k] = time.Since(t).Seconds(), cpuTime()-c, sysTime()-s
		}
		best, bestCPU, bestSys = median(wall), median(cpu), median(sys)
		steady = map[string]any{"calls": calls, "calls_sec": wall, "first_sec": wall[0]}
	}
	for range reps {
		t, c, k := time.Now(), cpuTime(), sysTime()
		res, err = overlap.Fit(x, y, overlap.Band{Lo: 0.2, Hi: 0.8}, overlap.WithFeatureNames(names...))
		if err != nil {
			return err
		}
		best = math.Min(best, time.Since(t).Seconds())
		bestCPU = math.Min(bestCPU, cpuTime()-c)
		bestSys = math.Min(bestSys, sysTime()-k)
	}
	// The same keys as peer.py --equal-work, so the outputs can be compared.
	ks, ksIn := make(map[string][2]float64), make(map[string][2]float64)
	smd, vr := make(map[string]float64), make(map[string]float64)
	smdIn, vrIn := make(map[string]float64), make(map[string]float64)
	for _, f := range res.KS {
		ks[f.Name] = [2]float64{f.All.Statistic, f.All.PValue}
		smd[f.Name], vr[f.Name] = f.SMD, f.VarianceRatio
		if f.InBandNote == "" {
			ksIn[f.Name] = [2]float64{f.InBand.Statistic, f.InBand.PValue}
			smdIn[f.Name], vrIn[f.Name] = f.SMDInBand, f.VarRatioInBand
		}
	}
	out := map[string]any{
		"tool": "go", "n": n, "load_sec": load.Seconds(), "pipeline_sec": best, "pipeline_cpu_sec": bestCPU, "pipeline_sys_sec": bestSys, "reps": reps,
		"auc": res.AUC, "coverage": res.Coverage, "n_target_in_band": res.NTargetInBand, "n_source_in_band": res.NSourceInBand,
		"iterations": res.Solver.Iterations, "ks": ks, "ks_in_band": ksIn,
		"smd": smd, "var_ratio": vr, "smd_in_band": smdIn, "var_ratio_in_band": vrIn,
		"source_quantiles": res.SourceQuantiles, "target_quantiles": res.TargetQuantiles,
		"source_hist": res.SourceHist, "target_hist": res.TargetHist, "ess": res.ESS, "ess_in_band": res.ESSInBand,
	}
	for k, v := range steady {
		out[k] = v
	}
	b, err = json.Marshal(finiteJSON(out))
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

// median returns the median of v (the mean of the middle two for an even
// count); it sorts a copy.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
}

// finiteJSON replaces the NaN and ±Inf that encoding/json rejects (an
// odds weight p/(1-p) is +Inf when p rounds to 1) by the strings "NaN",
// "+Inf", "-Inf".
func finiteJSON(v any) any {
	fix := func(f float64) any {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(f)
		}
		return f
	}
	switch v := v.(type) {
	case float64:
		return fix(v)
	case []float64:
		out := make([]any, len(v))
		for i, f := range v {
			out[i] = fix(f)
		}
		return out
	case [2]float64:
		return []any{fix(v[0]), fix(v[1])}
	case map[string]float64:
		out := make(map[string]any, len(v))
		for k, f := range v {
			out[k] = fix(f)
		}
		return out
	case map[string][2]float64:
		out := make(map[string]any, len(v))
		for k, f := range v {
			out[k] = finiteJSON(f)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = finiteJSON(e)
		}
		return out
	}
	return v
}
