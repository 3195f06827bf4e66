//go:build !unix

package sweep

import (
	"errors"
	"fmt"
)

// ErrUnsupported is wrapped by the errors of features that need a Unix
// system: the controller lock of a writable ledger, the local process
// backend and the Slurm backend. Reading a ledger (OpenLedgerReadOnly),
// specs, results and exports work everywhere.
var errNeedsUnix = errors.New("needs a Unix system (flock, process groups, sh)")

func lockLedger(path string) (func(), error) {
	return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, errNeedsUnix)
}
