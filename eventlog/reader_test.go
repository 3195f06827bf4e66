package eventlog_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crosscluster/crosscluster/internal/pubdata"
)

// realFile returns the path of a public HTCondor log (skipping when the
// public test data is absent; see internal/pubdata).
func realFile(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(pubdata.Need(t, "htcondor"), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("public data incomplete: %v (run scripts/fetch-testdata.sh)", err)
	}
	return p
}

func readFile(t testing.TB, path string, configure func(*eventlog.Reader)) ([]eventlog.Event, *eventlog.Reader) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := eventlog.NewReader(f)
	r.Location = time.UTC
	r.Year = 2024
	if configure != nil {
		configure(r)
	}
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return evs, r
}

// checkBodies runs every typed accessor that applies and fails on errors.
func checkBodies(t *testing.T, evs []eventlog.Event) {
	t.Helper()
	for i := range evs {
		e := &evs[i]
		var err error
		switch e.Code {
		case eventlog.Submit:
			_, err = e.SubmitInfo()
		case eventlog.Execute:
			_, err = e.ExecuteInfo()
		case eventlog.Evicted:
			_, err = e.EvictInfo()
		case eventlog.Terminated, eventlog.NodeTerminated:
			_, err = e.TerminateInfo()
		case eventlog.ImageSize:
			_, err = e.ImageSizeInfo()
		case eventlog.ShadowException:
			_, err = e.ShadowExceptionInfo()
		case eventlog.Aborted:
			_, err = e.AbortInfo()
		case eventlog.Held:
			_, err = e.HoldInfo()
		case eventlog.Released:
			_, err = e.ReleaseInfo()
		case eventlog.Disconnected, eventlog.ReconnectFailed:
			_, err = e.DisconnectInfo()
		case eventlog.Reconnected:
			_, err = e.ReconnectInfo()
		case eventlog.AttributeUpdate:
			_, err = e.AttributeUpdateInfo()
		case eventlog.JobAdInformation:
			_, err = e.JobAdInfo()
		case eventlog.FileTransfer:
			_, err = e.TransferInfo()
		}
		if err != nil {
			t.Errorf("event %d (line %d, %v): %v", i, e.Line, e.Code, err)
		}
	}
}

func TestRealLogs(t *testing.T) {
	// Per-code counts from ../shared/testdata/htcondor/SOURCES.md. For
	// htcondor_test_condor.log SOURCES.md gives ranges (000–020 each 28–53
	// times, 022×3, 023×1, 024×2); the exact counts come from
	//   grep -oE '^[0-9]{3} \(' htcondor_test_condor.log | sort | uniq -c
	// (GNU grep 3.8) and are checked against those ranges below.
	tests := []struct {
		file   string
		counts map[eventlog.Code]int
	}{
		{"htcondor_test_condor.log", map[eventlog.Code]int{0: 42, 1: 35, 2: 48, 3: 53, 4: 35, 5: 43, 6: 32, 7: 28, 8: 35, 9: 40, 10: 31, 11: 49, 12: 48, 13: 43, 14: 42, 15: 40, 16: 41, 17: 46, 18: 41, 19: 38, 20: 35, 22: 3, 23: 1, 24: 2}},
		{"lsst_tiny_problems.dag.nodes.log", map[eventlog.Code]int{0: 6, 1: 6, 4: 1, 5: 5, 9: 1, 16: 1}},
		{"lsst_tiny_problems.dag.dagman.log", map[eventlog.Code]int{0: 1, 1: 1, 5: 1}},
		{"lsst_tiny_success.dag.nodes.log", map[eventlog.Code]int{0: 5, 1: 5, 4: 1, 5: 4, 9: 1, 16: 1}},
		{"lsst_test_pipelines_check_20240727T003507Z.dag.nodes.log", map[eventlog.Code]int{0: 5, 1: 5, 5: 5, 16: 1}},
		{"lsst_group_failed_1.dag.nodes.log", map[eventlog.Code]int{0: 25, 1: 25, 4: 1, 5: 24, 9: 1, 16: 4}},
		{"lsst_group_running_1.dag.nodes.log", map[eventlog.Code]int{0: 19, 1: 19, 5: 15, 16: 1}},
		{"lsst_noop_failed_1.dag.nodes.log", map[eventlog.Code]int{0: 29, 1: 28, 5: 29, 16: 1}},
		{"lsst_noop_running_1.dag.nodes.log", map[eventlog.Code]int{0: 20, 1: 19, 5: 9}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			evs, _ := readFile(t, realFile(t, tt.file), func(r *eventlog.Reader) { r.Strict = true })
			got := map[eventlog.Code]int{}
			for _, e := range evs {
				got[e.Code]++
			}
			if d := diff(tt.counts, got); d != "" {
				t.Errorf("counts per code (-want +got):\n%s", d)
			}
			checkBodies(t, evs)
			if tt.file == "htcondor_test_condor.log" {
				for c := eventlog.Code(0); c <= 20; c++ {
					if got[c] < 28 || got[c] > 53 {
						t.Errorf("code %v: %d events, SOURCES.md says 28–53", c, got[c])
					}
				}
			}
		})
	}
}

