package heldjobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// TestSearchFailedRunIsAnError runs a search in which one run fails for
// good (no retries): the search still writes its best model of the others,
// and returns ErrFailedRuns naming the lost run unless the spec allows
// failures. A search that picked another model without a word was how a
// lost best run went unnoticed.
func TestSearchFailedRunIsAnError(t *testing.T) {
	for _, allow := range []bool{false, true} {
		name := "refused"
		text := smallSpec + "retries: 0\n"
		if allow {
			name = "allowed"
			text += "allow_failed: true\n"
		}
		t.Run(name, func(t *testing.T) {
			spec := loadSpec(t, text)
			if spec.AllowFailed != allow {
				t.Fatalf("AllowFailed %v", spec.AllowFailed)
			}
			out := t.TempDir()
			worker := Worker(filepath.Join(out, DatasetDir), nil)
			var lost string
			s := &Search{Spec: spec, Out: out, Parallel: 1, PollInterval: 10 * time.Millisecond,
				Backend: &sweep.Local{Func: func(ctx context.Context, task sweep.Task) (*sweep.Result, error) {
					if lost == "" {
						lost = task.RunID
						return nil, errors.New("the node vanished")
					}
					return worker(ctx, task)
				}}}
			oc, err := s.Run(context.Background())
			if allow {
				if err != nil {
					t.Fatal(err)
				}
			} else if !errors.Is(err, ErrFailedRuns) || !strings.Contains(err.Error(), "1 of 4") {
				t.Fatalf("error %v, want ErrFailedRuns for 1 of 4 runs", err)
			}
			if oc == nil || oc.Best < 0 || oc.Runs[oc.Best].ID == lost {
				t.Fatalf("outcome %+v", oc)
			}
			if _, err := os.Stat(filepath.Join(out, BestInfoFile)); err != nil {
				t.Errorf("the best model's info was not written: %v", err)
			}
		})
	}
}
