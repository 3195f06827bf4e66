package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kind is the type of a parameter value.
type Kind int

const (
	String Kind = iota
	Int
	Float
	Bool
)

// Value is a typed parameter value that keeps the literal text it was written
// with ("1e-4" stays "1e-4" in slugs and exports, while run identity uses the
// number).
type Value struct {
	Kind Kind
	Lit  string
	f    float64
	i    int64
	b    bool
}

// Str returns a string value.
func Str(s string) Value { return Value{Kind: String, Lit: s} }

// IntValue returns an integer value.
func IntValue(i int64) Value {
	return Value{Kind: Int, Lit: strconv.FormatInt(i, 10), i: i, f: float64(i)}
}

// FloatValue returns a float value whose literal is the shortest text that
// round-trips.
func FloatValue(f float64) Value {
	return Value{Kind: Float, Lit: strconv.FormatFloat(f, 'g', -1, 64), f: f}
}

// BoolValue returns a boolean value.
func BoolValue(b bool) Value { return Value{Kind: Bool, Lit: strconv.FormatBool(b), b: b} }

// ParseValue types a literal as YAML would: true/false, an integer, a float,
// else a string. Quoted YAML scalars stay strings (see LoadSpec).
func ParseValue(lit string) Value {
	switch lit {
	case "true", "false":
		return Value{Kind: Bool, Lit: lit, b: lit == "true"}
	}
	if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return Value{Kind: Int, Lit: lit, i: i, f: float64(i)}
	}
	if f, err := strconv.ParseFloat(lit, 64); err == nil && !strings.ContainsAny(lit, "xXpP_") {
		return Value{Kind: Float, Lit: lit, f: f}
	}
	return Str(lit)
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

// canonical is the text used for identity: numbers in a normal form so that
// 1e-4 and 0.0001 name the same run, strings quoted.
func (v Value) canonical() string {
	switch v.Kind {
	case Int:
		return strconv.FormatInt(v.i, 10)
	case Float:
		if v.f == math.Trunc(v.f) && math.Abs(v.f) < 1e15 {
			return strconv.FormatFloat(v.f, 'f', 1, 64)
		}
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case Bool:
		return strconv.FormatBool(v.b)
	}
	return strconv.Quote(v.Lit)
}

// Axis is one grid dimension.
type Axis struct {
	Key    string  // parameter name
	Short  string  // slug prefix; empty means Key
	Values []Value // in declared order
}

// Variant is a named overlay applied on top of Base before the grid values.
type Variant struct {
	Name string
	Set  map[string]Value
}

// Dist is a distribution for a randomly sampled parameter.
type Dist struct {
	Key   string
	Short string
	// Exactly one of the following is used: Uniform [lo, hi), LogUniform
	// [lo, hi) (lo > 0), or Choice.
	Uniform    []float64
	LogUniform []float64
	Choice     []Value
}

// Samples draws Count random points from Dists with a generator seeded by
// Seed; every grid point is combined with every sample. A draw that repeats
// an earlier one (possible with Choice) is dropped, so Expand may list fewer
// than Count samples. Sampled runs' slugs name the draw and its values at
// three significant digits (base-lr0.1-r3-wd0.000123).
type Samples struct {
	Count int
	Seed  uint64
	Dists []Dist
}

// Spec is a sweep: base parameters, grid axes (Cartesian product in declared
// order, last axis fastest), variant overlays (outermost) and optional random
// samples (innermost). The zero Variants means one unnamed variant "base".
type Spec struct {
	Name     string
	Base     map[string]Value
	Axes     []Axis
	Variants []Variant
	Samples  *Samples
	// Priority and Tags are recorded with each run but are not part of its
	// identity.
	Priority int
	Tags     []string
}

// Point is one run of a sweep.
type Point struct {
	Index   int    // position in expansion order
	Variant string // variant name
	Params  map[string]Value
	Slug    string
	ID      string // see Identity
}

// SpecError reports a malformed spec; Key names the offending key
// ("grid[1].values[0]", "variants[2].name").
type SpecError struct {
	Key string
	Err error
}

