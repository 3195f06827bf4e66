// The Slurm tests share needSlurm with the kill tests, which find worker
// processes through /proc.

//go:build linux

package heldjobs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/crosscluster/crosscluster/sweep/slurm"
)

// TestSlurmPrunedDashboard runs a search with ASHA on the Slurm cluster as
// job arrays, the dashboard up: the page answers while the tasks are
// queued or running, with a row for every run, and ASHA stops runs through
// the backend (scancel), recorded as pruned with its reason.
func TestSlurmPrunedDashboard(t *testing.T) {
	needSlurm(t)
	text := strings.NewReplacer("epochs: 3", "epochs: 120", "patience: 2", "patience: 120", "metric: f1", "metric: valid_loss").Replace(smallSpec) +
		"prune: {rule: asha, min_epochs: 1, eta: 2}\n"
	spec := loadSpec(t, text)
	out := t.TempDir()
	backend := &slurm.Backend{Command: []string{os.Args[0], "node", "train", "-data", filepath.Join(out, DatasetDir)},
		Dir: filepath.Join(out, "slurm"), Name: "heldjobs-prune", MaxParallel: 2}
	s := &Search{Spec: spec, Out: out, Backend: backend, Parallel: 4, PollInterval: 100 * time.Millisecond}
	oc, body, _ := searchWithDashboard(t, s, func() {})
	pruned := 0
	for _, run := range oc.Runs {
		if !bytes.Contains(body, []byte(run.Slug)) {
			t.Errorf("the dashboard has no row for run %s", run.Slug)
		}
		switch {
		case run.State == sweep.Pruned && strings.HasPrefix(run.Error, "ASHA: valid_loss"):
			pruned++
		case run.State != sweep.Completed:
			t.Errorf("run %s: %s %q", run.Slug, run.State, run.Error)
		}
	}
	if pruned == 0 {
		t.Error("no run pruned on Slurm")
	}
	for _, run := range oc.Runs {
		t.Logf("%s: %s, %v epochs, %s", run.Slug, run.State, run.metric("epochs"), run.Error)
	}
}
