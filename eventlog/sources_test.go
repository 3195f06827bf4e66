package eventlog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
)

// writeLog writes a classic log with one submit and one termination per
// job id, starting at day.
func writeLog(t *testing.T, path string, day int, ids ...int) {
	t.Helper()
	var b strings.Builder
	for k, id := range ids {
		fmt.Fprintf(&b, "000 (%d.000.000) 2025-01-%02d 10:%02d:00 Job submitted from host: <10.0.0.1:9618>\n...\n", id, day, k)
		fmt.Fprintf(&b, "005 (%d.000.000) 2025-01-%02d 11:%02d:00 Job terminated.\n\t(1) Normal termination (return value 0)\n...\n", id, day, k)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSeveralSources: two schedds' logs read together keep their jobs
// apart (issue 14: 112 jobs became 73), the rotations of one log share a
// source, and rotated files given newest first are reported.
func TestSeveralSources(t *testing.T) {
	dir := t.TempDir()
	a0, a1 := filepath.Join(dir, "schedd-a", "EventLog"), filepath.Join(dir, "schedd-a", "EventLog.1")
	b0 := filepath.Join(dir, "schedd-b.log")
	for _, d := range []string{filepath.Dir(a0)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeLog(t, a1, 1, 1, 2, 3) // older rotation
	writeLog(t, a0, 2, 4, 5)
	writeLog(t, b0, 1, 1, 2, 3) // another schedd, the same ids
	opt := eventlog.Options{Location: time.UTC}

	fs := eventlog.NewFiles(eventlog.SortRotated([]string{a0, a1, b0}), opt)
	jobs, err := eventlog.GroupBySource(fs.All())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 8 {
		t.Errorf("%d jobs, want 8 (5 of schedd a over two rotations, 3 of schedd b)", len(jobs))
	}
	srcs := map[string]int{}
	for _, j := range jobs {
		srcs[j.Key.Source]++
		if len(j.Events) != 2 {
			t.Errorf("%v: %d events, want 2", j.Key, len(j.Events))
		}
	}
	if srcs["EventLog"] != 5 || srcs["schedd-b.log"] != 3 {
		t.Errorf("jobs per source %v", srcs)
	}
	if w := fs.Warnings(); len(w) != 0 {
		t.Errorf("in order, warnings %q", w)
	}
	// One source for all, as before: ids collide.
	merged, _ := eventlog.GroupSeq("", eventlog.NewFiles([]string{a1, a0, b0}, opt).All())
	if len(merged) != 5 {
		t.Errorf("GroupSeq merged into %d jobs, want the 5 distinct ids", len(merged))
	}
	// Newest first: the set says so.
	fs = eventlog.NewFiles([]string{a0, a1}, opt)
	if _, err := eventlog.GroupBySource(fs.All()); err != nil {
		t.Fatal(err)
	}
	if w := fs.Warnings(); len(w) != 1 || !strings.Contains(w[0], "EventLog.1 starts at 2025-01-01T10:00:00Z") {
		t.Errorf("newest first: warnings %q", w)
	}
	if got := eventlog.SourceOf("/var/log/condor/EventLog.12"); got != "EventLog" {
		t.Errorf("SourceOf = %q", got)
	}
}
