package regime

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Errors wrapped by this package's readers and feature builders.
var (
	// ErrMissingColumn: a required column is absent from a header.
	ErrMissingColumn = errors.New("missing column")
	// ErrBadValue: a field could not be parsed as its column's type.
	ErrBadValue = errors.New("bad value")
	// ErrUnknownFeature: a feature name is neither a job feature nor a
	// value_<metric>_{cnt,sum,max} of a metric the jobs carry.
	ErrUnknownFeature = errors.New("unknown feature")
)

// ParseError is a data problem in a job table, naming where it is: file,
// line and column of a CSV file (Line 1 is the header); row group, row and
// column of a Parquet file.
type ParseError struct {
	File string
	// Line is the 1-based line of a CSV file, or the 1-based row of a
	// Parquet file counted over the whole file.
	Line int
	// RowGroup is the 1-based row group of a Parquet file (0 for CSV).
	RowGroup int
	// Column is the column's header name as written; empty when the
	// problem is not in one column (a header without jid, a line with the
	// wrong number of fields).
	column string
	// Pos is the 1-based byte position within the line of a CSV syntax
	// error (a stray quote), as encoding/csv reports it; 0 otherwise.
	Pos int
	Err error
}

// Error reads "regime: FILE:LINE[:POS]: column "C": what" for CSV and
// "regime: FILE: row group G, row R: column "C": what" for Parquet.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("regime: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	switch {
	case e.RowGroup > 0 && e.Line > 0:
		fmt.Fprintf(&b, " row group %d, row %d:", e.RowGroup, e.Line)
	case e.RowGroup > 0:
		fmt.Fprintf(&b, " row group %d:", e.RowGroup)
	case e.Line > 0 && e.Pos > 0:
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Pos)
	case e.Line > 0:
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if e.column != "" {
		fmt.Fprintf(&b, " column %q:", e.column)
	}
	b.WriteString(" ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// row is one FRESCO-style telemetry row: a sample of one job on one host.
// Missing times are the zero time; missing numbers are NaN.
type row struct {
	JobID, Cluster, Queue, Host, User, Account, ExitCode string

	Time, Submit, Start, End time.Time

	// Timelimit is in the cluster's unit (see Units).
	Timelimit      float64
	NHosts, NCores float64

	// Values holds the metric samples, aligned with table.Metrics.
	Values []float64
}

// table is a set of telemetry rows read from one file.
type table struct {
	// Metrics are the metric names, from the value_<name> columns.
	Metrics []string
	// Unknown are the header's columns that are neither in Schema nor
	// metrics, in header order: ignored, and worth a warning (a misspelt
	// "ncore" or "runtime" leaves its feature missing). A column without
	// a name (Excel's trailing empty columns, pandas' index) is "".
	Unknown []string
	Rows    []row
}

// Agg aggregates one metric over a job's rows: Cnt is the number of
// non-missing samples, Sum their sum and Max their maximum; Sum and Max are
// NaN when Cnt is 0.
type Agg struct {
	Cnt      int
	Sum, Max float64
}

// Metric is one metric's aggregate in a job record: Name without
// valuePrefix, e.g. "gpu".
type Metric struct {
	Name string
	Agg
}

// metric returns the aggregate of the named metric (without valuePrefix);
// ok is false when the job has no such metric.
func (j *Job) metric(name string) (a Agg, ok bool) {
	for i := range j.Metrics {
		if j.Metrics[i].Name == name {
			return j.Metrics[i].Agg, true
		}
	}
	return Agg{}, false
}

// Job is a job-level record. Missing times are the zero time; missing
// numbers are NaN.
type Job struct {
	ID, Cluster, Partition, User, Account, ExitStatus string

	Submit, Start, End time.Time

	TimelimitSec   float64
	NCores, NHosts float64

	// Metrics are the aggregates of the job's metrics, in the order of
	// the table's value_ columns; Metric looks one up by name. Jobs read
	// from one table share its names.
	Metrics []Metric

	Regime Label
	Basis  Basis
}

// Units maps a cluster name to the number of seconds in one unit of its
// timelimit column. Clusters it does not name use seconds.
type Units map[string]float64

// DefaultUnits returns the units of the FRESCO clusters: Stampede's
// timelimit is in minutes (the FRESCO v3 builder multiplies it by 60);
// the others are in seconds.
func DefaultUnits() Units { return Units{"stampede": 60} }

func (u Units) scale(cluster string) float64 {
	if s, ok := u[cluster]; ok {
		return s
	}
	return 1
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.After(a)) {
		return b
	}
	return a
}

// nanMax is the larger of a and b, ignoring NaN.
func nanMax(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	if math.IsNaN(b) {
		return a
	}
	return math.Max(a, b)
}

// JobFeatures are the job-level features every record has (possibly
// missing), in the order safeFeatures considers them.
var jobFeatures = [...]string{"ncores", "nhosts", "timelimit_sec", "runtime_sec", "queue_time_sec", "runtime_fraction"}

// JobFeatures returns the names of the job-level features: ncores, nhosts,
// timelimit_sec, runtime_sec, queue_time_sec, runtime_fraction.
func JobFeatures() []string { return append([]string(nil), jobFeatures[:]...) }

// FeatureColumns names the table columns (colTimelimit, colStart, ...) a
// derived job feature is computed from, as Feature computes it, e.g.
// "end_time − start_time" for runtime_sec; ok is false for ncores, nhosts
// (read as they are) and names that are not job features.
func FeatureColumns(feature string) (columns string, ok bool) {
	switch feature {
	case "timelimit_sec":
		return colTimelimit, true
	case "runtime_sec":
		return colEnd + " − " + colStart, true
	case "queue_time_sec":
		return colStart + " − " + colSubmit, true
	case "runtime_fraction":
		return "(" + colEnd + " − " + colStart + ") / " + colTimelimit, true
	}
	return "", false
}

