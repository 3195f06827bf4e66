package sweep

import (
	"regexp"
	"strings"
)

// Class is the kind of a failure; it selects the retry budget.
type Class string

const (
	ClassOOM            Class = "oom"            // out of memory (Slurm OUT_OF_MEMORY, CUDA/Go OOM in the log)
	ClassDivergence     Class = "divergence"     // NaN/Inf loss
	ClassTimeout        Class = "timeout"        // time limit
	ClassInfrastructure Class = "infrastructure" // node failure, preemption, vanished worker, stale heartbeat
	ClassCorrupt        Class = "corrupt"        // result file unreadable or invalid
	ClassCancelled      Class = "cancelled"
	ClassUnknown        Class = "unknown"
	// ClassInterrupted is an attempt stopped by its controller's death (an
	// in-process worker dies with it). It is run again without spending
	// any retry budget: the run itself did nothing wrong.
	ClassInterrupted Class = "interrupted"
)

// slurmClasses maps Slurm job states (sacct/squeue/jobcomp) to classes.
var slurmClasses = map[string]Class{
	"OUT_OF_MEMORY": ClassOOM,
	"TIMEOUT":       ClassTimeout,
	"DEADLINE":      ClassTimeout,
	"NODE_FAIL":     ClassInfrastructure,
	"PREEMPTED":     ClassInfrastructure,
	"BOOT_FAIL":     ClassInfrastructure,
	"REQUEUED":      ClassInfrastructure,
	"REVOKED":       ClassInfrastructure,
	"CANCELLED":     ClassCancelled,
}

// logPatterns are checked in order against the last lines of a run's log.
var logPatterns = []struct {
	re    *regexp.Regexp
	class Class
}{
	{regexp.MustCompile(`(?i)CUDA out of memory|CUDA error: out of memory|OutOfMemoryError|fatal error: runtime: out of memory|cannot allocate memory|std::bad_alloc|MemoryError`), ClassOOM},
	{regexp.MustCompile(`(?i)\bloss\b[^\n]*\b(nan|inf)\b|\bnan loss\b|non-finite loss|diverged`), ClassDivergence},
	{regexp.MustCompile(`(?i)DUE TO TIME LIMIT|time limit exceeded|timed out|deadline exceeded`), ClassTimeout},
	{regexp.MustCompile(`(?i)NODE FAILURE|DUE TO NODE FAIL|PREEMPTION|Connection reset by peer|No space left on device`), ClassInfrastructure},
}

// Classify returns the class of a failure from the scheduler's state (a Slurm
// state such as "OUT_OF_MEMORY" or "TIMEOUT", possibly with a suffix like
// "CANCELLED by 0"; empty when unknown) and the tail of the run's log. The
// scheduler state wins when it names a class; otherwise the first matching
// log pattern; otherwise ClassUnknown.
func classify(schedState, logTail string) Class {
	s := strings.ToUpper(strings.TrimSpace(schedState))
	if i := strings.IndexAny(s, " +"); i >= 0 {
		s = s[:i]
	}
	if c, ok := slurmClasses[s]; ok {
		return c
	}
	for _, p := range logPatterns {
		if p.re.MatchString(logTail) {
			return p.class
		}
	}
	return ClassUnknown
}

// retryPolicy is what Controller.Retry asks for: the extra attempts each
// class of failure gets, and how the parameters change for them.
type retryPolicy struct {
	budget map[Class]int
	// adjust, when non-nil, returns the overrides for the next attempt
	// given the class and the parameters of the failed attempt, or nil to
	// keep them.
	adjust func(c Class, params map[string]Value) map[string]Value
}

// defaultInfraRetries is the default budget for infrastructure
// failures, which say nothing about the run itself.
const defaultInfraRetries = 5

// defaultRetry returns the default policy: OOM 3, divergence 2, timeout 1,
// infrastructure 5, corrupt result 1, unknown 0;
// OOM halves "batch_size" (floor 16).
func defaultRetry() retryPolicy {
	return retryPolicy{
		budget: map[Class]int{
			ClassOOM:            3,
			ClassDivergence:     2,
			ClassTimeout:        1,
			ClassInfrastructure: defaultInfraRetries,
			ClassCorrupt:        1,
			ClassUnknown:        0,
		},
		adjust: halveBatchOnOOM,
	}
}

// minBatchSize is the floor halveBatchOnOOM never goes below.
const minBatchSize = 16

// halveBatchOnOOM halves the integer parameter "batch_size" after an OOM,
// not below minBatchSize, keeping every other override.
func halveBatchOnOOM(c Class, params map[string]Value) map[string]Value {
	if c != ClassOOM {
		return nil
	}
	bs, ok := params["batch_size"]
	if !ok || bs.Kind != Int {
		return nil
	}
	n := max(bs.Int()/2, minBatchSize)
	return map[string]Value{"batch_size": intValue(n)}
}

// retryAllowed reports whether a run whose attempts failed failedOfClass
// times with class c gets another attempt.
func retryAllowed(p retryPolicy, c Class, failedOfClass int) bool {
	return c == ClassInterrupted || failedOfClass <= p.budget[c]
}