func TestRealLogDetails(t *testing.T) {
	evs, _ := readFile(t, realFile(t, "lsst_noop_failed_1.dag.nodes.log"), nil)
	// The DAGMan NOOP job (000.2147483647.001) has 000 then 005 and no 001.
	var noop []eventlog.Code
	for _, e := range evs {
		if e.Job == (eventlog.JobID{Cluster: 0, Proc: 2147483647, Subproc: 1}) {
			noop = append(noop, e.Code)
		}
	}
	if d := diff([]eventlog.Code{eventlog.Submit, eventlog.Terminated}, noop); d != "" {
		t.Errorf("NOOP job events (-want +got):\n%s", d)
	}

	evs, _ = readFile(t, realFile(t, "lsst_tiny_problems.dag.nodes.log"), nil)
	first := evs[0]
	// The file's first line: "000 (9229.000.000) 2025-02-13 11:59:47 Job submitted ...".
	if want := time.Date(2025, 2, 13, 11, 59, 47, 0, time.UTC); !first.Time.Equal(want) {
		t.Errorf("first event time %v, want %v", first.Time, want)
	}
	var rets []int
	for i := range evs {
		if evs[i].Code == eventlog.Terminated {
			ti, err := evs[i].TerminateInfo()
			if err != nil {
				t.Fatal(err)
			}
			if !ti.Normal {
				t.Errorf("line %d: want normal termination", evs[i].Line)
			}
			rets = append(rets, ti.ReturnValue)
		}
	}
	// Return values of the five 005 events in file order, from
	//   awk '/^[0-9][0-9][0-9] \(/{c=$1} /return value/{print c, $0}' lsst_tiny_problems.dag.nodes.log
	// (the 2 that SOURCES.md mentions belongs to the 016 POST script event).
	if d := diff([]int{0, 1, 0, 0, 0}, rets); d != "" {
		t.Errorf("return values (-want +got):\n%s", d)
	}
}

