package regime

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FRESCO telemetry column names read by readCSV and readParquet. Columns
// named value_<metric> are metrics; Schema lists the others with their
// units. Only colJob is required. A colCluster value, when present and
// non-empty, overrides the cluster name given to the reader. Any other
// column, and any column without a name, is reported in table.Unknown and
// otherwise ignored. A name may appear twice only in columns the reader
// does not read (two "notes" columns, say); two jid or value_gpu columns
// are an error.
const (
	colJob       = "jid"
	colCluster   = "cluster"
	colTime      = "time"
	colSubmit    = "submit_time"
	colStart     = "start_time"
	colEnd       = "end_time"
	colTimelimit = "timelimit"
	colNHosts    = "nhosts"
	colNCores    = "ncores"
	colAccount   = "account"
	colQueue     = "queue"
	colHost      = "host"
	colExit      = "exitcode"
	colUser      = "username"
	// valuePrefix starts every metric column: value_<metric>, e.g.
	// value_gpu, value_memused (GB).
	valuePrefix = "value_"
)

// column describes one column of the job tables readCSV and readParquet
// accept.
type column struct {
	Name     string
	Required bool
	Unit     string // of numbers and times
	Meaning  string
}

// schema returns the named columns of the job tables, in the order of the
// docs (docs/overlap.md lists the same table). Metric columns
// (valuePrefix + name) are not listed: any number of them may follow.
func schema() []column {
	return []column{
		{colJob, true, "", "job id; rows of one job (per host and sample) are aggregated"},
		{colCluster, false, "", "cluster name, overriding the reader's cluster argument"},
		{colTime, false, "timestamp", "sample time of the telemetry row"},
		{colSubmit, false, "timestamp", "submission time"},
		{colStart, false, "timestamp", "start time"},
		{colEnd, false, "timestamp", "end time"},
		{colTimelimit, false, "seconds (Units scales other units per cluster)", "requested wall-time limit"},
		{colNHosts, false, "count", "nodes allocated"},
		{colNCores, false, "count", "cores allocated"},
		{colAccount, false, "", "account charged"},
		{colQueue, false, "", "partition or queue (with the hardware table: authoritative regime)"},
		{colHost, false, "", "node of the telemetry row"},
		{colExit, false, "", "exit code or state"},
		{colUser, false, "", "user name"},
	}
}

// layouts are the timestamp layouts readers accept, tried in order.
var layouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"01/02/2006 15:04:05",
	"2006-01-02",
}

// parseTime parses a timestamp; text without a zone is read as UTC (naive).
// Empty, "NaN", "NaT", "NA" and "null" are missing (zero time). A plain
// number is Unix seconds.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if isMissing(s) {
		return time.Time{}, nil
	}
	if t, ok := fastTime(s); ok {
		return t, nil
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) < 1e11 {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%w: timestamp %q", ErrBadValue, s)
}

// fastTime parses the two layouts job tables use most,
// "2006-01-02 15:04:05" (FRESCO) and "01/02/2006 15:04:05" (Stampede),
// without allocating; ok is false for anything else, including
// out-of-range fields, which the general layouts then reject.
func fastTime(s string) (time.Time, bool) {
	if len(s) != 19 || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	var y, mo, d int
	var ok1, ok2, ok3 bool
	switch {
	case s[4] == '-' && s[7] == '-':
		y, ok1 = digits(s[0:4])
		mo, ok2 = digits(s[5:7])
		d, ok3 = digits(s[8:10])
	case s[2] == '/' && s[5] == '/':
		mo, ok1 = digits(s[0:2])
		d, ok2 = digits(s[3:5])
		y, ok3 = digits(s[6:10])
	default:
		return time.Time{}, false
	}
	h, ok4 := digits(s[11:13])
	mi, ok5 := digits(s[14:16])
	se, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, se, 0, time.UTC)
	if t.Day() != d { // 31 April and the like
		return time.Time{}, false
	}
	return t, true
}

func digits(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func isMissing(s string) bool {
	switch s {
	case "", "NaN", "nan", "NaT", "NA", "N/A", "null", "NULL", "None":
		return true
	}
	return false
}

// parseNumber parses a number; missing text (and NaN) is NaN. The readers'
// one policy for odd numbers, in CSV and Parquet alike: NaN is missing,
// ±Inf is an error (no job field or telemetry sample is infinite; an
// infinity is a broken export), and a negative count or limit is an error
// (see row). A job that ends before it starts gets no runtime (Job.Feature).
func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if isMissing(s) {
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN(), fmt.Errorf("%w: number %q", ErrBadValue, s)
	}
	if math.IsInf(f, 0) {
		return math.NaN(), fmt.Errorf("%w: infinite number %q", ErrBadValue, s)
	}
	if math.IsNaN(f) {
		return math.NaN(), nil
	}
	return f, nil
}

