package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Array is one decoded .npy array. Its data are kept as the file's raw
// bytes; the conversion methods decode them.
type Array struct {
	// Shape is the array's shape; an empty shape is a scalar (one element).
	Shape []int
	// DType is NumPy's descr string, such as "<f8", ">i2" or "|b1".
	DType string
	// Fortran reports that the file stored the data in Fortran
	// (column-major) order. The conversion methods always return C order.
	Fortran bool

	dt   dtype
	data []byte
}

// Len returns the number of elements, the product of Shape.
func (a *Array) Len() int { return len(a.data) / a.dt.size }

// Read reads one .npy array from r. It reads exactly the header and the
// data the shape calls for, so several arrays saved one after another in
// one stream can be read in turn. A short read returns an error wrapping
// [ErrTruncated].
func Read(r io.Reader) (*Array, error) {
	h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	data, err := readData(r, h.nbytes, 1<<20)
	if err != nil {
		return nil, err
	}
	return newArray(h, data), nil
}

func newArray(h header, data []byte) *Array {
	return &Array{Shape: h.shape, DType: h.descr, Fortran: h.fortran, dt: h.dt, data: data}
}

// readData reads exactly n bytes, growing its buffer as bytes arrive so a
// header that lies about its size cannot make it allocate more than about
// twice the bytes that exist. hint is the first allocation.
func readData(r io.Reader, n, hint int64) ([]byte, error) {
	hint = max(min(n, hint), min(n, 4096))
	buf := make([]byte, hint)
	off := int64(0)
	for off < n {
		if off == int64(len(buf)) {
			next := min(2*int64(len(buf)), n)
			nb := make([]byte, next)
			copy(nb, buf)
			buf = nb
		}
		k, err := io.ReadFull(r, buf[off:])
		off += int64(k)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%w: %d of %d data bytes", ErrTruncated, off, n)
			}
			return nil, err
		}
	}
	return buf, nil
}

// Float64 returns the elements converted to float64 in C order. Every
// supported dtype converts; int64 and uint64 values beyond 2^53 round to
// the nearest float64, as NumPy's astype does.
func (a *Array) Float64() ([]float64, error) {
	out := make([]float64, a.Len())
	if err := convert(out, a.data, a.dt); err != nil {
		return nil, err
	}
	return a.corder(out), nil
}

// Float32 returns the elements converted to float32 in C order, each
// rounded once from its stored value.
func (a *Array) Float32() ([]float32, error) {
	out := make([]float32, a.Len())
	if err := convert(out, a.data, a.dt); err != nil {
		return nil, err
	}
	return corder(out, a.Shape, a.Fortran), nil
}

// Int64 returns the elements converted to int64 in C order. Only integer
// and bool dtypes convert; floats and uint64 values above MaxInt64 return
// an error wrapping [ErrDType].
func (a *Array) Int64() ([]int64, error) { return integers[int64](a, "Int64") }

// Uint64 returns the elements converted to uint64 in C order, exactly.
// Only integer and bool dtypes convert; floats and negative signed values
// return an error wrapping [ErrDType]. With [Array.Unsigned] it reads
// uint64 arrays, whose values above MaxInt64 Int64 refuses.
func (a *Array) Uint64() ([]uint64, error) { return integers[uint64](a, "Uint64") }

// integers decodes an integer or bool array exactly as T, in C order; op
// names the method in the error for a float array.
func integers[T int64 | uint64](a *Array, op string) ([]T, error) {
	if a.dt.kind == 'f' {
		return nil, fmt.Errorf("%w: %s of float array %s", ErrDType, op, a.DType)
	}
	out := make([]T, a.Len())
	if err := convert(out, a.data, a.dt); err != nil {
		return nil, err
	}
	return corder(out, a.Shape, a.Fortran), nil
}

func (a *Array) corder(x []float64) []float64 { return corder(x, a.Shape, a.Fortran) }

