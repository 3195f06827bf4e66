package sweep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Task is one attempt of one run handed to a backend.
type Task struct {
	RunID, Slug string
	Attempt     int
	Params      map[string]Value
	Resources   Resources
	// Dir is the attempt directory: the worker writes Dir/result.json
	// (WriteResult) and streams its metrics to Dir/metrics.jsonl
	// (OpenMetricLog); its log goes to Dir/log, its config is
	// Dir/config.json.
	Dir string
	// BackendID is the backend's handle, set after Submit.
	BackendID string
}

// TaskStatus is a backend's report on one task.
type TaskStatus struct {
	// State is Queued (accepted, not started), Running, Completed (ended
	// with exit status 0) or Failed (ended otherwise: SchedState and Exit
	// say how); empty when the backend has no trace of the task (lost).
	State      State
	SchedState string    // the scheduler's state name (e.g. Slurm "TIMEOUT"), if any
	Exit       int       // exit status when ended, if known
	Heartbeat  time.Time // last sign of life, if known
}

// lost is TaskStatus.State for a task the backend has no trace of.
const lost State = ""

// Backend runs tasks. Workers never touch the ledger: a backend starts the
// work and reports on it; the controller reconciles the ledger.
type Backend interface {
	// Submit starts the tasks and returns one backend id per task.
	Submit(ctx context.Context, tasks []Task) ([]string, error)
	// Poll reports on tasks previously submitted (BackendID set).
	Poll(ctx context.Context, tasks []Task) ([]TaskStatus, error)
	// Cancel stops the tasks. A nil error confirms that the backend
	// stopped them (or will, for a scheduler that accepted the cancel);
	// the controller records a run as cancelled only then.
	Cancel(ctx context.Context, tasks []Task) error
	// Adopt is given the tasks a previous controller left running, with
	// their BackendID when it was recorded. It returns for each the id
	// under which the backend still runs it (the recorded one, or one found
	// for a task whose id was not recorded); "" when the task never started
	// and never will (it never reached the backend, or its launch was in
	// flight and Adopt prevented it from starting), so that the attempt
	// can be run again under its number; or Gone when it may have started
	// and is gone (in-process work that died with its controller).
	Adopt(ctx context.Context, tasks []Task) ([]string, error)
}

// The worker protocol: the environment variables a process worker
// receives, the files it writes into its attempt directory, and what
// Backend.Adopt returns for work that is gone.
const (
	EnvRunID     = "SWEEP_RUN_ID"
	EnvAttempt   = "SWEEP_ATTEMPT"
	EnvRunDir    = "SWEEP_RUN_DIR"
	EnvConfig    = "SWEEP_CONFIG"
	EnvHeartbeat = "SWEEP_HEARTBEAT"
	// ResultFile is the name of the file a worker writes into its attempt
	// directory when it finishes.
	ResultFile = "result.json"
	// MetricFile is the file in the attempt directory where a worker streams its
	// metrics (MetricLog), one JSON object per line:
	//
	//	{"series":"val_loss","step":1.25,"value":0.9312,"time":1764000000.123}
	//
	// NaN and ±Inf values are written as the strings "nan", "inf" and "-inf".
	MetricFile = "metrics.jsonl"
	// Gone is what Backend.Adopt returns for a task that may have started and
	// no longer runs anywhere; the controller records the attempt as
	// interrupted and runs the run again, without spending retry budget.
	Gone = "-"
)

// heartbeatFile is the file in the attempt directory whose modification time
// a process worker may refresh (TouchHeartbeat) to show it is alive.
const heartbeatFile = "heartbeat"

// taskEnv returns the worker environment for t.
func taskEnv(t Task) []string {
	return []string{
		EnvRunID + "=" + t.RunID,
		EnvAttempt + "=" + strconv.Itoa(t.Attempt),
		EnvRunDir + "=" + t.Dir,
		EnvConfig + "=" + filepath.Join(t.Dir, "config.json"),
		EnvHeartbeat + "=" + filepath.Join(t.Dir, heartbeatFile),
	}
}

// prepare creates the attempt directory and its config.json. The config is
// not fsynced: after a power failure a missing config fails the attempt,
// which is retried, and the ledger keeps the parameters.
func prepare(t Task) error {
	if err := os.MkdirAll(t.Dir, 0o755); err != nil {
		return fmt.Errorf("sweep: run %s: %w", t.RunID, err)
	}
	return writeFile(filepath.Join(t.Dir, "config.json"), encodeConfig(t.Params), false)
}

// WorkerTask returns the task a process worker was started for, from the
// environment the local and Slurm backends set. ok is false when the
// process was not started as a sweep worker.
func WorkerTask() (t Task, ok bool, err error) {
	id := os.Getenv(EnvRunID)
	if id == "" {
		return Task{}, false, nil
	}
	t.RunID = id
	t.Dir = os.Getenv(EnvRunDir)
	t.Attempt, _ = strconv.Atoi(os.Getenv(EnvAttempt))
	b, err := os.ReadFile(os.Getenv(EnvConfig))
	if err != nil {
		return t, true, fmt.Errorf("sweep: worker config: %w", err)
	}
	t.Params, err = decodeConfig(string(b))
	return t, true, err
}

// TouchHeartbeat refreshes the worker's heartbeat file (a no-op outside a
// process worker).
func TouchHeartbeat() error {
	p := os.Getenv(EnvHeartbeat)
	if p == "" {
		return nil
	}
	now := time.Now()
	if err := os.Chtimes(p, now, now); err != nil {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		return f.Close()
	}
	return nil
}

func heartbeatOf(dir string) time.Time {
	fi, err := os.Stat(filepath.Join(dir, heartbeatFile))
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// Prepare creates a task's directory and its config.json, as the
// backends do before they start a worker, for a task run by other means:
// a DAG node whose job reads config.json (see WorkerTask).
func (t Task) Prepare() error { return prepare(t) }
