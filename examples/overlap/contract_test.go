package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/synth"
	"github.com/crosscluster/crosscluster/overlap"
	"github.com/crosscluster/crosscluster/regime"
)

// jobDraw describes how writeJobs draws one cluster's jobs.
type jobDraw struct {
	cluster string
	n       int
	cores   []float64 // ncores is drawn from these
	seed    uint64
}

// writeJobs writes a one-row-per-job FRESCO-style CSV: ncores from d.cores,
// nhosts 1 or 2, a timelimit of 1, 2 or 4 hours, exponential queue and run
// times, CPU nodes (no GPU sample) with small memory.
func writeJobs(t *testing.T, path string, d jobDraw) {
	t.Helper()
	rng := rand.New(rand.NewPCG(d.seed, 11))
	var b strings.Builder
	b.WriteString("jid,cluster,submit_time,start_time,end_time,timelimit,nhosts,ncores,queue,value_gpu,value_memused\n")
	t0 := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	const layout = "2006-01-02 15:04:05"
	for i := range d.n {
		submit := t0.Add(time.Duration(rng.IntN(86400*20)) * time.Second)
		start := submit.Add(time.Duration(rng.ExpFloat64()*600) * time.Second)
		limit := []int{3600, 7200, 14400}[rng.IntN(3)]
		end := start.Add(time.Duration(1+rng.IntN(limit)) * time.Second)
		fmt.Fprintf(&b, "%s-%d,%s,%s,%s,%s,%d,%d,%g,batch,,%.2f\n", d.cluster, i, d.cluster, submit.Format(layout), start.Format(layout),
			end.Format(layout), limit, 1+rng.IntN(2), d.cores[rng.IntN(len(d.cores))], 1+rng.Float64()*30)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runFiles runs the example on two written tables and returns its console
// output.
func runFiles(t *testing.T, src, tgt jobDraw, edit func(*options)) (options, string) {
	t.Helper()
	in := t.TempDir()
	o := small(t.TempDir())
	o.source, o.target = filepath.Join(in, src.cluster+".csv"), filepath.Join(in, tgt.cluster+".csv")
	writeJobs(t, o.source, src)
	writeJobs(t, o.target, tgt)
	if edit != nil {
		edit(&o)
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	return o, stdout.String()
}

// reportJSON decodes report.json keeping numbers as written.
func reportJSON(t *testing.T, dir string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(readFile(t, dir, "report.json")))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunMisleadingNumbers reads the files a run writes for the warnings
// item 4 of issue 13 asks for: two identical clusters split 1:9 (coverage
// near zero from size alone), two separable clusters (AUC ≥ 0.99 with the
// features that drive it, a KS p-value that underflows), and counts as
// integers.
func TestRunMisleadingNumbers(t *testing.T) {
	cores := []float64{1, 4, 16, 32}
	t.Run("1:9 split of identical clusters", func(t *testing.T) {
		o, _ := runFiles(t, jobDraw{"alpha", 100, cores, 1}, jobDraw{"beta", 900, cores, 2}, nil)
		md := readFile(t, o.out, "report.md")
		for _, want := range []string{"the target is 90.0% of the jobs (900 of 1000)", "balanced class weights", "-balanced",
			"Note: KS in band n/a: no in-band comparison: "} {
			if !strings.Contains(md, want) {
				t.Errorf("report.md lacks %q:\n%s", want, md)
			}
		}
		rep := reportJSON(t, o.out)
		if notes := fmt.Sprint(rep["notes"]); !strings.Contains(notes, "the target is 90.0% of the jobs") {
			t.Errorf("report.json notes: %s", notes)
		}
		if cov, _ := rep["target_coverage"].(json.Number).Float64(); cov > 0.2 {
			t.Errorf("unweighted coverage %v; the propensities of a 1:9 split should sit near 0.9, outside the band", cov)
		}
		// With balanced weights the same clusters overlap and the note goes.
		o, _ = runFiles(t, jobDraw{"alpha", 100, cores, 1}, jobDraw{"beta", 900, cores, 2}, func(o *options) { o.balanced = true })
		if md := readFile(t, o.out, "report.md"); strings.Contains(md, "the target is 90.0%") {
			t.Errorf("balanced run still warns about sizes:\n%s", md)
		}
		if cov, _ := reportJSON(t, o.out)["target_coverage"].(json.Number).Float64(); cov < 0.8 {
			t.Errorf("balanced coverage of identical clusters %v, want most of them in band", cov)
		}
	})
	t.Run("separable clusters", func(t *testing.T) {
		o, _ := runFiles(t, jobDraw{"small", 600, []float64{1, 2, 4}, 3}, jobDraw{"big", 600, []float64{64, 128}, 4}, nil)
		md := readFile(t, o.out, "report.md")
		if !regexp.MustCompile(`AUC 1\.0000 ≥ 0\.99: the domains are nearly separable.*drive it: ncores \(`).MatchString(md) {
			t.Errorf("report.md has no separation note naming ncores first:\n%s", md)
		}
		if !regexp.MustCompile(`\| ncores \| 1\.0000 \| < 1e-300 \|`).MatchString(md) {
			t.Errorf("the underflowed KS p-value of ncores is not printed as < 1e-300:\n%s", md)
		}
		if strings.Contains(md, "| 0 |") || strings.Contains(md, "| 0e+00 |") {
			t.Errorf("a p-value printed as 0:\n%s", md)
		}
		rep := reportJSON(t, o.out)
		for _, k := range []string{"n_source", "n_target", "n_source_in_band", "n_target_in_band", "labels_authoritative", "labels_proxy"} {
			if v, ok := rep[k].(json.Number); !ok || strings.ContainsAny(v.String(), ".eE") {
				t.Errorf("report.json %s = %v, want an integer", k, rep[k])
			}
		}
		if !regexp.MustCompile(`Target overlap coverage: \d\.\d{4} \(n=\d+ of 600\)`).MatchString(md) {
			t.Errorf("coverage counts are not integers:\n%s", md)
		}
	})
}

// TestRunNoTelemetryWarning: proxy labels of a table without GPU or memory
// telemetry are warned about in every report file (the Stampede accounting
// months have neither).
func TestRunNoTelemetryWarning(t *testing.T) {
	o, _ := runFiles(t, jobDraw{"alpha", 200, []float64{4, 8}, 5}, jobDraw{"beta", 200, []float64{4, 16}, 6}, nil)
	for _, name := range []string{"report.md", "report.json"} {
		if text := readFile(t, o.out, name); !strings.Contains(text, "alpha has no value_gpu sample (200 proxy-labelled jobs compared)") {
			t.Errorf("%s has no warning about the absent GPU telemetry:\n%s", name, text)
		}
	}
	// Synthetic clusters have GPU telemetry on their GPU nodes: no warning.
	o = small(t.TempDir())
	o.proxy = true
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, o.out, "report.md"); strings.Contains(md, "telemetry the proxy rule reads is absent") {
		t.Errorf("warning on clusters with GPU telemetry:\n%s", md)
	}
}

// TestRunSpreadsheetInput: the same table saved with a byte-order mark,
// CRLF line ends, every field quoted and capitalised headers gives the same
// comparison (issue 13: a reviewer's odd inputs).
func TestRunSpreadsheetInput(t *testing.T) {
	src, tgt := jobDraw{"alpha", 300, []float64{4, 8, 16}, 7}, jobDraw{"beta", 300, []float64{4, 16, 32}, 8}
	plain, _ := runFiles(t, src, tgt, nil)
	odd, _ := runFiles(t, src, tgt, func(o *options) {
		b, err := os.ReadFile(o.source)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for i, l := range lines {
			f := strings.Split(l, ",")
			for k := range f {
				if i == 0 {
					f[k] = " " + strings.ToUpper(f[k])
				}
				f[k] = `"` + f[k] + `"`
			}
			lines[i] = strings.Join(f, ",")
		}
		if err := os.WriteFile(o.source, []byte("\ufeff"+strings.Join(lines, "\r\n")+"\r\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	block := func(o options) string {
		md := readFile(t, o.out, "report.md")
		return md[:strings.Index(md, "\n---\n")]
	}
	if a, b := block(plain), block(odd); a != b {
		t.Errorf("the spreadsheet-saved table gives another report:\n%s\n---\n%s", a, b)
	}
}

// TestRunBadInputLeavesNothing: an empty file, a header without rows, a bad
// value and an empty regime exit with an error and write no report and no
// log row; the error printed names the file and has one "overlap:" prefix.
func TestRunBadInputLeavesNothing(t *testing.T) {
	in := t.TempDir()
	good := filepath.Join(in, "good.csv")
	writeJobs(t, good, jobDraw{"good", 50, []float64{4}, 9})
	files := map[string]string{
		"empty.csv":  "",
		"header.csv": "jid,ncores\n",
		"bad.csv":    "jid,ncores\nj1,4\nj2,-4\n",
		"inf.csv":    "jid,ncores\nj1,4\nj2,Inf\n",
		"ragged.csv": "jid,ncores\nj1,4,5\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, file string
		want       error
		says       string
	}{
		{"empty file", "empty.csv", regime.ErrMissingColumn, "empty.csv: missing column: empty file, no header"},
		{"header only", "header.csv", overlap.ErrEmptyDomain, "header has no jobs"},
		{"negative cores", "bad.csv", regime.ErrBadValue, `bad.csv:3: column "ncores": bad value: negative ncores -4`},
		{"infinite cores", "inf.csv", regime.ErrBadValue, `inf.csv:3: column "ncores": bad value: infinite number "Inf"`},
		{"ragged line", "ragged.csv", regime.ErrBadValue, "ragged.csv:2: bad value: 3 fields, the header has 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := small(t.TempDir())
			o.source, o.target = filepath.Join(in, c.file), good
			var stdout bytes.Buffer
			err := run(context.Background(), o, &stdout)
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			line := errorLine(err)
			if !strings.Contains(line, c.says) || strings.Count(line, "overlap: ") != 1 {
				t.Errorf("printed %q; want one overlap: prefix and %q", line, c.says)
			}
			entries, _ := os.ReadDir(o.out)
			if len(entries) != 0 {
				t.Errorf("the failed run left %v in its output directory", entries)
			}
		})
	}
	t.Run("empty regime", func(t *testing.T) {
		o := small(t.TempDir())
		o.regime = "gpu_largemem" // none in the synthetic Anvil-like source
		var stdout bytes.Buffer
		err := run(context.Background(), o, &stdout)
		if !errors.Is(err, overlap.ErrEmptyDomain) || strings.Count(errorLine(err), "overlap: ") != 1 {
			t.Fatalf("err %v (printed %q), want ErrEmptyDomain with one prefix", err, errorLine(err))
		}
		if entries, _ := os.ReadDir(o.out); len(entries) != 0 {
			t.Errorf("a run with nothing to compare left %v (TestRunReportContract checks the log)", entries)
		}
	})
	t.Run("library errors", func(t *testing.T) {
		for _, edit := range []func(*options){
			func(o *options) { o.band = "0.8,0.2" },
			func(o *options) { o.n, o.crossfit = 5, 6 },
			func(o *options) { o.features = "ncores,bogus" },
		} {
			o := small(t.TempDir())
			edit(&o)
			var stdout bytes.Buffer
			err := run(context.Background(), o, &stdout)
			if err == nil {
				t.Fatal("no error")
			}
			if line := errorLine(err); strings.Count(line, "overlap: ") != 1 || !strings.HasPrefix(line, "overlap: ") {
				t.Errorf("printed %q: want one overlap: prefix, at the start", line)
			}
		}
	})
}

// TestRunReportIsTheFileRead: a run on files written by internal/synth
// records both inputs' table rows, jobs and SHA-256 in report.json.
func TestRunReportIsTheFileRead(t *testing.T) {
	in := t.TempDir()
	a, b := filepath.Join(in, "a.csv"), filepath.Join(in, "b.csv")
	writeTable(t, a, synth.AnvilLike(), 1)
	writeTable(t, b, synth.ConteLike(), 2)
	o := small(t.TempDir())
	o.source, o.target, o.regime, o.units = a, b, "all", "conte=60"
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Provenance struct {
			Inputs []struct {
				Name, SHA256 string
				Rows         int
				TableRows    int `json:"table_rows"`
				Kept         int `json:"rows_in_regime"`
			}
		}
	}
	if err := json.Unmarshal([]byte(readFile(t, o.out, "report.json")), &rep); err != nil {
		t.Fatal(err)
	}
	for i, path := range []string{a, b} {
		in := rep.Provenance.Inputs[i]
		raw, _ := os.ReadFile(path)
		lines := strings.Count(string(raw), "\n") - 1
		if in.Name != path || len(in.SHA256) != 64 || in.TableRows != lines || in.Rows != 400 || in.Kept != 400 {
			t.Errorf("input %d: %+v; want %s, %d table rows, 400 jobs", i, in, path, lines)
		}
	}
}

// TestRunMixedClustersWarning: a table whose cluster column names two
// clusters is compared as one, and the report says so.
func TestRunMixedClustersWarning(t *testing.T) {
	o, _ := runFiles(t, jobDraw{"alpha", 100, []float64{4, 8}, 1}, jobDraw{"beta", 100, []float64{4, 16}, 2}, func(o *options) {
		b, err := os.ReadFile(o.source)
		if err != nil {
			t.Fatal(err)
		}
		// Every other job of the source is said to run on gamma.
		lines := strings.Split(string(b), "\n")
		for i := 2; i < len(lines); i += 2 {
			lines[i] = strings.Replace(lines[i], ",alpha,", ",gamma,", 1)
		}
		if err := os.WriteFile(o.source, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	for _, name := range []string{"report.md", "report.json"} {
		if text := readFile(t, o.out, name); !strings.Contains(text, "holds jobs of 2 clusters (alpha, gamma)") {
			t.Errorf("%s does not warn about the two clusters of the source table:\n%s", name, text)
		}
	}
}

// TestDocsReportsCurrent: the full report.md of the authoritative and the
// proxy run shown in docs/overlap.md are what those commands write now
// (the Go version in the footer aside).
func TestDocsReportsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 2,000 jobs per cluster")
	}
	docs, err := os.ReadFile("../../docs/overlap.md")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`go1\.[0-9.]+(-[a-z0-9]+)?`)
	text := goVersion.ReplaceAllString(string(docs), "GO")
	for _, proxy := range []bool{false, true} {
		o := options{out: t.TempDir(), regime: "cpu_standard", band: "0.2,0.8", n: 2000, crossfit: 5, seed: 1, proxy: proxy}
		var stdout bytes.Buffer
		if err := run(context.Background(), o, &stdout); err != nil {
			t.Fatal(err)
		}
		md := goVersion.ReplaceAllString(readFile(t, o.out, "report.md"), "GO")
		if !strings.Contains(text, "```markdown\n"+md+"```\n") {
			t.Errorf("docs/overlap.md does not show the report.md of the run with -proxy=%v; it is now:\n%s", proxy, md)
		}
	}
}

// TestRunSyntheticChunks: the synthetic clusters are drawn a chunk of jobs
// at a time; every job keeps its own number (anvil-1 ... anvil-n), as one
// draw of n jobs numbers them.
func TestRunSyntheticChunks(t *testing.T) {
	o := small(t.TempDir())
	o.n, o.regime, o.crossfit = 4100, "all", 0
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(readFile(t, o.out, "propensity.csv"), "\n")[1:] {
		if id, _, ok := strings.Cut(line, ","); ok {
			if seen[id] {
				t.Fatalf("job %s twice", id)
			}
			seen[id] = true
		}
	}
	for _, id := range []string{"anvil-1", "anvil-2001", "anvil-4100", "conte-4100"} {
		if !seen[id] {
			t.Errorf("no job %s", id)
		}
	}
	if len(seen) != 2*4100 || seen["anvil-4101"] {
		t.Errorf("%d jobs, want %d numbered 1 to 4100 per cluster", len(seen), 2*4100)
	}
}

// TestRunGzipTable: a gzip-compressed table (.csv.gz, as FRESCO exports
// are often shipped) gives the report of the table itself, its name
// without .csv.gz, and the provenance hash of the compressed file; a
// truncated copy is an error naming the file.
func TestRunGzipTable(t *testing.T) {
	cores := []float64{1, 2, 4, 8}
	o, _ := runFiles(t, jobDraw{"alpha", 300, cores, 1}, jobDraw{"beta", 300, cores, 2}, nil)
	plain := readFile(t, o.out, "report.md")
	raw, err := os.ReadFile(o.source)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	gz := o.source + ".gz"
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	o.source, o.sourceName, o.out = gz, "", t.TempDir()
	if err := run(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, o.out, "report.md")
	strip := func(s string) string { // the provenance footer names the files
		s, _, _ = strings.Cut(s, "<small>Provenance")
		return s
	}
	if strip(got) != strip(plain) {
		t.Errorf("report of the .csv.gz differs from the .csv's:\n%s\n---\n%s", got, plain)
	}
	if want := fmt.Sprintf("%x", sha256.Sum256(z.Bytes())); !strings.Contains(got, want) || !strings.Contains(got, "### Overlap: alpha → beta") {
		t.Errorf("report does not name alpha or the compressed file's hash %s:\n%s", want, got)
	}
	if err := os.WriteFile(gz, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), gz+": gzip-compressed table: unexpected EOF") {
		t.Errorf("truncated .csv.gz: %v", err)
	}
}
