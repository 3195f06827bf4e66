package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Column is one column of a Dataset: its name, its kind (String, Int, Float
// or Bool) and what it holds (written to the export's metadata).
type Column struct {
	Name string
	Kind Kind
	Doc  string
}

// Dataset is a table with one row per run. Cells are string, int64,
// float64 or bool according to the column's kind, or nil for a missing
// value.
type Dataset struct {
	Columns []Column
	Rows    [][]any
}

// appendFloat writes x as the export does: the shortest fixed-point text
// that reads back as the same float64 (strconv 'f', -1: 1e-7 is
// "0.0000001", never "1e-07", and nothing is rounded away), with ".0" added
// to whole numbers so that a float column reads as float; NaN as an empty
// cell; ±Inf as "inf" and "-inf".
func appendFloat(dst []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return dst
	case math.IsInf(x, 1):
		return append(dst, "inf"...)
	case math.IsInf(x, -1):
		return append(dst, "-inf"...)
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, x, 'f', -1, 64)
	if !bytes.ContainsRune(dst[n:], '.') {
		dst = append(dst, ".0"...)
	}
	return dst
}

func appendCSVCell(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return dst
	case float64:
		return appendFloat(dst, x)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case bool:
		return strconv.AppendBool(dst, x)
	case string:
		if x == "" || strings.ContainsAny(x, ",\"\r\n") || strings.TrimSpace(x) != x {
			return append(dst, `"`+strings.ReplaceAll(x, `"`, `""`)+`"`...)
		}
		return append(dst, x...)
	}
	panic("sweep: dataset cell of unsupported type")
}

func (d *Dataset) checkRows() error {
	for i, r := range d.Rows {
		if len(r) != len(d.Columns) {
			return fmt.Errorf("sweep: dataset row %d has %d cells for %d columns", i, len(r), len(d.Columns))
		}
	}
	return nil
}

