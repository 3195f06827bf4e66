package regime

import (
	"io"
	"math"
	"strings"
	"time"
)

// ReadConfig says what ReadJobsCSV and ReadJobsParquet keep.
type ReadConfig struct {
	// Cluster is the cluster of rows without a cluster column (or with an
	// empty one).
	Cluster string
	// Units converts timelimits to seconds per cluster; nil means seconds.
	Units Units
	// Metrics names the metrics (without valuePrefix, e.g. "gpu") whose
	// aggregates the jobs keep; nil keeps every metric of the file. The
	// other value_ columns are not read at all, so a bad value in one of
	// them is not an error. The proxy rule reads "gpu" and "memused" (or
	// Rules.gpuMetric and Rules.memMetric).
	Metrics []string
	// Keep, when not nil, is called with each job once the whole table is
	// read, in first-seen order, and may change it (label it, say); the
	// table's Jobs are those it returns true for. A caller that needs only
	// some of each job (features, counts) takes them here and returns
	// false, and the table's jobs are never held at once. The Metrics of a
	// job it returns false for are reused for the next job: copy what is
	// needed of them.
	Keep func(*Job) bool
}

// JobTable is a job table read by ReadJobsCSV or ReadJobsParquet.
type JobTable struct {
	// Jobs are the job records, one per (cluster, job ID), in first-seen
	// order, as aggregate builds them.
	Jobs []Job
	// metrics are the file's metrics (value_<name> columns), in header
	// order, kept those the jobs carry.
	metrics, kept []string
	// Unknown are the header's columns that are neither in the schema nor
	// metrics.
	Unknown []string
	// Rows is the number of data rows read (telemetry samples).
	Rows int
}

// ReadJobsCSV reads a FRESCO-style telemetry CSV, as readCSV does, straight
// into job records: each row is folded into its job as it is read, so the
// memory held is that of the jobs, not of the rows (about 340 bytes per
// job with two metrics kept, whatever the number of samples per job).
// Errors are those of readCSV.
func ReadJobsCSV(r io.Reader, file string, cfg ReadConfig) (*JobTable, error) {
	a := newAggregator(cfg.Units)
	cols, n, err := scanCSV(r, file, cfg.Cluster, cfg.Metrics, a.header, a.add)
	if err != nil {
		return nil, err
	}
	return &JobTable{Jobs: a.jobs(cfg.Keep), metrics: cols.metrics, kept: cols.kept, Unknown: cols.unknown, Rows: n}, nil
}

// ReadJobsParquet reads a FRESCO-style telemetry Parquet file of size
// bytes, as readParquet does, straight into job records, decoding only the
// columns the jobs carry. Errors are those of readParquet.
func ReadJobsParquet(r io.ReaderAt, size int64, file string, cfg ReadConfig) (*JobTable, error) {
	a := newAggregator(cfg.Units)
	cols, n, err := scanParquet(r, size, file, cfg.Cluster, cfg.Metrics, a.header, a.add)
	if err != nil {
		return nil, err
	}
	return &JobTable{Jobs: a.jobs(cfg.Keep), metrics: cols.metrics, kept: cols.kept, Unknown: cols.unknown, Rows: n}, nil
}

// aggregate builds one job per distinct (cluster, job ID) from telemetry
// rows, in first-seen order: the earliest submit and start, the latest end,
// the largest timelimit, host and core counts, the first non-empty queue,
// user, account and exit code, and per metric the count, sum and maximum of
// the non-missing samples. Timelimits are converted to seconds with units.
// It does not modify t.
func aggregate(t *table, units Units) []Job {
	a := newAggregator(units)
	a.metrics = t.Metrics
	for i := range t.Rows {
		a.add(&t.Rows[i])
	}
	return a.jobs(nil)
}

// chunkJobs is the number of jobs the aggregator allocates at a time: the
// jobs grow in fixed chunks instead of one slice that append would copy
// (up to 2.25 times its size while it grows).
const chunkJobs = 4096

// strtab shares equal strings between jobs, so that a job keeps neither
// the line it was read from nor its own copy of a user name; id 0 is "".
type strtab struct {
	ids  map[string]int32
	strs []string
}

func newStrtab() *strtab { return &strtab{ids: map[string]int32{"": 0}, strs: []string{""}} }

// id returns the number of s, adding a copy of s when it is new.
func (t *strtab) id(s string) int32 {
	if i, ok := t.ids[s]; ok {
		return i
	}
	c := strings.Clone(s)
	i := int32(len(t.strs))
	t.ids[c] = i
	t.strs = append(t.strs, c)
	return i
}

// str returns the shared copy of s.
func (t *strtab) str(s string) string { return t.strs[t.id(s)] }

// partial is a job being aggregated: its strings as strtab numbers, so that
// it takes about half a Job's memory until the jobs are built at the end.
type partial struct {
	id                                        string
	submit, start, end                        time.Time
	timelimit, nhosts, ncores                 float64
	cluster, partition, user, account, status int32
}

type jobKey struct {
	cluster int32
	id      string
}

