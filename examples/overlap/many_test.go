package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
	"github.com/crosscluster/crosscluster/internal/pubdata"
)

// TestRunManySynth: -clusters synth compares the three synthetic clusters
// pairwise and writes the CSV (six ordered pairs), the Markdown tables and
// the heatmap figure.
func TestRunManySynth(t *testing.T) {
	dir := t.TempDir()
	o := small(dir)
	o.clusters, o.n = "synth", 400
	var stdout bytes.Buffer
	if err := runMany(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	checkMany(t, dir, []string{"anvil", "conte", "stampede"})
	if !strings.Contains(stdout.String(), "Pairwise overlap of 3 clusters") {
		t.Errorf("no tables in the output:\n%s", stdout.String())
	}
}

// TestRunManyStampede: the two Stampede months split into halves by submit
// time are four clusters; the whole months' pair reproduces the reference
// band counts (809 of 820 March jobs, 2098 of 2326 February jobs).
func TestRunManyStampede(t *testing.T) {
	fresco := pubdata.Need(t, "fresco")
	feb := filepath.Join(fresco, "stampede_feb_2018_job_accounting.csv")
	mar := filepath.Join(fresco, "stampede_mar_2018_job_accounting.csv")
	dir := t.TempDir()
	o := small(dir)
	o.regime, o.clusters, o.halves = "all", "feb="+feb+",mar="+mar, true
	if err := runMany(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	checkMany(t, dir, []string{"feb-1", "feb-2", "mar-1", "mar-2"})

	o.halves = false
	if err := runMany(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	recs := checkMany(t, dir, []string{"feb", "mar"})
	// source,target,...,n_target_in_band,n_target,...,n_source_in_band,n_source
	if got := strings.Join([]string{recs[1][0], recs[1][1], recs[1][9], recs[1][10], recs[1][12], recs[1][13]}, " "); got != "feb mar 809 820 2098 2326" {
		t.Errorf("feb→mar row: %s", got)
	}
}

// checkMany checks the files of a many-cluster run for the named clusters
// and returns pairwise.csv's records.
func checkMany(t *testing.T, dir string, names []string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "pairwise.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	k := len(names)
	if err != nil || len(recs) != 1+k*(k-1) {
		t.Fatalf("pairwise.csv: %d records, want %d (%v)", len(recs), 1+k*(k-1), err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "pairwise.md"))
	if err != nil || !strings.Contains(string(md), "| source \\ target | "+strings.Join(names, " | ")+" |") {
		t.Errorf("pairwise.md: %v\n%s", err, md)
	}
	plottest.Check(t, filepath.Join(dir, "pairwise.png"), 1100, 500)
	return recs
}

// TestRunManyFailureKeepsPreviousOutputs: -clusters writes its three
// outputs together: a rerun that fails at the last one (its place taken by
// a directory) leaves the previous run's CSV and tables as they were
// (issue 13 item 9).
func TestRunManyFailureKeepsPreviousOutputs(t *testing.T) {
	dir := t.TempDir()
	o := small(dir)
	o.clusters, o.n = "synth", 300
	if err := runMany(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	png := obstruct(t, dir, "pairwise.png")
	before := snapshot(t, dir)
	o.band = "0.1,0.9"
	err := runMany(context.Background(), o, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error with a directory in pairwise.png's place")
	}
	sameFiles(t, "after the failed run", before, snapshot(t, dir))
	if err := os.RemoveAll(png); err != nil {
		t.Fatal(err)
	}
	if err := runMany(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	for _, name := range []string{"pairwise.csv", "pairwise.md", "pairwise.png"} {
		if after[name] == "" || after[name] == before[name] {
			t.Errorf("%s was not rewritten by the run with another band", name)
		}
	}
	if len(after) != 3 {
		t.Errorf("output directory holds %v, want the three outputs", slices.Sorted(maps.Keys(after)))
	}
}

// TestRunManyMarksAndNotes: pairwise.md states the regime definition with
// the procedure's marks (proxy-only for tables without hardware
// metadata, not regime-matched for -regime all) and each fit's notes, among
// them the size-driven coverage of clusters of very unequal sizes, which
// balanced class weights remove.
func TestRunManyMarksAndNotes(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	table := func(name string, n int, queueMean float64) string {
		var b strings.Builder
		b.WriteString("jid,ncores,nhosts,timelimit,submit_time,start_time,end_time\n")
		for i := range n {
			tl := []int{3600, 7200, 14400, 86400}[rng.IntN(4)]
			sub := 1700000000 + rng.IntN(86400*30)
			q := int(rng.ExpFloat64() * queueMean)
			fmt.Fprintf(&b, "%d,%d,%d,%d,%d,%d,%d\n", i, 1<<rng.IntN(8), 1+rng.IntN(2), tl, sub, sub+q, sub+q+1+rng.IntN(tl))
		}
		p := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return name + "=" + p
	}
	o := small(filepath.Join(dir, "out"))
	o.clusters = strings.Join([]string{table("big", 3000, 600), table("mid", 400, 2600), table("tiny", 15, 600)}, ",")
	if err := runMany(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, o.out, "pairwise.md")
	for _, want := range []string{
		"- Regime definition: cpu_standard (proxy)",
		"- **proxy-only**: 3415 of 3415 compared jobs were labelled by the telemetry proxy rule",
		"- big → tiny: the target is 0.5% of the jobs (15 of 3015)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("pairwise.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "not regime-matched") || strings.Contains(md, "tiny → big") {
		t.Errorf("pairwise.md marks a regime-matched run as pooled or repeats a fit's notes from the other side:\n%s", md)
	}

	o.balanced = true
	if err := runMany(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if md := readFile(t, o.out, "pairwise.md"); strings.Contains(md, "clusters' sizes") {
		t.Errorf("balanced weights, yet a size-driven coverage note:\n%s", md)
	}

	o = small(filepath.Join(dir, "synth"))
	o.clusters, o.n, o.regime = "synth", 300, "all"
	if err := runMany(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	md = readFile(t, o.out, "pairwise.md")
	if !strings.Contains(md, "all regimes pooled (not regime-matched; authoritative)") || !strings.Contains(md, "- **not regime-matched**") || strings.Contains(md, "proxy-only") {
		t.Errorf("pooled synthetic clusters with hardware tables: pairwise.md should say not regime-matched, authoritative:\n%s", md)
	}
}

// TestRegimeTypo: a misspelt -regime is refused before any table is read,
// with the regimes to choose from, in both modes.
func TestRegimeTypo(t *testing.T) {
	o := small(t.TempDir())
	o.regime, o.source, o.target = "gpu_standrd", "/nonexistent/a.csv", "/nonexistent/b.csv"
	for name, err := range map[string]error{"run": run(context.Background(), o, &bytes.Buffer{}), "runMany": func() error {
		o.clusters = "a=/nonexistent/a.csv,b=/nonexistent/b.csv"
		return runMany(context.Background(), o, &bytes.Buffer{})
	}()} {
		if err == nil || !strings.Contains(err.Error(), `-regime "gpu_standrd" is not a regime: want one of cpu_standard,`) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
