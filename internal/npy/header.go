package npy

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

const (
	magic = "\x93NUMPY"
	// maxHeaderLen bounds the header dictionary. NumPy's own default
	// (max_header_size) is 10000; real headers are under 200 bytes, but
	// very high-dimensional shapes can be long, so allow a generous 1 MiB.
	maxHeaderLen = 1 << 20
	// maxDepth bounds nesting in the header literal so hostile input
	// cannot recurse deeply.
	maxDepth = 8
)

// dtype is a decoded numeric descr.
type dtype struct {
	kind  byte // 'b' bool, 'i' signed, 'u' unsigned, 'f' float
	size  int  // bytes per element
	order binary.ByteOrder
}

func (d dtype) String() string {
	o := "<"
	switch {
	case d.size == 1:
		o = "|"
	case d.order == binary.ByteOrder(binary.BigEndian):
		o = ">"
	}
	return o + string(d.kind) + strconv.Itoa(d.size)
}

// parseDescr decodes a simple dtype string such as "<f8", ">i2" or "|b1".
func parseDescr(s string) (dtype, error) {
	if len(s) < 2 {
		return dtype{}, fmt.Errorf("%w %q", ErrDType, s)
	}
	if t := strings.TrimLeft(s, "<>|="); strings.HasPrefix(t, "O") {
		return dtype{}, fmt.Errorf("%w: object arrays (%q) need pickle and are refused", ErrDType, s)
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch s[0] {
	case '<', '|':
		s2 := s[1:]
		if s[0] == '|' && len(s2) > 0 && s2[len(s2)-1] != '1' {
			return dtype{}, fmt.Errorf("%w %q: '|' order on a multi-byte type", ErrDType, s)
		}
		s = s2
	case '>':
		order = binary.BigEndian
		s = s[1:]
	case '=':
		order = binary.NativeEndian
		s = s[1:]
	}
	if len(s) < 2 {
		return dtype{}, fmt.Errorf("%w %q", ErrDType, s)
	}
	kind := s[0]
	size, err := strconv.Atoi(s[1:])
	if err != nil {
		return dtype{}, fmt.Errorf("%w %q", ErrDType, s)
	}
	ok := false
	switch kind {
	case 'b', '?':
		kind, ok = 'b', size == 1
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'f':
		ok = size == 2 || size == 4 || size == 8
	case 'c':
		return dtype{}, fmt.Errorf("%w %q: complex arrays are not read; save the real and imaginary parts as two keys (np.real, np.imag)", ErrDType, s)
	}
	if !ok {
		return dtype{}, fmt.Errorf("%w %q (want bool, int8-64, uint8-64 or float16/32/64)", ErrDType, s)
	}
	return dtype{kind: kind, size: size, order: order}, nil
}

// header is a parsed .npy header.
type header struct {
	descr   string
	dt      dtype
	fortran bool
	shape   []int
	count   int64 // number of elements
	nbytes  int64 // count * itemsize
	hlen    int64 // bytes of magic, version, length and dictionary
}

// readHeader reads and validates the preamble and header dictionary.
func readHeader(r io.Reader) (header, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return header{}, fmt.Errorf("%w: %d-byte preamble cut short", ErrMagic, 8)
		}
		return header{}, err
	}
	if string(pre[:6]) != magic {
		return header{}, ErrMagic
	}
	major, minor := pre[6], pre[7]
	var hlen int64
	switch {
	case major == 1 && minor == 0:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return header{}, fmt.Errorf("%w: header length cut short", ErrTruncated)
		}
		hlen = int64(binary.LittleEndian.Uint16(pre[8:10]))
	case (major == 2 || major == 3) && minor == 0:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return header{}, fmt.Errorf("%w: header length cut short", ErrTruncated)
		}
		hlen = int64(binary.LittleEndian.Uint32(l[:]))
	default:
		return header{}, fmt.Errorf("%w %d.%d", ErrVersion, major, minor)
	}
	if hlen > maxHeaderLen {
		return header{}, fmt.Errorf("%w: header length %d exceeds %d", ErrHeader, hlen, maxHeaderLen)
	}
	// hlen is bounded above, so allocating it is safe.
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return header{}, fmt.Errorf("%w: header of %d bytes cut short", ErrTruncated, hlen)
	}
	h, err := parseHeader(string(buf))
	if err != nil {
		return header{}, err
	}
	h.hlen = hlen + 10
	if major != 1 {
		h.hlen += 2
	}
	return h, nil
}

