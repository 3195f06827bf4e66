package synth

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// condorSizeSlack is how far past a Bytes target a log may grow: jobs stop
// being added once the written bytes plus an estimate of the queued events
// reach the target, and the estimate (mean bytes per written event) is rough
// in the first jobs of a small log.
const condorSizeSlack = 0.25

var condorHeaderRE = regexp.MustCompile(`^(\d{3}) \((-?\d+)\.(-?\d+)\.(-?\d+)\) (\d{4}-\d\d-\d\d|\d\d/\d\d) \d\d:\d\d:\d\d `)

// condorCount counts events per code, checking every header and "..." line.
func condorCount(t *testing.T, b []byte, legacy bool) map[int]int {
	t.Helper()
	counts := map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	inEvent := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !inEvent {
			m := condorHeaderRE.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("line %d: not an event header: %q", n, line)
			}
			if (len(m[5]) == 5) != legacy {
				t.Fatalf("line %d: date %q, legacy=%v", n, m[5], legacy)
			}
			c, _ := strconv.Atoi(m[1])
			counts[c]++
			inEvent = true
			continue
		}
		if line == "..." {
			inEvent = false
		}
	}
	if inEvent {
		t.Fatal("last event has no terminator")
	}
	return counts
}

func TestCondorGlobalLog(t *testing.T) {
	for _, cfg := range []CondorLogConfig{
		{Seed: 1, Jobs: 300},
		{Seed: 2, Jobs: 300, LegacyDates: true, JobAds: true, Noise: true, Header: true},
		{Seed: 3, Bytes: 256 << 10, Noise: true},
	} {
		var a, b bytes.Buffer
		st, err := CondorGlobalLog(&a, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CondorGlobalLog(&b, cfg); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("seed %d: two runs differ", cfg.Seed)
		}
		if st.Bytes != int64(a.Len()) {
			t.Errorf("seed %d: Bytes = %d, wrote %d", cfg.Seed, st.Bytes, a.Len())
		}
		if d := cmp.Diff(st.Counts, condorCount(t, a.Bytes(), cfg.LegacyDates)); d != "" {
			t.Errorf("seed %d: counts (-stats +log):\n%s", cfg.Seed, d)
		}
		if cfg.Bytes > 0 && (st.Bytes < cfg.Bytes || float64(st.Bytes) > float64(cfg.Bytes)*(1+condorSizeSlack)) {
			t.Errorf("seed %d: %d bytes for a target of %d", cfg.Seed, st.Bytes, cfg.Bytes)
		}
		if cfg.Jobs > 0 && (st.Jobs != cfg.Jobs || st.Counts[0] != cfg.Jobs) {
			t.Errorf("seed %d: %d jobs, %d submits; want %d", cfg.Seed, st.Jobs, st.Counts[0], cfg.Jobs)
		}
		if st.Held == 0 || st.Counts[12] < st.Held || st.Release == 0 || st.Remove == 0 {
			t.Errorf("seed %d: holds/labels missing: %+v", cfg.Seed, st)
		}
		if cfg.JobAds && st.Counts[28] != st.Events-st.Counts[28]-st.Counts[8] {
			t.Errorf("seed %d: %d 028 events for %d others", cfg.Seed, st.Counts[28], st.Events-st.Counts[28])
		}
	}
	var c bytes.Buffer
	CondorGlobalLog(&c, CondorLogConfig{Seed: 9, Jobs: 300})
	var a bytes.Buffer
	CondorGlobalLog(&a, CondorLogConfig{Seed: 1, Jobs: 300})
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("different seeds gave the same log")
	}
}

