package regime

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/crosscluster/crosscluster/internal/pubdata"
)

const telemetryCSV = `time,submit_time,start_time,end_time,timelimit,nhosts,ncores,queue,host,jid,username,exitcode,cluster,value_gpu,value_memused
2023-02-01 00:05:00,2023-02-01 00:00:00,2023-02-01 00:01:00,2023-02-01 01:01:00,7200,1,16,gpu,h1,J1,u1,COMPLETED,anvil,55,100.5
2023-02-01 00:10:00,2023-02-01 00:00:00,2023-02-01 00:01:00,2023-02-01 01:01:00,7200,1,16,gpu,h1,J1,u1,COMPLETED,anvil,,120
2023-02-01 00:10:00,2023-02-01T00:00:00Z,2023-02-01 00:02:00,2023-02-01 00:03:00,NaN,1,4,shared,h2,J2,u2,FAILED,,,
`

func TestReadCSV(t *testing.T) {
	tab, err := readCSV(strings.NewReader(telemetryCSV), "t.csv", "fallback")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"gpu", "memused"}, tab.Metrics); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
	if len(tab.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(tab.Rows))
	}
	if tab.Rows[2].Cluster != "fallback" || tab.Rows[0].Cluster != "anvil" {
		t.Errorf("clusters %q %q", tab.Rows[0].Cluster, tab.Rows[2].Cluster)
	}
	if !math.IsNaN(tab.Rows[1].Values[0]) || !math.IsNaN(tab.Rows[2].Timelimit) {
		t.Error("empty and NaN fields are not missing")
	}
	jobs := aggregate(tab, nil)
	if g := metric(jobs[0], "gpu"); g != (Agg{Cnt: 1, Sum: 55, Max: 55}) {
		t.Errorf("J1 gpu = %+v", g)
	}
	if rt, _ := jobs[0].Feature("runtime_sec"); rt != 3600 {
		t.Errorf("J1 runtime_sec = %v", rt)
	}
}

func TestReadCSVErrors(t *testing.T) {
	header := "jid,submit_time,ncores,value_gpu\n"
	cases := []struct {
		name, in   string
		line       int
		column     string
		wantSentry error
	}{
		{"empty file", "", 0, "", ErrMissingColumn},
		{"no jid column", "job,ncores\nx,1\n", 1, "", ErrMissingColumn},
		{"bad number", header + "a,2023-01-01 00:00:00,4,1\nb,2023-01-01 00:00:00,four,1\n", 3, "ncores", ErrBadValue},
		{"bad metric", header + "a,2023-01-01 00:00:00,4,x\n", 2, "value_gpu", ErrBadValue},
		{"bad time", header + "a,yesterday,4,1\n", 2, "submit_time", ErrBadValue},
		{"ragged line", header + "a,2023-01-01 00:00:00,4\n", 2, "", ErrBadValue},
		{"bare quote", header + "a,\"x,4,1\n", 2, "", ErrBadValue},
		{"empty job id", header + ",2023-01-01 00:00:00,4,1\n", 2, "jid", ErrBadValue},
		{"duplicate column", "jid,JID \n", 1, "JID", ErrBadValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readCSV(strings.NewReader(c.in), "in.csv", "x")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.File != "in.csv" || pe.Line != c.line || pe.column != c.column {
				t.Errorf("error at %s:%d column %q, want in.csv:%d column %q (%v)", pe.File, pe.Line, pe.column, c.line, c.column, err)
			}
			if !errors.Is(err, c.wantSentry) {
				t.Errorf("error %v does not wrap %v", err, c.wantSentry)
			}
		})
	}
}

// pqRow is a FRESCO-style row as pandas/Arrow would write it.
type pqRow struct {
	Jid         string    `parquet:"jid"`
	Cluster     string    `parquet:"cluster"`
	Queue       string    `parquet:"queue"`
	SubmitTime  time.Time `parquet:"submit_time,timestamp(microsecond)"`
	StartTime   time.Time `parquet:"start_time,timestamp(millisecond)"`
	EndTime     string    `parquet:"end_time"`
	Timelimit   int64     `parquet:"timelimit"`
	Ncores      int32     `parquet:"ncores"`
	ValueGPU    *float64  `parquet:"value_gpu,optional"`
	ValueMemory float32   `parquet:"value_memused"`
}

