package eventlog_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/internal/synth"
)

func TestLabels(t *testing.T) {
	m := time.Minute
	tests := []struct {
		name string
		job  *eventlog.Job
		want eventlog.Label
		end  eventlog.End
	}{
		{"hold release terminate", mkJob(1, spec{0, 0, false}, spec{1, m, false}, spec{12, 2 * m, false}, spec{13, 3 * m, false}, spec{1, 4 * m, false}, spec{5, 5 * m, false}, spec{28, 5 * m, false}, spec{6, 5 * m, false}), eventlog.Release, eventlog.TerminatedNormally},
		{"hold abort", mkJob(2, spec{0, 0, false}, spec{12, 2 * m, false}, spec{9, 3 * m, false}, spec{28, 3 * m, false}), eventlog.Remove, eventlog.Removed},
		{"hold release abnormal", mkJob(3, spec{0, 0, false}, spec{12, 2 * m, false}, spec{13, 3 * m, false}, spec{5, 4 * m, true}), eventlog.Remove, eventlog.TerminatedAbnormally},
		{"never held", mkJob(4, spec{0, 0, false}, spec{1, m, false}, spec{5, 2 * m, false}), eventlog.Unlabeled, eventlog.TerminatedNormally},
		{"held, still held", mkJob(5, spec{0, 0, false}, spec{12, m, false}), eventlog.Unlabeled, eventlog.Running},
		{"release before any hold does not count", mkJob(6, spec{0, 0, false}, spec{13, m, false}, spec{12, 2 * m, false}, spec{1, 3 * m, false}, spec{5, 4 * m, false}), eventlog.Unlabeled, eventlog.TerminatedNormally},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.job.Label(); got != tt.want {
				t.Errorf("Label = %v, want %v", got, tt.want)
			}
			if end, _ := tt.job.End(); end != tt.end {
				t.Errorf("End = %v, want %v", end, tt.end)
			}
		})
	}
}

func TestLifecycle(t *testing.T) {
	m := time.Minute
	j := mkJob(1, spec{0, 0, false}, spec{1, 2 * m, false}, spec{12, 5 * m, false}, spec{13, 35 * m, false},
		spec{1, 40 * m, false}, spec{10, 50 * m, false}, spec{11, 55 * m, false}, spec{5, 60 * m, false}, spec{6, 61 * m, false})
	want := eventlog.StateTimes{Idle: 2*m + 5*m, Running: 3*m + 10*m + 5*m, Held: 30 * m, Suspended: 5 * m}
	if d := diff(want, j.Times()); d != "" {
		t.Errorf("Times (-want +got):\n%s", d)
	}
	h := j.Holds()
	wantH := []eventlog.HoldCycle{{Held: base.Add(5 * m), Released: base.Add(35 * m), Reason: "via condor_hold (by user a)", Code: 1, HasCode: true}}
	if d := diff(wantH, h); d != "" {
		t.Errorf("Holds (-want +got):\n%s", d)
	}
}

func TestLabelsMatchGenerator(t *testing.T) {
	jobs, st := synthJobs(t, synth.CondorLogConfig{Seed: 11, Jobs: 600, Noise: true, JobAds: true, LegacyDates: true})
	var rel, rem, held int
	for _, j := range jobs {
		switch j.Label() {
		case eventlog.Release:
			rel++
		case eventlog.Remove:
			rem++
		}
		if len(j.Holds()) > 0 {
			held++
		}
	}
	if len(jobs) != st.Jobs || rel != st.Release || rem != st.Remove || held != st.Held {
		t.Errorf("jobs/release/remove/held = %d/%d/%d/%d, generator says %d/%d/%d/%d", len(jobs), rel, rem, held, st.Jobs, st.Release, st.Remove, st.Held)
	}
	if rel < 10 || rem < 10 {
		t.Errorf("too few labelled jobs for a meaningful check: %d release, %d remove", rel, rem)
	}
}

