//go:build !unix && !windows

package sweep

import (
	"errors"
	"fmt"
	"os"
)

// errNoLock: the controller lock needs flock (Unix) or LockFileEx
// (Windows).
var errNoLock = errors.New("a writable ledger needs a Unix or Windows system (file locks)")

func lockLedger(path string) (func(), error) {
	return nil, fmt.Errorf("sweep: ledger lock %s: %w", path, errNoLock)
}

func links(os.FileInfo) uint64 { return 1 }