func TestHoldReleaseFixture(t *testing.T) {
	evs, r := readFile(t, "testdata/hold_release.log", nil)
	if r.Damaged() != 0 {
		t.Errorf("Damaged = %d", r.Damaged())
	}
	checkBodies(t, evs)
	var codes []eventlog.Code
	for _, e := range evs {
		codes = append(codes, e.Code)
	}
	want := []eventlog.Code{0, 28, 1, 40, 40, 40, 12, 28, 13, 1, 6, 5, 6, 0, 12, 9, 33, 33}
	if d := diff(want, codes); d != "" {
		t.Fatalf("codes (-want +got):\n%s", d)
	}
	hold, err := evs[6].HoldInfo()
	if err != nil {
		t.Fatal(err)
	}
	wantHold := eventlog.HoldInfo{
		Reason: "Error from slot1_3@node9.example.org: Job has gone over cgroup memory limit of 2048 megabytes. Last measured usage: 2301 megabytes.  Consider resubmitting with a higher request_memory.",
		Code:   21, Subcode: 102, HasCode: true,
	}
	if d := diff(wantHold, hold); d != "" {
		t.Errorf("HoldInfo (-want +got):\n%s", d)
	}
	rel, _ := evs[8].ReleaseInfo()
	if rel.Reason != "via condor_release (by user alice)" {
		t.Errorf("release reason %q", rel.Reason)
	}
	ex, _ := evs[2].ExecuteInfo()
	if ex.Slot != "slot1_3@node9.example.org" || len(ex.Props) != 2 || ex.Props[1] != (eventlog.Attr{Name: "Memory", Value: "2048"}) {
		t.Errorf("ExecuteInfo = %+v", ex)
	}
	var tr []eventlog.TransferInfo
	for _, i := range []int{3, 4, 5} {
		x, _ := evs[i].TransferInfo()
		tr = append(tr, x)
	}
	wantTr := []eventlog.TransferInfo{
		{Kind: eventlog.InputStarted, QueueingDelay: -1, Host: "<10.1.0.9:9618?addrs=10.1.0.9-9618&alias=node9.example.org&noUDP&sock=slot1_3_2_c>"},
		{Kind: eventlog.InputFinished, QueueingDelay: -1},
		{Kind: eventlog.InputQueued, QueueingDelay: 7 * time.Second},
	}
	if d := diff(wantTr, tr); d != "" {
		t.Errorf("TransferInfo (-want +got):\n%s", d)
	}
	ad, _ := evs[1].JobAdInfo()
	if ad.Trigger != eventlog.Submit || len(ad.Attrs) != 8 {
		t.Errorf("JobAdInfo = %+v", ad)
	}
	if v, ok := adValue(ad, "eventtime"); !ok || v != `"2024-03-05T10:00:00"` {
		t.Errorf("Get(eventtime) = %q, %v", v, ok)
	}
	img, _ := evs[10].ImageSizeInfo()
	if d := diff(eventlog.ImageSizeInfo{ImageSizeKB: 2400000, MemoryUsageMB: 2100, ResidentSetSizeKB: 2150000, ProportionalSetSizeKB: -1}, img); d != "" {
		t.Errorf("ImageSizeInfo (-want +got):\n%s", d)
	}
	term, _ := evs[11].TerminateInfo()
	nan := math.NaN()
	wantTerm := eventlog.TerminateInfo{
		Normal:       true,
		RunRemote:    eventlog.Usage{User: 39*time.Minute + 10*time.Second, System: 12 * time.Second},
		TotalRemote:  eventlog.Usage{User: 39*time.Minute + 10*time.Second, System: 12 * time.Second},
		RunBytesSent: 1024, RunBytesReceived: 4096, TotalBytesSent: 1024, TotalBytesReceived: 4096,
		Resources: []eventlog.Resource{
			{Name: "Cpus", Usage: 0.98, Request: 1, Allocated: 1},
			{Name: "Disk (KB)", Usage: 83, Request: 1, Allocated: 2048},
			{Name: "GPUs", Usage: nan, Request: nan, Allocated: 0},
			{Name: "Memory (MB)", Usage: 2100, Request: 4096, Allocated: 4096},
		},
		Notes: []string{"Job terminated of its own accord at 2024-03-05T12:00:00Z with exit-code 0."},
	}
	if d := diff(wantTerm, term, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("TerminateInfo (-want +got):\n%s", d)
	}
	ab, _ := evs[15].AbortInfo()
	if ab.Reason != "via condor_rm (by user bob)" {
		t.Errorf("abort reason %q", ab.Reason)
	}
	au, _ := evs[16].AttributeUpdateInfo()
	au2, _ := evs[17].AttributeUpdateInfo()
	if d := diff([]eventlog.AttributeUpdateInfo{
		{Name: "JobStatus", Old: "5", Value: "3", HasOld: true},
		{Name: "RemoveReason", Value: `"via condor_rm (by user bob)"`},
	}, []eventlog.AttributeUpdateInfo{au, au2}); d != "" {
		t.Errorf("AttributeUpdateInfo (-want +got):\n%s", d)
	}
}

func TestJobAdModes(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fold  bool
		codes []eventlog.Code
	}{
		{"keep", false, []eventlog.Code{0, 28, 1, 40, 40, 40, 12, 28, 13, 1, 6, 5, 6, 0, 12, 9, 33, 33}},
		{"fold", true, []eventlog.Code{0, 1, 40, 40, 40, 12, 13, 1, 6, 5, 6, 0, 12, 9, 33, 33}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			evs, _ := readFile(t, "testdata/hold_release.log", func(r *eventlog.Reader) { r.FoldJobAds = tt.fold })
			var codes []eventlog.Code
			for _, e := range evs {
				codes = append(codes, e.Code)
			}
			if d := diff(tt.codes, codes); d != "" {
				t.Fatalf("codes (-want +got):\n%s", d)
			}
			if !tt.fold {
				return
			}
			ad, err := evs[5].JobAdInfo() // the 012 with its folded 028
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := adValue(ad, "HoldReasonCode"); ad.Trigger != eventlog.Held || v != "21" {
				t.Errorf("folded ad = %+v", ad)
			}
			if evs[1].Ad != "" {
				t.Errorf("001 got an ad it should not: %q", evs[1].Ad)
			}
		})
	}
}

// adValue returns the named attribute's unparsed value, matching the name
// without regard to case as ClassAds do.
func adValue(ad eventlog.JobAdInfo, name string) (string, bool) {
	for _, a := range ad.Attrs {
		if strings.EqualFold(a.Name, name) {
			return a.Value, true
		}
	}
	return "", false
}

