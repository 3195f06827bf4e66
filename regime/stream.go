package regime

import (
	"io"
	"math"
	"strings"
)

// ReadConfig says what ReadJobsCSV and ReadJobsParquet keep.
type ReadConfig struct {
	// Cluster is the cluster of rows without a cluster column (or with an
	// empty one).
	Cluster string
	// Units converts timelimits to seconds per cluster; nil means seconds.
	Units Units
	// Metrics names the metrics (without ValuePrefix, e.g. "gpu") whose
	// aggregates the jobs keep; nil keeps every metric of the file. The
	// other value_ columns are not read at all, so a bad value in one of
	// them is not an error. The proxy rule reads "gpu" and "memused" (or
	// Rules.GPUMetric and Rules.MemMetric).
	Metrics []string
}

// JobTable is a job table read by ReadJobsCSV or ReadJobsParquet.
type JobTable struct {
	// Jobs are the job records, one per (cluster, job ID), in first-seen
	// order, as Aggregate builds them.
	Jobs []Job
	// Metrics are the file's metrics (value_<name> columns), in header
	// order, Kept those the jobs carry.
	Metrics, Kept []string
	// Unknown are the header's columns that are neither in Schema nor
	// metrics, as in Table.Unknown.
	Unknown []string
	// Rows is the number of data rows read (telemetry samples).
	Rows int
}

// ReadJobsCSV reads a FRESCO-style telemetry CSV, as ReadCSV does, straight
// into job records: each row is folded into its job as it is read, so the
// memory held is that of the jobs, not of the rows (about 340 bytes per
// job with two metrics kept, whatever the number of samples per job).
// Errors are those of ReadCSV.
func ReadJobsCSV(r io.Reader, file string, cfg ReadConfig) (*JobTable, error) {
	a := newAggregator(cfg.Units)
	cols, n, err := scanCSV(r, file, cfg.Cluster, cfg.Metrics, a.header, a.add)
	if err != nil {
		return nil, err
	}
	return &JobTable{Jobs: a.jobs(), Metrics: cols.metrics, Kept: cols.kept, Unknown: cols.unknown, Rows: n}, nil
}

// ReadJobsParquet reads a FRESCO-style telemetry Parquet file of size
// bytes, as ReadParquet does, straight into job records, decoding only the
// columns the jobs carry. Errors are those of ReadParquet.
func ReadJobsParquet(r io.ReaderAt, size int64, file string, cfg ReadConfig) (*JobTable, error) {
	a := newAggregator(cfg.Units)
	cols, n, err := scanParquet(r, size, file, cfg.Cluster, cfg.Metrics, a.header, a.add)
	if err != nil {
		return nil, err
	}
	return &JobTable{Jobs: a.jobs(), Metrics: cols.metrics, Kept: cols.kept, Unknown: cols.unknown, Rows: n}, nil
}

// Aggregate builds one job per distinct (cluster, job ID) from telemetry
// rows, in first-seen order: the earliest submit and start, the latest end,
// the largest timelimit, host and core counts, the first non-empty queue,
// user, account and exit code, and per metric the count, sum and maximum of
// the non-missing samples. Timelimits are converted to seconds with units.
// It does not modify t.
func Aggregate(t *Table, units Units) []Job {
	a := newAggregator(units)
	a.metrics = t.Metrics
	for i := range t.Rows {
		a.add(&t.Rows[i])
	}
	return a.jobs()
}

// chunkJobs is the number of jobs the aggregator allocates at a time: the
// jobs grow in fixed chunks instead of one slice that append would copy
// (up to 2.25 times the jobs' size while it grows), and are copied once
// into a slice of the exact length at the end.
const chunkJobs = 4096

// maxInterned bounds the distinct strings (clusters, partitions, users,
// accounts, exit codes) an aggregator shares between jobs.
const maxInterned = 1 << 16

type jobKey struct{ cluster, id string }

