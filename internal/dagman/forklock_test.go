package dagman

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crosscluster/crosscluster/internal/testenv"
)

// TestCopyThenExecUnderForks copies a script and runs the copy from many
// goroutines at once, as RunCondorDAG's parallel nodes do. Without
// holdForks around the copy, a fork by one goroutine inherits another's
// descriptor open for writing and the exec fails with "text file busy".
func TestCopyThenExecUnderForks(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		testenv.Skip(t, "no /bin/sh")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(src, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 60
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				exe := filepath.Join(dir, "w", string(rune('a'+w)), "job.sh")
				if r == 0 {
					if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
						errs <- err
						return
					}
				}
				os.Remove(exe)
				if err := copyPath(src, exe); err != nil {
					errs <- err
					return
				}
				if err := exec.Command(exe).Run(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