func TestCondorRotated(t *testing.T) {
	dir := t.TempDir()
	cfg := CondorLogConfig{Seed: 4, Jobs: 100, Location: time.FixedZone("CST", -6*3600)}
	paths, st, err := CondorRotated(dir, "EventLog", cfg, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "EventLog.2"), filepath.Join(dir, "EventLog.1"), filepath.Join(dir, "EventLog")}
	if d := cmp.Diff(want, paths); d != "" {
		t.Errorf("paths (-want +got):\n%s", d)
	}
	total := map[int]int{}
	for k, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b[:300], []byte("Global JobLog: ctime=")) || !bytes.Contains(b[:300], []byte(" sequence="+strconv.Itoa(k+1)+" ")) {
			t.Errorf("%s: no header with sequence %d", p, k+1)
		}
		for c, n := range condorCount(t, b, false) {
			total[c] += n
		}
	}
	// The overlap repeats 4 events at each of the 2 boundaries.
	sum := 0
	for _, n := range total {
		sum += n
	}
	if sum != st.Events+2*4 {
		t.Errorf("%d events in the files, want %d plus 8 repeated", sum, st.Events)
	}
	paths2, _, _ := CondorRotated(t.TempDir(), "EventLog", cfg, 2, 0)
	if filepath.Base(paths2[0]) != "EventLog.old" {
		t.Errorf("two files: %v, want EventLog.old first", paths2)
	}
}

// condorJobEvent is one event of a parsed synthetic log.
type condorJobEvent struct {
	code int
	when string // the header's date and time
	body string
}

// condorJobs groups a log's events by cluster, in log order. The headers
// are checked by condorCount; this parser only splits them.
func condorJobs(t *testing.T, b []byte) map[int][]condorJobEvent {
	t.Helper()
	jobs := map[int][]condorJobEvent{}
	var cur *condorJobEvent
	var body strings.Builder
	cluster := 0
	for line := range strings.Lines(string(b)) {
		if cur == nil {
			// "NNN (cluster.proc.subproc) date time "
			head, rest, ok := strings.Cut(line, ") ")
			c, err1 := strconv.Atoi(head[:min(3, len(head))])
			cl, _, _ := strings.Cut(head[min(5, len(head)):], ".")
			n, err2 := strconv.Atoi(cl)
			date, rest, _ := strings.Cut(rest, " ")
			clock, rest, _ := strings.Cut(rest, " ")
			if !ok || err1 != nil || err2 != nil {
				t.Fatalf("not an event header: %q", line)
			}
			cur = &condorJobEvent{code: c, when: date + " " + clock}
			cluster = n
			body.Reset()
			body.WriteString(rest)
			continue
		}
		if line == "...\n" {
			if cluster >= 0 {
				cur.body = body.String()
				jobs[cluster] = append(jobs[cluster], *cur)
			}
			cur = nil
			continue
		}
		body.WriteString(line)
	}
	return jobs
}

// condorLabel labels a job as eventlog.Job.Label does: 1 (release) when
// held, released and terminated normally; 0 (remove) when held and then
// aborted or killed by a signal; -1 otherwise.
func condorLabel(evs []condorJobEvent) int {
	held, released := false, false
	for _, e := range evs {
		switch e.code {
		case 12:
			held = true
		case 13:
			released = released || held
		}
	}
	last := evs[len(evs)-1]
	switch {
	case !held:
		return -1
	case last.code == 5 && strings.Contains(last.body, "(1) Normal termination"):
		if released {
			return 1
		}
		return -1
	case last.code == 5, last.code == 9:
		return 0
	}
	return -1
}

// The share of removed jobs that failed a run before their first hold is a
// little under 0.9 (nine in ten jobs meant to be removed fail at least once;
// a few removed jobs were meant to be released and were killed or removed
// later), of released ones about 0.12. The bounds leave a margin of
// more than five standard errors at this sample size (about 1500 jobs per
// label) and still fail when the outcome stops depending on the history
// (both shares equal) or depends on it without noise (0 and 1).
const (
	condorMinRemovedTrouble  = 0.75
	condorMaxRemovedTrouble  = 0.97
	condorMinReleasedTrouble = 0.04
	condorMaxReleasedTrouble = 0.2
	// condorShareTol bounds the gap between a hold code's share of first
	// holds and its weight: about seven standard errors of a share near
	// 0.1 over 3000 holds.
	condorShareTol = 0.04
)