func TestGlobalLegacyFixture(t *testing.T) {
	evs, _ := readFile(t, "testdata/global_legacy.log", func(r *eventlog.Reader) { r.Year = 0 })
	checkBodies(t, evs)
	h, ok := eventlog.ParseGlobalHeader(evs[0])
	if !ok {
		t.Fatal("no global header")
	}
	wantH := eventlog.GlobalHeader{
		Ctime: time.Unix(1704060000, 0), ID: "schedd.1.1704060000", Sequence: 3, Events: 120,
		Offset: 23622, EventOffset: 120, MaxRotation: 5, CreatorName: "schedd@submit.example.org",
	}
	if d := diff(wantH, h); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	// ctime 1704060000 is 2023-12-31 22:00:00 UTC (date -u -d @1704060000,
	// GNU coreutils 9.1): the year comes from it
	// and rolls over at the December→January step.
	want := []time.Time{
		time.Date(2023, 12, 31, 22, 0, 0, 0, time.UTC),
		time.Date(2023, 12, 31, 23, 59, 58, 0, time.UTC),
		time.Date(2024, 1, 1, 0, 0, 3, 0, time.UTC),
		time.Date(2024, 1, 1, 0, 10, 0, 0, time.UTC),
		time.Date(2024, 1, 1, 0, 11, 0, 250e6, time.UTC),
		time.Date(2024, 1, 1, 0, 11, 30, 0, time.UTC),
		time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC),
	}
	var got []time.Time
	for _, e := range evs {
		got = append(got, e.Time)
	}
	if d := diff(want, got); d != "" {
		t.Errorf("times (-want +got):\n%s", d)
	}
	if evs[5].Time.Location() != time.UTC {
		t.Errorf("Z time has location %v", evs[5].Time.Location())
	}
	ev, _ := evs[3].EvictInfo()
	if ev.Code != 1006 || ev.Reason != "Startd vacated the claim" || ev.Terminate.RunRemote.User != 9*time.Minute+50*time.Second {
		t.Errorf("EvictInfo = %+v", ev)
	}
	term, _ := evs[6].TerminateInfo()
	if term.Normal || term.Signal != 9 || term.CoreFile != "/var/lib/condor/execute/dir_9/core.9" {
		t.Errorf("TerminateInfo = %+v", term)
	}
	dc, _ := evs[4].DisconnectInfo()
	if d := diff(eventlog.DisconnectInfo{Reason: "Socket between submit and execute hosts closed unexpectedly", StartdName: "slot1@node2.example.org", StartdAddr: "<10.1.0.2:9618>"}, dc); d != "" {
		t.Errorf("DisconnectInfo (-want +got):\n%s", d)
	}
	jobs := eventlog.Group("", evs)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1 (the header belongs to no job)", len(jobs))
	}
	if end, _ := jobs[0].End(); end != eventlog.TerminatedAbnormally {
		t.Errorf("End = %v", end)
	}
}

func TestYearSources(t *testing.T) {
	const log = "000 (001.000.000) 12/30 10:00:00 Job submitted from host: <h>\n...\n001 (001.000.000) 01/02 10:00:00 Job executing on host: <h>\n...\n"
	loc := time.FixedZone("X", 3600)
	tests := []struct {
		name     string
		year     int
		fileTime time.Time
		want     [2]int
	}{
		{"caller", 2019, time.Time{}, [2]int{2019, 2020}},
		{"file time after new year", 0, time.Date(2021, 1, 5, 0, 0, 0, 0, loc), [2]int{2020, 2021}},
		{"file time same year", 0, time.Date(2021, 12, 31, 0, 0, 0, 0, loc), [2]int{2021, 2022}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eventlog.NewReader(strings.NewReader(log))
			r.Year, r.Location = tt.year, loc
			r.SetFileTime(tt.fileTime)
			evs, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			got := [2]int{evs[0].Time.Year(), evs[1].Time.Year()}
			if got != tt.want || evs[0].Time.Location() != loc {
				t.Errorf("years %v in %v, want %v", got, evs[0].Time.Location(), tt.want)
			}
		})
	}
}

func TestCRLF(t *testing.T) {
	evs, _ := readFile(t, "testdata/crlf.log", nil)
	lf, _ := readFile(t, "testdata/hold_release.log", nil)
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	if d := diff(lf[:3], evs); d != "" {
		t.Errorf("CRLF events differ from LF ones (-lf +crlf):\n%s", d)
	}
}