// aggregator folds telemetry rows into job records as they arrive.
type aggregator struct {
	units   Units
	metrics []string // names of Row.Values; set by the scanner's columns or by Aggregate
	index   map[jobKey]int
	chunks  [][]Job
	n       int
	slab    []Metric
	intern  interner
	scale   map[string]float64 // per cluster, from units
}

func newAggregator(units Units) *aggregator {
	return &aggregator{units: units, index: make(map[jobKey]int), intern: make(interner), scale: make(map[string]float64)}
}

// interner shares equal strings between jobs.
type interner map[string]string

// str returns s as a string of its own, shared with equal strings of other
// jobs, so that a job keeps neither the line it was read from nor its own
// copy of a user name.
func (in interner) str(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := in[s]; ok {
		return v
	}
	c := strings.Clone(s)
	if len(in) < maxInterned {
		in[c] = c
	}
	return c
}

// header takes the names of the rows' Values from the file's columns.
func (a *aggregator) header(c *columns) { a.metrics = c.kept }

// add folds a row into its job; it keeps none of the row's memory.
func (a *aggregator) add(r *Row) {
	i, ok := a.index[jobKey{r.Cluster, r.JobID}]
	if !ok {
		i = a.n
		a.n++
		if i%chunkJobs == 0 {
			a.chunks = append(a.chunks, make([]Job, chunkJobs))
		}
		j := &a.chunks[i/chunkJobs][i%chunkJobs]
		*j = Job{ID: strings.Clone(r.JobID), Cluster: a.intern.str(r.Cluster), TimelimitSec: math.NaN(), NCores: math.NaN(), NHosts: math.NaN()}
		a.index[jobKey{j.Cluster, j.ID}] = i
		if k := len(a.metrics); k > 0 {
			if len(a.slab) < k {
				a.slab = make([]Metric, chunkJobs*k)
			}
			j.Metrics, a.slab = a.slab[:k:k], a.slab[k:]
			for m := range j.Metrics {
				j.Metrics[m] = Metric{Name: a.metrics[m], Agg: Agg{Sum: math.NaN(), Max: math.NaN()}}
			}
		}
	}
	j := &a.chunks[i/chunkJobs][i%chunkJobs]
	j.Submit = minTime(j.Submit, r.Submit)
	j.Start = minTime(j.Start, r.Start)
	j.End = maxTime(j.End, r.End)
	if !math.IsNaN(r.Timelimit) {
		s, ok := a.scale[j.Cluster]
		if !ok {
			s = a.units.scale(j.Cluster)
			a.scale[j.Cluster] = s
		}
		j.TimelimitSec = nanMax(j.TimelimitSec, r.Timelimit*s)
	}
	j.NHosts = nanMax(j.NHosts, r.NHosts)
	j.NCores = nanMax(j.NCores, r.NCores)
	if j.Partition == "" {
		j.Partition = a.intern.str(r.Queue)
	}
	if j.User == "" {
		j.User = a.intern.str(r.User)
	}
	if j.Account == "" {
		j.Account = a.intern.str(r.Account)
	}
	if j.ExitStatus == "" {
		j.ExitStatus = a.intern.str(r.ExitCode)
	}
	for m := range min(len(j.Metrics), len(r.Values)) {
		v := r.Values[m]
		if math.IsNaN(v) {
			continue
		}
		g := &j.Metrics[m].Agg
		if g.Cnt == 0 {
			g.Sum, g.Max = 0, v
		}
		g.Cnt++
		g.Sum += v
		g.Max = math.Max(g.Max, v)
	}
}

// jobs returns the jobs in one slice of their exact number, releasing the
// chunks as it copies them.
func (a *aggregator) jobs() []Job {
	out := make([]Job, a.n)
	for c := range a.chunks {
		copy(out[c*chunkJobs:], a.chunks[c][:min(chunkJobs, a.n-c*chunkJobs)])
		a.chunks[c] = nil
	}
	a.chunks, a.index, a.intern = nil, nil, nil
	return out
}
