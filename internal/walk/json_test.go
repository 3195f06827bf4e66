package walk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestJSONKeys(t *testing.T) {
	var big strings.Builder
	big.WriteString("{\n")
	for i := range 40 {
		fmt.Fprintf(&big, "  \"k%02d\": %d,\n", i, i)
	}
	big.WriteString("  \"k07\": 7\n}")
	tests := []struct {
		name, doc, path string
		line            int
		sentinel        error
	}{
		{"fine", `{"a": {"b": [1, {"c": "}{\"["}]}, "b": 2}`, "", 0, nil},
		{"small duplicate", "{\"a\": 1,\n \"b\": {\"x\": 1,\n \"x\": 2}}", "b.x", 3, ErrSchema},
		{"large duplicate", big.String(), "k07", 42, ErrSchema},
		{"escaped duplicate", `{"a": 1, "\u0061": 2}`, "a", 1, ErrSchema},
		{"same key apart", `{"a": {"k": 1}, "b": {"k": 2}}`, "", 0, nil},
		{"in a list", `[{"x": 1}, {"x": 1, "x": 2}]`, "[1].x", 1, ErrSchema},
		{"deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), strings.Repeat("[0]", MaxDepth), 1, ErrTooComplex},
		{"deep enough", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), "", 0, nil},
		{"trailing", `{"a": 1} x`, "", 1, ErrSyntax},
		{"trailing space", "{\"a\": 1}\n\n", "", 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewJSON("f.json", mk).Decode(strings.NewReader(tc.doc))
			if tc.sentinel == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var te *testErr
			if !errors.Is(err, tc.sentinel) || !errors.As(err, &te) || te.path != tc.path || te.line != tc.line {
				t.Errorf("err %v; want %v at %q line %d", err, tc.sentinel, tc.path, tc.line)
			}
		})
	}
}

// refDuplicates reports, token by token with encoding/json, whether a
// valid document has an object with a repeated key or nests deeper than
// MaxDepth: the reference FuzzJSON holds checkKeys to.
func refDuplicates(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			return false // not valid: Decode refuses it before checking keys
		}
		if len(stack) > 0 && stack[len(stack)-1].obj && stack[len(stack)-1].key {
			f := stack[len(stack)-1]
			if s, ok := tok.(string); ok {
				if f.keys[s] {
					return true
				}
				f.keys[s] = true
				f.key = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= MaxDepth {
				return true
			}
			stack = append(stack, &frame{obj: tok == json.Delim('{'), keys: map[string]bool{}, key: tok == json.Delim('{')})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].key = true
		}
	}
}

// FuzzJSON: Decode accepts exactly the documents encoding/json accepts
// whole (one value, then only space) that repeat no key and nest at most
// MaxDepth deep, and reads them to the same value.
func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a": {"b": [1, {"c": "}{\"["}]}, "b": 2}`))
	f.Add([]byte(`{"a": 1, "\u0061": 2}`))
	f.Add([]byte(`[{"x": 1}, {"x": 1, "x": 2}] `))
	f.Add([]byte("[{\"\xca\":0,\"\xd8\":0}]")) // both keys read as "\ufffd" (CI fuzzing, stop 22)
	f.Add([]byte(BOM + `{"a": 1}`))
	seedFile(f, "spack-build/jgf-sample/compiler-subsystem.json", 2000)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := NewJSON("f.json", mk).Decode(bytes.NewReader(b))
		b = bytes.TrimPrefix(b, []byte(BOM)) // ReadAll drops it
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var want any
		refErr := d.Decode(&want)
		whole := refErr == nil && len(bytes.TrimLeft(b[d.InputOffset():], " \t\r\n")) == 0
		switch {
		case err == nil && (!whole || refDuplicates(b)):
			t.Fatalf("accepted %q, which encoding/json refuses or which repeats a key or nests too deep", b)
		case err == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("%q: read %v, encoding/json %v", b, got, want)
		case err != nil && whole && !refDuplicates(b):
			t.Fatalf("refused %q: %v", b, err)
		}
	})
}
