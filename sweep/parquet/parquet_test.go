package parquet

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"
)

// TestWriteReadsBack: a dataset exported with Write under "parquet" reads
// back with the same cells (NaN, ±Inf and missing cells kept), and the
// metadata lists the file.
func TestWriteReadsBack(t *testing.T) {
	d := &sweep.Dataset{
		Columns: []sweep.Column{{Name: "slug"}, {Name: "n", Kind: sweep.Int}, {Name: "x", Kind: sweep.Float}, {Name: "ok", Kind: sweep.Bool}},
		Rows: [][]any{
			{"a", int64(1), 0.5, true},
			{"b,c", int64(-2), math.NaN(), false},
			{"d", int64(3), math.Inf(1), true},
			{"e", int64(4), math.Inf(-1), nil},
			{"", int64(5), 1e-7, true},
			{"g", nil, 2.0, false},
		},
	}
	dir := t.TempDir()
	if err := sweep.Export(context.Background(), dir, "study", d, sweep.ExportConfig{Formats: map[string]func(io.Writer, *sweep.Dataset) error{"parquet": Write}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "study_metadata.json"))
	if err != nil || !strings.Contains(string(md), `"study.parquet"`) {
		t.Fatal(err)
	}
	pf, err := os.Open(filepath.Join(dir, "study.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	got := readParquet(t, pf)
	if diff := cmp.Diff(d.Rows, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("parquet rows (-want +got):\n%s", diff)
	}
	// Two columns of one name cannot be told apart in Parquet.
	dup := &sweep.Dataset{Columns: []sweep.Column{{Name: "a"}, {Name: "a"}}}
	if err := Write(io.Discard, dup); err == nil {
		t.Error("two columns named a: no error")
	}
	// A row of the wrong length is an error, not a panic.
	short := &sweep.Dataset{Columns: []sweep.Column{{Name: "a"}}, Rows: [][]any{{}}}
	if err := Write(io.Discard, short); err == nil {
		t.Error("short row: no error")
	}
}

// readParquet reads a file Write wrote back into rows in the CSV's
// column order (its metadata order is not in the file; the test knows it).
func readParquet(t *testing.T, f *os.File) [][]any {
	t.Helper()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	cols := pf.Schema().Columns()
	order := map[string]int{"slug": 0, "n": 1, "x": 2, "ok": 3}
	var out [][]any
	rows := pf.NumRows()
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, rows)
	n, err := r.ReadRows(buf)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	for _, row := range buf[:n] {
		cells := make([]any, len(cols))
		for _, v := range row {
			j := order[cols[v.Column()][0]]
			if v.IsNull() {
				continue
			}
			switch v.Kind() {
			case parquet.Int64:
				cells[j] = v.Int64()
			case parquet.Double:
				cells[j] = v.Double()
			case parquet.Boolean:
				cells[j] = v.Boolean()
			case parquet.ByteArray:
				cells[j] = string(v.ByteArray())
			}
		}
		out = append(out, cells)
	}
	return out
}
