package main

import (
	"bytes"
	"encoding/csv"
	"maps"
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
	if err := runMany(o, &stdout); err != nil {
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
	if err := runMany(o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	checkMany(t, dir, []string{"feb-1", "feb-2", "mar-1", "mar-2"})

	o.halves = false
	if err := runMany(o, &bytes.Buffer{}); err != nil {
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
	if err := runMany(o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	png := obstruct(t, dir, "pairwise.png")
	before := snapshot(t, dir)
	o.band = "0.1,0.9"
	err := runMany(o, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error with a directory in pairwise.png's place")
	}
	sameFiles(t, "after the failed run", before, snapshot(t, dir))
	if err := os.RemoveAll(png); err != nil {
		t.Fatal(err)
	}
	if err := runMany(o, &bytes.Buffer{}); err != nil {
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
