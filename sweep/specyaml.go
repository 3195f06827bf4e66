package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/crosscluster/crosscluster/internal/walk"
)

// LoadSpec reads a YAML spec:
//
//	name: losssweep
//	inputs: {code: v3}     # optional: recorded, checked on resume
//	base: {epochs: 50, batch_size: 64, optimizer: sgd}
//	resources: {cpus: 1, memory: 2G, time: 30m}   # optional
//	grid:
//	  - {key: lr, values: [0.05, 0.1, 0.2], when: {optimizer: sgd}}
//	  - {key: lr, values: [0.005, 0.01], when: {optimizer: adamw}}
//	  - {key: seed, short: s, values: [0, 1]}
//	variants:
//	  - {name: base}
//	  - {name: adamw, set: {optimizer: adamw}, resources: {gpus: 1}}
//	samples:               # optional random search
//	  count: 4
//	  seed: 1
//	  params:
//	    - {key: dropout, uniform: [0, 0.5]}
//	    - {key: hidden, int_uniform: [8, 64]}
//	    - {key: momentum, uniform: [0.8, 0.99], when: {optimizer: sgd}}
//	exclude:               # optional
//	  - {optimizer: adamw, seed: 1}
//
// A condition (when, exclude) maps each key to a value or a list of values.
// Resources: cpus, gpus, memory and disk (a number of MiB, or with a K, M, G
// or T suffix), time (a Go duration such as 90m, or Slurm's [D-]HH:MM:SS),
// partition, account. Scalars keep their literal text; quoted scalars are
// strings. The spec is validated before LoadSpec returns (as by Spec.Points);
// errors are *SpecError values naming the key (unknown keys included) and,
// for what the YAML itself holds, the line. A spec is at most 16 MiB, and
// YAML aliases may not expand it beyond 16 times its own nodes.
func LoadSpec(r io.Reader) (*Spec, error) {
	b, err := walk.ReadAll(r, "", specWalkErr)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, specErr("(document)", "empty")
	}
	sr := specReader{walk.NewYAML("", specWalkErr)}
	root, err := sr.w.Parse(b)
	if err != nil {
		return nil, err
	}
	top, err := sr.mapping(root, "", "a spec", "name", "inputs", "base", "resources", "grid", "variants", "samples", "exclude")
	if err != nil {
		return nil, err
	}
	s := &Spec{}
	for _, kv := range top {
		if err := sr.top(s, kv[0].Value, kv[1]); err != nil {
			return nil, err
		}
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// specWalkErr makes the errors of internal/walk *SpecErrors naming the key
// and the line; an error reading the input is returned as such.
func specWalkErr(_, path string, line int, err error) error {
	switch {
	case errors.Is(err, walk.ErrSyntax), errors.Is(err, walk.ErrSchema), errors.Is(err, walk.ErrTooLarge), errors.Is(err, walk.ErrTooComplex):
	default:
		return fmt.Errorf("sweep: reading spec: %w", err)
	}
	key := cmpOr(path, "(document)")
	if line > 0 {
		return &SpecError{Key: key, Err: fmt.Errorf("%w: line %d: %w", ErrSpec, line, err)}
	}
	return &SpecError{Key: key, Err: fmt.Errorf("%w: %w", ErrSpec, err)}
}

// specReader reads the parts of a spec from the YAML tree.
type specReader struct{ w walk.YAML }

// fail returns a *SpecError at key naming n's line.
func (r specReader) fail(n *yaml.Node, key, format string, a ...any) error {
	if n == nil || n.Line == 0 {
		return specErr(key, format, a...)
	}
	return &SpecError{Key: key, Err: fmt.Errorf("%w: line %d: "+format, append([]any{ErrSpec, n.Line}, a...)...)}
}

// mapping returns the pairs of the mapping n at key, refusing keys outside
// allowed (what names the mapping in that message).
func (r specReader) mapping(n *yaml.Node, key, what string, allowed ...string) ([][2]*yaml.Node, error) {
	m, err := r.w.Mapping(n, key)
	if err != nil {
		return nil, err
	}
	return m, r.w.Keys(m, key, what, allowed)
}

// top reads the top-level key k of the spec.
func (r specReader) top(s *Spec, k string, v *yaml.Node) error {
	var err error
	switch k {
	case "name":
		s.Name, err = r.w.Scalar(v, k)
	case "inputs":
		m, err := r.w.Mapping(v, k)
		if err != nil {
			return err
		}
		s.Inputs = make(map[string]string, len(m))
		for _, kv := range m {
			if s.Inputs[kv[0].Value], err = r.w.Scalar(kv[1], walk.Dot(k, kv[0].Value)); err != nil {
				return err
			}
		}
	case "base":
		s.Base, err = r.valueMap(v, k)
	case "resources":
		s.Resources, err = r.resources(v, k)
	case "grid":
		s.Axes, err = r.grid(v, k)
	case "variants":
		s.Variants, err = r.variants(v, k)
	case "samples":
		s.Samples, err = r.samples(v, k)
	case "exclude":
		n := walk.Deref(v)
		if n == nil || n.Kind != yaml.SequenceNode {
			return r.fail(v, k, "must be a list of conditions")
		}
		items, err := r.w.Seq(n, k)
		if err != nil {
			return err
		}
		for i, cn := range items {
			c, err := r.condition(cn, walk.Idx(k, i))
			if err != nil {
				return err
			}
			s.Exclude = append(s.Exclude, c)
		}
	}
	return err
}

func (r specReader) grid(v *yaml.Node, key string) ([]Axis, error) {
	n := walk.Deref(v)
	if n != nil && n.Kind == yaml.MappingNode && len(n.Content) >= 2 {
		// The mapping form other sweep tools take: show this spec's
		// first axis in the list form.
		vals := walk.Deref(n.Content[1])
		if vals != nil && vals.Kind == yaml.MappingNode { // lr: {values: [...]}
			for i := 0; i+1 < len(vals.Content); i += 2 {
				if vals.Content[i].Value == "values" {
					vals = walk.Deref(vals.Content[i+1])
					break
				}
			}
		}
		return nil, r.fail(n, key, "must be a list of axes, not a mapping; for example - {key: %s, values: %s}",
			n.Content[0].Value, flowText(vals))
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, r.fail(v, key, "must be a list of axes (- {key: lr, values: [0.1, 0.01]})")
	}
	items, err := r.w.Seq(n, key)
	if err != nil {
		return nil, err
	}
	axes := make([]Axis, 0, len(items))
	for i, an := range items {
		ak := walk.Idx(key, i)
		m, err := r.mapping(an, ak, "an axis", "key", "short", "values", "when")
		if err != nil {
			return nil, err
		}
		var a Axis
		for _, kv := range m {
			k, v := kv[0].Value, kv[1]
			switch k {
			case "key":
				a.Key, err = r.w.Scalar(v, walk.Dot(ak, k))
			case "short":
				a.Short, err = r.w.Scalar(v, walk.Dot(ak, k))
			case "values":
				a.Values, err = r.valueList(v, walk.Dot(ak, k))
			case "when":
				a.When, err = r.condition(v, walk.Dot(ak, k))
			}
			if err != nil {
				return nil, err
			}
		}
		axes = append(axes, a)
	}
	return axes, nil
}

func (r specReader) variants(v *yaml.Node, key string) ([]Variant, error) {
	n := walk.Deref(v)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, r.fail(v, key, "must be a list of variants")
	}
	items, err := r.w.Seq(n, key)
	if err != nil {
		return nil, err
	}
	out := make([]Variant, 0, len(items))
	for i, vn := range items {
		vk := walk.Idx(key, i)
		m, err := r.mapping(vn, vk, "a variant", "name", "set", "resources")
		if err != nil {
			return nil, err
		}
		var va Variant
		for _, kv := range m {
			k, v := kv[0].Value, kv[1]
			switch k {
			case "name":
				va.Name, err = r.w.Scalar(v, walk.Dot(vk, k))
			case "set":
				va.Set, err = r.valueMap(v, walk.Dot(vk, k))
			case "resources":
				va.Resources, err = r.resources(v, walk.Dot(vk, k))
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, va)
	}
	return out, nil
}

func (r specReader) samples(v *yaml.Node, key string) (*Samples, error) {
	m, err := r.mapping(v, key, "samples", "count", "seed", "params")
	if err != nil {
		return nil, err
	}
	sm := &Samples{}
	for _, kv := range m {
		k, v := kv[0].Value, kv[1]
		sk := walk.Dot(key, k)
		switch k {
		case "count", "seed":
			lit, err := r.w.Scalar(v, sk)
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseUint(lit, 10, 64)
			switch {
			case k == "seed" && err != nil:
				return nil, r.fail(v, sk, "%q is not a seed: a whole number from 0 to %d", lit, uint64(math.MaxUint64))
			case k == "count" && (err != nil || n > maxSamples):
				return nil, r.fail(v, sk, "%q is not a sample count: a whole number from 0 to %d", lit, maxSamples)
			}
			if k == "count" {
				sm.Count = int(n)
			} else {
				sm.Seed = n
			}
		case "params":
			n := walk.Deref(v)
			if n == nil || n.Kind != yaml.SequenceNode {
				return nil, r.fail(v, sk, "must be a list")
			}
			items, err := r.w.Seq(n, sk)
			if err != nil {
				return nil, err
			}
			for i, dn := range items {
				d, err := r.dist(dn, walk.Idx(sk, i))
				if err != nil {
					return nil, err
				}
				sm.Dists = append(sm.Dists, d)
			}
		}
	}
	return sm, nil
}

func (r specReader) dist(dn *yaml.Node, dk string) (Dist, error) {
	var d Dist
	m, err := r.mapping(dn, dk, "a distribution", "key", "short", "when", "uniform", "log_uniform", "int_uniform", "choice")
	if err != nil {
		return d, err
	}
	for _, kv := range m {
		k, v := kv[0].Value, kv[1]
		key := walk.Dot(dk, k)
		switch k {
		case "key":
			d.Key, err = r.w.Scalar(v, key)
		case "short":
			d.Short, err = r.w.Scalar(v, key)
		case "when":
			d.When, err = r.condition(v, key)
		case "uniform", "log_uniform":
			var fs []float64
			if fs, err = r.numbers(v, key); k == "uniform" {
				d.Uniform = fs
			} else {
				d.LogUniform = fs
			}
		case "int_uniform":
			var vals []Value
			if vals, err = r.valueList(v, key); err != nil {
				return d, err
			}
			is := []int64{}
			for j, x := range vals {
				if x.Kind != Int {
					return d, r.fail(v, walk.Idx(key, j), "%q is not an integer", x.Lit)
				}
				is = append(is, x.Int())
			}
			d.IntUniform = is
		case "choice":
			if d.Choice, err = r.valueList(v, key); err == nil && len(d.Choice) == 0 {
				return d, r.fail(v, key, "an empty list: a choice needs at least one value")
			}
		}
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// numbers reads a list of numbers.
func (r specReader) numbers(v *yaml.Node, key string) ([]float64, error) {
	vals, err := r.valueList(v, key)
	if err != nil {
		return nil, err
	}
	fs := []float64{}
	for j, x := range vals {
		if x.Kind != Int && x.Kind != Float {
			return nil, r.fail(v, walk.Idx(key, j), "%q is not a number", x.Lit)
		}
		fs = append(fs, x.Float())
	}
	return fs, nil
}

// condition reads {key: value, key: [values]}.
func (r specReader) condition(n *yaml.Node, key string) (map[string][]Value, error) {
	m, err := r.w.Mapping(n, key)
	if err != nil {
		return nil, err
	}
	c := make(map[string][]Value, len(m))
	for _, kv := range m {
		k, v := kv[0].Value, kv[1]
		ck := walk.Dot(key, k)
		if vn := walk.Deref(v); vn != nil && vn.Kind == yaml.SequenceNode {
			vals, err := r.valueList(vn, ck)
			if err == nil && len(vals) == 0 {
				err = r.fail(vn, ck, "empty list")
			}
			if err != nil {
				return nil, err
			}
			c[k] = vals
			continue
		}
		x, err := r.value(v, ck)
		if err != nil {
			return nil, err
		}
		c[k] = []Value{x}
	}
	return c, nil
}

func (r specReader) resources(n *yaml.Node, key string) (Resources, error) {
	var res Resources
	m, err := r.mapping(n, key, "resources", "cpus", "gpus", "memory", "disk", "time", "partition", "account")
	if err != nil {
		return res, err
	}
	for _, kv := range m {
		k, v := kv[0].Value, kv[1]
		rk := walk.Dot(key, k)
		lit, err := r.w.Scalar(v, rk)
		if err != nil {
			return res, err
		}
		switch k {
		case "cpus", "gpus":
			x, err := strconv.Atoi(lit)
			if err != nil || x < 0 {
				return res, r.fail(v, rk, "%q is not a non-negative integer", lit)
			}
			if k == "cpus" {
				res.CPUs = x
			} else {
				res.GPUs = x
			}
		case "memory", "disk":
			mb, err := parseMiB(lit)
			if err != nil {
				return res, r.fail(v, rk, "%v", err)
			}
			if k == "memory" {
				res.MemoryMB = mb
			} else {
				res.DiskMB = mb
			}
		case "time":
			d, err := parseTimeLimit(lit)
			if err != nil {
				return res, r.fail(v, rk, "%v", err)
			}
			res.Time = d
		case "partition":
			res.Partition = lit
		case "account":
			res.Account = lit
		}
	}
	return res, nil
}

// parseMiB reads "512" (MiB), "512M", "4G", "1.5G", "1T" or "100K".
func parseMiB(s string) (int, error) {
	mult := 1.0
	num := strings.TrimSpace(s)
	if n := len(num); n > 0 {
		switch strings.ToUpper(num[n-1:]) {
		case "K":
			mult, num = 1.0/1024, num[:n-1]
		case "M":
			num = num[:n-1]
		case "G":
			mult, num = 1024, num[:n-1]
		case "T":
			mult, num = 1024*1024, num[:n-1]
		}
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || x*mult > math.MaxInt32 {
		return 0, fmt.Errorf("%q is not a size (512, 512M, 4G, 1T)", s)
	}
	return int(math.Ceil(x * mult)), nil
}

// parseTimeLimit reads a Go duration ("90m", "2h30m") or Slurm's MM:SS,
// HH:MM:SS or D-HH:MM:SS.
func parseTimeLimit(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return 0, fmt.Errorf("time %q is not positive", s)
		}
		return d, nil
	}
	bad := fmt.Errorf("%q is not a time limit (90m, 2h, 1:30:00, 2-00:00:00)", s)
	days, rest := 0, s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 365 {
			return 0, bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 || (days > 0 && len(parts) != 3) {
		return 0, bad
	}
	secs := 0
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (i > 0 && n > 59) || n > 1_000_000 {
			return 0, bad
		}
		secs = secs*60 + n
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(secs)*time.Second
	if d <= 0 {
		return 0, bad
	}
	return d, nil
}

// value reads a parameter value: a scalar, typed as YAML would unless
// quoted (see ParseValue), neither null nor a non-finite number.
func (r specReader) value(n *yaml.Node, key string) (Value, error) {
	lit, err := r.w.Scalar(n, key)
	if err != nil {
		return Value{}, err
	}
	n = walk.Deref(n)
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return strValue(lit), nil
	}
	if n.Tag == "!!null" {
		return Value{}, r.fail(n, key, "null value")
	}
	v := ParseValue(lit)
	if v.Kind == Float && (math.IsNaN(v.f) || math.IsInf(v.f, 0)) {
		return Value{}, r.fail(n, key, "non-finite number %q", lit)
	}
	return v, nil
}

func (r specReader) valueMap(n *yaml.Node, key string) (map[string]Value, error) {
	m, err := r.w.Mapping(n, key)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Value, len(m))
	for _, kv := range m {
		if out[kv[0].Value], err = r.value(kv[1], walk.Dot(key, kv[0].Value)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r specReader) valueList(n *yaml.Node, key string) ([]Value, error) {
	items, err := r.w.Seq(n, key)
	if err != nil {
		return nil, err
	}
	var out []Value
	for i, c := range items {
		v, err := r.value(c, walk.Idx(key, i))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// flowText is node n in YAML's one-line flow style, for an error message
// (at most 60 bytes).
func flowText(n *yaml.Node) string {
	if n == nil {
		return "[...]"
	}
	c := *n
	c.Style = yaml.FlowStyle
	b, err := yaml.Marshal(&c)
	t := strings.TrimSpace(string(b))
	if err != nil || t == "" {
		return "[...]"
	}
	if len(t) > 60 {
		t = strings.ToValidUTF8(t[:57], "") + "..."
	}
	return t
}
