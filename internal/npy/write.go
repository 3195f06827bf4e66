package npy

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Write writes data as one .npy array (format 1.0, or 2.0 when the header
// needs it) with the given shape in C order. data must be one of
// []float64, []float32, []int, []int8, []int16, []int32, []int64, []uint8,
// []uint16, []uint32, []uint64 or []bool; []int is written as "<i8".
// Write panics if data has another type, a dimension is negative, or the
// product of shape differs from the length of data; it returns the
// writer's error otherwise.
func Write(w io.Writer, shape []int, data any) error {
	descr, n := describe(data)
	count := 1
	for _, s := range shape {
		if s < 0 {
			panic("npy: negative dimension")
		}
		count *= s
	}
	if count != n {
		panic("npy: shape does not match data length")
	}
	if _, err := w.Write(formatHeader(descr, shape)); err != nil {
		return err
	}
	return encode(w, data)
}

// Check reports what Write would panic on: data of a type Write does not
// take, a negative dimension, or a shape whose product differs from the
// length of data.
func Check(shape []int, data any) error {
	if _, ok := descr(data); !ok {
		return fmt.Errorf("unsupported data type %T (want a slice of float64, float32, int, int8–int64, uint8–uint64 or bool)", data)
	}
	_, n := describe(data)
	count := 1
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("negative dimension in shape %v", shape)
		}
		count *= s
	}
	if count != n {
		return fmt.Errorf("shape %v holds %d values, data %d", shape, count, n)
	}
	return nil
}

func descr(data any) (string, bool) {
	switch data.(type) {
	case []float64, []float32, []int, []int8, []int16, []int32, []int64, []uint8, []uint16, []uint32, []uint64, []bool:
		d, _ := describe(data)
		return d, true
	}
	return "", false
}

func describe(data any) (descr string, n int) {
	switch d := data.(type) {
	case []float64:
		return "<f8", len(d)
	case []float32:
		return "<f4", len(d)
	case []int:
		return "<i8", len(d)
	case []int8:
		return "|i1", len(d)
	case []int16:
		return "<i2", len(d)
	case []int32:
		return "<i4", len(d)
	case []int64:
		return "<i8", len(d)
	case []uint8:
		return "|u1", len(d)
	case []uint16:
		return "<u2", len(d)
	case []uint32:
		return "<u4", len(d)
	case []uint64:
		return "<u8", len(d)
	case []bool:
		return "|b1", len(d)
	}
	panic("npy: unsupported data type")
}

// encodeChunk is the number of bytes encoded per write.
const encodeChunk = 1 << 16

func encode(w io.Writer, data any) error {
	buf := make([]byte, 0, encodeChunk)
	le := binary.LittleEndian
	switch d := data.(type) {
	case []float64:
		return chunked(w, buf, d, func(b []byte, v float64) []byte { return le.AppendUint64(b, math.Float64bits(v)) })
	case []float32:
		return chunked(w, buf, d, func(b []byte, v float32) []byte { return le.AppendUint32(b, math.Float32bits(v)) })
	case []int:
		return chunked(w, buf, d, func(b []byte, v int) []byte { return le.AppendUint64(b, uint64(v)) })
	case []int8:
		return chunked(w, buf, d, func(b []byte, v int8) []byte { return append(b, byte(v)) })
	case []int16:
		return chunked(w, buf, d, func(b []byte, v int16) []byte { return le.AppendUint16(b, uint16(v)) })
	case []int32:
		return chunked(w, buf, d, func(b []byte, v int32) []byte { return le.AppendUint32(b, uint32(v)) })
	case []int64:
		return chunked(w, buf, d, func(b []byte, v int64) []byte { return le.AppendUint64(b, uint64(v)) })
	case []uint8:
		_, err := w.Write(d)
		return err
	case []uint16:
		return chunked(w, buf, d, le.AppendUint16)
	case []uint32:
		return chunked(w, buf, d, le.AppendUint32)
	case []uint64:
		return chunked(w, buf, d, le.AppendUint64)
	case []bool:
		return chunked(w, buf, d, func(b []byte, v bool) []byte {
			if v {
				return append(b, 1)
			}
			return append(b, 0)
		})
	}
	panic("npy: unsupported data type")
}

func chunked[T any](w io.Writer, buf []byte, data []T, app func([]byte, T) []byte) error {
	for _, v := range data {
		if len(buf)+8 > cap(buf) {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		buf = app(buf, v)
	}
	if len(buf) > 0 {
		_, err := w.Write(buf)
		return err
	}
	return nil
}

// ZipWriter writes an .npz archive, one array per key, in the layout
// numpy.savez (stored) or numpy.savez_compressed (deflated) produces. Go's
// archive/zip adds zip64 records when a member or the archive needs them.
type ZipWriter struct {
	zw     *zip.Writer
	method uint16
	keys   map[string]bool
}

// NewZipWriter returns a ZipWriter writing to w; compress selects deflate.
func NewZipWriter(w io.Writer, compress bool) *ZipWriter {
	m := zip.Store
	if compress {
		m = zip.Deflate
	}
	return &ZipWriter{zw: zip.NewWriter(w), method: m, keys: map[string]bool{}}
}

// Add writes one array as member key+".npy"; shape and data are as for
// [Write]. Add panics if key was already added.
func (z *ZipWriter) Add(key string, shape []int, data any) error {
	if z.keys[key] {
		panic("npy: duplicate key")
	}
	z.keys[key] = true
	f, err := z.zw.CreateHeader(&zip.FileHeader{Name: key + ".npy", Method: z.method})
	if err != nil {
		return err
	}
	return Write(f, shape, data)
}

// Close finishes the archive. It does not close the underlying writer.
func (z *ZipWriter) Close() error { return z.zw.Close() }
