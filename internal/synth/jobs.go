package synth

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// ClusterPartition is one partition of a synthetic cluster.
type ClusterPartition struct {
	Name         string
	Weight       float64 // share of jobs, relative to the other partitions
	NodeCores    int
	NodeMemoryGB float64
	GPUs         int  // GPUs per node
	Shared       bool // jobs may take part of a node
	MaxNodes     int
}

// ClusterProfile describes the job mix of a synthetic cluster for
// JobTable and JobsFeatures.
type ClusterProfile struct {
	Name       string
	Partitions []ClusterPartition
	// TimelimitUnitSec is the number of seconds in one unit of the written
	// timelimit column (60 for minutes).
	TimelimitUnitSec float64
	// Timelimits are the requested limits in minutes users pick from, with
	// TimelimitWeights their relative frequencies.
	Timelimits, TimelimitWeights []float64
	// RuntimeMu and RuntimeSigma give logit(runtime/timelimit) ~ N(mu, sigma).
	RuntimeMu, RuntimeSigma float64
	// TimeoutShare is the share of jobs that run to their limit.
	TimeoutShare float64
	// QueueMu and QueueSigma give log(queue seconds + 1) ~ N(mu, sigma).
	QueueMu, QueueSigma float64
	// MultiNodeShare is the share of jobs on more than one node.
	MultiNodeShare float64
	// Start is the earliest submit time; jobs are submitted over Days days.
	Start time.Time
	Days  float64
}

// AnvilLike returns a profile resembling Purdue's Anvil: 128-core nodes,
// a shared partition, 1 TB large-memory nodes and 4-GPU nodes with exactly
// 512 GB. It is synthetic: shares and distributions are illustrative.
func AnvilLike() ClusterProfile {
	return ClusterProfile{
		Name: "anvil",
		Partitions: []ClusterPartition{
			{Name: "shared", Weight: 0.45, NodeCores: 128, NodeMemoryGB: 256, Shared: true, MaxNodes: 1},
			{Name: "wholenode", Weight: 0.30, NodeCores: 128, NodeMemoryGB: 256, MaxNodes: 16},
			{Name: "highmem", Weight: 0.08, NodeCores: 128, NodeMemoryGB: 1024, Shared: true, MaxNodes: 1},
			{Name: "gpu", Weight: 0.17, NodeCores: 128, NodeMemoryGB: 512, GPUs: 4, Shared: true, MaxNodes: 2},
		},
		TimelimitUnitSec: 1,
		Timelimits:       []float64{30, 60, 120, 240, 480, 720, 1440, 2880},
		TimelimitWeights: []float64{10, 20, 15, 15, 10, 10, 15, 5},
		RuntimeMu:        -1.2, RuntimeSigma: 1.6, TimeoutShare: 0.08,
		QueueMu: 5.5, QueueSigma: 2.2, MultiNodeShare: 0.25,
		Start: time.Date(2023, 2, 1, 0, 0, 0, 0, time.UTC), Days: 28,
	}
}

// ConteLike returns a profile resembling Purdue's older Conte: 16-core
// 64 GB nodes, a 512 GB large-memory partition, and (unlike the real
// machine, so that every regime occurs) a small GPU partition and a large-
// memory GPU partition. Timelimits are written in minutes.
func ConteLike() ClusterProfile {
	return ClusterProfile{
		Name: "conte",
		Partitions: []ClusterPartition{
			{Name: "standby", Weight: 0.55, NodeCores: 16, NodeMemoryGB: 64, MaxNodes: 32},
			{Name: "batch", Weight: 0.25, NodeCores: 16, NodeMemoryGB: 64, Shared: true, MaxNodes: 8},
			{Name: "largemem", Weight: 0.08, NodeCores: 32, NodeMemoryGB: 512, Shared: true, MaxNodes: 1},
			{Name: "gpu", Weight: 0.08, NodeCores: 16, NodeMemoryGB: 128, GPUs: 2, Shared: true, MaxNodes: 2},
			{Name: "gpu-bigmem", Weight: 0.04, NodeCores: 32, NodeMemoryGB: 768, GPUs: 2, Shared: true, MaxNodes: 1},
		},
		TimelimitUnitSec: 60,
		Timelimits:       []float64{30, 60, 120, 240, 480, 720, 1440, 4320},
		TimelimitWeights: []float64{15, 25, 15, 15, 10, 5, 10, 5},
		RuntimeMu:        -0.8, RuntimeSigma: 1.4, TimeoutShare: 0.12,
		QueueMu: 6.5, QueueSigma: 2.0, MultiNodeShare: 0.4,
		Start: time.Date(2015, 3, 1, 0, 0, 0, 0, time.UTC), Days: 28,
	}
}

