package walk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// JSON builds errors for generic decoded JSON values (map[string]any,
// []any, json.Number, string, bool, nil) that name the file and the path.
type JSON struct {
	file string
	mk   ErrorFunc
}

// NewJSON returns a walker for one document named file.
func NewJSON(file string, mk ErrorFunc) JSON { return JSON{file: file, mk: mk} }

// Err builds an error at path wrapping sentinel.
func (w JSON) Err(path string, sentinel error, format string, args ...any) error {
	return w.mk(w.file, path, 0, fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...)))
}

// MaxDepth caps the nesting of JSON documents (the deepest rainbow input,
// a JGF graph, nests 6 deep).
const MaxDepth = 64

// Decode reads a whole document (at most MaxBytes, nested at most MaxDepth
// deep) with numbers as json.Number. An object with a repeated key is
// refused (encoding/json would keep the last silently), and so is anything
// after the document.
func (w JSON) Decode(r io.Reader) (any, error) {
	b, err := ReadAll(r, w.file, w.mk)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := w.value(d, b, "", 0)
	if err != nil {
		return nil, err
	}
	if tok, err := d.Token(); err != io.EOF {
		if err != nil {
			return nil, w.syntax(d, b, "", err)
		}
		return nil, w.mk(w.file, "", lineAt(b, d.InputOffset()), fmt.Errorf("%w: %v after the document", ErrSyntax, tok))
	}
	return v, nil
}

// value decodes the next value at path.
func (w JSON) value(d *json.Decoder, b []byte, path string, depth int) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, w.syntax(d, b, path, err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= MaxDepth {
		return nil, w.mk(w.file, path, lineAt(b, d.InputOffset()), fmt.Errorf("%w: nested more than %d deep", ErrTooComplex, MaxDepth))
	}
	if delim == '[' {
		l := []any{}
		for i := 0; d.More(); i++ {
			v, err := w.value(d, b, Idx(path, i), depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := d.Token() // ']'
		return l, w.syntax(d, b, path, err)
	}
	m := map[string]any{}
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return nil, w.syntax(d, b, path, err)
		}
		k, _ := kt.(string) // inside an object, Token returns keys as strings
		kp := Dot(path, k)
		if _, dup := m[k]; dup {
			return nil, w.mk(w.file, kp, lineAt(b, d.InputOffset()), fmt.Errorf("%w: duplicate key %q", ErrSchema, k))
		}
		if m[k], err = w.value(d, b, kp, depth+1); err != nil {
			return nil, err
		}
	}
	_, err = d.Token() // '}'
	return m, w.syntax(d, b, path, err)
}

// syntax wraps a decoder error in ErrSyntax with its line; nil stays nil.
func (w JSON) syntax(d *json.Decoder, b []byte, path string, err error) error {
	if err == nil {
		return nil
	}
	off := d.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return w.mk(w.file, path, lineAt(b, off), fmt.Errorf("%w: %v", ErrSyntax, err))
}

// lineAt is the 1-based line of byte offset off in b.
func lineAt(b []byte, off int64) int {
	return 1 + bytes.Count(b[:min(max(int(off), 0), len(b))], []byte{'\n'})
}

// DecodeObject reads a whole document whose top level is an object.
func (w JSON) DecodeObject(r io.Reader) (map[string]any, error) {
	v, err := w.Decode(r)
	if err != nil {
		return nil, err
	}
	return w.Obj(v, "")
}

// Obj returns v as an object.
func (w JSON) Obj(v any, path string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, w.Err(path, ErrSchema, "want an object, got %s", Kind(v))
	}
	return m, nil
}

// Str returns v as a string; numbers and booleans are spelled as in the
// document.
func (w JSON) Str(v any, path string) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", w.Err(path, ErrSchema, "want a string, got %s", Kind(v))
}

// Num returns v as a number; a string holding a number is accepted.
func (w JSON) Num(v any, path string) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err == nil {
			return f, nil
		}
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return f, nil
		}
	}
	return 0, w.Err(path, ErrSchema, "want a number, got %s", Kind(v))
}

// Kind names a decoded JSON value's kind for messages.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}
