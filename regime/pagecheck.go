package regime

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/format"
)

// parquet-go decodes page headers from a stream and allocates every
// length the Thrift encoding declares before it reads the bytes, up to
// 2 GiB per field (encoding/thrift's compactReader.ReadBytes), and a page
// buffer of the compressed size the header declares: a 40 KB file with a
// corrupt length made readParquet allocate 260 MB (found by
// FuzzReadParquet, whose workers stalled zeroing such buffers). checkPages
// walks every page header of every column chunk first, with its own
// reader, which allocates nothing a length asks for and refuses a length,
// list size or page larger than what is left of its column chunk.

// maxThriftDepth bounds the nesting of a page header's structures (the
// format nests four deep).
const maxThriftDepth = 32

// checkPages checks the page headers of every column chunk of md, which
// describes the file r of size bytes. It returns the row group (1-based)
// and column of the first chunk that fails.
func checkPages(r io.ReaderAt, size int64, md *format.FileMetaData) (group int, column string, err error) {
	for g, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			m := &cc.MetaData
			name := ""
			if len(m.PathInSchema) > 0 {
				name = m.PathInSchema[len(m.PathInSchema)-1]
			}
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			end := start + m.TotalCompressedSize
			if start < 4 || m.TotalCompressedSize < 0 || end > size || end < start {
				return g + 1, name, fmt.Errorf("column chunk at %d of %d bytes outside the file (%d bytes)", start, m.TotalCompressedSize, size)
			}
			if err := checkChunk(r, start, end); err != nil {
				return g + 1, name, err
			}
		}
	}
	return 0, "", nil
}

// checkChunk walks the pages of one column chunk, [start, end) of r.
func checkChunk(r io.ReaderAt, start, end int64) error {
	for pos := start; pos < end; {
		w := &thriftWalker{r: bufio.NewReaderSize(io.NewSectionReader(r, pos, end-pos), 4096), left: end - pos}
		compressed := int64(-1)
		err := w.structure(0, func(id int16, typ byte) (bool, error) {
			if id != 3 || typ != compactI32 { // PageHeader.compressed_page_size
				return false, nil
			}
			v, err := w.varint()
			compressed = v
			return true, err
		})
		if err != nil {
			return fmt.Errorf("page header at byte %d: %w", pos, err)
		}
		if compressed < 0 || compressed > w.left {
			return fmt.Errorf("page header at byte %d: a page of %d bytes, %d left in its column chunk", pos, compressed, w.left)
		}
		pos += w.n + compressed
	}
	return nil
}

// Thrift compact protocol types.
const (
	compactTrue   = 1
	compactFalse  = 2
	compactByte   = 3
	compactI16    = 4
	compactI32    = 5
	compactI64    = 6
	compactDouble = 7
	compactBinary = 8
	compactList   = 9
	compactSet    = 10
	compactMap    = 11
	compactStruct = 12
	compactUUID   = 13
)

var errThrift = errors.New("corrupt thrift encoding")

// thriftWalker reads a Thrift compact-protocol value without keeping it:
// binary fields are skipped, not allocated, and no length or count may
// exceed the bytes left.
type thriftWalker struct {
	r    *bufio.Reader
	left int64 // bytes left in the section
	n    int64 // bytes read
}

func (w *thriftWalker) byte() (byte, error) {
	if w.left <= 0 {
		return 0, fmt.Errorf("%w: past the end of the column chunk", errThrift)
	}
	b, err := w.r.ReadByte()
	if err != nil {
		return 0, err
	}
	w.left--
	w.n++
	return b, nil
}

func (w *thriftWalker) skip(n int64) error {
	if n < 0 || n > w.left {
		return fmt.Errorf("%w: a length of %d with %d bytes left in the column chunk", errThrift, n, w.left)
	}
	for n > 0 {
		k, err := w.r.Discard(int(min(n, 1<<20)))
		w.left -= int64(k)
		w.n += int64(k)
		n -= int64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: varint longer than 10 bytes", errThrift)
}

// varint reads a zigzag-encoded integer.
func (w *thriftWalker) varint() (int64, error) {
	u, err := w.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// count reads a length or element count and checks that at least one
// byte per unit is left.
func (w *thriftWalker) count() (int64, error) {
	u, err := w.uvarint()
	if err != nil {
		return 0, err
	}
	if u > uint64(w.left) {
		return 0, fmt.Errorf("%w: a length of %d with %d bytes left in the column chunk", errThrift, u, w.left)
	}
	return int64(u), nil
}

// structure reads the fields of a struct up to its stop byte; field may
// read a field's value itself (returning true) or leave it to be skipped.
func (w *thriftWalker) structure(depth int, field func(id int16, typ byte) (bool, error)) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("%w: structures nested deeper than %d", errThrift, maxThriftDepth)
	}
	var id int16
	for {
		b, err := w.byte()
		if err != nil {
			return err
		}
		if b == 0 {
			return nil
		}
		typ := b & 0x0f
		if delta := int16(b >> 4); delta != 0 {
			id += delta
		} else {
			v, err := w.varint()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		if field != nil {
			done, err := field(id, typ)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		if typ == compactTrue || typ == compactFalse {
			continue // the value is the type
		}
		if err := w.value(typ, depth+1); err != nil {
			return err
		}
	}
}

// value skips one value of type typ.
func (w *thriftWalker) value(typ byte, depth int) error {
	switch typ {
	case compactTrue, compactFalse, compactByte:
		_, err := w.byte()
		return err
	case compactI16, compactI32, compactI64:
		_, err := w.uvarint()
		return err
	case compactDouble:
		return w.skip(8)
	case compactUUID:
		return w.skip(16)
	case compactBinary:
		n, err := w.count()
		if err != nil {
			return err
		}
		return w.skip(n)
	case compactList, compactSet:
		h, err := w.byte()
		if err != nil {
			return err
		}
		n := int64(h >> 4)
		if n == 15 {
			if n, err = w.count(); err != nil {
				return err
			}
		} else if n > w.left {
			return fmt.Errorf("%w: a list of %d with %d bytes left", errThrift, n, w.left)
		}
		for range n {
			if err := w.value(h&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case compactMap:
		n, err := w.count()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := w.value(kv>>4, depth+1); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case compactStruct:
		return w.structure(depth, nil)
	}
	return fmt.Errorf("%w: unknown type %d", errThrift, typ)
}