// jobDraw is one synthetic job before telemetry.
type jobDraw struct {
	part                    int
	ncores, nhosts          float64
	timelimitSec            float64
	submit, queue, runtime  float64 // seconds
	memFrac, gpuUtil, cpuPc float64
}

// StampedeLike returns a profile resembling TACC's Stampede (2013–2018):
// 16-core 32 GB Sandy Bridge nodes in a normal and a development queue,
// 68-core Knights Landing nodes, 1 TB large-memory nodes and single-GPU
// nodes, time limits in minutes up to two days. It is synthetic, a third
// cluster beside AnvilLike and ConteLike for many-cluster comparisons.
func StampedeLike() ClusterProfile {
	return ClusterProfile{
		Name: "stampede",
		Partitions: []ClusterPartition{
			{Name: "normal", Weight: 0.50, NodeCores: 16, NodeMemoryGB: 32, MaxNodes: 64},
			{Name: "development", Weight: 0.15, NodeCores: 16, NodeMemoryGB: 32, MaxNodes: 4},
			{Name: "normal-knl", Weight: 0.20, NodeCores: 68, NodeMemoryGB: 96, MaxNodes: 32},
			{Name: "largemem", Weight: 0.05, NodeCores: 32, NodeMemoryGB: 1024, Shared: true, MaxNodes: 1},
			{Name: "gpu", Weight: 0.10, NodeCores: 16, NodeMemoryGB: 32, GPUs: 1, MaxNodes: 4},
		},
		TimelimitUnitSec: 60,
		Timelimits:       []float64{30, 60, 120, 240, 480, 720, 1440, 2880},
		TimelimitWeights: []float64{20, 20, 15, 12, 10, 8, 10, 5},
		RuntimeMu:        -1.0, RuntimeSigma: 1.5, TimeoutShare: 0.10,
		QueueMu: 7.0, QueueSigma: 2.3, MultiNodeShare: 0.55,
		Start: time.Date(2018, 2, 1, 0, 0, 0, 0, time.UTC), Days: 28,
	}
}

func pick(weights []float64, rng *rand.Rand) int {
	var total float64
	for _, w := range weights {
		total += w
	}
	u := rng.Float64() * total
	for i, w := range weights {
		if u < w {
			return i
		}
		u -= w
	}
	return len(weights) - 1
}

func (p *ClusterProfile) weights() []float64 {
	ws := make([]float64, len(p.Partitions))
	for i, pt := range p.Partitions {
		ws[i] = pt.Weight
	}
	return ws
}

func (p *ClusterProfile) draw(ws []float64, rng *rand.Rand) jobDraw {
	var d jobDraw
	d.part = pick(ws, rng)
	pt := p.Partitions[d.part]
	d.nhosts = 1
	if pt.MaxNodes > 1 && rng.Float64() < p.MultiNodeShare {
		d.nhosts = float64(2 + rng.IntN(pt.MaxNodes-1))
	}
	if pt.Shared && d.nhosts == 1 {
		// powers of two up to a whole node
		maxK := int(math.Log2(float64(pt.NodeCores)))
		d.ncores = math.Exp2(float64(rng.IntN(maxK + 1)))
	} else {
		d.ncores = d.nhosts * float64(pt.NodeCores)
	}
	d.timelimitSec = 60 * p.Timelimits[pick(p.TimelimitWeights, rng)]
	frac := 1.0
	if rng.Float64() >= p.TimeoutShare {
		z := p.RuntimeMu + p.RuntimeSigma*rng.NormFloat64()
		frac = 1 / (1 + math.Exp(-z))
	}
	d.runtime = math.Max(1, math.Round(frac*d.timelimitSec))
	d.queue = math.Round(math.Expm1(math.Max(0, p.QueueMu+p.QueueSigma*rng.NormFloat64())))
	d.submit = math.Round(rng.Float64() * p.Days * 86400)
	d.memFrac = math.Min(1, rng.Float64()*rng.Float64()*1.6)
	d.gpuUtil = math.NaN()
	if pt.GPUs > 0 {
		d.gpuUtil = 100 * rng.Float64()
		if rng.Float64() < 0.1 {
			d.gpuUtil = 0
		}
	}
	d.cpuPc = 100 * rng.Float64()
	return d
}

// JobsFeatureNames are the columns of JobsFeatures, FRESCO's job-level
// "safe" features.
var jobsFeatureNames = [...]string{"ncores", "nhosts", "timelimit_sec", "runtime_sec", "queue_time_sec", "runtime_fraction"}

