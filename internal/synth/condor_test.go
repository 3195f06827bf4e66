package synth

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
