package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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
func decodeConfig(b []byte) (map[string]Value, error) {
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
