package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io/fs"
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

// small returns the options of a quick synthetic run into dir.
func small(dir string) options {
	return options{out: dir, regime: "cpu_standard", band: "0.2,0.8", n: 600, crossfit: 2, seed: 3}
}

// reportBlock returns the printed Markdown report: from its heading to the
// blank line after the KS table.
func reportBlock(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "### Overlap:")
	if i < 0 {
		t.Fatalf("no report in output:\n%s", out)
	}
	rest := out[i:]
	j := strings.Index(rest, "|\n\n")
	if j < 0 {
		t.Fatalf("report does not end with a table and a blank line:\n%s", rest)
	}
	return rest[:j+2]
}

func TestRunWritesEverything(t *testing.T) {
	dir := t.TempDir()
	var stdout bytes.Buffer
	if err := run(context.Background(), small(dir), &stdout); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "report.json", "propensity_anvil.png", "propensity_conte.png",
		"sweep.csv", "propensity.csv", "experiments.jsonl", "experiments.md"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", name, err, len(b))
			continue
		}
		switch filepath.Ext(name) {
		case ".png":
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("%s is not a PNG: %v", name, err)
			}
		case ".json":
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}

	// The printed report has exactly the reviewer's fields, in order, and
	// is the report.md that was written.
	block := reportBlock(t, stdout.String())
	var fields []string
	for _, line := range strings.Split(block, "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(line, "- ") {
			fields = append(fields, strings.TrimPrefix(k, "- "))
		}
	}
	want := []string{"Regime definition", "Feature set", "Band", "Domain classifier AUC", "Target overlap coverage"}
	if strings.Join(fields, "|") != strings.Join(want, "|") {
		t.Errorf("report fields %q, want %q", fields, want)
	}
	if !regexp.MustCompile(`(?m)^- Regime definition: cpu_standard \(authoritative\)$`).MatchString(block) {
		t.Errorf("synthetic jobs are labelled from hardware tables; report says:\n%s", block)
	}
	if !regexp.MustCompile(`(?m)^- Target overlap coverage: [01]\.\d{4} \(n=\d+ of \d+\)$`).MatchString(block) {
		t.Errorf("coverage not as \"v (n=k of N)\":\n%s", block)
	}
	if !strings.Contains(block, "| feature | KS D (all) |") {
		t.Errorf("no KS table:\n%s", block)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.HasPrefix(strings.TrimSpace(string(md)), strings.TrimSpace(block)) || !strings.Contains(string(md), "Provenance: github.com/crosscluster/crosscluster") {
		t.Errorf("printed report differs from report.md:\n%s\n---\n%s", block, md)
	}

	// A second run appends its row to the log.
	stdout.Reset()
	if err := run(context.Background(), small(dir), &stdout); err != nil {
		t.Fatal(err)
	}
	jl, _ := os.ReadFile(filepath.Join(dir, "experiments.jsonl"))
	if n := strings.Count(string(jl), "\n"); n != 2 {
		t.Errorf("experiments.jsonl has %d rows after two runs, want 2", n)
	}
	table, _ := os.ReadFile(filepath.Join(dir, "experiments.md"))
	if !strings.Contains(string(table), "| EXP | Source→Target | Regime | Feature set | Band | AUC | Coverage |") ||
		!strings.Contains(string(table), "| E2 | anvil→conte | cpu_standard (authoritative) | safe |") {
		t.Errorf("experiments.md:\n%s", table)
	}
}

