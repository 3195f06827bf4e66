// Package parquet writes a sweep.Dataset as an Apache Parquet file. It is
// a package of its own so that only programs that write Parquet link the
// Parquet library: pass Write to sweep.Export in ExportConfig.Formats
// under "parquet".
package parquet

import (
	"fmt"
	"io"
	"slices"

	"github.com/crosscluster/crosscluster/sweep"
	"github.com/parquet-go/parquet-go"
)

// Write writes the dataset as one Parquet file: every column
// optional (a missing cell is null), strings as UTF-8 byte arrays, ints as
// INT64, floats as DOUBLE (NaN and ±Inf kept), booleans as BOOLEAN. Parquet
// orders a schema's columns by name; the metadata keeps the CSV order.
func Write(w io.Writer, d *sweep.Dataset) error {
	if err := checkRows(d); err != nil {
		return err
	}
	g := parquet.Group{}
	for _, c := range d.Columns {
		var n parquet.Node
		switch c.Kind {
		case sweep.Int:
			n = parquet.Int(64)
		case sweep.Float:
			n = parquet.Leaf(parquet.DoubleType)
		case sweep.Bool:
			n = parquet.Leaf(parquet.BooleanType)
		default:
			n = parquet.String()
		}
		if _, dup := g[c.Name]; dup {
			return fmt.Errorf("parquet: dataset has two columns named %q", c.Name)
		}
		g[c.Name] = parquet.Optional(n)
	}
	schema := parquet.NewSchema("sweep", g)
	// The leaf order of a Group is its sorted names.
	order := make([]int, len(d.Columns))
	for i, path := range schema.Columns() {
		order[i] = slices.IndexFunc(d.Columns, func(c sweep.Column) bool { return c.Name == path[0] })
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
				panic("parquet: dataset cell of unsupported type")
			}
			row[leaf] = v.Level(0, 1, leaf)
		}
		rows = append(rows, row)
		if len(rows) == cap(rows) {
			if err := flush(); err != nil {
				return fmt.Errorf("parquet: parquet: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("parquet: parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("parquet: parquet: %w", err)
	}
	return nil
}

func checkRows(d *sweep.Dataset) error {
	for i, r := range d.Rows {
		if len(r) != len(d.Columns) {
			return fmt.Errorf("parquet: dataset row %d has %d cells for %d columns", i, len(r), len(d.Columns))
		}
	}
	return nil
}