func (e *SpecError) Error() string { return "sweep: spec key " + e.Key + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// ErrSpec is wrapped by every SpecError.
var ErrSpec = errors.New("malformed spec")

func specErr(key, format string, a ...any) error {
	return &SpecError{Key: key, Err: fmt.Errorf("%w: "+format, append([]any{ErrSpec}, a...)...)}
}

// Validate checks the spec and returns a *SpecError naming the first bad key.
func (s *Spec) Validate() error {
	if s.Name == "" {
		return specErr("name", "empty")
	}
	if !slugSafe(s.Name) {
		return specErr("name", "%q may only contain letters, digits, '.', '_' and '-'", s.Name)
	}
	seen := map[string]bool{}
	for i, a := range s.Axes {
		k := fmt.Sprintf("grid[%d]", i)
		if a.Key == "" {
			return specErr(k+".key", "empty")
		}
		if seen[a.Key] {
			return specErr(k+".key", "duplicate axis %q", a.Key)
		}
		seen[a.Key] = true
		if len(a.Values) == 0 {
			return specErr(k+".values", "axis %q has no values", a.Key)
		}
	}
	names := map[string]bool{}
	for i, v := range s.Variants {
		k := fmt.Sprintf("variants[%d].name", i)
		if v.Name == "" || !slugSafe(v.Name) {
			return specErr(k, "%q is not a valid variant name", v.Name)
		}
		if names[v.Name] {
			return specErr(k, "duplicate variant %q", v.Name)
		}
		names[v.Name] = true
	}
	if s.Samples != nil {
		if s.Samples.Count <= 0 {
			return specErr("samples.count", "must be positive")
		}
		for i, d := range s.Samples.Dists {
			k := fmt.Sprintf("samples.params[%d]", i)
			if d.Key == "" {
				return specErr(k+".key", "empty")
			}
			if seen[d.Key] {
				return specErr(k+".key", "%q is also a grid axis", d.Key)
			}
			n := 0
			if d.Uniform != nil {
				n++
				if len(d.Uniform) != 2 || !(d.Uniform[0] < d.Uniform[1]) {
					return specErr(k+".uniform", "need [lo, hi] with lo < hi")
				}
			}
			if d.LogUniform != nil {
				n++
				if len(d.LogUniform) != 2 || !(d.LogUniform[0] > 0 && d.LogUniform[0] < d.LogUniform[1]) {
					return specErr(k+".log_uniform", "need [lo, hi] with 0 < lo < hi")
				}
			}
			if d.Choice != nil {
				n++
				if len(d.Choice) == 0 {
					return specErr(k+".choice", "empty")
				}
			}
			if n != 1 {
				return specErr(k, "exactly one of uniform, log_uniform, choice is required")
			}
		}
	}
	return nil
}

func slugSafe(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return s != ""
}

// Expand lists every point of the sweep in order: variants outermost, then
// the grid axes in declared order (last fastest), then the samples.
func (s *Spec) Expand() ([]Point, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	variants := s.Variants
	if len(variants) == 0 {
		variants = []Variant{{Name: "base"}}
	}
	var samples []map[string]Value
	if s.Samples != nil {
		rng := rand.New(rand.NewPCG(s.Samples.Seed, 0x5eed))
		seen := make(map[string]bool, s.Samples.Count)
		for range s.Samples.Count {
			m := map[string]Value{}
			for _, d := range s.Samples.Dists {
				switch {
				case d.Uniform != nil:
					m[d.Key] = FloatValue(d.Uniform[0] + rng.Float64()*(d.Uniform[1]-d.Uniform[0]))
				case d.LogUniform != nil:
					lo, hi := math.Log(d.LogUniform[0]), math.Log(d.LogUniform[1])
					m[d.Key] = FloatValue(math.Exp(lo + rng.Float64()*(hi-lo)))
				default:
					m[d.Key] = d.Choice[rng.IntN(len(d.Choice))]
				}
			}
			// A repeated draw (possible with Choice) would be the same run
			// twice; it is dropped so every point has its own identity.
			if id := Identity(m); !seen[id] {
				seen[id] = true
				samples = append(samples, m)
			}
		}
	} else {
		samples = []map[string]Value{nil}
	}
	total := len(variants) * len(samples)
	for _, a := range s.Axes {
		total *= len(a.Values)
	}
	pts := make([]Point, 0, total)
	idx := make([]int, len(s.Axes))
	for _, v := range variants {
		for i := range idx {
			idx[i] = 0
		}
		for {
			for si, smp := range samples {
				p := Point{Index: len(pts), Variant: v.Name, Params: make(map[string]Value, len(s.Base)+len(v.Set)+len(s.Axes)+len(smp))}
				for k, x := range s.Base {
					p.Params[k] = x
				}
				for k, x := range v.Set {
					p.Params[k] = x
				}
				var slug strings.Builder
				slug.WriteString(v.Name)
				for ai, a := range s.Axes {
					x := a.Values[idx[ai]]
					p.Params[a.Key] = x
					slug.WriteByte('-')
					slug.WriteString(cmpOr(a.Short, a.Key))
					slug.WriteString(slugText(x.Lit))
				}
				if smp != nil {
					fmt.Fprintf(&slug, "-r%d", si)
					for _, d := range s.Samples.Dists {
						x := smp[d.Key]
						p.Params[d.Key] = x
						slug.WriteByte('-')
						slug.WriteString(cmpOr(d.Short, d.Key))
						slug.WriteString(slugText(sampleLit(x)))
					}
				}
				p.Params["variant"] = Str(v.Name)
				p.Slug = slug.String()
				p.ID = Identity(p.Params)
				pts = append(pts, p)
			}
			// Odometer: last axis fastest.
			k := len(idx) - 1
			for ; k >= 0; k-- {
				idx[k]++
				if idx[k] < len(s.Axes[k].Values) {
					break
				}
				idx[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
	return pts, nil
}

// sampleLit is a sampled value's text for a slug: floats at three
// significant digits (the run id keeps the full value), others as written.
func sampleLit(v Value) string {
	if v.Kind == Float {
		return strconv.FormatFloat(v.f, 'g', 3, 64)
	}
	return v.Lit
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func slugText(lit string) string {
	var b strings.Builder
	for _, r := range lit {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// DryRun writes one line per point (index, id, slug) and a total.
func (s *Spec) DryRun(w io.Writer) error {
	pts, err := s.Expand()
	if err != nil {
		return err
	}
	for _, p := range pts {
		if _, err := fmt.Fprintf(w, "%4d  %s  %s\n", p.Index, p.ID, p.Slug); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "%d runs\n", len(pts))
	return err
}

// LoadSpec reads a YAML spec:
//
//	name: losssweep
//	priority: 1            # optional, not part of identity
//	tags: [paper]          # optional, not part of identity
//	base: {epochs: 50, batch_size: 64}
//	grid:
//	  - {key: lr, values: [0.05, 0.1, 0.2]}
//	  - {key: seed, short: s, values: [0, 1]}
//	variants:
//	  - {name: base}
//	  - {name: adamw, set: {optimizer: adamw}}
//	samples:               # optional
//	  count: 4
//	  seed: 1
//	  params:
//	    - {key: dropout, uniform: [0, 0.5]}
//
// Scalars keep their literal text; quoted scalars are strings. Errors are
// *SpecError values naming the key (unknown keys included).
func LoadSpec(r io.Reader) (*Spec, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sweep: reading spec: %w", err)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, specErr("(document)", "empty")
		}
		return nil, specErr("(document)", "%v", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, specErr("(document)", "top level must be a mapping")
	}
	s := &Spec{}
	err = eachKey(doc.Content[0], "", func(key string, k string, v *yaml.Node) error {
		switch k {
		case "name":
			return scalarTo(v, key, &s.Name)
		case "priority":
			var lit string
			if err := scalarTo(v, key, &lit); err != nil {
				return err
			}
			p, err := strconv.Atoi(lit)
			if err != nil {
				return specErr(key, "%q is not an integer", lit)
			}
			s.Priority = p
		case "tags":
			if v.Kind != yaml.SequenceNode {
				return specErr(key, "must be a list")
			}
			for i, t := range v.Content {
				var tag string
				if err := scalarTo(t, fmt.Sprintf("%s[%d]", key, i), &tag); err != nil {
					return err
				}
				s.Tags = append(s.Tags, tag)
			}
		case "base":
			m, err := valueMap(v, key)
			s.Base = m
			return err
		case "grid":
			if v.Kind != yaml.SequenceNode {
				return specErr(key, "must be a list of axes")
			}
			for i, an := range v.Content {
				ak := fmt.Sprintf("%s[%d]", key, i)
				var a Axis
				err := eachKey(an, ak, func(key, k string, v *yaml.Node) error {
					switch k {
					case "key":
						return scalarTo(v, key, &a.Key)
					case "short":
						return scalarTo(v, key, &a.Short)
					case "values":
						vals, err := valueList(v, key)
						a.Values = vals
						return err
					}
					return specErr(key, "unknown key")
				})
				if err != nil {
					return err
				}
				s.Axes = append(s.Axes, a)
			}
		case "variants":
			if v.Kind != yaml.SequenceNode {
				return specErr(key, "must be a list of variants")
			}
			for i, vn := range v.Content {
				vk := fmt.Sprintf("%s[%d]", key, i)
				var va Variant
				err := eachKey(vn, vk, func(key, k string, v *yaml.Node) error {
					switch k {
					case "name":
						return scalarTo(v, key, &va.Name)
					case "set":
						m, err := valueMap(v, key)
						va.Set = m
						return err
					}
					return specErr(key, "unknown key")
				})
				if err != nil {
					return err
				}
				s.Variants = append(s.Variants, va)
			}
		case "samples":
			sm := &Samples{}
			err := eachKey(v, key, func(key, k string, v *yaml.Node) error {
				switch k {
				case "count", "seed":
					var lit string
					if err := scalarTo(v, key, &lit); err != nil {
						return err
					}
					n, err := strconv.ParseUint(lit, 10, 64)
					if err != nil || (k == "count" && n > 1<<20) {
						return specErr(key, "%q is not a non-negative integer", lit)
					}
					if k == "count" {
						sm.Count = int(n)
					} else {
						sm.Seed = n
					}
				case "params":
					if v.Kind != yaml.SequenceNode {
						return specErr(key, "must be a list")
					}
					for i, dn := range v.Content {
						dk := fmt.Sprintf("%s[%d]", key, i)
						var d Dist
						err := eachKey(dn, dk, func(key, k string, v *yaml.Node) error {
							switch k {
							case "key":
								return scalarTo(v, key, &d.Key)
							case "short":
								return scalarTo(v, key, &d.Short)
							case "uniform", "log_uniform":
								vals, err := valueList(v, key)
								if err != nil {
									return err
								}
								fs := []float64{}
								for j, x := range vals {
									if x.Kind != Int && x.Kind != Float {
										return specErr(fmt.Sprintf("%s[%d]", key, j), "%q is not a number", x.Lit)
									}
									fs = append(fs, x.Float())
								}
								if k == "uniform" {
									d.Uniform = fs
								} else {
									d.LogUniform = fs
								}
							case "choice":
								vals, err := valueList(v, key)
								d.Choice = vals
								return err
							default:
								return specErr(key, "unknown key")
							}
							return nil
						})
						if err != nil {
							return err
						}
						sm.Dists = append(sm.Dists, d)
					}
				default:
					return specErr(key, "unknown key")
				}
				return nil
			})
			if err != nil {
				return err
			}
			s.Samples = sm
		default:
			return specErr(key, "unknown key")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func eachKey(n *yaml.Node, prefix string, f func(key, k string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return specErr(cmpOr(prefix, "(document)"), "must be a mapping (line %d)", n.Line)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if seen[k] {
			return specErr(key, "duplicate key (line %d)", n.Content[i].Line)
		}
		seen[k] = true
		if err := f(key, k, n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func scalarTo(n *yaml.Node, key string, dst *string) error {
	if n.Kind != yaml.ScalarNode {
		return specErr(key, "must be a scalar (line %d)", n.Line)
	}
	*dst = n.Value
	return nil
}

func nodeValue(n *yaml.Node, key string) (Value, error) {
	if n.Kind != yaml.ScalarNode {
		return Value{}, specErr(key, "must be a scalar (line %d)", n.Line)
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return Str(n.Value), nil
	}
	if n.Tag == "!!null" {
		return Value{}, specErr(key, "null value (line %d)", n.Line)
	}
	v := ParseValue(n.Value)
	if v.Kind == Float && (math.IsNaN(v.f) || math.IsInf(v.f, 0)) {
		return Value{}, specErr(key, "non-finite number %q", n.Value)
	}
	return v, nil
}

func valueMap(n *yaml.Node, key string) (map[string]Value, error) {
	m := map[string]Value{}
	err := eachKey(n, key, func(key, k string, v *yaml.Node) error {
		x, err := nodeValue(v, key)
		m[k] = x
		return err
	})
	return m, err
}

func valueList(n *yaml.Node, key string) ([]Value, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, specErr(key, "must be a list (line %d)", n.Line)
	}
	var out []Value
	for i, c := range n.Content {
		v, err := nodeValue(c, fmt.Sprintf("%s[%d]", key, i))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
