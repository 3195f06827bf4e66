package regime

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// readParquet reads a FRESCO-style telemetry Parquet file of size bytes
// into a table, every row kept, with the same columns as readCSV. Columns
// must be flat (top-level, not repeated). Strings are BYTE_ARRAY; numbers
// any integer or floating type; times are INT64 TIMESTAMP (any unit, as
// pandas and Arrow write them), INT96 (as Spark and older Impala/Hive
// write them), INT32 DATE, strings in a readCSV layout or plain Unix
// seconds. Nulls are missing. Every data problem is a *ParseError naming
// file, row group, row (1-based over the file, as Line) and column; a
// decoder panic on corrupt bytes is recovered and returned as one.
// ReadJobsParquet reads the same files straight into job records.
func readParquet(r io.ReaderAt, size int64, file, cluster string) (*table, error) {
	t := &table{}
	cols, _, err := scanParquet(r, size, file, cluster, nil, nil, t.add)
	return t.done(cols, err)
}

// scanParquet reads a telemetry Parquet file and calls each with every
// row, as scanCSV does. Only the columns rows carry are decoded.
func scanParquet(r io.ReaderAt, size int64, file, cluster string, keep []string, header func(*columns), each func(*row)) (cols *columns, n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			cols, err = nil, &ParseError{File: file, Err: fmt.Errorf("%w: corrupt parquet: %v", ErrBadValue, p)}
		}
	}()
	if err := checkFooter(r, size); err != nil {
		return nil, 0, &ParseError{File: file, Err: fmt.Errorf("%w: %w", ErrBadValue, err)}
	}
	// The page index and bloom filters are not used; skipping them also
	// skips their declared lengths, which OpenFile would allocate.
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, 0, &ParseError{File: file, Err: fmt.Errorf("%w: %w", ErrBadValue, err)}
	}
	if g, col, err := checkPages(r, size, f.Metadata()); err != nil {
		return nil, 0, &ParseError{File: file, RowGroup: g, column: col, Err: fmt.Errorf("%w: %w", ErrBadValue, err)}
	}
	schema := f.Schema()
	paths := schema.Columns()
	names := make([]string, len(paths))
	units := make([]time.Duration, len(paths)) // non-zero: timestamp column; dateUnit: DATE
	for i, p := range paths {
		if len(p) != 1 {
			return nil, 0, &ParseError{File: file, column: strings.Join(p, "."), Err: fmt.Errorf("%w: nested column", ErrBadValue)}
		}
		names[i] = p[0]
		leaf, ok := schema.Lookup(p...)
		if !ok {
			continue
		}
		if leaf.MaxRepetitionLevel > 0 {
			return nil, 0, &ParseError{File: file, column: p[0], Err: fmt.Errorf("%w: repeated column", ErrBadValue)}
		}
		units[i] = timestampUnit(leaf.Node.Type())
	}
	cols, col, err := newColumns(names, keep)
	if err != nil {
		return nil, 0, &ParseError{File: file, column: col, Err: err}
	}
	if header != nil {
		header(cols)
	}
	used := make([]bool, len(names))
	for i := range used {
		used[i] = cols.used(i)
	}
	fields := make([]string, len(names))
	buf := make([]parquet.Row, 256)
	var row row
	groups := f.RowGroups()
	for g, rg := range groups {
		rows := rg.Rows()
		for {
			k, rerr := rows.ReadRows(buf)
			for _, pr := range buf[:k] {
				n++
				clear(fields)
				for _, v := range pr {
					c := v.Column()
					if c < 0 || c >= len(fields) || !used[c] {
						continue
					}
					fields[c] = valueString(v, units[c])
				}
				if i, err := cols.fill(&row, fields, cluster); err != nil {
					rows.Close()
					return nil, n, &ParseError{File: file, RowGroup: g + 1, Line: n, column: cols.header[i], Err: err}
				}
				each(&row)
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				rows.Close()
				return nil, n, &ParseError{File: file, RowGroup: g + 1, Line: n + 1, Err: fmt.Errorf("%w: %w", ErrBadValue, rerr)}
			}
		}
		if err := rows.Close(); err != nil {
			return nil, n, &ParseError{File: file, RowGroup: g + 1, Err: fmt.Errorf("%w: %w", ErrBadValue, err)}
		}
	}
	return cols, n, nil
}

// dateUnit marks an INT32 DATE column (days since the Unix epoch).
const dateUnit = 24 * time.Hour

// julianUnixEpoch is the Julian day number of 1970-01-01, the origin of
// INT96 timestamps' day field.
const julianUnixEpoch = 2440588

// checkFooter checks the magic numbers and the footer length before
// parquet.OpenFile sees the file: OpenFile allocates the footer length it
// reads (up to 4 GiB) before comparing it with the file size, so a few
// corrupt bytes could make it allocate and zero gigabytes.
func checkFooter(r io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 2*int64(len(magic))+4 {
		return fmt.Errorf("not a parquet file: %d bytes", size)
	}
	var head [4]byte
	var tail [8]byte
	// io.ReaderAt may return io.EOF with a full read at the end, so only a
	// short read is a failure.
	if n, err := r.ReadAt(head[:], 0); n < len(head) {
		return fmt.Errorf("reading the header: %w", cmp.Or(err, io.ErrUnexpectedEOF))
	}
	if n, err := r.ReadAt(tail[:], size-8); n < len(tail) {
		return fmt.Errorf("reading the footer: %w", cmp.Or(err, io.ErrUnexpectedEOF))
	}
	if string(head[:]) != magic || string(tail[4:]) != magic {
		return errors.New("not a parquet file: no PAR1 magic at both ends")
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("footer length %d exceeds the file (%d bytes)", n, size)
	}
	return nil
}

// timestampUnit returns the tick of an INT64 timestamp column, dateUnit for
// an INT32 DATE column, 0 otherwise.
func timestampUnit(typ parquet.Type) time.Duration {
	if typ == nil {
		return 0
	}
	if typ.Kind() == parquet.Int32 {
		if lt := typ.LogicalType(); lt != nil {
			if _, ok := lt.Value.(*format.DateType); ok {
				return dateUnit
			}
		}
		if ct := typ.ConvertedType(); ct != nil && *ct == deprecated.Date {
			return dateUnit
		}
		return 0
	}
	if typ.Kind() != parquet.Int64 {
		return 0
	}
	if lt := typ.LogicalType(); lt != nil {
		if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
			return ts.Unit.Value.Duration()
		}
	}
	if ct := typ.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.TimestampMillis:
			return time.Millisecond
		case deprecated.TimestampMicros:
			return time.Microsecond
		}
	}
	return 0
}

// valueString renders a value as the text readCSV would have read.
func valueString(v parquet.Value, unit time.Duration) string {
	if v.IsNull() {
		return ""
	}
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			return "1"
		}
		return "0"
	case parquet.Int32:
		if unit == dateUnit {
			return time.Unix(int64(v.Int32())*86400, 0).UTC().Format(time.RFC3339Nano)
		}
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int96:
		// Nanoseconds of the day in the low 64 bits, Julian day in the
		// high 32 (the layout Spark and Impala write).
		i := v.Int96()
		nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
		day := int64(i[2]) - julianUnixEpoch
		return time.Unix(day*86400, 0).Add(time.Duration(nanos)).UTC().Format(time.RFC3339Nano)
	case parquet.Int64:
		if unit != 0 {
			ticks := v.Int64()
			per := int64(time.Second / unit)
			return time.Unix(ticks/per, (ticks%per)*int64(unit)).UTC().Format(time.RFC3339Nano)
		}
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	}
	return ""
}
