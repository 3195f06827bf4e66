package sweep

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a parameter value.
type Kind int

const (
	String Kind = iota
	Int
	Float
	Bool
)

var kindNames = [...]string{String: "string", Int: "int", Float: "float", Bool: "bool"}

// name returns "string", "int", "float" or "bool": the column types of an
// export's metadata.
func (k Kind) name() string {
	if int(k) >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a typed parameter value that keeps the literal text it was written
// with ("1e-4" stays "1e-4" in slugs and configs, while run identity uses the
// number).
type Value struct {
	Kind Kind
	Lit  string
	f    float64
	i    int64
	b    bool
}

// ValueOf returns the value of x: a string, an integer, a float (its literal
// the shortest text that round-trips) or a boolean.
func ValueOf[T string | int | int64 | float64 | bool](x T) Value {
	switch x := any(x).(type) {
	case string:
		return strValue(x)
	case int:
		return intValue(int64(x))
	case int64:
		return intValue(x)
	case float64:
		return floatValue(x)
	default:
		return boolValue(x.(bool))
	}
}

// decimal reports whether s is an optional sign and at least one ASCII digit.
func decimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func strValue(s string) Value { return Value{Kind: String, Lit: s} }

func intValue(i int64) Value {
	return Value{Kind: Int, Lit: strconv.FormatInt(i, 10), i: i, f: float64(i)}
}

func floatValue(f float64) Value {
	return Value{Kind: Float, Lit: strconv.FormatFloat(f, 'g', -1, 64), f: f}
}

func boolValue(b bool) Value { return Value{Kind: Bool, Lit: strconv.FormatBool(b), b: b} }

// ParseValue types a literal as YAML would: true/false, an integer, a float,
// else a string. Quoted YAML scalars stay strings (see LoadSpec).
func ParseValue(lit string) Value {
	switch lit {
	case "true", "false":
		return Value{Kind: Bool, Lit: lit, b: lit == "true"}
	}
	// ParseInt in base 10 takes an optional sign and digits only; asking
	// it about anything else would only build an error to drop.
	if decimal(lit) {
		if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return Value{Kind: Int, Lit: lit, i: i, f: float64(i)}
		}
	}
	if f, err := strconv.ParseFloat(lit, 64); err == nil && !strings.ContainsAny(lit, "xXpP_") {
		return Value{Kind: Float, Lit: lit, f: f}
	}
	return strValue(lit)
}

// Float returns the value as a float64 (0 for strings, 1/0 for booleans).
func (v Value) Float() float64 {
	if v.Kind == Bool {
		if v.b {
			return 1
		}
		return 0
	}
	return v.f
}

// Int returns the value as an int64 (truncated for floats).
func (v Value) Int() int64 {
	if v.Kind == Float {
		return int64(v.f)
	}
	if v.Kind == Bool && v.b {
		return 1
	}
	return v.i
}

// Bool returns the boolean value (false for other kinds).
func (v Value) Bool() bool { return v.Kind == Bool && v.b }

// String returns the literal text.
func (v Value) String() string { return v.Lit }

// maxExactInt is 2^53: every integer of smaller magnitude is exact in a
// float64.
const maxExactInt = 1 << 53

// canonical is the text used for identity and for comparing values: numbers
// in one normal form, so that 1e-4 and 0.0001 name the same run and so do
// 1 and 1.0 (an integral float below 2^53 is written as the integer);
// strings quoted, so that the string "1" is not the number 1.
func (v Value) canonical() string {
	switch v.Kind {
	case Int:
		return strconv.FormatInt(v.i, 10)
	case Float:
		if v.f == math.Trunc(v.f) && math.Abs(v.f) < maxExactInt {
			return strconv.FormatInt(int64(v.f), 10)
		}
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case Bool:
		return strconv.FormatBool(v.b)
	}
	return strconv.Quote(v.Lit)
}

// equal reports whether v and w are one value once numbers are normalised
// (1, 1.0 and 1e0 are equal), as identity compares them.
func (v Value) equal(w Value) bool { return v.canonical() == w.canonical() }
