package walk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
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
	var v any
	if err := d.Decode(&v); err != nil {
		off := d.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, w.mk(w.file, "", lineAt(b, off), fmt.Errorf("%w: %v", ErrSyntax, err))
	}
	if rest := bytes.TrimLeft(b[d.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, w.mk(w.file, "", lineAt(b, int64(len(b)-len(rest))), fmt.Errorf("%w: %q after the document", ErrSyntax, rest[:min(len(rest), 16)]))
	}
	// encoding/json has just checked the syntax, so this pass over the
	// bytes (a few milliseconds for the largest rainbow file, where
	// decoding token by token took several times as long) only tracks
	// nesting and keys.
	if err := w.checkKeys(b); err != nil {
		return nil, err
	}
	return v, nil
}

// jframe is one open object or array of checkKeys.
type jframe struct {
	obj  bool
	idx  int    // elements seen (arrays)
	key  []byte // the current key, raw (objects)
	keys []jkey // every key (objects)
}

// jkey is an object key, unescaped where escaped, and its offset.
type jkey struct {
	k   []byte
	off int
}

// checkKeys walks valid JSON b and refuses an object with a repeated key
// or nesting deeper than MaxDepth, naming the path and line.
func (w JSON) checkKeys(b []byte) error {
	var stack []*jframe
	pool := []*jframe{}
	path := func() string {
		p := ""
		for _, f := range stack {
			if f.obj {
				p = Dot(p, string(f.key))
			} else {
				p = Idx(p, f.idx)
			}
		}
		return p
	}
	expectKey := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= MaxDepth {
				return w.mk(w.file, path(), lineAt(b, int64(i)), fmt.Errorf("%w: nested more than %d deep", ErrTooComplex, MaxDepth))
			}
			var f *jframe
			if n := len(pool); n > len(stack) {
				f = pool[len(stack)]
			} else {
				f = &jframe{}
				pool = append(pool, f)
			}
			*f = jframe{obj: c == '{', keys: f.keys[:0]}
			stack = append(stack, f)
			expectKey = c == '{'
		case '}', ']':
			if f := stack[len(stack)-1]; f.obj {
				if k, ok := duplicate(f.keys); ok {
					f.key = k.k
					return w.mk(w.file, path(), lineAt(b, int64(k.off)), fmt.Errorf("%w: duplicate key %q", ErrSchema, k.k))
				}
			}
			stack = stack[:len(stack)-1]
			expectKey = false
		case ',':
			f := stack[len(stack)-1]
			if f.obj {
				expectKey = true
			} else {
				f.idx++
			}
		case '"':
			j := i + 1
			escaped := false
			for ; b[j] != '"'; j++ {
				if b[j] == '\\' {
					escaped = true
					j++
				}
			}
			if expectKey {
				k := b[i+1 : j]
				// encoding/json unescapes and turns each invalid UTF-8
				// byte into U+FFFD, so "\xca" and "\xd8" are the same
				// key to it: compare keys as it reads them.
				if escaped || !utf8.Valid(k) {
					var s string
					if err := json.Unmarshal(b[i:j+1], &s); err == nil {
						k = []byte(s)
					}
				}
				f := stack[len(stack)-1]
				f.key = k
				f.keys = append(f.keys, jkey{k, i})
				expectKey = false
			}
			i = j
		}
	}
	return nil
}

// duplicate returns the later of two equal keys. Small objects are
// compared pairwise; large ones (a cluster-features.json cluster has 219
// keys) sorted, which reorders keys but allocates nothing.
func duplicate(keys []jkey) (jkey, bool) {
	if len(keys) <= 32 {
		for j := 1; j < len(keys); j++ {
			for i := range j {
				if bytes.Equal(keys[i].k, keys[j].k) {
					return keys[j], true
				}
			}
		}
		return jkey{}, false
	}
	slices.SortFunc(keys, func(a, b jkey) int {
		if c := bytes.Compare(a.k, b.k); c != 0 {
			return c
		}
		return a.off - b.off
	})
	for j := 1; j < len(keys); j++ {
		if bytes.Equal(keys[j-1].k, keys[j].k) {
			return keys[j], true
		}
	}
	return jkey{}, false
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