// writeTable writes a synthetic FRESCO-style CSV of profile p.
func writeTable(t *testing.T, path string, p synth.ClusterProfile, seed uint64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := synth.JobsWriteCSV(&buf, synth.JobTable(p, 400, rand.New(rand.NewPCG(seed, 1)))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRunSameNameKeepsBothPlots(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	a, b := filepath.Join(in, "a", "jobs.csv"), filepath.Join(in, "b", "jobs.csv")
	writeTable(t, a, synth.AnvilLike(), 1)
	writeTable(t, b, synth.ConteLike(), 2)
	o := small(out)
	o.source, o.target, o.regime = a, b, "all"
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"propensity_jobs_source.png", "propensity_jobs_target.png"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%v (one plot overwrote the other?)", err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), `both named "jobs"`) || strings.Contains(string(md), "same table") {
		t.Errorf("report.md should warn about the shared name only:\n%s", md)
	}
}

// TestRunSameTableWarns: one table given as source and target is reported
// as such, in the console and in report.md.
func TestRunSameTableWarns(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	a := filepath.Join(in, "a.csv")
	writeTable(t, a, synth.AnvilLike(), 1)
	o := small(out)
	o.source, o.target, o.regime = a, a, "all"
	o.sourceName, o.targetName = "feb", "mar"
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for name, text := range map[string]string{"console": stdout.String(), "report.md": string(md)} {
		if !strings.Contains(text, "source and target are the same table") || strings.Contains(text, "both named") {
			t.Errorf("%s does not warn (only) that both sides are one table:\n%s", name, text)
		}
	}
}

func TestRunFeaturesAndImpute(t *testing.T) {
	// value_gpu_max is NaN for every CPU job: without -impute the fit
	// must fail naming the feature; with it the run succeeds.
	o := small(t.TempDir())
	o.regime, o.features = "all", "ncores,runtime_sec,value_gpu_max"
	var stdout bytes.Buffer
	err := run(context.Background(), o, &stdout)
	if err == nil || !strings.Contains(err.Error(), "value_gpu_max") {
		t.Fatalf("NaN feature without -impute: err %v, want one naming value_gpu_max", err)
	}
	o.impute = true
	stdout.Reset()
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reportBlock(t, stdout.String()), "- Feature set: custom (ncores, runtime_sec, value_gpu_max)") {
		t.Errorf("report does not name the custom feature set:\n%s", stdout.String())
	}
}

