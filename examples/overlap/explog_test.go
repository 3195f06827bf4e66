package main

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/gonum/mat"

	"github.com/crosscluster/crosscluster/overlap"
)

// logFit fits two shifted Gaussian clouds, enough for a log row.
func logFit(t *testing.T) *overlap.Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 80
	x := mat.NewDense(2*n, 2, nil)
	y := make([]int, 2*n)
	for i := range 2 * n {
		shift := 0.0
		if i >= n {
			y[i], shift = overlap.Target, 0.7
		}
		x.Set(i, 0, rng.NormFloat64()+shift)
		x.Set(i, 1, rng.NormFloat64())
	}
	res, err := overlap.Fit(x, y, overlap.Band{Lo: 0.1, Hi: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestExperimentLog: rows round-trip through the JSON-lines file, render as
// the Markdown table, carry the proxy-only and not-regime-matched marks,
// and a bad line names its number.
func TestExperimentLog(t *testing.T) {
	res := logFit(t)
	meta := overlap.Meta{Experiment: "E1", Source: "anvil", Target: "conte", Regime: "cpu_standard", LabelsAuthoritative: 10, FeatureSet: "safe"}
	var log expLog
	var file bytes.Buffer
	if err := log.append(&file, entryOf(res, meta)); err != nil {
		t.Fatal(err)
	}
	if err := log.append(&file, entry{Exp: "E2", Source: "a", Target: "b", FeatureSet: "all", Band: overlap.Band{Lo: 0.2, Hi: 0.8}, AUC: -1, Coverage: -1}); err != nil {
		t.Fatal(err)
	}
	if err := log.append(&file, entryOf(res, overlap.Meta{Experiment: "E3", Regime: "all", LabelsProxy: 5})); err != nil {
		t.Fatal(err)
	}
	read, err := readExpLog(&file)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(log.Entries, read.Entries); d != "" {
		t.Errorf("log round trip (-want +got):\n%s", d)
	}
	var table bytes.Buffer
	if err := read.writeTable(&table); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	want := []string{
		"| EXP | Source→Target | Regime | Feature set | Band | AUC | Coverage |",
		"|---|---|---|---|---|---|---|",
		"| E1 | anvil→conte | cpu_standard (authoritative) | safe | [0.1,0.9] | " + fmtF(res.AUC) + " | " + fmtF(res.Coverage) + " (n=" + itoa(res.NTargetInBand) + " of " + itoa(res.NTarget) + ") |",
		"| E2 | a→b | n/a | all | [0.2,0.8] | n/a | n/a (n=0 of 0) |",
		"| E3 | → | all (proxy) proxy-only not regime-matched |  | [0.1,0.9] | " + fmtF(res.AUC) + " | " + fmtF(res.Coverage) + " (n=" + itoa(res.NTargetInBand) + " of " + itoa(res.NTarget) + ") |",
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
	if _, err := readExpLog(strings.NewReader("{\"exp\":\"E1\"}\nnot json\n")); !errors.Is(err, errLog) || !strings.Contains(err.Error(), " 2:") {
		t.Errorf("bad log line: %v", err)
	}
}

func FuzzReadExpLog(f *testing.F) {
	f.Add([]byte(`{"exp":"E1","source":"a","target":"b","feature_set":"safe","band":{"lo":0.2,"hi":0.8},"auc":0.6,"coverage":0.9,"n_target_in_band":9,"n_target":10}` + "\n"))
	f.Add([]byte("\n\n{\"exp\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := readExpLog(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, errLog) {
				t.Fatalf("error %v does not wrap errLog", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := l.writeTable(&buf); err != nil {
			t.Fatal(err)
		}
	})
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func itoa(n int) string { return strconv.Itoa(n) }