// known are the named columns of Schema.
var known = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range schema() {
		m[c.Name] = true
	}
	return m
}()

// columns maps a header to field indices.
type columns struct {
	idx     map[string]int // matched name (see matchName) -> field
	metrics []string       // every metric of the header, in header order
	kept    []string       // the metrics rows carry, in header order
	mcols   []int          // fields of kept
	unknown []string       // header names the reader does not use, as written
	header  []string       // every header name as written (without a byte-order mark and surrounding spaces)
}

// matchName is the name a header field is matched by: without a byte-order
// mark and surrounding spaces, lower-cased, so that " JID " is jid.
func matchName(h string) string {
	return strings.ToLower(written(h))
}

// written is a header field's name as written, without a byte-order mark
// and surrounding spaces.
func written(h string) string {
	return strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
}

// newColumns reads a header. keep names the metrics rows carry (nil: every
// metric); the others are not read. A field without a name (Excel's
// trailing empty columns, pandas' index) is never read and is reported in
// unknown as "". A name may repeat only in columns the reader does not
// read. On error it returns the offending column, if any.
func newColumns(header []string, keep []string) (*columns, string, error) {
	c := &columns{idx: make(map[string]int, len(header)), header: make([]string, len(header))}
	for i, h := range header {
		name := matchName(h)
		c.header[i] = written(h)
		if name == "" {
			c.unknown = append(c.unknown, "")
			continue
		}
		m, isMetric := strings.CutPrefix(name, valuePrefix)
		isMetric = isMetric && m != ""
		read := known[name] || isMetric && (keep == nil || slices.Contains(keep, m))
		if j, dup := c.idx[name]; dup {
			if read {
				return nil, c.header[i], duplicate(c.header[j], j, c.header[i], i)
			}
			if !isMetric {
				c.unknown = append(c.unknown, c.header[i])
			}
			continue
		}
		c.idx[name] = i
		switch {
		case isMetric:
			c.metrics = append(c.metrics, m)
			if read {
				c.kept = append(c.kept, m)
				c.mcols = append(c.mcols, i)
			}
		case !known[name]:
			c.unknown = append(c.unknown, c.header[i])
		}
	}
	if _, ok := c.idx[colJob]; !ok {
		return nil, "", fmt.Errorf("%w %q%s", ErrMissingColumn, colJob, otherSeparator(c.header))
	}
	return c, "", nil
}

// otherSeparator is a hint for a header read as one field that another
// separator would split (a spreadsheet's ';' export, a tab-separated
// file), or "".
func otherSeparator(header []string) string {
	if len(header) != 1 {
		return ""
	}
	for _, sep := range []string{";", "\t", "|"} {
		if strings.Contains(header[0], sep) {
			return fmt.Sprintf(" (the header is one field with %q in it: the file looks %q-separated, and the reader wants commas)", sep, sep)
		}
	}
	return ""
}

// duplicate is the error of two header fields (0-based j and i, names as
// written) that match the same name.
func duplicate(first string, j int, second string, i int) error {
	return fmt.Errorf("%w: duplicate column: fields %d (%q) and %d (%q) have the same name (names are matched without case and surrounding spaces)",
		ErrBadValue, j+1, first, i+1, second)
}

// used reports whether field i is read into rows.
func (c *columns) used(i int) bool {
	for name, j := range c.idx {
		if j == i && known[name] {
			return true
		}
	}
	return slices.Contains(c.mcols, i)
}

// newCSV returns a csv.Reader over r that skips a leading UTF-8 byte-order
// mark (as Excel writes it): left in place it would make a quoted first
// header field a syntax error.
func newCSV(r io.Reader) *csv.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	return cr
}

// csvError turns an error of encoding/csv into a *ParseError. rec is the
// record Read returned with it (a record of the wrong length comes back
// with csv.ErrFieldCount), want the header's length.
func csvError(file string, err error, rec []string, want int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return &ParseError{File: file, Line: pe.Line,
				Err: fmt.Errorf("%w: %d fields, the header has %d", ErrBadValue, len(rec), want)}
		}
		return &ParseError{File: file, Line: pe.Line, Pos: pe.Column, Err: fmt.Errorf("%w: %w", ErrBadValue, pe.Err)}
	}
	return &ParseError{File: file, Err: err}
}