// corder turns Fortran-order data into C order.
func corder[T any](src []T, shape []int, fortran bool) []T {
	nontrivial := 0
	for _, n := range shape {
		if n > 1 {
			nontrivial++
		}
	}
	if !fortran || nontrivial < 2 || len(src) == 0 {
		return src
	}
	nd := len(shape)
	cstride := make([]int, nd)
	s := 1
	for k := nd - 1; k >= 0; k-- {
		cstride[k] = s
		s *= shape[k]
	}
	dst := make([]T, len(src))
	idx := make([]int, nd)
	coff := 0
	for i := range src {
		dst[coff] = src[i]
		// Advance the Fortran-order counter: first index fastest.
		for k := 0; k < nd; k++ {
			idx[k]++
			coff += cstride[k]
			if idx[k] < shape[k] {
				break
			}
			coff -= idx[k] * cstride[k]
			idx[k] = 0
		}
	}
	return dst
}

type number interface {
	~float32 | ~float64 | ~int64 | ~uint64
}

// convert decodes len(dst) elements of type dt from src.
func convert[T number](dst []T, src []byte, dt dtype) error {
	o := dt.order
	switch dt.kind {
	case 'b':
		for i := range dst {
			if src[i] != 0 {
				dst[i] = 1
			} else {
				dst[i] = 0
			}
		}
	case 'i':
		if u, ok := any(dst).([]uint64); ok {
			return signedToUint64(u, src, dt)
		}
		switch dt.size {
		case 1:
			for i := range dst {
				dst[i] = T(int8(src[i]))
			}
		case 2:
			for i := range dst {
				dst[i] = T(int16(o.Uint16(src[2*i:])))
			}
		case 4:
			for i := range dst {
				dst[i] = T(int32(o.Uint32(src[4*i:])))
			}
		case 8:
			for i := range dst {
				dst[i] = T(int64(o.Uint64(src[8*i:])))
			}
		}
	case 'u':
		switch dt.size {
		case 1:
			for i := range dst {
				dst[i] = T(src[i])
			}
		case 2:
			for i := range dst {
				dst[i] = T(o.Uint16(src[2*i:]))
			}
		case 4:
			for i := range dst {
				dst[i] = T(o.Uint32(src[4*i:]))
			}
		case 8:
			var zero T
			_, isInt := any(zero).(int64)
			for i := range dst {
				u := o.Uint64(src[8*i:])
				if isInt && u > math.MaxInt64 {
					return fmt.Errorf("%w: uint64 value %d at element %d overflows int64", ErrDType, u, i)
				}
				dst[i] = T(u)
			}
		}
	case 'f':
		switch dt.size {
		case 2:
			for i := range dst {
				dst[i] = T(halfToFloat64(o.Uint16(src[2*i:])))
			}
		case 4:
			for i := range dst {
				dst[i] = T(math.Float32frombits(o.Uint32(src[4*i:])))
			}
		case 8:
			if f, ok := any(dst).([]float64); ok && o == binary.ByteOrder(binary.LittleEndian) {
				decodeF8LE(f, src)
				return nil
			}
			for i := range dst {
				dst[i] = T(math.Float64frombits(o.Uint64(src[8*i:])))
			}
		}
	}
	return nil
}

// signedToUint64 decodes signed integers into dst, refusing negative ones.
func signedToUint64(dst []uint64, src []byte, dt dtype) error {
	tmp := make([]int64, len(dst))
	if err := convert(tmp, src, dt); err != nil {
		return err
	}
	for i, v := range tmp {
		if v < 0 {
			return fmt.Errorf("%w: negative %s value %d at element %d is no uint64", ErrDType, dt, v, i)
		}
		dst[i] = uint64(v)
	}
	return nil
}

func decodeF8LE(dst []float64, src []byte) {
	src = src[:8*len(dst)]
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
	}
}

// halfToFloat64 converts IEEE 754 binary16 bits exactly, keeping NaN
// payloads as NumPy's half-to-double conversion does.
func halfToFloat64(h uint16) float64 {
	sign := uint64(h>>15) << 63
	exp := int(h>>10) & 0x1f
	frac := uint64(h & 0x3ff)
	switch exp {
	case 0:
		v := math.Ldexp(float64(frac), -24)
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float64frombits(sign | 0x7ff<<52 | frac<<42)
	}
	return math.Float64frombits(sign | uint64(exp-15+1023)<<52 | frac<<42)
}

