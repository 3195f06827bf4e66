package sweep

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Column is one column of a Dataset: its name and kind (String, Int, Float
// or Bool).
type Column struct {
	Name string
	Kind Kind
}

// Dataset is a table with one row per run. Cells are string, int64,
// float64 or bool according to the column's kind.
type Dataset struct {
	Columns []Column
	Rows    [][]any
}

// Col returns the index of the named column, or -1.
func (d *Dataset) Col(name string) int {
	return slices.IndexFunc(d.Columns, func(c Column) bool { return c.Name == name })
}

// Floats returns the named float column (NaN for missing cells). It panics
// if there is no such column.
func (d *Dataset) Floats(name string) []float64 {
	j := d.Col(name)
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

var kindNames = [...]string{String: "string", Int: "int", Float: "float", Bool: "bool"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// FormatFloat writes x as the export does: %.6f, NaN as an empty cell,
// ±Inf as "inf" and "-inf".
func FormatFloat(dst []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return dst
	case math.IsInf(x, 1):
		return append(dst, "inf"...)
	case math.IsInf(x, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, x, 'f', 6, 64)
}

func appendCell(dst []byte, c Column, v any) []byte {
	switch x := v.(type) {
	case nil:
		return dst
	case float64:
		return FormatFloat(dst, x)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case bool:
		return strconv.AppendBool(dst, x)
	case string:
		if strings.ContainsAny(x, ",\"\r\n") || strings.TrimSpace(x) != x {
			return append(dst, `"`+strings.ReplaceAll(x, `"`, `""`)+`"`...)
		}
		return append(dst, x...)
	}
	panic("sweep: dataset cell of unsupported type")
}

// WriteCSV writes the dataset with a header row, columns in order.
func (d *Dataset) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for j, c := range d.Columns {
		if j > 0 {
			line = append(line, ',')
		}
		line = appendCell(line, Column{Kind: String}, c.Name)
	}
	line = append(line, '\n')
	if _, err := bw.Write(line); err != nil {
		return err
	}
	for i, r := range d.Rows {
		if len(r) != len(d.Columns) {
			return fmt.Errorf("sweep: dataset row %d has %d cells for %d columns", i, len(r), len(d.Columns))
		}
		line = line[:0]
		for j, v := range r {
			if j > 0 {
				line = append(line, ',')
			}
			line = appendCell(line, d.Columns[j], v)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Metadata is the <name>_metadata.json written beside an export.
type Metadata struct {
	TotalRuns   int               `json:"total_runs"`
	ExportDate  string            `json:"export_date"`
	Columns     []string          `json:"columns"`
	ColumnTypes map[string]string `json:"column_types"`
}

// Export writes dir/<name>.csv, dir/<name>_metadata.json and, when curves
// is non-nil, one CSV per run under dir/<name>_trajectories/<key>.csv
// (curves maps a row key, usually the slug, to named equal-length series,
// written with columns in sorted name order). now is the export date.
func Export(dir, name string, d *Dataset, curves map[string]map[string][]float64, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: export: %w", err)
	}
	var buf strings.Builder
	if err := d.WriteCSV(&buf); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, name+".csv"), []byte(buf.String())); err != nil {
		return err
	}
	md := Metadata{TotalRuns: len(d.Rows), ExportDate: now.UTC().Format(time.RFC3339), ColumnTypes: map[string]string{}}
	for _, c := range d.Columns {
		md.Columns = append(md.Columns, c.Name)
		md.ColumnTypes[c.Name] = c.Kind.String()
	}
	b, err := json.MarshalIndent(md, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, name+"_metadata.json"), append(b, '\n')); err != nil {
		return err
	}
	if curves == nil {
		return nil
	}
	tdir := filepath.Join(dir, name+"_trajectories")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return fmt.Errorf("sweep: export: %w", err)
	}
	for key, cs := range curves {
		names := make([]string, 0, len(cs))
		for n := range cs {
			names = append(names, n)
		}
		slices.Sort(names)
		n := 0
		for _, c := range cs {
			n = max(n, len(c))
		}
		var b []byte
		b = append(b, strings.Join(names, ",")...)
		b = append(b, '\n')
		for i := range n {
			for j, nm := range names {
				if j > 0 {
					b = append(b, ',')
				}
				if c := cs[nm]; i < len(c) {
					b = FormatFloat(b, c[i])
				}
			}
			b = append(b, '\n')
		}
		if err := writeAtomic(filepath.Join(tdir, slugText(key)+".csv"), b); err != nil {
			return err
		}
	}
	return nil
}

// SchemaError reports columns a CSV lacks.
type SchemaError struct {
	Missing []string
}

func (e *SchemaError) Error() string {
	return "sweep: export is missing columns: " + strings.Join(e.Missing, ", ")
}

// CheckSchema reads the header of a CSV export and returns a *SchemaError
// naming every required column it lacks.
func CheckSchema(r io.Reader, required []string) error {
	header, err := csv.NewReader(r).Read()
	if err != nil {
		return fmt.Errorf("sweep: reading export header: %w", err)
	}
	have := map[string]bool{}
	for _, h := range header {
		have[h] = true
	}
	var missing []string
	for _, c := range required {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return &SchemaError{Missing: missing}
	}
	return nil
}

