// Package sweep runs parameter sweeps that survive crashes, on the local
// machine or on a cluster (sub-packages slurm and condor), watches and
// prunes them while they run, and exports their results.
//
// # Specs and identity
//
// A Spec (Go value, or YAML read by LoadSpec) has base parameters, grid
// axes expanded as a Cartesian product in declared order with the last axis
// fastest, variant overlays (outermost), seeded random samples (uniform,
// log-uniform, integer, choice), conditional parameters (an axis or a
// random parameter that exists only when others have given values, "when")
// and exclusions, all validated before any run (Points, Expand). Values
// keep their literal text ("1e-4"). Each Point has a readable slug
// (base-lr0.05-wd1e-4-s0) and an id: the SHA-256 of its canonical config
// (sorted keys, numbers normalised so that 1, 1.0 and 1e0 are one run),
// so resubmitting a spec is idempotent; two grid values that name one run
// are refused. What else determines a result
// (Spec.Inputs: code version, data checksum) is recorded by the first
// Enqueue and checked by every later one. Resources (CPUs, GPUs, memory,
// disk, time, partition, account) are set per spec and per variant and are
// not part of identity. A sweep of up to maxRuns points streams through
// Points and Ledger.Enqueue in bounded memory. A malformed spec is a
// *SpecError naming the key ("grid[1].values[0]") and, read from YAML, the
// line.
//
// # Ledger
//
// A Ledger is one SQLite file (modernc.org/sqlite, pure Go, WAL,
// synchronous=NORMAL, opened through a URI built with net/url) holding
// runs, attempts, states (queued, running, completed, failed, pruned,
// cancelled), timings, heartbeats, backend ids, error class and text, and
// the metrics runs stream. Every transition is one transaction; a failed
// attempt and the retry it earns are one transaction. The controller holds
// a lock on <ledger>.lock (flock, LockFileEx on Windows), so a second
// controller is refused with ErrLocked while the first lives, and a
// restarted one takes over at once after a crash. A Ledger opened with
// OpenLedgerReadOnly serves the read API while a controller writes:
// Status, Runs, Summaries (each run with its parameters and the latest
// value of every series it streamed), Series (a run's series as
// streamed), Attempts and WriteFailed (failed runs with their log tails).
// Users repair a sweep with Ledger.Requeue and Controller.Cancel, by run id
// or by state.
//
// # Execution
//
// A Controller drives a ledger through a Backend. Workers never touch the
// ledger: each attempt has a directory (AttemptDir) where the worker streams
// metrics (OpenMetricLog: metrics.jsonl, any frequency per series), writes
// result.json atomically (WriteResult) and its log; the controller ingests
// the metrics while the run goes on, reads the result, classifies failures
// (Slurm states such as OUT_OF_MEMORY, TIMEOUT, NODE_FAIL, PREEMPTED, and
// log patterns such as CUDA/Go out of memory, NaN/Inf loss, time limits),
// retries by class within the budgets of Controller.Retry (by default OOM 3,
// divergence 2, timeout 1, infrastructure 5, corrupt result 1, unknown 0)
// with parameter adjusters (by default OOM halves "batch_size"), and records each retry as a
// new attempt of the same run.
//
// Each attempt runs once, whatever happens to the controller: it records a
// start before submitting, and after a crash Backend.Adopt settles what a
// dead controller left running. A worker that runs on is adopted; a launch
// that was in flight is fenced, so that it either runs (and is adopted) or
// never will (and the attempt runs again under its number); in-process work
// that died with its controller is recorded as interrupted and runs again
// without spending retry budget. A stop the controller asks for (prune,
// cancel, stale) is recorded before the backend is asked, and a cancel is
// recorded as such only once the backend confirmed it. A work directory
// is tied to its ledger: a deleted, replaced or emptied ledger beside
// existing results is refused until Controller.AcceptWorkDir. A Pruner
// (ASHA, MedianRule) stops runs that cannot catch up from the metrics they
// stream; they are recorded as pruned with the reason. Controller.Hook runs
// a command when the sweep finishes or a run fails for good.
//
// Backends: Local runs in-process Go functions, or worker processes
// launched detached (they outlive the controller and are adopted by the
// next one), with heartbeats from the worker's heartbeat file; the
// controller reaps runs whose heartbeat is older than StaleAfter. Package
// sweep/slurm submits Slurm job arrays; package sweep/condor writes
// HTCondor submit files and DAGs for pools without a shared file system.
//
// # Monitoring, collection, export
//
// Ledger.Status counts runs by state with percentages and an ETA, and
// raises alerts for a failure rate over 10% and for stuck runs;
// Ledger.WriteFailed lists failed runs with the last lines of their logs.
// Ledger.Collect copies results and metric logs into an archive with a
// SHA-256 manifest (VerifyArchive re-checks it), skipping a damaged run
// with a report instead of aborting; Ledger.CheckCompleteness compares the
// expected points with the runs completed with finite metrics. Export
// writes CSV, JSON Lines and further formats (sweep/parquet) with the
// column kinds decided by all values, floats in the shortest fixed-point
// form that reads back exactly, pandas dtypes and column descriptions in
// <name>_metadata.json, and one trajectory CSV per run.
package sweep