// TestCondorHeldHistory checks that a held job's outcome shows in its
// events before the first hold (the event-type history the held-job
// classifier sees), noisily, and that the hold codes keep their shares.
func TestCondorHeldHistory(t *testing.T) {
	var buf bytes.Buffer
	cfg := CondorLogConfig{Seed: 21, Jobs: 6000, HoldRate: 0.5, Noise: true}
	st, err := CondorGlobalLog(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	jobs := condorJobs(t, buf.Bytes())
	var n, trouble [2]int // by label: jobs, jobs with a failed run before the first hold
	firstCode := map[int]int{}
	held := 0
	codeRE := regexp.MustCompile(`\n\tCode (\d+) Subcode \d+\n`)
	for cluster, evs := range jobs {
		executes := 0
		for i, e := range evs {
			switch e.code {
			case 1:
				executes++
			case 24:
				if i == 0 || evs[i-1].code != 22 {
					t.Errorf("job %d: 024 not after a 022: %v", cluster, evs[max(0, i-3):i+1])
				}
			}
			if e.code == 4 || e.code == 24 || e.code == 7 && (i+1 == len(evs) || evs[i+1].code != 12) {
				// A failed run requeues the job: its next execute follows.
				k := i + 1
				for k < len(evs) && evs[k].code != 1 && evs[k].code != 9 {
					k++
				}
				if k == len(evs) {
					t.Errorf("job %d: event %03d at %s is not followed by a new execute", cluster, e.code, e.when)
				}
			}
			if e.code == 7 && i+1 < len(evs) && evs[i+1].code == 12 && evs[i+1].when != e.when {
				t.Errorf("job %d: shadow exception at %s, hold at %s", cluster, e.when, evs[i+1].when)
			}
			if e.code != 12 {
				continue
			}
			if executes == 0 {
				t.Errorf("job %d held before it ran", cluster)
			}
			m := codeRE.FindStringSubmatch(e.body)
			if m == nil {
				t.Fatalf("job %d: hold without a code: %q", cluster, e.body)
			}
			if !slices.ContainsFunc(evs[:i], func(p condorJobEvent) bool { return p.code == 12 }) {
				c, _ := strconv.Atoi(m[1])
				firstCode[c]++
				held++
				if l := condorLabel(evs); l >= 0 {
					n[l]++
					if executes > 1 {
						trouble[l]++
					}
				}
			}
		}
	}
	if held != st.Held || n[1] != st.Release || n[0] != st.Remove {
		t.Errorf("held/release/remove = %d/%d/%d in the log, stats say %d/%d/%d", held, n[1], n[0], st.Held, st.Release, st.Remove)
	}
	rem, rel := float64(trouble[0])/float64(n[0]), float64(trouble[1])/float64(n[1])
	t.Logf("failed runs before the first hold: %d of %d removed jobs (%.3f), %d of %d released (%.3f)", trouble[0], n[0], rem, trouble[1], n[1], rel)
	if rem < condorMinRemovedTrouble || rem > condorMaxRemovedTrouble {
		t.Errorf("%.3f of the removed jobs failed a run before the first hold, want %v to %v", rem, condorMinRemovedTrouble, condorMaxRemovedTrouble)
	}
	if rel < condorMinReleasedTrouble || rel > condorMaxReleasedTrouble {
		t.Errorf("%.3f of the released jobs failed a run before the first hold, want %v to %v", rel, condorMinReleasedTrouble, condorMaxReleasedTrouble)
	}
	var wsum float64
	for _, h := range condorHolds {
		wsum += h.weight
	}
	for _, h := range condorHolds {
		share := float64(firstCode[h.code]) / float64(held)
		if math.Abs(share-h.weight/wsum) > condorShareTol {
			t.Errorf("hold code %d: %.3f of the first holds, weight %.3f", h.code, share, h.weight/wsum)
		}
	}
}