func parseHeader(s string) (header, error) {
	p := &litParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return header{}, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return header{}, fmt.Errorf("%w: trailing text after dictionary at byte %d", ErrHeader, p.i)
	}
	d, ok := v.(dict)
	if !ok {
		return header{}, fmt.Errorf("%w: not a dictionary", ErrHeader)
	}
	var h header
	seen := 0
	for _, kv := range d {
		switch kv.key {
		case "descr":
			switch x := kv.val.(type) {
			case string:
				h.descr = x
			case list:
				return header{}, fmt.Errorf("%w: structured dtype (descr is a list of fields)", ErrDType)
			default:
				return header{}, fmt.Errorf("%w: descr is not a string", ErrHeader)
			}
		case "fortran_order":
			b, ok := kv.val.(bool)
			if !ok {
				return header{}, fmt.Errorf("%w: fortran_order is not True or False", ErrHeader)
			}
			h.fortran = b
		case "shape":
			t, ok := kv.val.(list)
			if !ok || !t.tuple {
				return header{}, fmt.Errorf("%w: shape is not a tuple", ErrHeader)
			}
			h.shape = make([]int, len(t.items))
			for i, it := range t.items {
				n, ok := it.(int64)
				if !ok || n < 0 {
					return header{}, fmt.Errorf("%w: shape entry %d is not a non-negative integer", ErrHeader, i)
				}
				h.shape[i] = int(n)
			}
		default:
			return header{}, fmt.Errorf("%w: unexpected key %q", ErrHeader, kv.key)
		}
		seen++
	}
	if seen != 3 || h.shape == nil {
		return header{}, fmt.Errorf("%w: want exactly the keys descr, fortran_order and shape", ErrHeader)
	}
	dt, err := parseDescr(h.descr)
	if err != nil {
		return header{}, err
	}
	h.dt = dt
	count := int64(1)
	for _, n := range h.shape {
		if n != 0 && count > math.MaxInt64/int64(dt.size)/int64(n) {
			return header{}, fmt.Errorf("%w: shape %v overflows", ErrSize, h.shape)
		}
		count *= int64(n)
	}
	h.count = count
	h.nbytes = count * int64(dt.size)
	return h, nil
}

// The header is a Python literal: a dict of str keys whose values are
// strings, booleans, integers, tuples or lists.

type dict []struct {
	key string
	val any
}

type list struct {
	tuple bool
	items []any
}

type litParser struct {
	s string
	i int
}

func (p *litParser) errf(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrHeader, p.i, fmt.Sprintf(format, args...))
}

func (p *litParser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *litParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nesting deeper than %d", maxDepth)
	}
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, p.errf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		var d dict
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return d, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, p.errf("dictionary key is not a string")
			}
			for _, kv := range d {
				if kv.key == ks {
					return nil, p.errf("duplicate key %q", ks)
				}
			}
			p.skipSpace()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errf("missing ':'")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			d = append(d, struct {
				key string
				val any
			}{ks, v})
			if err := p.sep('}'); err != nil {
				return nil, err
			}
		}
	case c == '(' || c == '[':
		closer := byte(')')
		if c == '[' {
			closer = ']'
		}
		p.i++
		l := list{tuple: c == '('}
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == closer {
				p.i++
				return l, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, v)
			if err := p.sep(closer); err != nil {
				return nil, err
			}
		}
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.s[p.i+1:], c)
		if end < 0 {
			return nil, p.errf("unterminated string")
		}
		v := p.s[p.i+1 : p.i+1+end]
		if strings.IndexByte(v, '\\') >= 0 {
			return nil, p.errf("escapes in strings are not supported")
		}
		p.i += end + 2
		return v, nil
	case c >= '0' && c <= '9' || c == '-':
		j := p.i
		if c == '-' {
			j++
		}
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, p.errf("bad integer %q", p.s[p.i:j])
		}
		if j < len(p.s) && (p.s[j] == 'L' || p.s[j] == 'l') { // Python 2 long suffix
			j++
		}
		p.i = j
		return n, nil
	default:
		for _, w := range []struct {
			word string
			val  any
		}{{"True", true}, {"False", false}, {"None", nil}} {
			if strings.HasPrefix(p.s[p.i:], w.word) {
				p.i += len(w.word)
				return w.val, nil
			}
		}
		return nil, p.errf("unexpected character %q", c)
	}
}

// sep consumes a ',' or sees the closer (left for the caller's loop).
func (p *litParser) sep(closer byte) error {
	p.skipSpace()
	if p.i >= len(p.s) {
		return p.errf("unexpected end")
	}
	switch p.s[p.i] {
	case ',':
		p.i++
		return nil
	case closer:
		return nil
	}
	return p.errf("expected ',' or %q", closer)
}

// formatHeader returns the full preamble and padded dictionary for an array,
// in the layout NumPy writes: version 1.0 unless the header needs 2.0, total
// length a multiple of 64, ending in '\n'.
func formatHeader(descr string, shape []int) []byte {
	var sb strings.Builder
	sb.WriteString("{'descr': '")
	sb.WriteString(descr)
	sb.WriteString("', 'fortran_order': False, 'shape': (")
	for i, n := range shape {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.Itoa(n))
	}
	if len(shape) == 1 {
		sb.WriteString(",")
	}
	sb.WriteString("), }")
	dictText := sb.String()
	const align = 64
	pre, major := 10, byte(1)
	if len(dictText)+1+align > math.MaxUint16 {
		pre, major = 12, 2
	}
	dlen := len(dictText) + 1
	dlen += (align - (pre+dlen)%align) % align
	out := make([]byte, 0, pre+dlen)
	out = append(out, magic...)
	out = append(out, major, 0)
	if major == 1 {
		out = binary.LittleEndian.AppendUint16(out, uint16(dlen))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(dlen))
	}
	out = append(out, dictText...)
	for len(out) < pre+dlen-1 {
		out = append(out, ' ')
	}
	return append(out, '\n')
}
