package regime

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"

	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/internal/synth"
)

// syntheticCSV returns a FRESCO-style telemetry CSV of n synthetic jobs per
// profile (every column internal/synth writes; several rows per job), the
// rows of the two clusters interleaved so that a job's rows are not
// consecutive.
func syntheticCSV(t testing.TB, n int, seed uint64) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	rows := append(synth.JobTable(synth.AnvilLike(), n, rng), synth.JobTable(synth.ConteLike(), n, rng)...)
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	var b bytes.Buffer
	if err := synth.JobsWriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadJobsCSVMatchesAggregate: the streaming reader gives the jobs that
// reading every row and aggregating them gives, on the written fixture,
// synthetic telemetry with interleaved jobs, and the same data with a
// byte-order mark, CRLF line ends, every field quoted and the header in
// capitals with spaces.
func TestReadJobsCSVMatchesAggregate(t *testing.T) {
	synthetic := syntheticCSV(t, 150, 1)
	inputs := map[string][]byte{
		"fixture":   []byte(telemetryCSV),
		"synthetic": synthetic,
		"excel":     excelStyle(t, synthetic),
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			tab, err := readCSV(bytes.NewReader(data), name+".csv", "fallback")
			if err != nil {
				t.Fatal(err)
			}
			want := aggregate(tab, DefaultUnits())
			got, err := ReadJobsCSV(bytes.NewReader(data), name+".csv", ReadConfig{Cluster: "fallback", Units: DefaultUnits()})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got.Jobs, cmpopts.EquateNaNs()); d != "" {
				t.Errorf("jobs (-aggregate(readCSV) +ReadJobsCSV):\n%s", d)
			}
			if got.Rows != len(tab.Rows) || !slices.Equal(got.metrics, tab.Metrics) || !slices.Equal(got.kept, tab.Metrics) {
				t.Errorf("rows %d metrics %q kept %q; readCSV: %d rows, metrics %q", got.Rows, got.metrics, got.kept, len(tab.Rows), tab.Metrics)
			}
		})
	}
	t.Run("excel equals plain", func(t *testing.T) {
		a, err := ReadJobsCSV(bytes.NewReader(synthetic), "a.csv", ReadConfig{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadJobsCSV(bytes.NewReader(inputs["excel"]), "b.csv", ReadConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(a.Jobs, b.Jobs, cmpopts.EquateNaNs()); d != "" {
			t.Errorf("BOM, CRLF, quotes and capitals change the jobs:\n%s", d)
		}
	})
}

// excelStyle rewrites a CSV as a spreadsheet might save it: a UTF-8
// byte-order mark, CRLF line ends, every field quoted, header names in
// capitals with surrounding spaces.
func excelStyle(t testing.TB, data []byte) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var b strings.Builder
	b.WriteString("\ufeff")
	for i, line := range lines {
		fields := strings.Split(line, ",")
		for k, f := range fields {
			if i == 0 {
				f = " " + strings.ToUpper(f) + " "
			}
			fields[k] = `"` + f + `"`
		}
		b.WriteString(strings.Join(fields, ","))
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// TestReadJobsKeepAndMetrics: only the metrics asked for are kept (and the
// others are not read: a bad value there is no error), and Keep sees every
// job once, in order, and decides which are returned.
func TestReadJobsKeepAndMetrics(t *testing.T) {
	data := syntheticCSV(t, 100, 2)
	all, err := ReadJobsCSV(bytes.NewReader(data), "s.csv", ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	gpuOnly, err := ReadJobsCSV(bytes.NewReader(data), "s.csv", ReadConfig{Metrics: []string{"gpu"}, Keep: func(j *Job) bool {
		seen = append(seen, j.ID)
		j.Regime = "touched"
		return strings.HasPrefix(j.ID, "conte")
	}})
	if err != nil {
		t.Fatal(err)
	}
	var wantIDs, seenWant []string
	for _, j := range all.Jobs {
		seenWant = append(seenWant, j.ID)
		if strings.HasPrefix(j.ID, "conte") {
			wantIDs = append(wantIDs, j.ID)
		}
	}
	if !slices.Equal(seen, seenWant) {
		t.Errorf("Keep saw %d jobs, want each of the %d once in order", len(seen), len(seenWant))
	}
	var gotIDs []string
	for _, j := range gpuOnly.Jobs {
		gotIDs = append(gotIDs, j.ID)
		if j.Regime != "touched" {
			t.Fatalf("job %s: a change Keep made is lost", j.ID)
		}
		if len(j.Metrics) != 1 || j.Metrics[0].Name != "gpu" {
			t.Fatalf("job %s carries %v, want gpu only", j.ID, j.Metrics)
		}
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("kept %d jobs, want the %d conte jobs", len(gotIDs), len(wantIDs))
	}
	if !slices.Equal(gpuOnly.kept, []string{"gpu"}) || len(gpuOnly.metrics) != 3 {
		t.Errorf("Kept %q Metrics %q", gpuOnly.kept, gpuOnly.metrics)
	}
	bad := "jid,value_gpu,value_cpuuser\nj1,1,not-a-number\n"
	if _, err := ReadJobsCSV(strings.NewReader(bad), "bad.csv", ReadConfig{Metrics: []string{"gpu"}}); err != nil {
		t.Errorf("a column not read made an error: %v", err)
	}
	if _, err := ReadJobsCSV(strings.NewReader(bad), "bad.csv", ReadConfig{}); !errors.Is(err, ErrBadValue) {
		t.Errorf("reading every metric: %v, want ErrBadValue", err)
	}
}

// TestReadJobsParquetMatchesCSV: the same rows as CSV and as a Parquet file
// of several row groups give the same jobs.
func TestReadJobsParquetMatchesCSV(t *testing.T) {
	data := syntheticCSV(t, 80, 4)
	fromCSV, err := ReadJobsCSV(bytes.NewReader(data), "s.csv", ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := readCSV(bytes.NewReader(data), "s.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	pq := writeParquet(t, tab, 97)
	fromPQ, err := ReadJobsParquet(bytes.NewReader(pq), int64(len(pq)), "s.parquet", ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fromCSV.Jobs, fromPQ.Jobs, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("jobs (-CSV +Parquet):\n%s", d)
	}
	if fromPQ.Rows != len(tab.Rows) {
		t.Errorf("Parquet rows %d, want %d", fromPQ.Rows, len(tab.Rows))
	}
}

// telemetryRow is a FRESCO-style row as pandas would write it to Parquet,
// times as strings, missing metrics as nulls.
type telemetryRow struct {
	Time      string   `parquet:"time"`
	Submit    string   `parquet:"submit_time"`
	Start     string   `parquet:"start_time"`
	End       string   `parquet:"end_time"`
	Timelimit float64  `parquet:"timelimit"`
	NHosts    int64    `parquet:"nhosts"`
	NCores    int64    `parquet:"ncores"`
	Queue     string   `parquet:"queue"`
	Host      string   `parquet:"host"`
	Jid       string   `parquet:"jid"`
	User      string   `parquet:"username"`
	Exit      string   `parquet:"exitcode"`
	Cluster   string   `parquet:"cluster"`
	CPU       *float64 `parquet:"value_cpuuser,optional"`
	GPU       *float64 `parquet:"value_gpu,optional"`
	Mem       *float64 `parquet:"value_memused,optional"`
}

// writeParquet writes a table of the synthetic columns as Parquet with
// row groups of perGroup rows.
func writeParquet(t testing.TB, tab *table, perGroup int) []byte {
	t.Helper()
	opt := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	const layout = "2006-01-02 15:04:05"
	rows := make([]telemetryRow, len(tab.Rows))
	for i, r := range tab.Rows {
		rows[i] = telemetryRow{Time: r.Time.Format(layout), Submit: r.Submit.Format(layout), Start: r.Start.Format(layout),
			End: r.End.Format(layout), Timelimit: r.Timelimit, NHosts: int64(r.NHosts), NCores: int64(r.NCores),
			Queue: r.Queue, Host: r.Host, Jid: r.JobID, User: r.User, Exit: r.ExitCode, Cluster: r.Cluster,
			CPU: opt(r.Values[0]), GPU: opt(r.Values[1]), Mem: opt(r.Values[2])}
	}
	return parquetGroups(t, rows, perGroup)
}

// parquetGroups writes rows as a Parquet file with row groups of perGroup
// rows.
func parquetGroups[T any](t testing.TB, rows []T, perGroup int) []byte {
	t.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[T](&b, parquet.MaxRowsPerRowGroup(int64(perGroup)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestParquetErrorsNameRowGroup: a bad value in a later row group names
// the row group, the row over the file and the column; a Parquet file
// without a column reads it as missing, and one without jid is
// ErrMissingColumn.
func TestParquetErrorsNameRowGroup(t *testing.T) {
	type r struct {
		Jid    string `parquet:"jid"`
		Ncores string `parquet:"ncores"`
	}
	rows := make([]r, 25)
	for i := range rows {
		rows[i] = r{fmt.Sprintf("j%d", i), "4"}
	}
	rows[22].Ncores = "lots"
	data := parquetGroups(t, rows, 10)
	_, err := ReadJobsParquet(bytes.NewReader(data), int64(len(data)), "g.parquet", ReadConfig{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.RowGroup != 3 || pe.Line != 23 || pe.column != "ncores" || !errors.Is(err, ErrBadValue) {
		t.Fatalf("got %v (%+v), want row group 3, row 23, column ncores, ErrBadValue", err, pe)
	}
	if want := `regime: g.parquet: row group 3, row 23: column "ncores": bad value: number "lots"`; err.Error() != want {
		t.Errorf("message %q\nwant    %q", err.Error(), want)
	}

	type noCores struct {
		Jid     string `parquet:"jid"`
		NHosts  int64  `parquet:"nhosts"`
		Partial string `parquet:"queue"`
	}
	var b bytes.Buffer
	if err := parquet.Write(&b, []noCores{{"a", 1, "q"}}); err != nil {
		t.Fatal(err)
	}
	jt, err := ReadJobsParquet(bytes.NewReader(b.Bytes()), int64(b.Len()), "nocores.parquet", ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := jt.Jobs[0].Feature("ncores"); !math.IsNaN(v) {
		t.Errorf("ncores of a file without the column = %v, want missing", v)
	}
	type noJid struct {
		Ncores int64 `parquet:"ncores"`
	}
	b.Reset()
	if err := parquet.Write(&b, []noJid{{4}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJobsParquet(bytes.NewReader(b.Bytes()), int64(b.Len()), "nojid.parquet", ReadConfig{}); !errors.Is(err, ErrMissingColumn) || !errors.As(err, &pe) || pe.File != "nojid.parquet" {
		t.Errorf("no jid: %v, want a *ParseError naming the file, wrapping ErrMissingColumn", err)
	}
}

// TestCSVErrorShapes: syntax errors name the line and the byte within it,
// a line of the wrong length says how many fields it has, and every
// message carries the package prefix once.
func TestCSVErrorShapes(t *testing.T) {
	header := "jid,ncores,value_gpu\n"
	for _, c := range []struct {
		name, in, want string
		line, pos      int
	}{
		{"stray quote", header + "a,4,1\nb,4\"x,1\n", `regime: s.csv:3:4: bad value: bare " in non-quoted-field`, 3, 4},
		{"short line", header + "a,4\n", `regime: s.csv:2: bad value: 2 fields, the header has 3`, 2, 0},
		{"empty", "", `regime: s.csv: missing column: empty file, no header`, 0, 0},
		{"header only, no jid", "JOB,ncores\n", `regime: s.csv:1: missing column "jid"`, 1, 0},
		{"inf in a metric", header + "a,4,-Inf\n", `regime: s.csv:2: column "value_gpu": bad value: infinite number "-Inf"`, 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, read := range []func() error{
				func() error { _, err := readCSV(strings.NewReader(c.in), "s.csv", ""); return err },
				func() error { _, err := ReadJobsCSV(strings.NewReader(c.in), "s.csv", ReadConfig{}); return err },
			} {
				err := read()
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != c.line || pe.Pos != c.pos {
					t.Fatalf("got %v (%+v), want line %d pos %d", err, pe, c.line, c.pos)
				}
				if err.Error() != c.want {
					t.Errorf("message %q\nwant    %q", err.Error(), c.want)
				}
				if strings.Count(err.Error(), "regime:") != 1 {
					t.Errorf("%q: the prefix is not there once", err.Error())
				}
			}
		})
	}
}

// TestStampedeNegative: the accounting reader follows the same policy for
// negative counts and limits as the telemetry readers.
func TestStampedeNegative(t *testing.T) {
	const header = "jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus\n"
	in := header + "j1,u,a,n,q,60,COMPLETED,03/11/2018 01:00:00,03/11/2018 03:00:00,03/11/2018 00:30:00,-1,16\n"
	_, err := ReadStampede(strings.NewReader(in), "neg.csv")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.column != "nnodes" || !errors.Is(err, ErrBadValue) {
		t.Errorf("negative nnodes: %v, want line 2 column nnodes ErrBadValue", err)
	}
}

// screenReference is Screen as first written (one concatenated column per
// candidate), kept as the oracle of the profile-based Screen.
func screenReference(candidates, names []string, clusters ...[]Job) Screened {
	if candidates == nil {
		candidates = JobFeatures()
	}
	var out Screened
	var kept [][]float64
next:
	for _, f := range candidates {
		if isForbidden(f) {
			out.Dropped = append(out.Dropped, Dropped{f, "forbidden by the procedure (the proxy regime rule reads it)"})
			continue
		}
		var col []float64
		var shares []string
		anyMissing, unknown := false, false
		for c, js := range clusters {
			name := fmt.Sprintf("cluster %d", c+1)
			if c < len(names) {
				name = names[c]
			}
			miss := 0
			for i := range js {
				v, ok := js[i].Feature(f)
				if !ok {
					unknown = true
				}
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					miss++
				}
				col = append(col, v)
			}
			if len(js) == 0 {
				shares = append(shares, name+" has no jobs")
				anyMissing = true
				continue
			}
			if miss > 0 {
				anyMissing = true
			}
			shares = append(shares, fmt.Sprintf("%.1f%% of %s's jobs (%d of %d)", 100*float64(miss)/float64(len(js)), name, miss, len(js)))
		}
		if unknown && anyMissing {
			out.Dropped = append(out.Dropped, Dropped{f, "not a column of every table (missing in " + strings.Join(shares, ", ") + ")"})
			continue
		}
		if anyMissing {
			out.Dropped = append(out.Dropped, Dropped{f, "missing in " + strings.Join(shares, ", ")})
			continue
		}
		if len(col) > 0 && slices.IndexFunc(col, func(v float64) bool { return v != col[0] }) < 0 {
			out.Dropped = append(out.Dropped, Dropped{f, fmt.Sprintf("constant (%g) in every cluster: zero variance", col[0])})
			continue
		}
		for k, prev := range kept {
			if slices.Equal(prev, col) {
				out.Dropped = append(out.Dropped, Dropped{f, "the same values as " + out.Features[k] + " for every job"})
				continue next
			}
		}
		out.Features = append(out.Features, f)
		kept = append(kept, col)
	}
	return out
}

// TestScreenMatchesReference draws clusters whose features are often
// missing, constant, or copies of each other, and checks Screen (through
// FeatureProfile) against the direct definition, and its reasons.
func TestScreenMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	candidates := append(JobFeatures(), "value_gpu_cnt", "value_gpu_max", "value_memused_sum", "bogus")
	pick := func(vs ...float64) float64 { return vs[rng.IntN(len(vs))] }
	for trial := range 400 {
		var clusters [][]Job
		for range 1 + rng.IntN(3) {
			js := make([]Job, rng.IntN(6))
			for i := range js {
				cores := pick(4, 4, 8, math.NaN())
				js[i] = Job{NCores: cores, NHosts: pick(1, 1, 2), TimelimitSec: pick(3600, math.Inf(1), 60)}
				if rng.IntN(2) == 0 {
					js[i].NHosts = cores // a copy of ncores, where it is not missing
				}
				if rng.IntN(3) > 0 {
					js[i].Metrics = []Metric{{"gpu", Agg{Cnt: rng.IntN(2), Sum: 1, Max: pick(1, math.NaN())}}}
				}
			}
			clusters = append(clusters, js)
		}
		names := []string{"a", "b"}
		want := screenReference(candidates, names, clusters...)
		got := screen(candidates, names, clusters...)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("trial %d (-reference +Screen):\n%s", trial, d)
		}
	}
	// The reasons a report prints.
	a := []Job{{NCores: 4, NHosts: 4, TimelimitSec: 60}, {NCores: 8, NHosts: 8, TimelimitSec: 60}}
	b := []Job{{NCores: 16, NHosts: 16, TimelimitSec: 60}, {NCores: math.NaN(), NHosts: 1, TimelimitSec: 60}}
	got := screen([]string{"nhosts", "ncores", "timelimit_sec", "value_gpu_max"}, []string{"a", "b"}, a, b[:1])
	want := Screened{Features: []string{"nhosts"}, Dropped: []Dropped{
		{"ncores", "the same values as nhosts for every job"},
		{"timelimit_sec", "constant (60) in every cluster: zero variance"},
		{"value_gpu_max", "forbidden by the procedure (the proxy regime rule reads it)"},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("reasons (-want +got):\n%s", d)
	}
	got = screen([]string{"ncores"}, []string{"a", "b"}, a, b)
	if len(got.Dropped) != 1 || got.Dropped[0].Reason != "missing in 0.0% of a's jobs (0 of 2), 50.0% of b's jobs (1 of 2)" {
		t.Errorf("missing: %+v", got)
	}
}

// TestScreenProfilesPanicsOnOtherCandidates: profiles made for other
// candidates are a caller's mistake.
func TestScreenProfilesPanicsOnOtherCandidates(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	ScreenProfiles([]string{"ncores"}, nil, NewFeatureProfile([]string{"nhosts"}))
}

// TestFuzzSeedsFromRealFiles makes sure the fuzz targets' seeds from the
// public Stampede months still parse as the readers expect (the accounting
// reader reads them; renamed to FRESCO's jid they are a telemetry table).
func TestFuzzSeedsFromRealFiles(t *testing.T) {
	dir := pubdata.Need(t, "fresco")
	b, err := os.ReadFile(filepath.Join(dir, "stampede_feb_2018_job_accounting.csv"))
	if err != nil {
		t.Fatal(err)
	}
	seed := stampedeAsTelemetry(b[:4000])
	tab, err := readCSV(bytes.NewReader(seed), "seed.csv", "stampede")
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) < 20 || len(tab.Unknown) == 0 {
		t.Errorf("%d rows, unknown columns %q", len(tab.Rows), tab.Unknown)
	}
}

// stampedeAsTelemetry renames a Stampede accounting file's columns to
// FRESCO's (jobID to jid and so on) and cuts it at its last whole line.
func stampedeAsTelemetry(b []byte) []byte {
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	r := strings.NewReplacer("jobID", "jid", "user", "username", "walltime", "timelimit", "exit_status", "exitcode",
		"start", "start_time", "end", "end_time", "submit", "submit_time", "nnodes", "nhosts", "ncpus", "ncores")
	return append([]byte(r.Replace(string(line))+"\n"), rest...)
}

// TestReadJobsMemory guards the streaming reader's point: what a table
// costs after reading is its jobs, not its rows (issue 13 item 6: the
// first readers kept every telemetry row, about 2 KB per job of these
// tables). maxPerJob allows a Job (240 bytes), three metric aggregates
// (120), its ID and slack for the allocator's size classes.
func TestReadJobsMemory(t *testing.T) {
	const maxPerJob = 600
	data := syntheticCSV(t, 5000, 6)
	live := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	jt, err := ReadJobsCSV(bytes.NewReader(data), "m.csv", ReadConfig{})
	if err != nil {
		t.Fatal(err)
	}
	perJob := float64(live()-before) / float64(len(jt.Jobs))
	perRow := float64(len(data)) / float64(jt.Rows)
	t.Logf("%d rows, %d jobs: %.0f bytes per job held (%.0f bytes of CSV per row)", jt.Rows, len(jt.Jobs), perJob, perRow)
	if perJob > maxPerJob {
		t.Errorf("%.0f bytes per job held after reading, want at most %d", perJob, maxPerJob)
	}
	runtime.KeepAlive(jt)
	before = live()
	n := 0
	jt, err = ReadJobsCSV(bytes.NewReader(data), "m.csv", ReadConfig{Keep: func(*Job) bool { n++; return false }})
	if err != nil {
		t.Fatal(err)
	}
	if held := int64(live()) - int64(before); held > 64<<10 || n != 10000 || len(jt.Jobs) != 0 {
		t.Errorf("Keep saw %d jobs and dropped them all, yet %d bytes are held", n, held)
	}
	runtime.KeepAlive(jt)
}

// TestReadParquetCorruptLengthBounded: testdata/corrupt_length.parquet is
// a 40 KB synthetic telemetry file (writeParquet of syntheticCSV(t, 3, 5),
// row groups of 7) with a few bytes changed by a mutation loop, so that a
// page header's Thrift binary length reads 2^28-1. parquet-go allocates a
// declared length before reading it (encoding/thrift
// compactReader.ReadBytes): the file made readParquet allocate 260 MB
// before failing. checkPages refuses it first.
func TestReadParquetCorruptLengthBounded(t *testing.T) {
	// maxAlloc bounds what reading a 40 KB file may allocate.
	const maxAlloc = 8 << 20
	data, err := os.ReadFile("testdata/corrupt_length.parquet")
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReadJobsParquet(bytes.NewReader(data), int64(len(data)), "corrupt.parquet", ReadConfig{})
	runtime.ReadMemStats(&after)
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrBadValue) || pe.RowGroup == 0 {
		t.Errorf("got %v, want a *ParseError naming a row group, wrapping ErrBadValue", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > maxAlloc {
		t.Errorf("allocated %d MB for a %d-byte file", got>>20, len(data))
	}
	t.Log(err)
}

// TestThriftWalker: the page-header walker skips every compact-protocol
// type, reads compressed_page_size, and refuses lengths, counts and nesting
// the chunk cannot hold.
func TestThriftWalker(t *testing.T) {
	// A PageHeader: type (1, i32) 0, uncompressed (2, i32) 3, compressed
	// (3, i32) 3, a data page header (5, struct) holding a binary, a list
	// of two i64, a map of one i32→bool, a double, a uuid and a bool; then
	// the 3 page bytes.
	header := []byte{
		0x15, 0x00, 0x15, 0x06, 0x15, 0x06, // fields 1-3, zigzag 0, 3, 3
		0x2c,                 // field 5, struct
		0x18, 0x02, 'h', 'i', // binary "hi"
		0x19, 0x26, 0x02, 0x04, // list of 2 i64
		0x1b, 0x01, 0x51, 0x02, 0x01, // map of 1 i32→bool
		0x17, 0, 0, 0, 0, 0, 0, 0, 0, // double
		0x1d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // uuid
		0x11,       // bool true
		0x00, 0x00, // end of both structs
	}
	page := append(bytes.Clone(header), 'a', 'b', 'c')
	two := append(bytes.Clone(page), page...)
	if err := checkChunk(bytes.NewReader(two), 0, int64(len(two))); err != nil {
		t.Fatalf("two valid pages: %v", err)
	}
	for name, bad := range map[string][]byte{
		"page past the chunk":    append(bytes.Clone(header), 'a'),
		"huge binary":            {0x15, 0x00, 0x18, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00},
		"huge list":              {0x19, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00},
		"huge map":               {0x1b, 0xff, 0xff, 0xff, 0xff, 0x07, 0x55, 0x00},
		"unknown type":           {0x1e, 0x00},
		"cut short":              {0x15},
		"negative page":          {0x35, 0x01, 0x00}, // compressed_page_size -1
		"nested too deep":        append(bytes.Repeat([]byte{0x1c}, maxThriftDepth+2), 0x00),
		"varint of eleven bytes": append([]byte{0x15}, bytes.Repeat([]byte{0xff}, 11)...),
	} {
		t.Run(name, func(t *testing.T) {
			if err := checkChunk(bytes.NewReader(bad), 0, int64(len(bad))); err == nil {
				t.Errorf("% x accepted", bad)
			}
		})
	}
}
