package regime

import (
	"math"
)

// Label is a workload regime.
type Label string

// The workload regimes.
const (
	CPUStandard Label = "cpu_standard"
	CPULargeMem Label = "cpu_largemem"
	GPUStandard Label = "gpu_standard"
	GPULargeMem Label = "gpu_largemem"
	Unknown     Label = "unknown"
)

// Labels returns every regime in a fixed order, unknown last.
func Labels() []Label {
	return []Label{CPUStandard, CPULargeMem, GPUStandard, GPULargeMem, Unknown}
}

// Valid reports whether l is one of the five regimes.
func (l Label) Valid() bool {
	switch l {
	case CPUStandard, CPULargeMem, GPUStandard, GPULargeMem, Unknown:
		return true
	}
	return false
}

// Basis says which rule produced a label.
type Basis int

const (
	// BasisNone means the job has not been labelled.
	BasisNone Basis = iota
	// Authoritative labels come from a hardware-table entry for the job's
	// cluster and partition.
	Authoritative
	// Proxy labels come from the job's own GPU and memory telemetry because
	// partition or node metadata was missing.
	Proxy
)

// String returns "none", "authoritative" or "proxy-only".
func (b Basis) String() string {
	switch b {
	case Authoritative:
		return "authoritative"
	case Proxy:
		return "proxy-only"
	}
	return "none"
}

// DefaultLargeMemGB is the node memory, in GB, from which a node counts as
// large-memory under the authoritative rule.
const DefaultLargeMemGB = 512

// Rules labels jobs. The zero value uses the 512 GB threshold, no hardware
// table (so every label is proxy-only) and the lenient proxy rule.
type Rules struct {
	// LargeMemGB is the large-memory threshold in GB; zero means
	// DefaultLargeMemGB, and a negative, NaN or infinite value panics. A node is large-memory when its memory is greater
	// than or equal to the threshold (node_memory_gb >= LargeMemGB). Anvil's
	// GPU nodes have exactly 512 GB and are standard GPU nodes: their
	// hardware-table entry sets WorkloadRegime to override the comparison.
	LargeMemGB float64

	// Hardware maps cluster and partition to nodes. When it has an entry for
	// a job's cluster and partition (or the cluster's default), the label is
	// authoritative.
	Hardware *Hardware

	// Strict makes the proxy rule return Unknown for a job whose GPU
	// telemetry is entirely missing (value_gpu_cnt == 0), and likewise for
	// one whose memory telemetry is. The lenient rule reads missing GPU
	// telemetry as "no GPU" and missing memory telemetry as standard memory.
	Strict bool

	// gpuMetric and memMetric name the telemetry metrics (without the
	// "value_" prefix) the proxy rule reads; empty means "gpu" and
	// "memused". memMetric is in GB.
	gpuMetric, memMetric string
}

func (r Rules) threshold() float64 {
	switch {
	case r.LargeMemGB == 0:
		return DefaultLargeMemGB
	case !(r.LargeMemGB > 0) || math.IsInf(r.LargeMemGB, 0):
		panic("regime: LargeMemGB must be positive and finite")
	}
	return r.LargeMemGB
}

// Node returns the authoritative label of a node: its WorkloadRegime when
// set, otherwise gpu_* when GPUCountPerNode > 0 and cpu_* otherwise, with
// *_largemem when NodeMemoryGB >= the threshold. A node whose memory is
// not positive (0 is what a table entry without node_memory_gb holds) or
// NaN is Unknown: its memory class cannot be told.
func (r Rules) Node(n Node) Label {
	if n.WorkloadRegime != "" {
		return n.WorkloadRegime
	}
	if !(n.NodeMemoryGB > 0) {
		return Unknown
	}
	large := n.NodeMemoryGB >= r.threshold()
	switch {
	case n.GPUCountPerNode > 0 && large:
		return GPULargeMem
	case n.GPUCountPerNode > 0:
		return GPUStandard
	case large:
		return CPULargeMem
	}
	return CPUStandard
}

// proxy returns the proxy-only label of a job from its telemetry, by the
// seed's rule
//
//	cpu := value_gpu_cnt <= 0 AND value_gpu_sum <= 0
//
// Here value_gpu_cnt counts the job's non-missing GPU samples and
// value_gpu_sum is NaN when all are missing, so the rule as written would
// label no job cpu (NaN <= 0 is false). The lenient rule reads the missing
// sum as 0: a job without GPU telemetry is a CPU job. With Strict set, such a
// job is Unknown instead, because missing telemetry cannot be told apart from
// a CPU-only node. A job with GPU samples is a GPU job even when they are all
// zero: GPU telemetry exists only on GPU nodes.
//
// A job is large-memory when its peak value_memused reached the threshold:
// only a large-memory node can hold that much. Missing memory telemetry
// reads as standard memory (Unknown when Strict).
func (r Rules) proxy(j *Job) Label {
	gm, mm := r.gpuMetric, r.memMetric
	if gm == "" {
		gm = "gpu"
	}
	if mm == "" {
		mm = "memused"
	}
	g, _ := j.metric(gm)
	if g.Cnt == 0 && r.Strict {
		return Unknown
	}
	sum := g.Sum
	if g.Cnt == 0 || math.IsNaN(sum) {
		sum = 0
	}
	cpu := g.Cnt <= 0 && sum <= 0
	m, okM := j.metric(mm)
	large := false
	if okM && m.Cnt > 0 {
		large = m.Max >= r.threshold()
	} else if r.Strict {
		return Unknown
	}
	switch {
	case !cpu && large:
		return GPULargeMem
	case !cpu:
		return GPUStandard
	case large:
		return CPULargeMem
	}
	return CPUStandard
}

// Label returns the label of a job and the rule that produced it: the
// authoritative rule when the hardware table knows the job's cluster and
// partition (or has a default for the cluster), the proxy rule otherwise.
func (r Rules) Label(j *Job) (Label, Basis) {
	if r.Hardware != nil {
		if n, ok := r.Hardware.lookup(j.Cluster, j.Partition); ok {
			return r.Node(n), Authoritative
		}
	}
	return r.proxy(j), Proxy
}

// LabelAll sets Regime and Basis of every job in place and returns the
// number of jobs per label.
func (r Rules) LabelAll(jobs []Job) map[Label]int {
	counts := make(map[Label]int)
	for i := range jobs {
		jobs[i].Regime, jobs[i].Basis = r.Label(&jobs[i])
		counts[jobs[i].Regime]++
	}
	return counts
}

// Bases counts the labelled jobs by the rule that labelled them: from a
// hardware table (authoritative) and from telemetry (proxy). Unlabelled
// jobs count in neither. A comparison with proxy > 0 is "proxy-only" in the
// procedure's words.
func Bases(jobs ...[]Job) (authoritative, proxy int) {
	for _, js := range jobs {
		for i := range js {
			switch js[i].Basis {
			case Authoritative:
				authoritative++
			case Proxy:
				proxy++
			}
		}
	}
	return authoritative, proxy
}

// filter returns the jobs whose regime is one of labels, in order. The
// result shares no memory with jobs' backing array but the Metrics slices
// are shared.
func filter(jobs []Job, labels ...Label) []Job {
	var out []Job
	for _, j := range jobs {
		for _, l := range labels {
			if j.Regime == l {
				out = append(out, j)
				break
			}
		}
	}
	return out
}