func TestReadParquet(t *testing.T) {
	g := 42.5
	t0 := time.Date(2023, 2, 1, 0, 0, 0, 0, time.UTC)
	rows := []pqRow{
		{Jid: "J1", Cluster: "anvil", Queue: "gpu", SubmitTime: t0, StartTime: t0.Add(90 * time.Second),
			EndTime: "2023-02-01 01:01:30", Timelimit: 7200, Ncores: 16, ValueGPU: &g, ValueMemory: 100.5},
		{Jid: "J1", Cluster: "anvil", Queue: "gpu", SubmitTime: t0, StartTime: t0.Add(90 * time.Second),
			EndTime: "2023-02-01 01:01:30", Timelimit: 7200, Ncores: 16, ValueGPU: nil, ValueMemory: 120},
		{Jid: "J2", Queue: "shared", SubmitTime: t0, StartTime: t0.Add(time.Hour), EndTime: "",
			Timelimit: 60, Ncores: 1, ValueMemory: 1},
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	tab, err := readParquet(bytes.NewReader(data), int64(len(data)), "t.parquet", "conte")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"gpu", "memused"}, tab.Metrics); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
	jobs := aggregate(tab, nil)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	type summary struct {
		ID, Cluster, Partition string
		Runtime, Queue, NCores float64
		GPU, Mem               Agg
	}
	sum := func(j Job) summary {
		rt, _ := j.Feature("runtime_sec")
		q, _ := j.Feature("queue_time_sec")
		return summary{j.ID, j.Cluster, j.Partition, rt, q, j.NCores, metric(j, "gpu"), metric(j, "memused")}
	}
	got := []summary{sum(jobs[0]), sum(jobs[1])}
	want := []summary{
		{"J1", "anvil", "gpu", 3600, 90, 16, Agg{Cnt: 1, Sum: 42.5, Max: 42.5}, Agg{Cnt: 2, Sum: 220.5, Max: 120}},
		{"J2", "conte", "shared", math.NaN(), 3600, 1, Agg{Sum: math.NaN(), Max: math.NaN()}, Agg{Cnt: 1, Sum: 1, Max: 1}},
	}
	if d := cmp.Diff(want, got, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("jobs (-want +got):\n%s", d)
	}

	t.Run("corrupt", func(t *testing.T) {
		for _, cut := range []int{0, 4, len(data) / 2, len(data) - 9, len(data) - 1} {
			bad := bytes.Clone(data[:cut])
			if _, err := readParquet(bytes.NewReader(bad), int64(len(bad)), "cut.parquet", ""); err == nil {
				t.Errorf("truncated at %d: no error", cut)
			} else if pe := (*ParseError)(nil); !errors.As(err, &pe) || pe.File != "cut.parquet" {
				t.Errorf("truncated at %d: %v is not a *ParseError naming the file", cut, err)
			}
		}
		flipped := bytes.Clone(data)
		for i := 8; i < len(flipped)-8; i += 7 {
			flipped[i] ^= 0x5a
		}
		if _, err := readParquet(bytes.NewReader(flipped), int64(len(flipped)), "flip.parquet", ""); err == nil {
			t.Log("flipped bytes were still readable (allowed; the point is no panic)")
		}
	})
	t.Run("bad value row", func(t *testing.T) {
		type badRow struct {
			Jid    string `parquet:"jid"`
			Ncores string `parquet:"ncores"`
		}
		var b bytes.Buffer
		if err := parquet.Write(&b, []badRow{{"a", "4"}, {"b", "four"}}); err != nil {
			t.Fatal(err)
		}
		_, err := readParquet(bytes.NewReader(b.Bytes()), int64(b.Len()), "bad.parquet", "")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || pe.column != "ncores" || !errors.Is(err, ErrBadValue) {
			t.Errorf("got %v, want row 2 column ncores ErrBadValue", err)
		}
	})
}