// Feature returns a job's feature by name, NaN when it is missing:
//
//	ncores, nhosts, timelimit_sec
//	runtime_sec      = end - start
//	queue_time_sec   = start - submit
//	runtime_fraction = runtime_sec / timelimit_sec (NaN when timelimit_sec <= 0)
//	value_<m>_cnt, value_<m>_sum, value_<m>_max for each metric m
//
// ok is false when the name is not a feature of this job.
func (j *Job) Feature(name string) (v float64, ok bool) {
	switch name {
	case "ncores":
		return j.NCores, true
	case "nhosts":
		return j.NHosts, true
	case "timelimit_sec":
		return j.TimelimitSec, true
	case "runtime_sec":
		return span(j.Start, j.End), true
	case "queue_time_sec":
		return span(j.Submit, j.Start), true
	case "runtime_fraction":
		if !(j.TimelimitSec > 0) {
			return math.NaN(), true
		}
		return span(j.Start, j.End) / j.TimelimitSec, true
	}
	rest, found := strings.CutPrefix(name, "value_")
	if !found {
		return math.NaN(), false
	}
	i := strings.LastIndexByte(rest, '_')
	if i < 0 {
		return math.NaN(), false
	}
	a, has := j.metric(rest[:i])
	if !has {
		return math.NaN(), false
	}
	switch rest[i+1:] {
	case "cnt":
		return float64(a.Cnt), true
	case "sum":
		return a.Sum, true
	case "max":
		return a.Max, true
	}
	return math.NaN(), false
}

// span is b − a in seconds; NaN when either is missing or b is before a
// (a job that ends before it starts, or starts before it is submitted, has
// a clock problem, not a negative duration).
func span(a, b time.Time) float64 {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return math.NaN()
	}
	return b.Sub(a).Seconds()
}

// candidates returns the job features followed by value_<m>_{cnt,sum,max}
// for every metric any of the jobs carries, metrics in sorted order.
func allCandidates(clusters ...[]Job) []string {
	names := JobFeatures()
	seen := make(map[string]bool)
	var ms []string
	for _, js := range clusters {
		for i := range js {
			for _, mt := range js[i].Metrics {
				if m := mt.Name; !seen[m] {
					seen[m] = true
					ms = append(ms, m)
				}
			}
		}
	}
	slices.Sort(ms)
	for _, m := range ms {
		names = append(names, "value_"+m+"_cnt", "value_"+m+"_sum", "value_"+m+"_max")
	}
	return names
}

// safeFeatures returns, in the order of candidates, the features with 0%
// missingness in every cluster: defined (see Job.Feature), not NaN and not
// ±Inf for every job of every cluster. An empty cluster makes no feature
// safe. A nil candidates means allCandidates(clusters...).
func safeFeatures(candidates []string, clusters ...[]Job) []string {
	if candidates == nil {
		candidates = allCandidates(clusters...)
	}
	if len(clusters) == 0 {
		return nil
	}
	var safe []string
next:
	for _, f := range candidates {
		for _, js := range clusters {
			if len(js) == 0 {
				return nil
			}
			for i := range js {
				v, ok := js[i].Feature(f)
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					continue next
				}
			}
		}
		safe = append(safe, f)
	}
	return safe
}

// forbidden are the telemetry features the procedure forbids by name: they
// are the ones the proxy regime rule reads, so comparing on them compares
// the regime labels themselves.
var forbidden = [...]string{"value_memused_max", "value_memused_minus_diskcache_max", "value_gpu_max"}

// ForbiddenFeatures returns the features the procedure forbids in a
// domain classifier: value_memused_max, value_memused_minus_diskcache_max
// and value_gpu_max. They never enter a default feature set; a caller that
// names them gets them, with a warning in the report.
func ForbiddenFeatures() []string { return append([]string(nil), forbidden[:]...) }

// isForbidden reports whether name is one of ForbiddenFeatures.
func isForbidden(name string) bool {
	for _, f := range forbidden {
		if f == name {
			return true
		}
	}
	return false
}

// Screened is the outcome of Screen: the features kept and, for every
// candidate left out, the reason.
type Screened struct {
	Features []string
	Dropped  []Dropped
}

// Dropped is a candidate feature left out by Screen, with the reason in
// words, e.g. "missing in 12.5% of anvil's jobs (25 of 200), 0.0% of
// conte's jobs (0 of 300)".
type Dropped struct {
	Name, Reason string
}

// Matrix returns the len(jobs)×len(features) matrix of the jobs' features.
// Missing values are NaN. A name that is not a feature of some job is an
// error wrapping ErrUnknownFeature that names the job.
func Matrix(jobs []Job, features []string) (*mat.Dense, error) {
	if len(jobs) == 0 || len(features) == 0 {
		return &mat.Dense{}, nil
	}
	x := mat.NewDense(len(jobs), len(features), nil)
	raw := x.RawMatrix()
	for i := range jobs {
		row := raw.Data[i*raw.Stride : i*raw.Stride+len(features)]
		for k, f := range features {
			v, ok := jobs[i].Feature(f)
			if !ok {
				return nil, fmt.Errorf("regime: job %s (cluster %q): %w %q", jobs[i].ID, jobs[i].Cluster, ErrUnknownFeature, f)
			}
			row[k] = v
		}
	}
	return x, nil
}