func TestGroupSources(t *testing.T) {
	evs, _ := readFile(t, "testdata/hold_release.log", nil)
	a := eventlog.Group("a", evs)
	b := eventlog.Group("b", evs)
	if len(a) != 2 || a[0].Key == b[0].Key || a[0].Key.JobID != b[0].Key.JobID {
		t.Errorf("keys %v %v", a[0].Key, b[0].Key)
	}
	if a[0].Key.String() != "a/1234.000.000" {
		t.Errorf("Key.String() = %q", a[0].Key.String())
	}
	seq, err := eventlog.GroupSeq("a", eventlog.NewReader(mustOpen(t, "testdata/hold_release.log")).All())
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(len(a), len(seq)); d != "" || len(seq[0].Events) != len(a[0].Events) {
		t.Errorf("GroupSeq differs from Group")
	}
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestSortRotated(t *testing.T) {
	want := []string{"d/EventLog.10", "d/EventLog.3.gz", "d/EventLog.2.gz", "d/EventLog.1", "d/EventLog", "d/Other.old", "d/Other"}
	in := append([]string(nil), want...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	orig := append([]string(nil), in...)
	if d := diff(want, eventlog.SortRotated(in)); d != "" {
		t.Errorf("SortRotated (-want +got):\n%s", d)
	}
	if d := diff(orig, in); d != "" {
		t.Errorf("input modified:\n%s", d)
	}
	for _, p := range want[:5] {
		if s := eventlog.SourceOf(p); s != "EventLog" {
			t.Errorf("SourceOf(%s) = %s, want EventLog", p, s)
		}
	}
}

func TestFilesOverlap(t *testing.T) {
	cfg := synth.CondorLogConfig{Seed: 5, Jobs: 150, JobAds: true, Noise: true, LegacyDates: true}
	type ev struct {
		Code eventlog.Code
		Job  eventlog.JobID
		Time time.Time
		Body string
	}
	strip := func(evs []eventlog.Event) []ev {
		var out []ev
		for _, e := range evs {
			if e.Job.IsJob() {
				out = append(out, ev{e.Code, e.Job, e.Time, e.Body})
			}
		}
		return out
	}
	for _, tt := range []struct {
		files, overlap int
	}{{4, 5}, {2, 0}, {3, 40}} {
		dir := t.TempDir()
		paths, st, err := synth.CondorRotated(dir, "EventLog", cfg, tt.files, tt.overlap)
		if err != nil {
			t.Fatal(err)
		}
		// Shuffle then sort back into rotation order.
		shuffled := append([]string(nil), paths...)
		slices.Reverse(shuffled)
		fs := eventlog.NewFiles(eventlog.SortRotated(shuffled), eventlog.Options{Location: time.UTC})
		got, err := fs.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		// Reference: the same configuration written as one file.
		ref := filepath.Join(dir, "flat.log")
		f, _ := os.Create(ref)
		if _, err := synth.CondorGlobalLog(f, cfg); err != nil {
			t.Fatal(err)
		}
		f.Close()
		want, _ := readFile(t, ref, func(r *eventlog.Reader) { r.Year = 2023 })
		if d := diff(strip(want), strip(got)); d != "" {
			t.Errorf("files=%d overlap=%d: concatenated events differ from the flat log (-want +got):\n%s", tt.files, tt.overlap, d)
		}
		// Each repeated chunk is an event and its 028.
		if wantRemoved := (tt.files - 1) * tt.overlap * 2; fs.Removed() != wantRemoved {
			t.Errorf("Removed = %d, want %d", fs.Removed(), wantRemoved)
		}
		if st.Counts[8] != tt.files {
			t.Errorf("%d headers, want %d", st.Counts[8], tt.files)
		}
		if got[len(got)-1].File != paths[len(paths)-1] {
			t.Errorf("File = %q", got[len(got)-1].File)
		}
	}
}

func TestFilesErrors(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "EventLog.1")
	b := filepath.Join(dir, "EventLog")
	os.WriteFile(a, []byte("000 (001.000.000) 2024-01-01 00:00:00 Job submitted from host: <h>\n...\n"), 0o644)
	os.WriteFile(b, []byte("001 (001.000.000) 2024-01-01 00:01:00 Job executing on host: <h>\n...\nnot an event\n005 (001.000.000) 2024-01-01 00:02:00 Job terminated.\n\t(1) Normal termination (return value 0)\n...\n"), 0o644)
	fs := eventlog.NewFiles(eventlog.SortRotated([]string{b, a}), eventlog.Options{})
	var got []string
	for ev, err := range fs.All() {
		if err != nil {
			var pe *eventlog.ParseError
			if !errors.As(err, &pe) || pe.File != b || pe.Line != 3 {
				t.Errorf("error %v, want a *ParseError at %s line 3", err, b)
			}
			got = append(got, "error")
			continue
		}
		got = append(got, ev.Code.String()+"@"+filepath.Base(ev.File))
	}
	want := []string{"ULOG_SUBMIT@EventLog.1", "ULOG_EXECUTE@EventLog", "error", "ULOG_JOB_TERMINATED@EventLog"}
	if d := diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	fs = eventlog.NewFiles([]string{filepath.Join(dir, "missing")}, eventlog.Options{})
	if _, err := fs.Read(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestDAGPostScriptKeepsEnd: in DAG node logs, DAGMan writes 016 (POST
// script terminated) after the node job's 005 or 009 (or after a hold it
// gives up on). The 016 reports on the node, not the job: End still gives
// the 005 or 009, so the job is labelled. Checked on every LSST DAG log of
// the public data: no job with a 005 or 009 is left "running".
func TestDAGPostScriptKeepsEnd(t *testing.T) {
	dir := pubdata.Need(t, "htcondor")
	paths, _ := filepath.Glob(filepath.Join(dir, "lsst_*.nodes.log"))
	if len(paths) == 0 {
		t.Fatalf("no lsst_*.nodes.log in %s", dir)
	}
	after016 := 0 // jobs whose last event is a 016 after their 005/009
	for _, p := range paths {
		evs, _ := readFile(t, p, nil)
		for _, j := range eventlog.Group(filepath.Base(p), evs) {
			var ended *eventlog.Event
			for i := range j.Events {
				if c := j.Events[i].Code; c == eventlog.Terminated || c == eventlog.Aborted {
					ended = &j.Events[i]
				}
			}
			end, at := j.End()
			if ended == nil {
				if end != eventlog.Running {
					t.Errorf("%s job %v: End %v without a 005 or 009", filepath.Base(p), j.Key, end)
				}
				continue
			}
			if last := j.Events[len(j.Events)-1]; last.Code == eventlog.PostScriptTerminated {
				after016++
			}
			if end == eventlog.Running || !at.Equal(ended.Time) {
				t.Errorf("%s job %v: End = %v at %v, want the %03d at %v", filepath.Base(p), j.Key, end, at, int(ended.Code), ended.Time)
			}
		}
	}
	if after016 == 0 {
		t.Error("no job in the LSST logs ends with a 016 after its 005/009: the test checks nothing")
	}
	t.Logf("%d jobs end with a 016 after their 005/009", after016)

	// HTCondor's documented order on a small log: 005 then 016 terminates
	// normally; 012 then 016 stays held (running, for End).
	const log = "000 (1.000.000) 2025-01-01 10:00:00 Job submitted from host: <h>\n...\n" +
		"005 (1.000.000) 2025-01-01 10:05:00 Job terminated.\n\t(1) Normal termination (return value 0)\n...\n" +
		"016 (1.000.000) 2025-01-01 10:05:03 POST Script terminated.\n\t(1) Normal termination (return value 0)\n    DAG Node: a\n...\n" +
		"000 (2.000.000) 2025-01-01 10:00:00 Job submitted from host: <h>\n...\n" +
		"012 (2.000.000) 2025-01-01 10:01:00 Job was held.\n\tbad\n\tCode 1 Subcode 0\n...\n" +
		"016 (2.000.000) 2025-01-01 10:02:00 POST Script terminated.\n\t(1) Normal termination (return value 1)\n    DAG Node: b\n...\n"
	r := eventlog.NewReader(strings.NewReader(log))
	r.Location = time.UTC
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	jobs := eventlog.Group("", evs)
	if end, _ := jobs[0].End(); end != eventlog.TerminatedNormally {
		t.Errorf("005 then 016: End = %v", end)
	}
	if ev, _ := jobs[1].LastState(); ev.Code != eventlog.Held {
		t.Errorf("012 then 016: last state %v, want held", ev.Code)
	}
}