// Completeness compares a sweep's expected grid with what completed.
type Completeness struct {
	Expected  int
	Complete  []string // slugs completed with finite metrics
	Missing   []string // expected runs not completed (queued, running, cancelled, absent)
	Failed    []string // failed runs
	NonFinite []string // completed but with a NaN or Inf metric
}

// String is e.g. "214/216 runs completed (1 failed, 1 missing, 0 non-finite)".
func (c *Completeness) String() string {
	return fmt.Sprintf("%d/%d runs completed (%d failed, %d missing, %d non-finite)", len(c.Complete), c.Expected, len(c.Failed), len(c.Missing), len(c.NonFinite))
}

// CheckCompleteness computes completeness = expected points minus runs
// completed with finite metrics, reading each completed run's result from
// workDir.
func CheckCompleteness(ctx context.Context, l *Ledger, workDir string, expected []Point) (*Completeness, error) {
	rs, err := l.Runs(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*Run, len(rs))
	for i := range rs {
		byID[rs[i].ID] = &rs[i]
	}
	c := &Completeness{Expected: len(expected)}
	for _, p := range expected {
		r, ok := byID[p.ID]
		switch {
		case !ok:
			c.Missing = append(c.Missing, p.Slug)
		case r.State == Failed:
			c.Failed = append(c.Failed, p.Slug)
		case r.State != Completed:
			c.Missing = append(c.Missing, p.Slug)
		default:
			res, err := ReadResult(AttemptDir(workDir, r.ID, r.Attempt))
			if err != nil {
				c.Failed = append(c.Failed, p.Slug)
				continue
			}
			finite := true
			for _, v := range res.Metrics {
				finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
			}
			if finite {
				c.Complete = append(c.Complete, p.Slug)
			} else {
				c.NonFinite = append(c.NonFinite, p.Slug)
			}
		}
	}
	return c, nil
}

// ManifestEntry is one archived result.
type ManifestEntry struct {
	RunID   string `json:"run_id"`
	Slug    string `json:"slug"`
	Attempt int    `json:"attempt"`
	File    string `json:"file"`
	SHA256  string `json:"sha256"`
	Bytes   int    `json:"bytes"`
}

// Manifest lists an archive's files with their checksums.
type Manifest struct {
	Created string          `json:"created"`
	Runs    []ManifestEntry `json:"runs"`
}

// ManifestFile is the manifest's name inside an archive directory.
const ManifestFile = "manifest.json"

// Collect copies the result file of every completed run into archiveDir
// (runs/<id>.json), writes manifest.json with SHA-256 checksums and returns
// the manifest and the results by run id. A result that cannot be read is an
// error naming the run.
func Collect(ctx context.Context, l *Ledger, workDir, archiveDir string, now time.Time) (*Manifest, map[string]*Result, error) {
	rs, err := l.Runs(ctx, Completed)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Join(archiveDir, "runs"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("sweep: collect: %w", err)
	}
	m := &Manifest{Created: now.UTC().Format(time.RFC3339)}
	results := make(map[string]*Result, len(rs))
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			return m, results, err
		}
		src := filepath.Join(AttemptDir(workDir, r.ID, r.Attempt), ResultFile)
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, nil, fmt.Errorf("sweep: collect run %s: %w", r.Slug, err)
		}
		res, err := UnmarshalResult(b)
		if err != nil {
			return nil, nil, fmt.Errorf("sweep: collect run %s: %s: %w", r.Slug, src, err)
		}
		results[r.ID] = res
		file := filepath.Join("runs", r.ID+".json")
		if err := writeAtomic(filepath.Join(archiveDir, file), b); err != nil {
			return nil, nil, err
		}
		sum := sha256.Sum256(b)
		m.Runs = append(m.Runs, ManifestEntry{RunID: r.ID, Slug: r.Slug, Attempt: r.Attempt, File: file, SHA256: hex.EncodeToString(sum[:]), Bytes: len(b)})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if err := writeAtomic(filepath.Join(archiveDir, ManifestFile), append(b, '\n')); err != nil {
		return nil, nil, err
	}
	return m, results, nil
}

// ErrChecksum is wrapped by VerifyArchive's errors for a file whose content
// does not match the manifest.
var ErrChecksum = errors.New("sweep: checksum mismatch")

// VerifyArchive re-reads every file listed in archiveDir/manifest.json and
// checks its SHA-256; the error names every bad or missing file.
func VerifyArchive(archiveDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(archiveDir, ManifestFile))
	if err != nil {
		return 0, fmt.Errorf("sweep: verify: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, fmt.Errorf("sweep: verify %s: %w", ManifestFile, err)
	}
	var errs []error
	for _, e := range m.Runs {
		fb, err := os.ReadFile(filepath.Join(archiveDir, e.File))
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep: verify run %s: %w", e.Slug, err))
			continue
		}
		sum := sha256.Sum256(fb)
		if hex.EncodeToString(sum[:]) != e.SHA256 {
			errs = append(errs, fmt.Errorf("%w: %s (run %s)", ErrChecksum, e.File, e.Slug))
		}
	}
	return len(m.Runs), errors.Join(errs...)
}
