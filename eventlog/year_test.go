package eventlog_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
)

// yearlessLog writes events at the given times in HTCondor's default
// "MM/DD HH:MM:SS" format, one job per event, in the order given.
func yearlessLog(times []time.Time) string {
	var b strings.Builder
	for i, t := range times {
		fmt.Fprintf(&b, "000 (%d.000.000) %s Job submitted from host: <10.0.0.1:9618>\n...\n", i+1, t.Format("01/02 15:04:05"))
	}
	return b.String()
}

func readYears(t *testing.T, log string, year int) []eventlog.Event {
	t.Helper()
	r := eventlog.NewReader(strings.NewReader(log))
	r.Year, r.Location = year, time.UTC
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func checkTimes(t *testing.T, want []time.Time, evs []eventlog.Event) {
	t.Helper()
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d", len(evs), len(want))
	}
	bad := 0
	for i, ev := range evs {
		if !ev.Time.Equal(want[i]) {
			if bad < 5 {
				t.Errorf("event %d: %v, want %v", i+1, ev.Time, want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d events have the wrong time", bad, len(evs))
	}
}

// TestYearNewYearTwoWriters is the log of issue 14: 26 events around New
// Year, one old-year event written by a second writer after the first
// new-year events. Every event keeps its own year; the late one does not
// push the rest a year ahead.
func TestYearNewYearTwoWriters(t *testing.T) {
	d := func(y int, m time.Month, day, h, min int) time.Time {
		return time.Date(y, m, day, h, min, 0, 0, time.UTC)
	}
	var want []time.Time
	for i := range 12 { // Dec 31 from 12:00, hourly
		want = append(want, d(2025, 12, 31, 12+i, 0))
	}
	want = append(want, d(2026, 1, 1, 0, 5), d(2026, 1, 1, 0, 20))
	want = append(want, d(2025, 12, 31, 23, 58)) // the late writer
	for i := range 11 {
		want = append(want, d(2026, 1, 1, 1+i, 0))
	}
	if len(want) != 26 {
		t.Fatalf("test log has %d events", len(want))
	}
	checkTimes(t, want, readYears(t, yearlessLog(want), 2025))
}

// TestYearThreeYears: a synthetic log over three years with an event every
// 0–4 days, one write in ten late by up to three days, and at each New
// Year a late write from the old year after the first new-year event.
// Every event gets its year.
func TestYearThreeYears(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	clock := time.Date(2023, 2, 10, 8, 0, 0, 0, time.UTC)
	var want []time.Time
	turns := 0
	for clock.Year() < 2026 {
		prev := clock
		clock = clock.Add(time.Duration(rng.Int64N(int64(96 * time.Hour))))
		if clock.Year() != prev.Year() {
			turns++
			want = append(want, clock.Truncate(time.Second), prev.Add(time.Hour).Truncate(time.Second))
			continue
		}
		at := clock
		if rng.IntN(10) == 0 {
			at = clock.Add(-time.Duration(rng.Int64N(int64(72 * time.Hour))))
		}
		want = append(want, at.Truncate(time.Second))
	}
	if turns != 3 {
		t.Fatalf("log crosses %d New Years, want 3", turns)
	}
	checkTimes(t, want, readYears(t, yearlessLog(want), 2023))
}

// TestYearLeapDay: 02/29 takes the nearest leap year, also when the log
// starts on it with the year from FileTime.
func TestYearLeapDay(t *testing.T) {
	want := []time.Time{
		time.Date(2027, 12, 30, 0, 0, 0, 0, time.UTC),
		time.Date(2028, 2, 28, 23, 0, 0, 0, time.UTC),
		time.Date(2028, 2, 29, 1, 0, 0, 0, time.UTC),
		time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC),
	}
	checkTimes(t, want, readYears(t, yearlessLog(want), 2027))

	r := eventlog.NewReader(strings.NewReader(yearlessLog(want[2:])))
	r.Location = time.UTC
	r.SetFileTime(time.Date(2029, 6, 1, 0, 0, 0, 0, time.UTC)) // 2029 has no 02/29
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	checkTimes(t, want[2:], evs)
}
