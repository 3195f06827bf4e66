// Package sweep runs parameter sweeps that survive crashes, on the local
// machine, on Slurm or on HTCondor, and analyses their training curves.
//
// # Specs and identity
//
// A Spec (Go value, or YAML read by LoadSpec) has base parameters, grid axes
// expanded as a Cartesian product in declared order with the last axis
// fastest, variant overlays (outermost) and optional seeded random samples.
// Values keep their literal text ("1e-4"). Each Point has a readable slug
// (base-lr0.05-wd1e-4-s0) and an id: the SHA-256 of its canonical config
// (sorted keys, normalised numbers, priority and tags left out), so
// resubmitting a spec is idempotent. A malformed spec is a *SpecError naming
// the key ("grid[1].values[0]").
//
// # Ledger
//
// A Ledger is one SQLite file (modernc.org/sqlite, pure Go, WAL,
// synchronous=NORMAL) holding runs, attempts, states (queued, running,
// completed, failed, cancelled), timings, heartbeats, backend ids and
// error class and text. Every transition is one UPDATE statement, hence one
// transaction, with triggers keeping the attempts table in step; a
// transition the current state does not allow is a *TransitionError. The
// controller holds an flock on <ledger>.lock, so a second controller is
// refused with ErrLocked while the first lives, and a restarted one takes
// over at once after a crash. With synchronous=NORMAL a committed transition
// survives a process crash (the tests SIGKILL the controller); the last
// transitions before a power failure may be lost and are then redone.
//
// # Execution
//
// A Controller drives a ledger through a Backend. Workers never touch the
// ledger: each attempt has a directory (AttemptDir) where the worker writes
// result.json atomically (WriteResult: temporary file, fsync, rename) and
// its log; the controller reads the result, classifies failures (Classify:
// Slurm states such as OUT_OF_MEMORY, TIMEOUT, NODE_FAIL, PREEMPTED, and
// log patterns such as CUDA/Go out of memory, NaN/Inf loss, time limits),
// retries by class within the RetryPolicy's budgets (DefaultRetry: OOM 3,
// divergence 2, timeout 1, infrastructure 5, corrupt result 1, unknown 0)
// with parameter adjusters (HalveBatchOnOOM), and records each retry as a
// new attempt of the same run. The controller records the start of an
// attempt before submitting it; after a crash, Backend.Adopt finds work a
// dead controller submitted but did not record.
//
// Backends:
//   - Local: in-process Go functions, or worker processes launched detached
//     through internal/launch (they outlive the controller and are adopted by
//     the next one); heartbeats from the worker's heartbeat file; the
//     controller reaps runs whose heartbeat is older than StaleAfter.
//   - Slurm: one "sbatch --parsable --array=0-(N-1)%P" per batch over a
//     run-list file, optional --requeue and --signal=B:TERM@seconds before
//     the time limit; state from squeue, the job-completion log
//     (jobcomp/filetxt) where accounting is off, or sacct; scancel on cancel.
//   - Condor: a submit file with "queue dir, run_id, attempt from runs.txt"
//     and a DAG with RETRY, generated and checked by the tests (HTCondor was
//     not installable where this was written, so nothing here submits them).
//
// # Monitoring, collection, export
//
// Ledger.Status counts runs by state with percentages and an ETA from the
// mean completed duration and the parallelism, and raises alerts for a
// failure rate over failureAlertRate and for stuck runs; WriteFailed lists
// failed runs with the last lines of their logs. Collect copies results into
// an archive with a SHA-256 manifest (VerifyArchive re-checks it);
// CheckCompleteness compares the expected grid with the runs completed with
// finite metrics ("214/216 runs completed"). Export writes one CSV row per
// run in the Dataset's column order with %.6f floats (NaN empty, ±Inf as
// inf/-inf), per-run trajectory CSVs and <name>_metadata.json; CheckSchema
// names missing columns.
//
// # Curve analysis
//
// CurveDataset computes per-run metrics with package stats (power-law fit
// with R² in log space, AIC knee, burn-in, window slopes, best loss);
// Hypotheses evaluates H1 (more than 90% of runs follow a power law with
// R² ≥ 0.98) and H2 (Spearman ρ(early slope, best validation loss) ≥ 0.7)
// overall and by variant.
package sweep