// TestReadParquetLegacyTimes checks the two time encodings besides INT64
// TIMESTAMP: INT96 (Spark, Impala: nanoseconds of the day, then the Julian
// day, per the Parquet format's description of the deprecated type) and
// INT32 DATE (days since 1970-01-01). Before they were decoded, both came
// back as missing or as wrong Unix seconds without an error.
func TestReadParquetLegacyTimes(t *testing.T) {
	type legacyRow struct {
		Jid    string           `parquet:"jid"`
		Submit int32            `parquet:"submit_time,date"`
		Start  deprecated.Int96 `parquet:"start_time"`
		End    string           `parquet:"end_time"`
	}
	nanos := int64(90 * time.Second)
	day := uint32(julianUnixEpoch + 19389) // 2023-02-01 is day 19389 of the Unix epoch
	rows := []legacyRow{{Jid: "J1", Submit: 19389, Start: deprecated.Int96{uint32(nanos), uint32(nanos >> 32), day},
		End: "2023-02-01 01:01:30"}}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	tab, err := readParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "legacy.parquet", "spark")
	if err != nil {
		t.Fatal(err)
	}
	r := tab.Rows[0]
	want := []time.Time{time.Date(2023, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2023, 2, 1, 0, 1, 30, 0, time.UTC)}
	if d := cmp.Diff(want, []time.Time{r.Submit, r.Start}); d != "" {
		t.Errorf("submit (DATE), start (INT96) (-want +got):\n%s", d)
	}
}

