package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// encodeConfig returns params as a JSON object with sorted keys, numbers and
// booleans written with their literal text and keys and strings quoted as
// encoding/json quotes them. decodeConfig reverses it.
func encodeConfig(params map[string]Value) []byte {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		// JSON's quoting, as for string values: strconv.Quote's \x7f
		// or \a is not JSON, and the worker could not read its config.
		qk, _ := json.Marshal(k)
		b.Write(qk)
		b.WriteByte(':')
		v := params[k]
		if v.Kind == String {
			q, _ := json.Marshal(v.Lit)
			b.Write(q)
		} else {
			b.WriteString(v.Lit)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// decodeConfig parses the output of encodeConfig (any flat JSON object of
// strings, numbers and booleans).
func decodeConfig(s string) (map[string]Value, error) {
	if m, ok := decodeFlat(s); ok {
		return m, nil
	}
	return decodeJSON([]byte(s))
}

// decodeJSON is decodeConfig by encoding/json.
func decodeJSON(b []byte) (map[string]Value, error) {
	var raw map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("sweep: config: %w", err)
	}
	out := make(map[string]Value, len(raw))
	for k, x := range raw {
		switch x := x.(type) {
		case string:
			out[k] = strValue(x)
		case json.Number:
			out[k] = ParseValue(string(x))
		case bool:
			out[k] = boolValue(x)
		default:
			return nil, fmt.Errorf("sweep: config key %s: not a string, number or boolean", k)
		}
	}
	return out, nil
}

// decodeFlat is decodeConfig's fast path for what encodeConfig writes: no
// white space, keys and strings without escapes or control characters,
// numbers and true/false. It reports false for anything else, which
// decodeConfig then hands to encoding/json, so results and errors stay
// those of encoding/json; it avoids its reflection and per-value
// allocations, which dominated reading a ledger of 10⁵ runs.
func decodeFlat(s string) (map[string]Value, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	s = s[1 : len(s)-1]
	out := make(map[string]Value, strings.Count(s, ":"))
	for s != "" {
		k, rest, ok := flatString(s)
		if !ok || rest == "" || rest[0] != ':' {
			return nil, false
		}
		rest = rest[1:]
		var v Value
		switch {
		case rest == "":
			return nil, false
		case rest[0] == '"':
			var str string
			if str, rest, ok = flatString(rest); !ok {
				return nil, false
			}
			v = strValue(str)
		default:
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			tok := rest[:end]
			rest = rest[end:]
			switch {
			case tok == "true" || tok == "false":
				v = boolValue(tok == "true")
			case jsonNumber(tok):
				v = ParseValue(tok)
			default:
				return nil, false
			}
		}
		out[k] = v
		if rest == "" {
			break
		}
		if rest[0] != ',' || len(rest) == 1 {
			return nil, false
		}
		s = rest[1:]
	}
	return out, true
}

// flatString reads a JSON string at the start of s that needs no
// unescaping, and returns it and what follows.
func flatString(s string) (str, rest string, ok bool) {
	if s == "" || s[0] != '"' {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			str = s[1:i]
			return str, s[i+1:], utf8.ValidString(str)
		case c == '\\' || c < 0x20:
			return "", "", false
		}
	}
	return "", "", false
}

// jsonNumber reports whether s is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
