package sweep

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
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

	"github.com/parquet-go/parquet-go"
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

// Col returns the index of the named column, or -1.
func (d *Dataset) col(name string) int {
	return slices.IndexFunc(d.Columns, func(c Column) bool { return c.Name == name })
}

// Floats returns the named numeric column (NaN for missing cells). It
// panics if there is no such column.
func (d *Dataset) floats(name string) []float64 {
	j := d.col(name)
	if j < 0 {
		panic("sweep: no such column")
	}
	out := make([]float64, len(d.Rows))
	for i, r := range d.Rows {
		switch x := r[j].(type) {
		case float64:
			out[i] = x
		case int64:
			out[i] = float64(x)
		default:
			out[i] = math.NaN()
		}
	}
	return out
}

// columnKind is the kind of a column that holds vals, decided by all of
// them (not the first): integers only → Int; integers and floats → Float;
// booleans only → Bool; anything else → String (numbers and booleans then
// keep their literal text).
func columnKind(vals []Value) Kind {
	k, first := String, true
	for _, v := range vals {
		switch {
		case first:
			k, first = v.Kind, false
		case k == v.Kind:
		case (k == Int || k == Float) && (v.Kind == Int || v.Kind == Float):
			k = Float
		default:
			return String
		}
	}
	return k
}

// cell converts a value to a cell of a column of kind k.
func cell(v Value, k Kind) any {
	switch k {
	case Int:
		return v.Int()
	case Float:
		return v.Float()
	case Bool:
		return v.Bool()
	}
	return v.Lit
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

// WriteParquet writes the dataset as one Parquet file: every column
// optional (a missing cell is null), strings as UTF-8 byte arrays, ints as
// INT64, floats as DOUBLE (NaN and ±Inf kept), booleans as BOOLEAN. Parquet
// orders a schema's columns by name; the metadata keeps the CSV order.
func (d *Dataset) writeParquet(w io.Writer) error {
	if err := d.checkRows(); err != nil {
		return err
	}
	g := parquet.Group{}
	for _, c := range d.Columns {
		var n parquet.Node
		switch c.Kind {
		case Int:
			n = parquet.Int(64)
		case Float:
			n = parquet.Leaf(parquet.DoubleType)
		case Bool:
			n = parquet.Leaf(parquet.BooleanType)
		default:
			n = parquet.String()
		}
		if _, dup := g[c.Name]; dup {
			return fmt.Errorf("sweep: dataset has two columns named %q", c.Name)
		}
		g[c.Name] = parquet.Optional(n)
	}
	schema := parquet.NewSchema("sweep", g)
	// The leaf order of a Group is its sorted names.
	order := make([]int, len(d.Columns))
	for i, path := range schema.Columns() {
		order[i] = d.col(path[0])
	}
	pw := parquet.NewWriter(w, schema)
	rows := make([]parquet.Row, 0, 1024)
	flush := func() error {
		_, err := pw.WriteRows(rows)
		rows = rows[:0]
		return err
	}
	for _, r := range d.Rows {
		row := make(parquet.Row, len(order))
		for leaf, j := range order {
			var v parquet.Value
			switch x := r[j].(type) {
			case nil:
				v = parquet.NullValue().Level(0, 0, leaf)
				row[leaf] = v
				continue
			case float64:
				v = parquet.DoubleValue(x)
			case int64:
				v = parquet.Int64Value(x)
			case bool:
				v = parquet.BooleanValue(x)
			case string:
				v = parquet.ByteArrayValue([]byte(x))
			default:
				panic("sweep: dataset cell of unsupported type")
			}
			row[leaf] = v.Level(0, 1, leaf)
		}
		rows = append(rows, row)
		if len(rows) == cap(rows) {
			if err := flush(); err != nil {
				return fmt.Errorf("sweep: parquet: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("sweep: parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("sweep: parquet: %w", err)
	}
	return nil
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

// ExportFiles says which formats Export writes besides CSV.
type ExportFiles struct {
	JSONL, Parquet bool
}

// Export writes dir/<name>.csv, dir/<name>_metadata.json and, as files
// asks, dir/<name>.jsonl and dir/<name>.parquet, and, when series is
// non-nil, one CSV per run under dir/<name>_trajectories/<key>.csv (series
// maps a row key, usually the slug, to the run's series; each file has a
// "step" column with every step any series logged, in order, and one
// column per series, in name order, empty where a series has no value at
// that step). skipped, if any, is recorded in the metadata. now is the
// export date. Files are written atomically, mode 0666 less the umask.
func Export(dir, name string, d *Dataset, series map[string]map[string]Series, skipped []Problem, files ExportFiles, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: export: %w", err)
	}
	write := func(file string, f func(io.Writer) error) error {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			return err
		}
		return writeAtomic(filepath.Join(dir, file), buf.Bytes())
	}
	md := metadata{TotalRuns: len(d.Rows), ExportDate: now.UTC().Format(time.RFC3339), ColumnTypes: map[string]string{},
		PandasDtypes: map[string]string{}, Skipped: skipped}
	if err := write(name+".csv", d.writeCSV); err != nil {
		return err
	}
	md.Files = append(md.Files, name+".csv")
	if files.JSONL {
		if err := write(name+".jsonl", d.writeJSONL); err != nil {
			return err
		}
		md.Files = append(md.Files, name+".jsonl")
	}
	if files.Parquet {
		if err := write(name+".parquet", d.writeParquet); err != nil {
			return err
		}
		md.Files = append(md.Files, name+".parquet")
	}
	for j, c := range d.Columns {
		md.Columns = append(md.Columns, c.Name)
		md.ColumnTypes[c.Name] = c.Kind.String()
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
	if series != nil {
		md.Files = append(md.Files, name+"_trajectories/")
	}
	b, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, name+"_metadata.json"), append(b, '\n')); err != nil {
		return err
	}
	if series == nil {
		return nil
	}
	tdir := filepath.Join(dir, name+"_trajectories")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return fmt.Errorf("sweep: export: %w", err)
	}
	for key, ss := range series {
		if err := writeAtomic(filepath.Join(tdir, slugText(key)+".csv"), trajectoryCSV(ss)); err != nil {
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

// SchemaError reports columns a CSV lacks.
type SchemaError struct {
	Missing []string
}

func (e *SchemaError) Error() string {
	return "sweep: export is missing columns: " + strings.Join(e.Missing, ", ")
}

// CheckSchema reads the header of a CSV export and returns a *SchemaError
// naming every required column it lacks (OutputColumns are the study's).
func CheckSchema(r io.Reader, required []string) error {
	header, err := csv.NewReader(r).Read()
	if err != nil {
		return fmt.Errorf("sweep: reading export header: %w", err)
	}
	var missing []string
	for _, c := range required {
		if !slices.Contains(header, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return &SchemaError{Missing: missing}
	}
	return nil
}

// ErrChecksum is wrapped by VerifyArchive's errors for a file whose content
// does not match the manifest.
var ErrChecksum = errors.New("checksum mismatch")
