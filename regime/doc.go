// Package regime labels HPC jobs with workload regimes and builds the
// job-level records that cross-cluster comparisons are made on.
//
// A workload regime is one of cpu_standard, cpu_largemem, gpu_standard,
// gpu_largemem or unknown. The authoritative rule reads the node a job ran on
// from a hardware table (GPUs per node, node memory); the proxy rule, used
// when partition or node metadata is missing, reads the job's own GPU and
// memory telemetry and marks its results "proxy-only".
//
// Job records are aggregated from FRESCO-style telemetry rows (one row per
// job, host and sample time with value_* metric columns) or read directly
// from TACC Stampede accounting CSVs. Derived features (runtime_sec,
// queue_time_sec, runtime_fraction, per-metric _cnt/_sum/_max) are computed
// from the records, and [safeFeatures] picks the features with no missing
// value in any cluster, the set a domain classifier may use.
//
// [ReadJobsCSV] and [ReadJobsParquet] read telemetry tables as a stream
// straight into job records, holding the jobs, not the rows, and only the
// metrics asked for ([ReadConfig]); with [ReadConfig].Keep a caller takes
// what it needs of each job and holds none. [FeatureProfile] gathers what [Screen] needs job by job,
// so clusters can be screened without holding their jobs.
//
// Readers ([ReadJobsCSV], [ReadJobsParquet], [ReadStampede],
// [ReadHardware]) never panic on bad bytes: every data
// problem of a table is a *[ParseError] naming file, line and column (CSV)
// or row group, row and column (Parquet), wrapping [ErrBadValue] or
// [ErrMissingColumn].
package regime