// repeatedHeader is the error of a data row that repeats the header, which
// read as data would be a job named "jid" or a bad value.
func repeatedHeader(file string, cr *csv.Reader) *ParseError {
	line, _ := cr.FieldPos(0)
	return &ParseError{File: file, Line: line, Err: fmt.Errorf("%w: the row repeats the header (files joined with cat? keep the first header only)", ErrBadValue)}
}

// scanCSV reads a telemetry CSV, calls header (when not nil) with its
// columns and each with every row; the row and its Values are reused
// between calls. It returns the columns and the number of data rows.
func scanCSV(r io.Reader, file, cluster string, keep []string, header func(*columns), each func(*row)) (*columns, int, error) {
	cr := newCSV(r)
	names, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, &ParseError{File: file, Err: fmt.Errorf("%w: empty file, no header", ErrMissingColumn)}
		}
		return nil, 0, csvError(file, err, names, len(names))
	}
	names = slices.Clone(names) // the reader reuses its record
	cols, col, err := newColumns(names, keep)
	if err != nil {
		return nil, 0, &ParseError{File: file, Line: 1, column: col, Err: err}
	}
	if header != nil {
		header(cols)
	}
	width := len(names)
	var row row
	n := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return cols, n, nil
		}
		if err != nil {
			return nil, n, csvError(file, err, rec, width)
		}
		n++
		if slices.Equal(rec, names) {
			return nil, n, repeatedHeader(file, cr)
		}
		if i, err := cols.fill(&row, rec, cluster); err != nil {
			// The bad field's line: a quoted field before it may span lines.
			line, _ := cr.FieldPos(i)
			return nil, n, &ParseError{File: file, Line: line, column: cols.header[i], Err: err}
		}
		each(&row)
	}
}

// readCSV reads a FRESCO-style telemetry CSV (one row per job, host and
// sample, or one row per job) into a table, every row kept. file names the
// input in errors; cluster is the cluster of rows without a cluster
// column. Header names are matched without case and surrounding spaces; a
// leading byte-order mark, CRLF line ends and quoted fields are read as
// encoding/csv reads them. Every data problem is a *ParseError naming file,
// line and column. ReadJobsCSV reads the same files straight into job
// records without keeping the rows.
func readCSV(r io.Reader, file, cluster string) (*table, error) {
	t := &table{}
	cols, _, err := scanCSV(r, file, cluster, nil, nil, t.add)
	return t.done(cols, err)
}

// add appends a copy of a scanned row (whose Values the scanner reuses).
func (t *table) add(row *row) {
	c := *row
	c.Values = slices.Clone(row.Values)
	t.Rows = append(t.Rows, c)
}

// done completes a table read by a scanner.
func (t *table) done(cols *columns, err error) (*table, error) {
	if err != nil {
		return nil, err
	}
	t.Metrics, t.Unknown = cols.metrics, cols.unknown
	return t, nil
}

// fill sets dst from a record's fields (dst.Values is reused); on error
// it returns the index of the first bad field.
func (c *columns) fill(dst *row, rec []string, cluster string) (int, error) {
	str := func(name string) string {
		if i, ok := c.idx[name]; ok {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	values := dst.Values[:0]
	*dst = row{JobID: str(colJob), Cluster: cluster, Queue: str(colQueue), Host: str(colHost),
		User: str(colUser), Account: str(colAccount), ExitCode: str(colExit)}
	if s := str(colCluster); s != "" {
		dst.Cluster = s
	}
	if dst.JobID == "" {
		return c.idx[colJob], fmt.Errorf("%w: empty job id", ErrBadValue)
	}
	for _, tc := range [...]struct {
		name string
		dst  *time.Time
	}{{colTime, &dst.Time}, {colSubmit, &dst.Submit}, {colStart, &dst.Start}, {colEnd, &dst.End}} {
		t, err := parseTime(str(tc.name))
		if err != nil {
			return c.idx[tc.name], err // an absent column reads as missing, no error
		}
		*tc.dst = t
	}
	for _, nc := range [...]struct {
		name string
		dst  *float64
	}{{colTimelimit, &dst.Timelimit}, {colNHosts, &dst.NHosts}, {colNCores, &dst.NCores}} {
		v, err := parseNumber(str(nc.name))
		if err != nil {
			return c.idx[nc.name], err
		}
		if v < 0 {
			return c.idx[nc.name], fmt.Errorf("%w: negative %s %v", ErrBadValue, nc.name, v)
		}
		*nc.dst = v
	}
	for _, i := range c.mcols {
		v, err := parseNumber(rec[i])
		if err != nil {
			return i, err
		}
		values = append(values, v)
	}
	dst.Values = values
	return 0, nil
}