// JobsFeatureNames returns the names of the JobsFeatures columns: ncores,
// nhosts, timelimit_sec, runtime_sec, queue_time_sec, runtime_fraction.
func JobsFeatureNames() []string { return append([]string(nil), jobsFeatureNames[:]...) }

// JobsFeatures draws n jobs from p and returns their six job-level features
// row-major (n×6, columns as JobsFeatureNames). Each job is drawn as
// JobTable draws it, but JobTable also draws telemetry from rng between
// jobs: for the same generator state the two share the first job and the
// distribution, not the later jobs.
func JobsFeatures(p ClusterProfile, n int, rng *rand.Rand) []float64 {
	if n < 0 {
		panic("synth: negative job count")
	}
	out := make([]float64, 0, 6*n)
	ws := p.weights()
	for range n {
		d := p.draw(ws, rng)
		out = append(out, d.ncores, d.nhosts, d.timelimitSec, d.runtime, d.queue, d.runtime/d.timelimitSec)
	}
	return out
}

// JobsRow is one FRESCO-style telemetry row: a sample of one job on one
// host. Metric values are NaN when missing (GPU on CPU-only nodes).
type JobsRow struct {
	JID, Cluster, Queue, Host, User, ExitCode string
	Time, Submit, Start, End                  time.Time
	Timelimit                                 float64 // in the profile's unit
	NHosts, NCores                            float64
	CPUUser, GPU, MemUsed                     float64 // percent, percent, GB
}

// JobTable draws nJobs jobs from p and returns their telemetry rows: one
// to four samples per host, hosts per the job's node count. Job IDs are
// prefixed with the cluster name so two clusters never share one.
func JobTable(p ClusterProfile, nJobs int, rng *rand.Rand) []JobsRow {
	if nJobs < 0 {
		panic("synth: negative job count")
	}
	var rows []JobsRow
	ws := p.weights()
	for i := range nJobs {
		d := p.draw(ws, rng)
		pt := p.Partitions[d.part]
		submit := p.Start.Add(time.Duration(d.submit) * time.Second)
		start := submit.Add(time.Duration(d.queue) * time.Second)
		end := start.Add(time.Duration(d.runtime) * time.Second)
		exit := "COMPLETED"
		if d.runtime >= d.timelimitSec {
			exit = "TIMEOUT"
		}
		samples := 1 + rng.IntN(4)
		for range int(d.nhosts) {
			host := fmt.Sprintf("%s-%s-%03d", p.Name, pt.Name, rng.IntN(500))
			for s := range samples {
				at := start.Add(time.Duration(float64(s+1) / float64(samples+1) * d.runtime * float64(time.Second)))
				mem := d.memFrac * pt.NodeMemoryGB * (0.8 + 0.2*rng.Float64())
				gpu := d.gpuUtil
				if !math.IsNaN(gpu) && gpu > 0 {
					gpu = math.Min(100, gpu*(0.7+0.6*rng.Float64()))
				}
				rows = append(rows, JobsRow{
					JID: fmt.Sprintf("%s-%d", p.Name, i+1), Cluster: p.Name, Queue: pt.Name, Host: host,
					User: fmt.Sprintf("user%d", rng.IntN(200)), ExitCode: exit,
					Time: at, Submit: submit, Start: start, End: end,
					Timelimit: d.timelimitSec / p.TimelimitUnitSec, NHosts: d.nhosts, NCores: d.ncores,
					CPUUser: math.Min(100, d.cpuPc*(0.8+0.4*rng.Float64())), GPU: gpu, MemUsed: mem,
				})
			}
		}
	}
	return rows
}

// JobsHeader is the FRESCO column header JobsWriteCSV writes.
var jobsHeader = [...]string{"time", "submit_time", "start_time", "end_time", "timelimit", "nhosts", "ncores",
	"queue", "host", "jid", "username", "exitcode", "cluster", "value_cpuuser", "value_gpu", "value_memused"}

// JobsWriteCSV writes rows as a FRESCO-style CSV with a header; missing
// values are empty fields and times are "2006-01-02 15:04:05".
func JobsWriteCSV(w io.Writer, rows []JobsRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(jobsHeader[:]); err != nil {
		return err
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	const layout = "2006-01-02 15:04:05"
	rec := make([]string, len(jobsHeader))
	for _, r := range rows {
		rec = append(rec[:0], r.Time.Format(layout), r.Submit.Format(layout), r.Start.Format(layout), r.End.Format(layout),
			num(r.Timelimit), num(r.NHosts), num(r.NCores), r.Queue, r.Host, r.JID, r.User, r.ExitCode, r.Cluster,
			num(r.CPUUser), num(r.GPU), num(r.MemUsed))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
