package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/exampletest"
)

// TestCtrlC builds the example, interrupts it while it scores the spack-build
// experiment and checks the exit status (130), the one line it prints, and
// that no output is left half-written under its final name.
func TestCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example")
	}
	bin := exampletest.Build(t, "rainbow")
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(bin, "-out", out, "-experiment", "spack-build")
	// Interrupt once jobs.csv is being written (its temporary file exists).
	stderr := exampletest.InterruptAtFile(t, cmd, filepath.Join(out, ".jobs.csv.tmp*"))
	last := strings.Split(strings.TrimSpace(stderr), "\n")
	if got := last[len(last)-1]; !strings.HasPrefix(got, "rainbow: interrupted") {
		t.Errorf("last line %q, want the interruption", got)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "jobs.csv" || strings.Contains(e.Name(), ".tmp") {
			t.Errorf("%s left behind", e.Name())
		}
	}
}