// aggregator folds telemetry rows into job records as they arrive.
type aggregator struct {
	units   Units
	metrics []string // names of row.Values; set by the scanner's columns or by aggregate
	index   map[jobKey]int
	chunks  [][]partial
	n       int
	aggs    [][]Agg // per chunk of jobs, len(metrics) per job
	strs    *strtab
	scale   map[int32]float64 // per cluster, from units
}

func newAggregator(units Units) *aggregator {
	return &aggregator{units: units, index: make(map[jobKey]int), strs: newStrtab(), scale: make(map[int32]float64)}
}

// header takes the names of the rows' Values from the file's columns.
func (a *aggregator) header(c *columns) { a.metrics = c.kept }

// add folds a row into its job; it keeps none of the row's memory.
func (a *aggregator) add(r *row) {
	cl := a.strs.id(r.Cluster)
	i, ok := a.index[jobKey{cl, r.JobID}]
	k := len(a.metrics)
	if !ok {
		i = a.n
		a.n++
		if i%chunkJobs == 0 {
			a.chunks = append(a.chunks, make([]partial, chunkJobs))
			a.aggs = append(a.aggs, make([]Agg, chunkJobs*k))
		}
		id := strings.Clone(r.JobID)
		a.chunks[i/chunkJobs][i%chunkJobs] = partial{id: id, cluster: cl, timelimit: math.NaN(), ncores: math.NaN(), nhosts: math.NaN()}
		a.index[jobKey{cl, id}] = i
		for m := range k {
			a.aggs[i/chunkJobs][(i%chunkJobs)*k+m] = Agg{Sum: math.NaN(), Max: math.NaN()}
		}
	}
	j := &a.chunks[i/chunkJobs][i%chunkJobs]
	j.submit = minTime(j.submit, r.Submit)
	j.start = minTime(j.start, r.Start)
	j.end = maxTime(j.end, r.End)
	if !math.IsNaN(r.Timelimit) {
		s, ok := a.scale[cl]
		if !ok {
			s = a.units.scale(r.Cluster)
			a.scale[cl] = s
		}
		j.timelimit = nanMax(j.timelimit, r.Timelimit*s)
	}
	j.nhosts = nanMax(j.nhosts, r.NHosts)
	j.ncores = nanMax(j.ncores, r.NCores)
	for _, f := range [...]struct {
		dst *int32
		s   string
	}{{&j.partition, r.Queue}, {&j.user, r.User}, {&j.account, r.Account}, {&j.status, r.ExitCode}} {
		if *f.dst == 0 && f.s != "" {
			*f.dst = a.strs.id(f.s)
		}
	}
	aggs := a.aggs[i/chunkJobs][(i%chunkJobs)*k:][:k]
	for m := range min(k, len(r.Values)) {
		v := r.Values[m]
		if math.IsNaN(v) {
			continue
		}
		g := &aggs[m]
		if g.Cnt == 0 {
			g.Sum, g.Max = 0, v
		}
		g.Cnt++
		g.Sum += v
		g.Max = math.Max(g.Max, v)
	}
}

// jobs builds the jobs that keep (nil: all) returns true for, in one
// slice of their exact number, releasing the partial records as it goes.
func (a *aggregator) jobs(keep func(*Job) bool) []Job {
	a.index = nil // found jobs are not looked up again
	k := len(a.metrics)
	var slab []Metric
	var chunks [][]Job // kept jobs, when keep may drop some
	var out []Job
	if keep == nil {
		out = make([]Job, a.n)
	}
	nKept := 0
	var j Job
	for i := range a.n {
		p := &a.chunks[i/chunkJobs][i%chunkJobs]
		s := a.strs.strs
		j = Job{ID: p.id, Cluster: s[p.cluster], Partition: s[p.partition], User: s[p.user], Account: s[p.account],
			ExitStatus: s[p.status], Submit: p.submit, Start: p.start, End: p.end,
			TimelimitSec: p.timelimit, NCores: p.ncores, NHosts: p.nhosts}
		if k > 0 {
			if len(slab) < k {
				slab = make([]Metric, chunkJobs*k)
			}
			j.Metrics = slab[:k:k]
			for m, g := range a.aggs[i/chunkJobs][(i%chunkJobs)*k:][:k] {
				j.Metrics[m] = Metric{Name: a.metrics[m], Agg: g}
			}
		}
		if (i+1)%chunkJobs == 0 {
			a.chunks[i/chunkJobs], a.aggs[i/chunkJobs] = nil, nil
		}
		switch {
		case keep == nil:
			out[i] = j
		case keep(&j):
			if nKept%chunkJobs == 0 {
				chunks = append(chunks, make([]Job, chunkJobs))
			}
			chunks[nKept/chunkJobs][nKept%chunkJobs] = j
			nKept++
		default:
			continue // its metrics' slots are reused
		}
		slab = slab[k:]
	}
	a.chunks, a.aggs, a.strs = nil, nil, nil
	if keep == nil {
		return out
	}
	out = make([]Job, nKept)
	for c := range chunks {
		copy(out[c*chunkJobs:], chunks[c])
		chunks[c] = nil
	}
	return out
}