// TestByteOrderMark: a log saved with a UTF-8 byte order mark (by a
// Windows editor, say) reads as the same log without it, classic and JSON.
func TestByteOrderMark(t *testing.T) {
	for _, name := range []string{"testdata/hold_release.log", "testdata/events.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		read := func(b []byte) []eventlog.Event {
			r := eventlog.NewReader(bytes.NewReader(b))
			r.Location = time.UTC
			evs, err := r.ReadAll()
			if err != nil || r.Damaged() > 0 {
				t.Fatalf("%s: %v, %d damaged", name, err, r.Damaged())
			}
			return evs
		}
		want := read(b)
		if d := diff(want, read(append([]byte("\ufeff"), b...))); d != "" || len(want) == 0 {
			t.Errorf("%s with a byte order mark reads differently (-without +with):\n%s", name, d)
		}
	}
}

// TestCompressed: a gzip-compressed log (a rotated EventLog.1.gz) reads
// as the log itself, classic and JSON; a truncated one is an error naming
// the file after the events before the cut; bzip2, xz and zstd are refused
// with ErrCompressed rather than read as one damaged event.
func TestCompressed(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"testdata/hold_release.log", "testdata/events.json"} {
		plain, _ := readFile(t, name, nil)
		b, _ := os.ReadFile(name)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		gz := filepath.Join(dir, filepath.Base(name)+".gz")
		if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := readFile(t, gz, nil)
		if d := diff(plain, got); d != "" || len(plain) == 0 {
			t.Errorf("%s gzip-compressed reads differently (-plain +gz):\n%s", name, d)
		}
		cut := filepath.Join(dir, "cut.gz")
		if err := os.WriteFile(cut, z.Bytes()[:z.Len()*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(cut)
		r := eventlog.NewReader(f)
		r.File, r.Location, r.Year = cut, time.UTC, 2024
		_, err := r.ReadAll()
		f.Close()
		if err == nil || !strings.Contains(err.Error(), cut+": gzip-compressed log: unexpected EOF") {
			t.Errorf("truncated gzip copy of %s: %v", name, err)
		}
	}
	for name, magic := range map[string]string{"bzip2": "BZh91AY&SY", "xz": "\xfd7zXZ\x00\x00", "zstd": "\x28\xb5\x2f\xfd\x00"} {
		r := eventlog.NewReader(strings.NewReader(magic + strings.Repeat("x", 100)))
		r.Lenient = true
		if _, err := r.ReadAll(); !errors.Is(err, eventlog.ErrCompressed) {
			t.Errorf("%s: %v, want ErrCompressed", name, err)
		}
	}
}

func TestJSON(t *testing.T) {
	evs, _ := readFile(t, "testdata/events.json", nil)
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	if evs[0].Code != eventlog.Submit || evs[0].Job != (eventlog.JobID{Cluster: 42}) || !evs[0].Time.Equal(time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("first event %+v", evs[0])
	}
	h, err := evs[1].HoldInfo()
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(eventlog.HoldInfo{Reason: "via condor_hold (by user alice)", Code: 1, HasCode: true}, h); d != "" {
		t.Errorf("HoldInfo (-want +got):\n%s", d)
	}
	// Objects one after the other, without an array, read the same.
	f, _ := os.ReadFile("testdata/events.json")
	s := strings.TrimSpace(string(f))
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	s = strings.Replace(s, "\n,\n", "\n", 1)
	r := eventlog.NewReader(strings.NewReader(s))
	r.Location = time.UTC
	evs2, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(len(evs), len(evs2)); d != "" {
		t.Errorf("stream of objects: %s", d)
	}
}

func TestXMLRefused(t *testing.T) {
	r := eventlog.NewReader(strings.NewReader(`<?xml version="1.0"?>` + "\n<c><a n=\"MyType\"><s>SubmitEvent</s></a></c>\n"))
	_, err := r.Read()
	var pe *eventlog.ParseError
	if !errors.As(err, &pe) || !errors.Is(err, eventlog.ErrXML) {
		t.Fatalf("err = %v, want a *ParseError wrapping ErrXML", err)
	}
	if _, err := r.Read(); err != io.EOF {
		t.Errorf("after refusing XML, Read = %v, want io.EOF", err)
	}
}

func TestBadInput(t *testing.T) {
	const ok1 = "000 (001.000.000) 2024-01-01 00:00:00 Job submitted from host: <h>\n...\n"
	const ok2 = "001 (001.000.000) 2024-01-01 00:01:00 Job executing on host: <h>\n...\n"
	tests := []struct {
		name     string
		in       string
		strict   bool
		wantErr  error
		wantLine int
		wantCol  int
		// before are the events Read returns before the error, after those
		// it returns after it.
		before, after int
	}{
		{"garbage line", ok1 + "this is not an event\n" + ok2, false, eventlog.ErrHeader, 3, 1, 1, 1},
		{"bad job id", ok1 + "001 (001.x00.000) 2024-01-01 00:01:00 x\n...\n" + ok2, false, eventlog.ErrHeader, 3, 10, 1, 1},
		{"truncated last event", ok1 + "001 (001.000.000) 2024-01-01 00:01:00 Job executing on host: <h>\n\tSlotName: s\n", false, eventlog.ErrTruncated, 4, 0, 1, 0},
		{"truncated header line", ok1 + "001 (001.000.000) 2024-01-0", false, eventlog.ErrHeader, 3, 19, 1, 0},
		{"unknown code strict", ok1 + "077 (001.000.000) 2024-01-01 00:01:00 future\n...\n" + ok2, true, eventlog.ErrUnknownCode, 3, 1, 1, 1},
		{"impossible month", ok1 + "001 (001.000.000) 13/01 00:01:00 x\n...\n" + ok2, false, eventlog.ErrDate, 3, 19, 1, 1},
		{"impossible day", ok1 + "001 (001.000.000) 2023-02-29 00:01:00 x\n...\n" + ok2, false, eventlog.ErrDate, 3, 19, 1, 1},
		{"impossible hour", ok1 + "001 (001.000.000) 2023-02-01 25:01:00 x\n...\n" + ok2, false, eventlog.ErrDate, 3, 19, 1, 1},
		// Unix nanoseconds, which jobs and tensors compute with, end in 2262.
		{"year beyond 2261", ok1 + "001 (001.000.000) 2999-01-01 00:01:00 x\n...\n" + ok2, false, eventlog.ErrDate, 3, 19, 1, 1},
		{"year before 1970", ok1 + "001 (001.000.000) 1969-12-31 23:59:59 x\n...\n" + ok2, false, eventlog.ErrDate, 3, 19, 1, 1},
		{"missing terminator", ok1 + "001 (001.000.000) 2024-01-01 00:01:00 Job executing on host: <h>\n" + ok2, false, eventlog.ErrMissingTerminator, 4, 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eventlog.NewReader(strings.NewReader(tt.in))
			r.Strict = tt.strict
			var before, after int
			var perr *eventlog.ParseError
			for {
				_, err := r.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					if perr != nil {
						t.Fatalf("second error %v", err)
					}
					if !errors.As(err, &perr) {
						t.Fatalf("error %v is not a *ParseError", err)
					}
					continue
				}
				if perr == nil {
					before++
				} else {
					after++
				}
			}
			if perr == nil {
				t.Fatal("no error")
			}
			if !errors.Is(perr, tt.wantErr) || perr.Line != tt.wantLine || perr.Column != tt.wantCol {
				t.Errorf("error %v (line %d column %d), want %v at line %d column %d", perr, perr.Line, perr.Column, tt.wantErr, tt.wantLine, tt.wantCol)
			}
			if before != tt.before || after != tt.after {
				t.Errorf("events before/after the error %d/%d, want %d/%d", before, after, tt.before, tt.after)
			}

			// ReadAll returns the events before the error with it.
			evs, err := eventlog.NewReader(strings.NewReader(tt.in)).ReadAll()
			if tt.strict {
				r := eventlog.NewReader(strings.NewReader(tt.in))
				r.Strict = true
				evs, err = r.ReadAll()
			}
			if len(evs) != tt.before || !errors.Is(err, tt.wantErr) {
				t.Errorf("ReadAll = %d events, %v", len(evs), err)
			}

			// Lenient mode skips the damaged event and counts it.
			lr := eventlog.NewReader(strings.NewReader(tt.in))
			lr.Lenient, lr.Strict = true, tt.strict
			evs, err = lr.ReadAll()
			if err != nil || len(evs) != tt.before+tt.after || lr.Damaged() != 1 {
				t.Errorf("lenient: %d events, %d damaged, err %v; want %d, 1, nil", len(evs), lr.Damaged(), err, tt.before+tt.after)
			}
		})
	}
}