// WriteCSV writes the dataset with a header row, columns in order. An empty
// string is written quoted ("") so that it differs from a missing cell.
func (d *Dataset) writeCSV(w io.Writer) error {
	if err := d.checkRows(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for j, c := range d.Columns {
		if j > 0 {
			line = append(line, ',')
		}
		line = appendCSVCell(line, c.Name)
	}
	line = append(line, '\n')
	if _, err := bw.Write(line); err != nil {
		return err
	}
	for _, r := range d.Rows {
		line = line[:0]
		for j, v := range r {
			if j > 0 {
				line = append(line, ',')
			}
			line = appendCSVCell(line, v)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteJSONL writes one JSON object per row (JSON Lines), keys in column
// order. Floats are written in the shortest form that reads back exactly
// (strconv 'g', -1: JSON readers, pandas' among them, choke on the
// 300-digit fixed-point form of 1e300); NaN and missing cells are null,
// ±Inf the strings "inf" and "-inf".
func (d *Dataset) writeJSONL(w io.Writer) error {
	if err := d.checkRows(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for _, r := range d.Rows {
		line = append(line[:0], '{')
		for j, v := range r {
			if j > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendQuote(line, d.Columns[j].Name)
			line = append(line, ':')
			switch x := v.(type) {
			case nil:
				line = append(line, "null"...)
			case float64:
				if math.IsNaN(x) {
					line = append(line, "null"...)
				} else {
					b, _ := num(x).MarshalJSON()
					line = append(line, b...)
				}
			case int64:
				line = strconv.AppendInt(line, x, 10)
			case bool:
				line = strconv.AppendBool(line, x)
			case string:
				b, _ := json.Marshal(x)
				line = append(line, b...)
			default:
				panic("sweep: dataset cell of unsupported type")
			}
		}
		line = append(line, "}\n"...)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// pandasDtype is the dtype pandas should read a column of kind k with:
// the nullable Int64 and boolean when some cell is missing, since NumPy's
// int64 and bool cannot hold one.
func pandasDtype(k Kind, missing bool) string {
	switch k {
	case Int:
		if missing {
			return "Int64"
		}
		return "int64"
	case Float:
		return "float64"
	case Bool:
		if missing {
			return "boolean"
		}
		return "bool"
	}
	return "object"
}

// metadata is the <name>_metadata.json written beside an export.
type metadata struct {
	TotalRuns   int               `json:"total_runs"`
	ExportDate  string            `json:"export_date"`
	Columns     []string          `json:"columns"`
	ColumnTypes map[string]string `json:"column_types"`
	// PandasDtypes maps each column to the dtype to pass to
	// pandas.read_csv(dtype=...) or DataFrame.astype.
	PandasDtypes map[string]string `json:"pandas_dtypes"`
	Descriptions map[string]string `json:"descriptions,omitempty"`
	Files        []string          `json:"files"`
	// Skipped lists the runs left out of the export and why (damaged
	// result files, see Collect).
	Skipped []Problem `json:"skipped,omitempty"`
}

// ExportConfig says what Export writes besides <name>.csv and
// <name>_metadata.json.
type ExportConfig struct {
	// JSONL adds <name>.jsonl, one JSON object per row.
	JSONL bool
	// Formats adds <name>.<ext> for each extension, written by its
	// function (sweep/parquet's Write under "parquet"), in extension order.
	Formats map[string]func(w io.Writer, d *Dataset) error
	// Series, when non-nil, adds one CSV per run under
	// <name>_trajectories/<key>.csv: Series maps a row key, usually the
	// slug, to the run's series; each file has a "step" column with every
	// step any series logged, in order, and one column per series, in name
	// order, empty where a series has no value at that step.
	Series map[string]map[string]Series
	// Skipped, if any, is recorded in the metadata (runs Collect could
	// not read).
	Skipped []Problem
	// Now is the export date written to the metadata; zero means the
	// current time.
	Now time.Time
}

// Export writes dir/<name>.csv, dir/<name>_metadata.json and what cfg
// adds. The metadata has total_runs (the rows), the columns with their
// kinds, pandas dtypes and descriptions, the files written and the skipped
// runs. Files are written atomically, mode 0666 less the umask; ctx is
// checked between files.
func Export(ctx context.Context, dir, name string, d *Dataset, cfg ExportConfig) error {
	if err := d.checkRows(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: export: %w", err)
	}
	write := func(file string, f func(io.Writer) error) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sweep: export: %w", err)
		}
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			return err
		}
		return writeAtomic(filepath.Join(dir, file), buf.Bytes())
	}
	now := cfg.Now
	if now.IsZero() {
		now = time.Now()
	}
	md := metadata{TotalRuns: len(d.Rows), ExportDate: now.UTC().Format(time.RFC3339), ColumnTypes: map[string]string{},
		PandasDtypes: map[string]string{}, Skipped: cfg.Skipped}
	if err := write(name+".csv", d.writeCSV); err != nil {
		return err
	}
	md.Files = append(md.Files, name+".csv")
	if cfg.JSONL {
		if err := write(name+".jsonl", d.writeJSONL); err != nil {
			return err
		}
		md.Files = append(md.Files, name+".jsonl")
	}
	for _, ext := range slices.Sorted(maps.Keys(cfg.Formats)) {
		f := cfg.Formats[ext]
		if err := write(name+"."+ext, func(w io.Writer) error { return f(w, d) }); err != nil {
			return fmt.Errorf("sweep: export %s: %w", ext, err)
		}
		md.Files = append(md.Files, name+"."+ext)
	}
	for j, c := range d.Columns {
		md.Columns = append(md.Columns, c.Name)
		md.ColumnTypes[c.Name] = c.Kind.name()
		missing := false
		for _, r := range d.Rows {
			if r[j] == nil {
				missing = true
				break
			}
		}
		md.PandasDtypes[c.Name] = pandasDtype(c.Kind, missing)
		if c.Doc != "" {
			if md.Descriptions == nil {
				md.Descriptions = map[string]string{}
			}
			md.Descriptions[c.Name] = c.Doc
		}
	}
	if cfg.Series != nil {
		md.Files = append(md.Files, name+"_trajectories/")
	}
	b, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return err
	}
	if err := write(name+"_metadata.json", func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		return err
	}
	if cfg.Series == nil {
		return nil
	}
	tdir := filepath.Join(dir, name+"_trajectories")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return fmt.Errorf("sweep: export: %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(cfg.Series)) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sweep: export: %w", err)
		}
		if err := writeAtomic(filepath.Join(tdir, slugText(key)+".csv"), trajectoryCSV(cfg.Series[key])); err != nil {
			return err
		}
	}
	return nil
}

// trajectoryCSV is one run's series as a wide table over the union of
// their steps.
func trajectoryCSV(ss map[string]Series) []byte {
	names := slices.Sorted(maps.Keys(ss))
	var steps []float64
	for _, s := range ss {
		steps = append(steps, s.Step...)
	}
	slices.Sort(steps)
	steps = slices.Compact(steps)
	at := make([]map[float64]float64, len(names))
	for i, n := range names {
		at[i] = make(map[float64]float64, len(ss[n].Step))
		for k, st := range ss[n].Step {
			at[i][st] = ss[n].Value[k]
		}
	}
	b := []byte("step")
	for _, n := range names {
		b = append(b, ',')
		b = appendCSVCell(b, n)
	}
	b = append(b, '\n')
	for _, st := range steps {
		b = appendFloat(b, st)
		for i := range names {
			b = append(b, ',')
			if v, ok := at[i][st]; ok {
				b = appendFloat(b, v)
			}
		}
		b = append(b, '\n')
	}
	return b
}