// TestReadParquetHugeFooterLength: a 12-byte file whose footer length says
// 4 GiB must be rejected before anything allocates that much (parquet-go
// allocates the footer before checking its length; the fuzzer's workers
// stalled zeroing such buffers).
func TestReadParquetHugeFooterLength(t *testing.T) {
	data := []byte("PAR1\xff\xff\xff\xffPAR1")
	// maxAlloc bounds what reading a 12-byte file may allocate; the
	// unchecked footer was 4 GiB.
	const maxAlloc = 1 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readParquet(bytes.NewReader(data), int64(len(data)), "huge.parquet", "")
	runtime.ReadMemStats(&after)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != "huge.parquet" || !errors.Is(err, ErrBadValue) {
		t.Errorf("got %v, want a *ParseError wrapping ErrBadValue", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > maxAlloc {
		t.Errorf("allocated %d bytes for a 12-byte file", got)
	}
}

func readStampede(t testing.TB, name string) []Job {
	t.Helper()
	path := filepath.Join(pubdata.Need(t, "fresco"), name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := ReadStampede(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func TestReadStampedeFixture(t *testing.T) {
	feb := readStampede(t, "stampede_feb_2018_job_accounting.csv")
	mar := readStampede(t, "stampede_mar_2018_job_accounting.csv")
	// row counts and the 20 zero-node CANCELLED jobs in March are stated in SOURCES.md.
	if len(feb) != 2326 || len(mar) != 820 {
		t.Fatalf("rows: feb %d, mar %d; SOURCES.md says 2326 and 820", len(feb), len(mar))
	}
	zero := 0
	for _, j := range mar {
		if j.NHosts == 0 {
			zero++
		}
	}
	if zero != 20 {
		t.Errorf("March jobs with nnodes 0: %d, SOURCES.md says 20", zero)
	}
	// First February row: walltime 240 min, 02/01/2018 00:19:08 → 00:33:11.
	j := feb[0]
	if j.ID != "jobID8717175" || j.TimelimitSec != 240*60 || j.NCores != 16 || j.Partition != "QUEUE9" || j.ExitStatus != "CANCELLED" {
		t.Errorf("first job = %+v", j)
	}
	if rt, _ := j.Feature("runtime_sec"); rt != 14*60+3 {
		t.Errorf("first job runtime_sec = %v, want 843", rt)
	}
	safe := safeFeatures(nil, feb, mar)
	if d := cmp.Diff(JobFeatures(), safe); d != "" {
		t.Errorf("safe features (-want +got):\n%s", d)
	}
}

func TestReadStampedeEdgeCases(t *testing.T) {
	const header = "jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus\n"
	// The US DST change at 2018-03-11 02:00 local: naive arithmetic gives 2 h.
	in := header + "j1,u,a,n,q,60,COMPLETED,03/11/2018 01:00:00,03/11/2018 03:00:00,03/11/2018 00:30:00,1,16\n" +
		"j2,u,a,n,q,60,CANCELLED,12/31/1969 19:00:00,03/11/2018 03:00:00,03/11/2018 00:30:00,0,16\n"
	jobs, err := ReadStampede(strings.NewReader(in), "dst.csv")
	if err != nil {
		t.Fatal(err)
	}
	if rt, _ := jobs[0].Feature("runtime_sec"); rt != 7200 {
		t.Errorf("runtime across DST = %v, want 7200 (naive)", rt)
	}
	if rt, _ := jobs[1].Feature("runtime_sec"); !math.IsNaN(rt) || !jobs[1].Start.IsZero() {
		t.Errorf("sentinel start: runtime %v, start %v; want missing", rt, jobs[1].Start)
	}
	for name, bad := range map[string]struct {
		in     string
		line   int
		column string
	}{
		"missing column": {"jobID,queue\nx,y\n", 1, ""},
		"bad walltime":   {header + "j1,u,a,n,q,sixty,COMPLETED,03/11/2018 01:00:00,03/11/2018 03:00:00,03/11/2018 00:30:00,1,16\n", 2, "walltime"},
		"bad end":        {header + "j1,u,a,n,q,60,COMPLETED,03/11/2018 01:00:00,13/45/2018 03:00:00,03/11/2018 00:30:00,1,16\n", 2, "end"},
		"short line":     {header + "j1,u,a\n", 2, ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadStampede(strings.NewReader(bad.in), "bad.csv")
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != bad.line || pe.column != bad.column || pe.File != "bad.csv" {
				t.Errorf("got %v, want bad.csv line %d column %q", err, bad.line, bad.column)
			}
		})
	}
}

// FuzzReadCSV: no input panics, every error is a *ParseError wrapping a
// sentinel, and the streaming reader gives the jobs that reading every row
// and aggregating them gives. Seeds: the written fixture, synthetic FRESCO
// telemetry, the same as a spreadsheet saves it, and the public Stampede
// months with FRESCO's column names.
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte(telemetryCSV))
	f.Add([]byte("jid\n\"unterminated\n"))
	f.Add([]byte("jid,value_\nx,1e400\n"))
	synthetic := syntheticCSV(f, 1, 9) // small: the engine minimises each new input, at a cost that grows with its size
	f.Add(synthetic)
	f.Add(excelStyle(f, synthetic))
	if dir, err := pubdata.Dir("fresco"); err == nil {
		for _, name := range []string{"stampede_feb_2018_job_accounting.csv", "stampede_mar_2018_job_accounting.csv"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				f.Add(stampedeAsTelemetry(b[:min(len(b), 2000)]))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := readCSV(bytes.NewReader(data), "fuzz.csv", "c")
		jt, jerr := ReadJobsCSV(bytes.NewReader(data), "fuzz.csv", ReadConfig{Cluster: "c", Units: DefaultUnits()})
		if (err == nil) != (jerr == nil) {
			t.Fatalf("readCSV: %v; ReadJobsCSV: %v", err, jerr)
		}
		if err != nil {
			checkFuzzError(t, err)
			checkFuzzError(t, jerr)
			return
		}
		for _, r := range tab.Rows {
			if len(r.Values) != len(tab.Metrics) {
				t.Fatalf("row has %d values for %d metrics", len(r.Values), len(tab.Metrics))
			}
		}
		if d := cmp.Diff(aggregate(tab, DefaultUnits()), jt.Jobs, cmpopts.EquateNaNs()); d != "" {
			t.Fatalf("jobs (-aggregate(readCSV) +ReadJobsCSV):\n%s", d)
		}
	})
}

// checkFuzzError fails unless err is a *ParseError wrapping one of the
// readers' sentinels, with the package prefix once.
func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *ParseError", err)
	}
	if !errors.Is(err, ErrBadValue) && !errors.Is(err, ErrMissingColumn) {
		t.Fatalf("error %v wraps no sentinel", err)
	}
	// One prefix: the message starts with it and what the ParseError wraps
	// adds no other (the input itself may hold any text, "regime: " too).
	var inner *ParseError
	if !strings.HasPrefix(err.Error(), "regime: ") || errors.As(pe.Err, &inner) || strings.HasPrefix(pe.Err.Error(), "regime: ") {
		t.Fatalf("error %q: the prefix is not there once", err)
	}
}

