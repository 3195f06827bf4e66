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

// TestSortRotatedByHeader: rotated files whose names were changed by hand
// are ordered by their global headers' sequence numbers; files without
// headers keep the name order.
func TestSortRotatedByHeader(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, seq int) string {
		p := filepath.Join(dir, name)
		hdr := ""
		if seq > 0 {
			hdr = fmt.Sprintf("008 (-01.-01.-01) 2025-01-0%d 00:00:00 Global JobLog: ctime=%d id=s.%d sequence=%d size=0 events=0 offset=0 event_off=0 max_rotation=5 creator_name=<schedd@h>\n...\n", seq, 1735689600+seq*86400, seq, seq)
		}
		if err := os.WriteFile(p, []byte(hdr+fmt.Sprintf("000 (%d.000.000) 2025-01-0%d 10:00:00 Job submitted from host: <h>\n...\n", seq+1, max(seq, 1))), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, a1, a2 := write("a", 7), write("a.1", 6), write("a.2", 5) // names and headers agree
	got, err := eventlog.SortRotatedByHeader([]string{a, a1, a2})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{a2, a1, a}) {
		t.Errorf("consistent names: %v", got)
	}
	// Renamed by hand: the headers win.
	b, b1, b2 := write("b", 1), write("b.1", 3), write("b.2", 2)
	got, _ = eventlog.SortRotatedByHeader([]string{b, b1, b2})
	if fmt.Sprint(got) != fmt.Sprint([]string{b, b2, b1}) {
		t.Errorf("by header sequence: %v, want %v", got, []string{b, b2, b1})
	}
	// No headers: the names decide.
	c, c1 := write("c", 0), write("c.1", 0)
	got, _ = eventlog.SortRotatedByHeader([]string{c, c1})
	if fmt.Sprint(got) != fmt.Sprint([]string{c1, c}) {
		t.Errorf("without headers: %v", got)
	}
}
