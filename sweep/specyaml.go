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
// errors are *SpecError values naming the key (unknown keys included).
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
		case "inputs":
			s.Inputs = map[string]string{}
			return eachKey(v, key, func(key, k string, v *yaml.Node) error {
				var x string
				err := scalarTo(v, key, &x)
				s.Inputs[k] = x
				return err
			})
		case "base":
			m, err := valueMap(v, key)
			s.Base = m
			return err
		case "resources":
			r, err := resources(v, key)
			s.Resources = r
			return err
		case "grid":
			if v.Kind == yaml.MappingNode && len(v.Content) >= 2 {
				// The mapping form other sweep tools take: show this
				// spec's first axis in the list form.
				vals := v.Content[1]
				if vals.Kind == yaml.MappingNode { // lr: {values: [...]}
					for i := 0; i+1 < len(vals.Content); i += 2 {
						if vals.Content[i].Value == "values" {
							vals = vals.Content[i+1]
						}
					}
				}
				return specErr(key, "must be a list of axes, not a mapping; for example - {key: %s, values: %s}",
					v.Content[0].Value, flowText(vals))
			}
			if v.Kind != yaml.SequenceNode {
				return specErr(key, "must be a list of axes (- {key: lr, values: [0.1, 0.01]})")
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
					case "when":
						c, err := condition(v, key)
						a.When = c
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
					case "resources":
						r, err := resources(v, key)
						va.Resources = r
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
			sm, err := samples(v, key)
			s.Samples = sm
			return err
		case "exclude":
			if v.Kind != yaml.SequenceNode {
				return specErr(key, "must be a list of conditions")
			}
			for i, cn := range v.Content {
				c, err := condition(cn, fmt.Sprintf("%s[%d]", key, i))
				if err != nil {
					return err
				}
				s.Exclude = append(s.Exclude, c)
			}
		default:
			return specErr(key, "unknown key")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func samples(v *yaml.Node, key string) (*Samples, error) {
	sm := &Samples{}
	err := eachKey(v, key, func(key, k string, v *yaml.Node) error {
		switch k {
		case "count", "seed":
			var lit string
			if err := scalarTo(v, key, &lit); err != nil {
				return err
			}
			n, err := strconv.ParseUint(lit, 10, 64)
			switch {
			case k == "seed" && err != nil:
				return specErr(key, "%q is not a seed: a whole number from 0 to %d", lit, uint64(math.MaxUint64))
			case k == "count" && (err != nil || n > maxSamples):
				return specErr(key, "%q is not a sample count: a whole number from 0 to %d", lit, maxSamples)
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
				d, err := dist(dn, fmt.Sprintf("%s[%d]", key, i))
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
	return sm, err
}

func dist(dn *yaml.Node, dk string) (Dist, error) {
	var d Dist
	err := eachKey(dn, dk, func(key, k string, v *yaml.Node) error {
		switch k {
		case "key":
			return scalarTo(v, key, &d.Key)
		case "short":
			return scalarTo(v, key, &d.Short)
		case "when":
			c, err := condition(v, key)
			d.When = c
			return err
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
		case "int_uniform":
			vals, err := valueList(v, key)
			if err != nil {
				return err
			}
			is := []int64{}
			for j, x := range vals {
				if x.Kind != Int {
					return specErr(fmt.Sprintf("%s[%d]", key, j), "%q is not an integer", x.Lit)
				}
				is = append(is, x.Int())
			}
			d.IntUniform = is
		case "choice":
			vals, err := valueList(v, key)
			if err == nil && len(vals) == 0 {
				return specErr(key, "an empty list: a choice needs at least one value")
			}
			d.Choice = vals
			return err
		default:
			return specErr(key, "unknown key")
		}
		return nil
	})
	return d, err
}

// condition reads {key: value, key: [values]}.
func condition(n *yaml.Node, key string) (map[string][]Value, error) {
	c := map[string][]Value{}
	err := eachKey(n, key, func(key, k string, v *yaml.Node) error {
		if v.Kind == yaml.SequenceNode {
			vals, err := valueList(v, key)
			if err == nil && len(vals) == 0 {
				err = specErr(key, "empty list")
			}
			c[k] = vals
			return err
		}
		x, err := nodeValue(v, key)
		c[k] = []Value{x}
		return err
	})
	return c, err
}

func resources(n *yaml.Node, key string) (Resources, error) {
	var r Resources
	err := eachKey(n, key, func(key, k string, v *yaml.Node) error {
		var lit string
		if err := scalarTo(v, key, &lit); err != nil {
			return err
		}
		switch k {
		case "cpus", "gpus":
			x, err := strconv.Atoi(lit)
			if err != nil || x < 0 {
				return specErr(key, "%q is not a non-negative integer", lit)
			}
			if k == "cpus" {
				r.CPUs = x
			} else {
				r.GPUs = x
			}
		case "memory", "disk":
			mb, err := parseMiB(lit)
			if err != nil {
				return specErr(key, "%v", err)
			}
			if k == "memory" {
				r.MemoryMB = mb
			} else {
				r.DiskMB = mb
			}
		case "time":
			d, err := parseTimeLimit(lit)
			if err != nil {
				return specErr(key, "%v", err)
			}
			r.Time = d
		case "partition":
			r.Partition = lit
		case "account":
			r.Account = lit
		default:
			return specErr(key, "unknown key (cpus, gpus, memory, disk, time, partition, account)")
		}
		return nil
	})
	return r, err
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
		return strValue(n.Value), nil
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

// flowText is node n in YAML's one-line flow style, for an error message
// (at most 60 bytes).
func flowText(n *yaml.Node) string {
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