func TestUnknownCodeKept(t *testing.T) {
	in := "077 (001.000.000) 2024-01-01 00:01:00 Some future event\n\tdetail\n...\n"
	evs, err := eventlog.NewReader(strings.NewReader(in)).ReadAll()
	if err != nil || len(evs) != 1 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	if evs[0].Code.Known() || evs[0].Code.String() != "ULOG_UNKNOWN_77" || evs[0].Body != "Some future event\n\tdetail\n" {
		t.Errorf("event %+v (%v)", evs[0], evs[0].Code)
	}
}

func TestCodeNames(t *testing.T) {
	for c := eventlog.Code(-1); c < 200; c++ {
		known := (c >= 0 && c <= 47) || (c >= 100 && c <= 111)
		if c.Known() != known {
			t.Errorf("%d.Known() = %v", c, c.Known())
		}
		if known && strings.HasPrefix(c.String(), "ULOG_UNKNOWN") {
			t.Errorf("%d has no name", c)
		}
	}
	if eventlog.Held.String() != "ULOG_JOB_HELD" || eventlog.EPResourceMend.String() != "ULOG_EP_RESOURCE_MEND" || eventlog.CommonFiles.String() != "ULOG_COMMON_FILES" {
		t.Error("wrong names")
	}
}

func TestHeaderForms(t *testing.T) {
	tests := []struct {
		line string
		job  eventlog.JobID
		time time.Time
		body string
	}{
		{"000 (-01.-01.-01) 2024-02-29 23:59:59 x", eventlog.JobID{Cluster: -1, Proc: -1, Subproc: -1}, time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC), "x\n"},
		{"000 (12345678.2147483647.001) 2024-02-29T01:02:03.5Z x y", eventlog.JobID{Cluster: 12345678, Proc: 2147483647, Subproc: 1}, time.Date(2024, 2, 29, 1, 2, 3, 5e8, time.UTC), "x y\n"},
		{"000 (1.2.3) 2024-02-29 01:02:03+02:00 ", eventlog.JobID{Cluster: 1, Proc: 2, Subproc: 3}, time.Date(2024, 2, 28, 23, 2, 3, 0, time.UTC), "\n"},
		{"008 (001.000.000) 03/04 05:06:07.123", eventlog.JobID{Cluster: 1}, time.Date(2024, 3, 4, 5, 6, 7, 123e6, time.UTC), "\n"},
	}
	for _, tt := range tests {
		r := eventlog.NewReader(strings.NewReader(tt.line + "\n...\n"))
		r.Year, r.Location = 2024, time.UTC
		ev, err := r.Read()
		if err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		if ev.Job != tt.job || !ev.Time.Equal(tt.time) || ev.Body != tt.body {
			t.Errorf("%q: got %v %v %q", tt.line, ev.Job, ev.Time, ev.Body)
		}
	}
}

