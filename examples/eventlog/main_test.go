package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/plottest"
)

func TestRunSynthetic(t *testing.T) {
	dir := t.TempDir()
	o := options{out: dir, jobs: 200, seed: 3, m: 5, j: 3, frame: time.Minute, tz: "UTC"}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"global.log", "codes.csv", "jobs.csv", "dataset.npz", "split.json", "summary.json"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	plottest.Check(t, filepath.Join(dir, "holds.png"), 600, 400)
}

// TestRunNoHolds: a log without holds writes no holds.png and does not
// claim one (issue 12: it said it wrote holds.png when it had not).
func TestRunNoHolds(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "user.log")
	if err := os.WriteFile(log, []byte("000 (1.000.000) 03/05 10:00:00 Job submitted from host: <10.0.0.1:9618>\n...\n"+
		"005 (1.000.000) 03/05 10:05:00 Job terminated.\n\t(1) Normal termination (return value 0)\n...\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{out: dir, logs: log, seed: 1, m: 5, j: 2, frame: time.Minute, tz: "Europe/Berlin"}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "holds.png")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("holds.png exists for a log without holds (%v)", err)
	}
	if err := run(context.Background(), options{out: dir, logs: log, tz: "Mars/Olympus"}); err == nil {
		t.Error("-tz Mars/Olympus accepted")
	}
}