func FuzzReadStampede(f *testing.F) {
	if dir, err := pubdata.Dir("fresco"); err == nil {
		if b, err := os.ReadFile(filepath.Join(dir, "stampede_mar_2018_job_accounting.csv")); err == nil {
			f.Add(b[:min(len(b), 2000)])
		}
	}
	f.Add([]byte("jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus\nj,u,a,n,q,1,C,,,,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		IsStampede(data) // no panic
		_, err := ReadStampede(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
		}
	})
}

// FuzzReadParquet: no input panics, every error is a *ParseError wrapping
// a sentinel, and the streaming reader agrees with reading every row.
// Seeds: a written row, synthetic telemetry in row groups of 4, and the
// public Stampede months' first rows as Parquet.
func FuzzReadParquet(f *testing.F) {
	g := 1.5
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []pqRow{{Jid: "J1", Queue: "q", EndTime: "2023-01-01 00:00:00", ValueGPU: &g}}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("PAR1PAR1"))
	// Small seeds: the engine minimises each new input it finds, at a cost
	// that grows with its size (a 40 KB seed kept the workers minimising
	// for most of a short run).
	tab, err := readCSV(bytes.NewReader(syntheticCSV(f, 1, 5)), "s.csv", "")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(writeParquet(f, tab, 4))
	if dir, err := pubdata.Dir("fresco"); err == nil {
		if b, err := os.ReadFile(filepath.Join(dir, "stampede_feb_2018_job_accounting.csv")); err == nil {
			f.Add(stampedeParquet(f, stampedeAsTelemetry(b[:min(len(b), 600)])))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := readParquet(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", "c")
		jt, jerr := ReadJobsParquet(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", ReadConfig{Cluster: "c"})
		if (err == nil) != (jerr == nil) {
			t.Fatalf("readParquet: %v; ReadJobsParquet: %v", err, jerr)
		}
		if err != nil {
			checkFuzzError(t, err)
			checkFuzzError(t, jerr)
			return
		}
		if d := cmp.Diff(aggregate(tab, nil), jt.Jobs, cmpopts.EquateNaNs()); d != "" {
			t.Fatalf("jobs (-aggregate(readParquet) +ReadJobsParquet):\n%s", d)
		}
	})
}

// stampedeParquet writes a renamed Stampede CSV (stampedeAsTelemetry) as a
// Parquet file of string columns, as pandas writes an object table.
func stampedeParquet(t testing.TB, csvText []byte) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(csvText)), "\n")[1:]
	type pqStampede struct {
		Jid       string `parquet:"jid"`
		User      string `parquet:"username"`
		Queue     string `parquet:"queue"`
		Timelimit string `parquet:"timelimit"`
		Exit      string `parquet:"exitcode"`
		Start     string `parquet:"start_time"`
		End       string `parquet:"end_time"`
		Submit    string `parquet:"submit_time"`
		NHosts    string `parquet:"nhosts"`
		NCores    string `parquet:"ncores"`
	}
	var rows []pqStampede
	for _, l := range lines {
		c := strings.Split(l, ",")
		if len(c) != 12 {
			continue
		}
		rows = append(rows, pqStampede{c[0], c[1], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11]})
	}
	return parquetGroups(t, rows, 4)
}

// TestUnknownColumns: columns the reader does not know are reported, not
// dropped silently (issue 12: jid,ncores,mem_gb,runtime kept only ncores
// without a word); every Schema column and value_* metrics are known.
func TestUnknownColumns(t *testing.T) {
	tab, err := readCSV(strings.NewReader("jid,ncores,mem_gb,runtime\n1,4,16,3600\n"), "jobs.csv", "c")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tab.Unknown, []string{"mem_gb", "runtime"}) {
		t.Errorf("Unknown = %q, want [mem_gb runtime]", tab.Unknown)
	}
	var header []string
	for _, c := range schema() {
		header = append(header, c.Name)
	}
	header = append(header, "value_gpu", "value_memused")
	tab, err = readCSV(strings.NewReader(strings.Join(header, ",")+"\n"), "all.csv", "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Unknown) != 0 || !slices.Equal(tab.Metrics, []string{"gpu", "memused"}) {
		t.Errorf("Unknown %q, Metrics %q for the full schema", tab.Unknown, tab.Metrics)
	}
	if _, err := readCSV(strings.NewReader("job,ncores\n1,4\n"), "nojid.csv", "c"); !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), `"jid"`) {
		t.Errorf("missing jid: %v", err)
	} // A spreadsheet's ';' export and a tab-separated file are named as such.
	for _, sep := range []string{";", "\t"} {
		in := strings.ReplaceAll("jid,ncores\n1,4\n", ",", sep)
		if _, err := readCSV(strings.NewReader(in), "semi.csv", "c"); !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), fmt.Sprintf("looks %q-separated", sep)) {
			t.Errorf("%q-separated file: %v", sep, err)
		}
	}
}