func TestAllIterator(t *testing.T) {
	in := "000 (001.000.000) 2024-01-01 00:00:00 a\n...\ngarbage\n000 (002.000.000) 2024-01-01 00:00:00 b\n...\n"
	var n, errs int
	for _, err := range eventlog.NewReader(strings.NewReader(in)).All() {
		if err != nil {
			errs++
			continue
		}
		n++
	}
	if n != 2 || errs != 1 {
		t.Errorf("All: %d events, %d errors; want 2, 1", n, errs)
	}
}

func TestAccessorWrongCodePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("HoldInfo on a submit event did not panic")
		}
	}()
	e := eventlog.Event{Code: eventlog.Submit}
	e.HoldInfo()
}

func TestInputUnchanged(t *testing.T) {
	evs, _ := readFile(t, "testdata/hold_release.log", nil)
	orig := append([]eventlog.Event(nil), evs...)
	jobs := eventlog.Group("a", evs)
	_, _ = eventlog.Builder{J: 2, Pad: true}.Build(jobs)
	if d := diff(orig, evs); d != "" {
		t.Errorf("events changed (-before +after):\n%s", d)
	}
}

// TestReadInChunks: the fixtures and the real logs, whole, cut inside an
// event, and damaged (a "..." line dropped, a line of garbage), give the
// same events, lines and errors read line by line, one byte at a time and
// in small chunks as read whole: a partial event carried over from one
// input chunk to the next is read as it would be in one piece.
func TestReadInChunks(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.log")
	if dir, err := pubdata.Dir("htcondor"); err == nil {
		real, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		paths = append(paths, real...)
	} else {
		t.Logf("real logs absent (%v): fixtures only", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		damaged := bytes.Replace(data, []byte("\n...\n"), []byte("\n"), 1)
		damaged = bytes.Replace(damaged, []byte("\n...\n"), []byte("\n...\n#garbage\n"), 2)
		for name, in := range map[string][]byte{"whole": data, "cut": data[:len(data)*2/3], "damaged": damaged} {
			if d := traceDiff(in, len(in)+2); d != "" {
				t.Errorf("%s, %s: %s", filepath.Base(p), name, d)
			}
		}
	}
}

func TestLongLines(t *testing.T) {
	const ok = "000 (001.000.000) 2024-01-01 00:00:00 Job submitted from host: <h>\n...\n"
	long := strings.Repeat("x", 600<<10) // beyond the 512 KiB read in place
	in := ok + "028 (001.000.000) 2024-01-01 00:00:00 Job ad information event triggered.\nBig = \"" + long + "\"\n...\n" + ok
	evs, err := eventlog.NewReader(strings.NewReader(in)).ReadAll()
	if err != nil || len(evs) != 3 || len(evs[1].Body) < 600<<10 {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	if testing.Short() {
		t.Skip("the 16 MiB line case allocates 17 MB")
	}
	huge := strings.Repeat("y", 17<<20)
	in = ok + "008 (001.000.000) 2024-01-01 00:00:00 " + huge + "\nmore\n...\n" + ok
	r := eventlog.NewReader(strings.NewReader(in))
	var codes []string
	for _, err := range r.All() {
		if err != nil {
			codes = append(codes, "error")
			if !errors.Is(err, eventlog.ErrLineTooLong) {
				t.Errorf("err = %v, want ErrLineTooLong", err)
			}
			continue
		}
		codes = append(codes, "event")
	}
	if d := diff([]string{"event", "error", "event"}, codes); d != "" {
		t.Errorf("sequence (-want +got):\n%s", d)
	}
}

// TestClassicEventSizeCap: Options.MaxEventSize bounds a classic event's
// body as it bounds a JSON event (many lines, each under the line limit):
// the event is a ParseError wrapping ErrEventTooLarge, or counted in
// Lenient mode, and the next event is read.
func TestClassicEventSizeCap(t *testing.T) {
	const ok = "000 (003.000.000) 2023-01-01 00:21:00 Job submitted from host: <h>\n...\n"
	big := "012 (002.000.000) 2023-01-01 00:20:00 Job was held.\n" +
		strings.Repeat("\t"+strings.Repeat("x", 100)+"\n", 200) + "...\n"
	for _, lenient := range []bool{false, true} {
		t.Run(fmt.Sprintf("lenient=%v", lenient), func(t *testing.T) {
			r := eventlog.NewReader(strings.NewReader(ok + big + ok))
			r.SetMaxEventSize(1000)
			r.Lenient = lenient
			var got []string
			for ev, err := range r.All() {
				if err != nil {
					var pe *eventlog.ParseError
					if !errors.Is(err, eventlog.ErrEventTooLarge) || !errors.As(err, &pe) || pe.Line != 3 {
						t.Errorf("err = %v, want a ParseError at line 3 wrapping ErrEventTooLarge", err)
					}
					got = append(got, "error")
					continue
				}
				got = append(got, fmt.Sprintf("%s@%d", ev.Job, ev.Line))
			}
			want := []string{"003.000.000@1", "error", "003.000.000@205"}
			if lenient {
				want = []string{"003.000.000@1", "003.000.000@205"}
				if r.Damaged() != 1 {
					t.Errorf("Damaged = %d, want 1", r.Damaged())
				}
			}
			if d := diff(want, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
	// The default cap keeps the ordinary big events (a 20 KB body) whole.
	evs, err := eventlog.NewReader(strings.NewReader(big)).ReadAll()
	if err != nil || len(evs) != 1 {
		t.Fatalf("default cap: %d events, %v", len(evs), err)
	}
}

// TestJSONJobAdOrder: a JSON 028 event's attributes come sorted by name,
// so the same log always gives the same JobAdInfo (Go's map order is
// random from one range to the next).
func TestJSONJobAdOrder(t *testing.T) {
	const in = `{"EventTypeNumber": 28, "Cluster": 7, "Proc": 0, "Subproc": 0, "EventTime": "2024-05-01T08:00:00Z",
 "TriggerEventTypeNumber": 12, "HoldReasonCode": 21, "JobStatus": 5, "Owner": "alice", "Cmd": "/bin/run",
 "RequestMemory": 2048, "Iwd": "/home/alice", "ClusterId": 7, "ProcId": 0, "QDate": 1714550000}`
	var first []eventlog.Attr
	for i := range 20 {
		r := eventlog.NewReader(strings.NewReader(in))
		ev, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		ad, err := ev.JobAdInfo()
		if err != nil {
			t.Fatal(err)
		}
		if ad.Trigger != eventlog.Held {
			t.Errorf("Trigger = %v", ad.Trigger)
		}
		if !slices.IsSortedFunc(ad.Attrs, func(a, b eventlog.Attr) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatalf("attributes not sorted by name: %v", ad.Attrs)
		}
		if i == 0 {
			first = ad.Attrs
		} else if d := diff(first, ad.Attrs); d != "" {
			t.Fatalf("read %d differs from read 0 (-first +now):\n%s", i, d)
		}
	}
	if v, ok := adValue(eventlog.JobAdInfo{Attrs: first}, "holdreasoncode"); !ok || v != "21" {
		t.Errorf("Get(holdreasoncode) = %q, %v", v, ok)
	}
}
