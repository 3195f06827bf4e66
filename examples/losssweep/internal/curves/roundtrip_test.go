package curves

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/sweep"
)

// roundtripSpec has ints, floats (a column mixing 0 with floats, one of 1,
// 0.1 and 0.01, tiny and huge floats), strings (with a comma, a quote and
// an empty one) and bools.
const roundtripSpec = `
name: rt
base: {epochs: 3, tiny: 1e-7, huge: 1e300, flag: true}
grid:
  - {key: lr, values: [1, 0.1, 0.01]}
  - {key: weight_decay, values: [0, 1e-3, 1e-2]}
  - {key: seed, values: [0, 1]}
variants:
  - {name: base, set: {note: "plain", opt: sgd}}
  - {name: odd, set: {note: "a, \"quoted\" note", opt: "", flag: false, tiny: 5e-324}}
`

// roundtripDataset builds the export of roundtripSpec from synthetic
// results: a power-law validation curve per run, and a NaN and an Inf
// metric on some runs.
func roundtripDataset(t *testing.T) *sweep.Dataset {
	s, err := sweep.LoadSpec(strings.NewReader(roundtripSpec))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var runs []sweep.Run
	results := map[string]*sweep.Result{}
	for i, p := range pts {
		runs = append(runs, sweep.Run{ID: p.ID, Slug: p.Slug, Variant: p.Params["variant"].Lit, State: sweep.Completed, Attempt: 1, Config: p.Params})
		var st, v []float64
		for k := 1; k <= 40; k++ {
			e := float64(k) / 4
			st, v = append(st, e), append(v, (1+float64(i)/10)*math.Pow(e, -0.5))
		}
		m := map[string]float64{"final": v[len(v)-1], "acc": 1 / 3.0}
		switch i % 5 {
		case 1:
			m["acc"] = math.NaN()
		case 2:
			m["final"] = math.Inf(1)
		}
		results[p.ID] = &sweep.Result{RunID: p.ID, Metrics: m, Series: map[string]sweep.Series{"val_loss": {Step: st, Value: v}}}
	}
	return Table(runs, results, Default())
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestPandasRoundTrip: the export reads back in pandas 1.5.3 (as
// pandas_roundtrip.py reads it, with the dtypes from the metadata) to the
// same cells, floats bit for bit, from the CSV and from the JSON Lines. The
// files the script read are golden: any change to the export must be
// regenerated (go test -run TestPandasRoundTrip -update, then the script)
// so that pandas.json describes the bytes the test compares.
func TestPandasRoundTrip(t *testing.T) {
	d := roundtripDataset(t)
	dir := t.TempDir()
	if err := sweep.Export(context.Background(), dir, "rt", d, sweep.ExportConfig{JSONL: true, Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	gold := filepath.Join("testdata", "roundtrip")
	for _, f := range []string{"rt.csv", "rt.jsonl", "rt_metadata.json"} {
		got, _ := os.ReadFile(filepath.Join(dir, f))
		if *update {
			os.WriteFile(filepath.Join(gold, f), got, 0o644)
		}
		want, err := os.ReadFile(filepath.Join(gold, f))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s differs from the golden file pandas read; regenerate both (see the test's comment)", f)
		}
	}
	var md struct {
		PandasDtypes map[string]string `json:"pandas_dtypes"`
	}
	mb, _ := os.ReadFile(filepath.Join(gold, "rt_metadata.json"))
	json.Unmarshal(mb, &md)
	var pd struct {
		Pandas  string
		Columns []string
		CSV     struct {
			Dtypes map[string]string
			Rows   [][]any
		}
		JSONL struct {
			Dtypes map[string]string
			Rows   [][]any
		} `json:"jsonl"`
	}
	b, err := os.ReadFile(filepath.Join(gold, "pandas.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pd); err != nil {
		t.Fatal(err)
	}
	if pd.Pandas != "1.5.3" {
		t.Errorf("pandas.json written by pandas %s, want 1.5.3", pd.Pandas)
	}
	for _, f := range []struct {
		name   string
		dtypes map[string]string
		rows   [][]any
	}{{"csv", pd.CSV.Dtypes, pd.CSV.Rows}, {"jsonl", pd.JSONL.Dtypes, pd.JSONL.Rows}} {
		for j, c := range d.Columns {
			if got, want := f.dtypes[c.Name], md.PandasDtypes[c.Name]; got != want {
				t.Errorf("%s: column %s read as %s, metadata says %s", f.name, c.Name, got, want)
			}
			_ = j
		}
		if len(f.rows) != len(d.Rows) {
			t.Fatalf("%s: pandas read %d rows, want %d", f.name, len(f.rows), len(d.Rows))
		}
		for i, row := range d.Rows {
			for j, want := range row {
				if !sameCell(want, f.rows[i][j]) {
					t.Errorf("%s: row %d column %s: pandas read %v (%T), Go exported %v", f.name, i, d.Columns[j].Name, f.rows[i][j], f.rows[i][j], want)
				}
			}
		}
	}
}

// sameCell compares a Go cell with what pandas.json holds for it.
func sameCell(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		return got == w
	case bool:
		return got == w
	case int64:
		g, ok := got.(float64) // JSON numbers
		return ok && g == float64(w) && math.Abs(g) < 1<<53
	case float64:
		s, ok := got.(string)
		if !ok {
			return false
		}
		switch {
		case math.IsNaN(w):
			return s == "nan"
		case math.IsInf(w, 1):
			return s == "inf"
		case math.IsInf(w, -1):
			return s == "-inf"
		}
		g, err := strconv.ParseFloat(s, 64)
		return err == nil && math.Float64bits(g) == math.Float64bits(w)
	}
	return false
}