// TestOddNumbersPolicy: one policy in the CSV and Parquet readers: NaN is
// missing, ±Inf and negative counts or limits are errors naming the row and
// column, and a job that ends before it starts has no runtime (issue 13).
func TestOddNumbersPolicy(t *testing.T) {
	for _, c := range []struct {
		name, row, column string
	}{
		{"inf ncores", "j1,inf,1,3600,2023-01-01 00:00:00,2023-01-01 01:00:00", "ncores"},
		{"negative nhosts", "j1,4,-1,3600,2023-01-01 00:00:00,2023-01-01 01:00:00", "nhosts"},
		{"negative timelimit", "j1,4,1,-60,2023-01-01 00:00:00,2023-01-01 01:00:00", "timelimit"},
	} {
		csv := "jid,ncores,nhosts,timelimit,start_time,end_time\n" + c.row + "\n"
		_, err := readCSV(strings.NewReader(csv), "odd.csv", "x")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || pe.column != c.column || !errors.Is(err, ErrBadValue) {
			t.Errorf("CSV %s: %v, want line 2 column %s ErrBadValue", c.name, err, c.column)
		}
	}
	type oddRow struct {
		Jid    string  `parquet:"jid"`
		Ncores float64 `parquet:"ncores"`
	}
	var b bytes.Buffer
	if err := parquet.Write(&b, []oddRow{{"a", 4}, {"b", math.Inf(1)}}); err != nil {
		t.Fatal(err)
	}
	_, err := readParquet(bytes.NewReader(b.Bytes()), int64(b.Len()), "odd.parquet", "")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.column != "ncores" || !errors.Is(err, ErrBadValue) {
		t.Errorf("Parquet +Inf: %v, want row 2 column ncores ErrBadValue", err)
	}
	// NaN is missing; an end before the start leaves the runtime missing.
	tab, err := readCSV(strings.NewReader("jid,ncores,start_time,end_time\nj1,NaN,2023-01-01 02:00:00,2023-01-01 01:00:00\n"), "ok.csv", "x")
	if err != nil {
		t.Fatal(err)
	}
	jobs := aggregate(tab, nil)
	if v, _ := jobs[0].Feature("ncores"); !math.IsNaN(v) {
		t.Errorf("ncores NaN read as %v", v)
	}
	if v, _ := jobs[0].Feature("runtime_sec"); !math.IsNaN(v) {
		t.Errorf("end before start: runtime %v, want missing", v)
	}
}

// TestRepeatedHeader: a header repeated inside the data (two files joined
// with cat) is an error naming its line, in the telemetry and the Stampede
// reader, even where every column is text and the row would read as a job
// named "jid".
func TestRepeatedHeader(t *testing.T) {
	text := "jid,queue,host\nj1,normal,c1\njid,queue,host\nj2,normal,c2\n"
	_, err := readCSV(strings.NewReader(text), "joined.csv", "c")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), "repeats the header") {
		t.Errorf("telemetry CSV with a repeated header: %v", err)
	}
	st := "jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus\n"
	row := "jobID1,U,A,J,Q,240,COMPLETED,02/01/2018 00:19:08,02/01/2018 00:33:11,02/01/2018 00:19:08,1,16\n"
	if _, err := ReadStampede(strings.NewReader(st+row), "one.csv"); err != nil {
		t.Fatalf("one Stampede file: %v", err)
	}
	_, err = ReadStampede(strings.NewReader(st+row+st+row), "joined.csv")
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(err.Error(), "repeats the header") {
		t.Errorf("Stampede CSV with a repeated header: %v", err)
	}
}
