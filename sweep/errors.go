package sweep

import "errors"

// Errors of the package, wrapped with %w so that errors.Is finds them;
// errors.As finds a *SpecError (naming the key), an *InputsError and a
// *TransitionError (their messages say what changed or which move was
// refused).
var (
	// ErrSpec is wrapped by every SpecError.
	ErrSpec = errors.New("malformed spec")
	// ErrTooLarge is wrapped by the error for a spec above maxRuns (or above
	// maxExpand for Expand).
	ErrTooLarge = errors.New("too many runs")
	// ErrLocked is wrapped by OpenLedger's error when another controller holds
	// the ledger.
	ErrLocked = errors.New("ledger is in use by another controller")
	// ErrReadOnly is wrapped by the errors of writes to a ledger opened with
	// OpenLedgerReadOnly.
	ErrReadOnly = errors.New("ledger opened read-only")
	// ErrAlias is wrapped by OpenLedger's error for a ledger reached
	// through a symbolic link or a file with more than one hard link.
	ErrAlias = errors.New("ledger has another name")
	// ErrNoRun is wrapped by the errors for an unknown run id.
	ErrNoRun = errors.New("no such run")
	// ErrWorkDir is wrapped by Run's error when the work directory holds runs
	// that the ledger does not know (see Controller.AcceptWorkDir).
	ErrWorkDir = errors.New("work directory belongs to another ledger")
	// ErrLaunch is wrapped by the errors of the local process backend when the
	// launcher fails to start, read, cancel or fence a worker process (on a
	// system that is not Unix, always: worker processes need sh, setsid and
	// process groups there; in-process workers run everywhere).
	ErrLaunch = errors.New("worker process launcher failed")
	// ErrCorrupt is wrapped by the errors for a result or metric file that
	// exists but cannot be used.
	ErrCorrupt = errors.New("corrupt result file")
	// ErrChecksum is wrapped by VerifyArchive's errors for a file whose content
	// does not match the manifest.
	ErrChecksum = errors.New("checksum mismatch")
)
