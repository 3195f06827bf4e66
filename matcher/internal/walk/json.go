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

// Decode reads a whole document (at most MaxBytes) with numbers as
// json.Number.
func (w JSON) Decode(r io.Reader) (any, error) {
	b, err := ReadAll(r, w.file, w.mk)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		line := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte{'\n'})
		}
		return nil, w.mk(w.file, "", line, fmt.Errorf("%w: %v", ErrSyntax, err))
	}
	return v, nil
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
