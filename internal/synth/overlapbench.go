package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// OverlapShapes names the data shapes of the overlap benchmark
// (bench/overlap, overlap's BenchmarkPipeline), each a two-domain feature
// matrix whose form stresses a different part of overlap.Fit:
//
//   - "synth": the Anvil-like and Conte-like profiles of JobsFeatures, half
//     and half (the benchmark's first generator; its allocation columns
//     take few values, runtime and queue time are continuous).
//   - "continuous": six continuous features (normal, log-normal, gamma,
//     uniform, Student-t, beta shapes), no two values equal, half and half.
//   - "tied": accounting-shaped, as Stampede's accounting months: cores a
//     multiple of the node size from a few node counts, time limits on
//     round minutes, runtimes and queue times in whole seconds (timeouts at
//     the limit, queue times heavy-tailed with a third exactly zero),
//     runtime fraction their ratio; half and half.
//   - "imbalanced": "tied" with one source job to three target jobs.
//   - "wide": twelve features, the six of "tied" and six telemetry-like
//     ones (CPU and memory use, I/O, GPU counts: continuous, heavy-tailed
//     and mostly zero).
var OverlapShapes = []string{"synth", "continuous", "tied", "imbalanced", "wide"}

// OverlapBench returns n jobs of the named shape (see OverlapShapes) as a
// row-major n × len(names) matrix x, the domain of each (0 source, 1
// target; the source jobs first) and the feature names, drawn from a PCG
// generator seeded with seed. It returns an error for an unknown shape.
func OverlapBench(shape string, n int, seed uint64) (x []float64, y []int, names []string, err error) {
	if n < 0 {
		panic("synth: negative job count")
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	nSource := n / 2
	if shape == "imbalanced" {
		nSource = n / 4
	}
	y = make([]int, n)
	for i := nSource; i < n; i++ {
		y[i] = 1
	}
	switch shape {
	case "synth":
		src := JobsFeatures(AnvilLike(), nSource, rng)
		return append(src, JobsFeatures(ConteLike(), n-nSource, rng)...), y, JobsFeatureNames(), nil
	case "continuous":
		names = []string{"normal", "lognormal", "gamma", "uniform", "student_t", "beta"}
		x = make([]float64, 0, 6*n)
		for i := range n {
			x = continuousRow(x, float64(y[i]), rng)
		}
	case "tied", "imbalanced":
		names = JobsFeatureNames()
		x = make([]float64, 0, 6*n)
		for i := range n {
			x = accountingRow(x, y[i], rng)
		}
	case "wide":
		names = append(JobsFeatureNames(), "cpu_user_pct", "mem_used_gb", "mem_frac", "io_read_gb", "gpu_count", "nodes_idle_pct")
		x = make([]float64, 0, 12*n)
		for i := range n {
			x = accountingRow(x, y[i], rng)
			x = telemetryRow(x, y[i], rng)
		}
	default:
		return nil, nil, nil, fmt.Errorf("synth: unknown overlap benchmark shape %q (want one of %v)", shape, OverlapShapes)
	}
	return x, y, names, nil
}

// continuousRow appends six continuous features, the target's shifted
// (d = 1) so that the domains overlap partly.
func continuousRow(x []float64, d float64, rng *rand.Rand) []float64 {
	gamma := 0.0 // Erlang(3): the sum of three exponentials
	for range 3 {
		gamma += rng.ExpFloat64()
	}
	t := rng.NormFloat64() / math.Sqrt((rng.ExpFloat64()+rng.ExpFloat64())/2) // Student-t, 4 degrees of freedom
	u1, u2 := rng.Float64(), rng.Float64()
	beta := u1 * u1 / (u1*u1 + u2) // a skewed share in (0, 1)
	return append(x,
		rng.NormFloat64()+0.4*d,
		math.Exp(1+rng.NormFloat64()*(1+0.3*d)),
		gamma*(1+0.25*d),
		rng.Float64()+0.2*d,
		t+0.3*d,
		beta*(1-0.2*d),
	)
}

// Accounting shapes of the two domains: node counts and their weights,
// cores per node, time-limit minutes and their weights; the log-normal of
// runtime seconds, the shares of jobs killed at the limit, failed at
// start and cancelled while starting, the share that did not queue, and
// the log-normal of the others' queue seconds.
var accountingDomains = [2]struct {
	nodes, nodeWeights, coresPerNode, limits, limitWeights         []float64
	runMu, runSigma, timeout, failFast, kill, noQueue, qMu, qSigma float64
}{
	{
		nodes: []float64{1, 2, 4, 8, 16, 32, 64}, nodeWeights: []float64{60, 12, 10, 8, 5, 3, 2},
		coresPerNode: []float64{16, 16, 16, 20},
		limits:       []float64{5, 10, 30, 60, 120, 240, 480, 720, 1440, 2880}, limitWeights: []float64{3, 4, 12, 20, 14, 12, 10, 6, 14, 5},
		runMu: 7, runSigma: 1.8, timeout: 0.10, noQueue: 0.30, qMu: 6, qSigma: 2.4, failFast: 0.06, kill: 0.03,
	},
	{
		nodes: []float64{1, 2, 4, 8, 16, 32, 64, 128}, nodeWeights: []float64{50, 14, 12, 9, 6, 4, 3, 2},
		coresPerNode: []float64{16, 68, 68, 48},
		limits:       []float64{10, 30, 60, 120, 240, 480, 720, 1440, 2880}, limitWeights: []float64{4, 14, 18, 15, 12, 10, 6, 16, 5},
		runMu: 7.3, runSigma: 1.9, timeout: 0.13, noQueue: 0.25, qMu: 6.6, qSigma: 2.5, failFast: 0.05, kill: 0.04,
	},
}

// accountingRow appends one accounting-shaped job of domain d: ncores,
// nhosts, timelimit_sec, runtime_sec, queue_time_sec, runtime_fraction,
// with whole seconds throughout.
func accountingRow(x []float64, d int, rng *rand.Rand) []float64 {
	a := &accountingDomains[d]
	nhosts := a.nodes[pick(a.nodeWeights, rng)]
	cpn := a.coresPerNode[rng.IntN(len(a.coresPerNode))]
	ncores := nhosts * cpn
	if nhosts == 1 && rng.IntN(4) == 0 {
		ncores = float64(1 + rng.IntN(int(cpn))) // a shared node: part of it
	}
	limit := 60 * a.limits[pick(a.limitWeights, rng)]
	var runtime float64
	switch u := rng.Float64(); {
	case u < a.timeout:
		runtime = limit + float64(rng.IntN(90)) // killed at the limit, plus cleanup
	case u < a.timeout+a.failFast:
		runtime = float64(rng.IntN(30)) // failed at start
	case u < a.timeout+a.failFast+a.kill:
		runtime = 0 // cancelled while starting
	default:
		runtime = math.Min(limit, math.Round(math.Exp(a.runMu+a.runSigma*rng.NormFloat64())))
	}
	queue := 0.0
	if rng.Float64() >= a.noQueue {
		queue = math.Min(3e6, math.Round(math.Exp(a.qMu+a.qSigma*rng.NormFloat64())))
	}
	return append(x, ncores, nhosts, limit, runtime, queue, runtime/limit)
}

// telemetryRow appends six telemetry-like features of domain d:
// cpu_user_pct, mem_used_gb, mem_frac, io_read_gb, gpu_count,
// nodes_idle_pct.
func telemetryRow(x []float64, d int, rng *rand.Rand) []float64 {
	fd := float64(d)
	cpu := math.Min(100, math.Max(0, 70+25*rng.NormFloat64()-10*fd))
	memFrac := 1 / (1 + math.Exp(-(rng.NormFloat64()*1.2 - 1 + 0.4*fd)))
	nodeMem := [][]float64{{64, 128, 128, 256}, {64, 64, 128, 256}}[d][rng.IntN(4)]
	mem := memFrac * nodeMem * (0.8 + 0.4*rng.Float64())
	io := 0.0
	if rng.IntN(3) > 0 {
		io = math.Exp(rng.NormFloat64()*2.5 - 1 + 0.5*fd)
	}
	gpus := 0.0
	if rng.Float64() < 0.08+0.06*fd {
		gpus = float64(1 + rng.IntN(4))
	}
	idle := math.Round(math.Max(0, rng.NormFloat64()*15+10-5*fd)) // whole percent
	return append(x, cpu, mem, memFrac, io, gpus, idle)
}

// Replicate stretches a real two-domain table to n rows for the overlap
// benchmark's "fresco" shape: x is row-major with d columns, y the domains
// (0 source, 1 target). The source rows, repeated in order, fill the first
// round(n·ns/(ns+nt)) rows and the target rows the rest, so the domains keep
// their shares. It panics if the lengths disagree, a domain is empty or n
// is less than 2.
func Replicate(x []float64, y []int, d, n int) ([]float64, []int) {
	if len(x) != len(y)*d || n < 2 {
		panic("synth: Replicate: bad shape")
	}
	var src, tgt []int
	for i, v := range y {
		if v == 0 {
			src = append(src, i)
		} else {
			tgt = append(tgt, i)
		}
	}
	if len(src) == 0 || len(tgt) == 0 {
		panic("synth: Replicate: a domain is empty")
	}
	ns := int(math.Round(float64(n) * float64(len(src)) / float64(len(y))))
	ns = min(max(ns, 1), n-1)
	outX, outY := make([]float64, 0, n*d), make([]int, n)
	for k := range n {
		i := src[k%len(src)]
		if k >= ns {
			i = tgt[(k-ns)%len(tgt)]
			outY[k] = 1
		}
		outX = append(outX, x[i*d:(i+1)*d]...)
	}
	return outX, outY
}