// Reader streams the elements of one .npy array without holding them all.
// Elements come in storage order: for an array with Fortran set and more
// than one non-trivial axis that is column-major order.
type Reader struct {
	// Shape, DType and Fortran are as in [Array].
	Shape   []int
	DType   string
	Fortran bool

	dt     dtype
	r      io.Reader
	closer io.Closer
	member bool // an archive member: errors are *KeyErrors naming key
	key    string
	left   int64 // elements not yet returned
	buf    []byte
	after  func() error // check run once all elements are read
}

// NewReader reads the header from r and returns a Reader for the data.
func NewReader(r io.Reader) (*Reader, error) {
	h, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	return newReader(h, r), nil
}

func newReader(h header, r io.Reader) *Reader {
	return &Reader{Shape: h.shape, DType: h.descr, Fortran: h.fortran, dt: h.dt, r: r, left: h.count}
}

// Len returns the total number of elements.
func (r *Reader) Len() int {
	n := 1
	for _, s := range r.Shape {
		n *= s
	}
	return n
}

// ReadFloat64 decodes up to len(dst) of the next elements into dst as
// float64 and returns how many it decoded. After the last element it
// returns 0, io.EOF. Data that end early give an error wrapping
// [ErrTruncated]; for an archive member every error is a [*KeyError].
func (r *Reader) ReadFloat64(dst []float64) (int, error) { return readNext(r, dst) }

// ReadInt64 is [Reader.ReadFloat64] for integer and bool arrays, decoding
// each element exactly as an int64. A float array, and a uint64 value above
// MaxInt64, give an error wrapping [ErrDType].
func (r *Reader) ReadInt64(dst []int64) (int, error) { return readIntegers(r, dst, "ReadInt64") }

// ReadUint64 is [Reader.ReadInt64] decoding each element exactly as a
// uint64: for uint64 arrays, whose values above MaxInt64 ReadInt64
// refuses. A float array, and a negative signed value, give an error
// wrapping [ErrDType].
func (r *Reader) ReadUint64(dst []uint64) (int, error) { return readIntegers(r, dst, "ReadUint64") }

// readIntegers is readNext for the exact integer decoders; op names the
// method in the error for a float array.
func readIntegers[T int64 | uint64](r *Reader, dst []T, op string) (int, error) {
	if r.dt.kind == 'f' {
		return 0, r.keyed(fmt.Errorf("%w: %s of float array %s", ErrDType, op, r.DType))
	}
	return readNext(r, dst)
}

// Integer reports whether the array's dtype is an integer or bool type,
// whose elements ReadInt64 decodes exactly.
func (r *Reader) Integer() bool { return r.dt.kind != 'f' }

// Unsigned reports whether the array's dtype is an unsigned integer type,
// whose elements ReadUint64 decodes exactly.
func (r *Reader) Unsigned() bool { return r.dt.kind == 'u' }

// Unsigned reports whether the array's dtype is an unsigned integer type,
// whose elements Uint64 decodes exactly.
func (a *Array) Unsigned() bool { return a.dt.kind == 'u' }

// Integer reports whether the array's dtype is an integer or bool type,
// whose elements Int64 decodes exactly.
func (a *Array) Integer() bool { return a.dt.kind != 'f' }

func readNext[T number](r *Reader, dst []T) (int, error) {
	n, err := readElems(r, dst)
	if err != nil && err != io.EOF {
		err = r.keyed(err)
	}
	return n, err
}

// keyed makes an archive member's error a *KeyError naming its key.
func (r *Reader) keyed(err error) error {
	if r.member {
		if _, ok := err.(*KeyError); !ok {
			err = &KeyError{Key: r.key, Err: err}
		}
	}
	return err
}

func readElems[T number](r *Reader, dst []T) (int, error) {
	if r.left == 0 {
		if r.after != nil {
			f := r.after
			r.after = nil
			if err := f(); err != nil {
				return 0, err
			}
		}
		return 0, io.EOF
	}
	n := int(min(int64(len(dst)), r.left))
	need := n * r.dt.size
	if cap(r.buf) < need {
		r.buf = make([]byte, need)
	}
	b := r.buf[:need]
	if _, err := io.ReadFull(r.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, fmt.Errorf("%w: data end with %d elements still to come", ErrTruncated, r.left)
		}
		return 0, err
	}
	r.left -= int64(n)
	if err := convert(dst[:n], b, r.dt); err != nil {
		return 0, err
	}
	return n, nil
}

// Close releases the underlying archive member, if any.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}