// TestRunReportContract reads the files a run writes and checks the
// procedure's marks in each (issue 13): "proxy-only" whenever a proxy label
// was used, "not regime-matched" for -regime all, the procedure's six
// features by default, a warning naming a forbidden feature asked for by
// name, and no log row when there is nothing to compare.
func TestRunReportContract(t *testing.T) {
	outputs := []string{"report.md", "report.json", "experiments.jsonl", "experiments.md"}
	read := func(t *testing.T, dir, name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	run1 := func(t *testing.T, o options) string {
		t.Helper()
		var stdout bytes.Buffer
		if err := run(context.Background(), o, &stdout); err != nil {
			t.Fatalf("%v\n%s", err, stdout.String())
		}
		return stdout.String()
	}

	t.Run("proxy", func(t *testing.T) {
		o := small(t.TempDir())
		o.proxy = true
		run1(t, o)
		for _, name := range outputs {
			if text := read(t, o.out, name); !strings.Contains(text, "proxy-only") {
				t.Errorf("%s does not say proxy-only:\n%s", name, text)
			}
		}
		if md := read(t, o.out, "report.md"); !strings.Contains(md, "- Regime definition: cpu_standard (proxy)\n") ||
			!strings.Contains(md, "- Feature set: safe (ncores, nhosts, timelimit_sec, runtime_sec, queue_time_sec, runtime_fraction)\n") {
			t.Errorf("report.md:\n%s", md)
		}
	})
	t.Run("authoritative", func(t *testing.T) {
		o := small(t.TempDir())
		run1(t, o)
		for _, name := range outputs {
			if text := read(t, o.out, name); strings.Contains(text, "proxy-only") || strings.Contains(text, "not regime-matched") {
				t.Errorf("%s of an authoritative, regime-matched run is marked:\n%s", name, text)
			}
		}
	})
	t.Run("all", func(t *testing.T) {
		o := small(t.TempDir())
		o.regime = "all"
		run1(t, o)
		for _, name := range outputs {
			if text := read(t, o.out, name); !strings.Contains(text, "not regime-matched") && !strings.Contains(text, `"regime_matched": false`) {
				t.Errorf("%s of a pooled run is not marked not regime-matched:\n%s", name, text)
			}
		}
	})
	t.Run("forbidden", func(t *testing.T) {
		o := small(t.TempDir())
		o.regime, o.features, o.impute = "all", "ncores,value_memused_max", true
		run1(t, o)
		for _, name := range []string{"report.md", "report.json"} {
			if text := read(t, o.out, name); !strings.Contains(text, "value_memused_max, which the procedure forbids") {
				t.Errorf("%s has no warning naming the forbidden feature:\n%s", name, text)
			}
		}
	})
	t.Run("empty", func(t *testing.T) {
		o := small(t.TempDir())
		o.regime = "gpu_largemem" // none in the synthetic Anvil-like source
		var stdout bytes.Buffer
		err := run(context.Background(), o, &stdout)
		if !errors.Is(err, overlap.ErrEmptyDomain) {
			t.Fatalf("empty regime: err %v, want ErrEmptyDomain", err)
		}
		if _, err := os.Stat(filepath.Join(o.out, "experiments.jsonl")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("experiments.jsonl exists after a run with nothing to compare (%v)", err)
		}
	})
	t.Run("folds", func(t *testing.T) {
		o := small(t.TempDir())
		o.n, o.crossfit = 5, 6
		var stdout bytes.Buffer
		if err := run(context.Background(), o, &stdout); !errors.Is(err, overlap.ErrFolds) || !strings.Contains(err.Error(), "-crossfit 0 none") {
			t.Fatalf("-crossfit 6 on 5 jobs: err %v, want ErrFolds saying how to turn cross-fitting off", err)
		}
	})
}

func TestParseUnits(t *testing.T) {
	u, err := parseUnits("conte=60, anvil=1")
	if err != nil || u["conte"] != 60 || u["anvil"] != 1 || u["stampede"] != 60 {
		t.Errorf("parseUnits = %v, %v", u, err)
	}
	for _, bad := range []string{"conte", "conte=0", "conte=-1", "conte=x", "conte=Inf"} {
		if _, err := parseUnits(bad); err == nil {
			t.Errorf("parseUnits(%q) accepted", bad)
		}
	}
}

// TestRunWarnsUnknownColumns: a table with columns the reader does not
// know runs, and the run says which were ignored, on the console and in
// the report (issue 12); columns without a name, as Excel leaves them
// after the last, are ignored and counted (issue 13 item 12).
func TestRunWarnsUnknownColumns(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	a, b := filepath.Join(in, "a.csv"), filepath.Join(in, "b.csv")
	writeTable(t, a, synth.AnvilLike(), 1)
	writeTable(t, b, synth.ConteLike(), 2)
	raw, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := strings.Cut(string(raw), "\n")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(rest), "\n") {
		lines = append(lines, l+",16,,") // and two empty columns, as Excel saves them
	}
	if err := os.WriteFile(a, []byte(header+",mem_gb,,\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := small(out)
	o.source, o.target, o.regime = a, b, "all"
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for name, text := range map[string]string{"console": stdout.String(), "report.md": string(md)} {
		if !strings.Contains(text, "columns ignored, not in the accepted schema (the job-table schema in docs/overlap.md): mem_gb;") ||
			!strings.Contains(text, "2 column(s) without a name ignored") {
			t.Errorf("%s does not name the ignored column mem_gb and the two without a name:\n%s", name, text)
		}
	}
}

// TestRunTransfer: -transfer reports the transfer model's metric on all,
// in-band and out-of-band target jobs with intervals, in report.md and
// report.json (issue 18 item 3).
func TestRunTransfer(t *testing.T) {
	o := small(t.TempDir())
	o.transfer = true
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(o.out, "report.md"))
	for _, want := range []string{"#### Transfer: logistic model of runtime_sec > 3600", "| all |", "| in band (the defensible comparison) |", "| out of band |", "| in band minus all |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(o.out, "report.json"))
	var rep struct {
		Transfer struct {
			Result struct {
				Metric string
				All    struct{ Value, Lo, Hi *float64 }
				InBand struct{ Value, Lo, Hi *float64 } `json:"in_band"`
			}
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Transfer.Result
	if r.Metric != "ROC AUC" || r.All.Value == nil || r.All.Lo == nil || r.InBand.Hi == nil || !(*r.All.Lo <= *r.All.Value && *r.All.Value <= *r.All.Hi) {
		t.Errorf("report.json transfer: %s", raw)
	}
}

// TestRerunFromProvenance: report.json records the command and every
// setting; running the recorded command again gives the same report, every
// number bit for bit (issue 13 item 3).
func TestRerunFromProvenance(t *testing.T) {
	o := small(t.TempDir())
	o.balanced, o.band = true, "0.15,0.85"
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(o.out, "report.json"))
	var rep struct {
		Provenance struct {
			Command  []string
			Settings struct {
				ClassWeight string  `json:"class_weight"`
				C           float64 `json:"C"`
			}
			Inputs []struct{ Rows, Kept int }
		}
	}
	if err := json.Unmarshal(first, &rep); err != nil {
		t.Fatal(err)
	}
	pv := rep.Provenance
	if len(pv.Command) < 4 || pv.Command[2] != "./examples/overlap" || pv.Settings.ClassWeight != "balanced" || len(pv.Inputs) != 2 || pv.Inputs[0].Rows != 600 {
		t.Fatalf("provenance: %+v", pv)
	}
	var again options
	fs := newFlags(&again)
	if err := fs.Parse(pv.Command[3:]); err != nil {
		t.Fatal(err)
	}
	again.out = t.TempDir()
	stdout.Reset()
	if err := run(context.Background(), again, &stdout); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(filepath.Join(again.out, "report.json"))
	if !bytes.Equal(first, second) {
		t.Errorf("the recorded command gives another report:\n%s\n---\n%s", first, second)
	}
}

// writeStampede writes a Stampede accounting CSV of n jobs with the given
// header line (its column names in the accounting files' order).
func writeStampede(t *testing.T, path, header, eol string, n int, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 13))
	var b strings.Builder
	b.WriteString(header + eol)
	t0 := time.Date(2018, 2, 1, 0, 0, 0, 0, time.UTC)
	const layout = "01/02/2006 15:04:05"
	for i := range n {
		submit := t0.Add(time.Duration(rng.IntN(86400*20)) * time.Second)
		start := submit.Add(time.Duration(rng.ExpFloat64()*600) * time.Second)
		limit := []int{60, 120, 240}[rng.IntN(3)]
		end := start.Add(time.Duration(1+rng.IntN(limit*60)) * time.Second)
		nodes := 1 + rng.IntN(4)
		fmt.Fprintf(&b, "jobID%d,USER%d,ACCOUNT%d,JOB%d,normal,%d,COMPLETED,%s,%s,%s,%d,%d%s", i, rng.IntN(50), rng.IntN(9), i,
			limit, start.Format(layout), end.Format(layout), submit.Format(layout), nodes, 16*nodes, eol)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunStampedeHeaderShapes: a Stampede accounting file is recognised
// whatever its header's quoting, case, spaces, byte-order mark or line
// ends, as regime.ReadStampede reads them, and gives the same report
// (issue 13 item 10).
func TestRunStampedeHeaderShapes(t *testing.T) {
	const plain = "jobID,user,account,jobname,queue,walltime,exit_status,start,end,submit,nnodes,ncpus"
	in := t.TempDir()
	tgt := filepath.Join(in, "mar.csv")
	writeStampede(t, tgt, plain, "\n", 150, 2)
	quoted := `"` + strings.ReplaceAll(plain, ",", `","`) + `"`
	var first string
	for _, c := range []struct{ name, header, eol string }{
		{"plain", plain, "\n"},
		{"quoted, BOM, CRLF", "\ufeff" + quoted, "\r\n"},
		{"lower case", strings.ToLower(plain), "\n"},
		{"spaces", " " + strings.ReplaceAll(strings.ToUpper(plain), ",", " , ") + " ", "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "feb.csv")
			writeStampede(t, src, c.header, c.eol, 150, 1)
			o := small(t.TempDir())
			o.source, o.target, o.regime = src, tgt, "all"
			var stdout bytes.Buffer
			if err := run(context.Background(), o, &stdout); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			md := readFile(t, o.out, "report.md")
			block := md[:strings.Index(md, "\n---\n")]
			if first == "" {
				first = block
			} else if block != first {
				t.Errorf("report differs from the plain header's:\n%s\n---\n%s", block, first)
			}
		})
	}
}

// TestUnknownColumnsDerived: a table that carries a derived feature as a
// column (runtime_sec) is told which columns the feature is computed from.
func TestUnknownColumnsDerived(t *testing.T) {
	got := unknownColumns([]string{"mem_gb", "runtime_sec", ""})
	for _, want := range []string{"mem_gb, runtime_sec (a derived feature: computed from end_time − start_time)", "1 column(s) without a name"} {
		if !strings.Contains(got, want) {
			t.Errorf("unknownColumns = %q, want it to contain %q", got, want)
		}
	}
	for _, f := range regime.JobFeatures() {
		if _, ok := regime.FeatureColumns(f); !ok && f != "ncores" && f != "nhosts" {
			t.Errorf("derived feature %s has no FeatureColumns", f)
		}
	}
}
