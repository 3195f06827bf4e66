package heldjobs

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/crosscluster/crosscluster/internal/walk"
	"github.com/crosscluster/crosscluster/sweep"
	"go.yaml.in/yaml/v3"
)

// The search space in sweep's vocabulary. Besides a list of values, each
// parameter of the space may be written as
//
//	hidden: {range: [16, 64], step: 16}          # 16, 32, 48, 64
//	lr: {range: [1e-4, 1e-2], count: 3, log: true} # 0.0001, 0.001, 0.01
//	lr: {log_uniform: [1e-4, 1e-2]}              # drawn (random: N draws)
//	hidden: {int_uniform: [8, 64]}               # drawn
//	layers: {values: [1, 2], when: {model: lstm}} # only where model is lstm
//	layers:                                      # several definitions,
//	  - {values: [1, 2, 3], when: {model: lstm}}  # disjoint conditions
//	  - {values: [1], when: {model: gru}}
//
// and the recurrent cell may be a parameter of the space too (model: [lstm,
// gru]). A range is a list written short, so it is a grid axis as a list
// is; a definition with when is a conditional grid axis (sweep.Axis.When);
// a distribution makes the search a random one, in which every parameter
// is drawn Spec.Random times (sweep.Samples; a list or range is drawn
// uniformly from its values, sweep.Dist.Choice). Sweep builds the sweep.Spec
// and sweep expands it: this file only reads and checks the definitions.

// ParamModel is the recurrent cell's parameter when the space searches it
// (model: [lstm, gru] under space); otherwise the cell is a base parameter.
const ParamModel = "model"

// spaceOrder is the order of the space's parameters: the order of the grid
// axes (a run's slug names them in it) and of the conditions, since a
// definition may depend only on parameters before its own.
var spaceOrder = []string{ParamModel, ParamShape, ParamHidden, ParamLayers, ParamLR, ParamBatch}

// shortOf is each parameter's prefix in a run's slug.
var shortOf = map[string]string{ParamModel: "m", ParamShape: "s", ParamHidden: "h", ParamLayers: "l", ParamLR: "lr", ParamBatch: "b"}

// intParam gives the bounds of an integer parameter; ok is false for the
// others.
func intParam(key string) (lo, hi int, ok bool) {
	switch key {
	case ParamHidden:
		return 1, 4096, true
	case ParamLayers:
		return 1, 16, true
	case ParamBatch:
		return 1, math.MaxInt32, true
	}
	return 0, 0, false
}

// paramValue reads a literal of parameter key and returns it as a run
// parameter in the canonical form the lists give (a shape's literal,
// integers in decimal, a rate's shortest float text), so that a value
// written in a range, a condition or a Go Axis names the same run as in a
// list; err says what the parameter takes.
func paramValue(key, lit string) (sweep.Value, error) {
	switch key {
	case ParamModel:
		if _, err := cellOf(lit); err != nil {
			return sweep.Value{}, fmt.Errorf("%q: want lstm or gru", lit)
		}
		return sweep.ValueOf(lit), nil
	case ParamShape:
		sh, err := ParseShape(lit)
		if err != nil {
			return sweep.Value{}, errors.New(strings.TrimPrefix(err.Error(), ErrSpec.Error()+": ")) // the caller wraps ErrSpec
		}
		return sweep.ValueOf(sh.String()), nil
	case ParamLR:
		x, err := strconv.ParseFloat(lit, 64)
		if err != nil || !(x > 0) || x > 10 {
			return sweep.Value{}, fmt.Errorf("%q: want a positive rate up to 10", lit)
		}
		return sweep.ParseValue(strconv.FormatFloat(x, 'g', -1, 64)), nil
	}
	lo, hi, _ := intParam(key)
	n, err := strconv.Atoi(lit)
	if err != nil || n < lo || n > hi {
		return sweep.Value{}, fmt.Errorf("%q: want an integer from %d to %d", lit, lo, hi)
	}
	return sweep.ParseValue(strconv.Itoa(n)), nil
}

// extended reports whether the space uses more than lists: Sweep then
// builds it from the definitions instead of the five lists' grid.
func (s Space) extended() bool { return len(s.Model) > 0 || len(s.Axes) > 0 || len(s.Dists) > 0 }

// listAxis is key's list as a grid axis, canonical values, or nil when the
// list is empty.
func (s Space) listAxis(key string) *sweep.Axis {
	var lits []string
	switch key {
	case ParamModel:
		lits = s.Model
	case ParamShape:
		lits = mapS(s.Shape, Shape.String)
	case ParamHidden:
		lits = mapS(s.Hidden, strconv.Itoa)
	case ParamLayers:
		lits = mapS(s.Layers, strconv.Itoa)
	case ParamLR:
		lits = mapS(s.LearningRate, func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) })
	default:
		lits = mapS(s.Batch, strconv.Itoa)
	}
	if len(lits) == 0 {
		return nil
	}
	a := &sweep.Axis{Key: key, Short: shortOf[key]}
	for _, l := range lits {
		v := sweep.ParseValue(l)
		if key == ParamShape || key == ParamModel {
			v = sweep.ValueOf(l)
		}
		a.Values = append(a.Values, v)
	}
	return a
}

// canonical returns vals in canonical form for parameter key; the error
// names the index of a bad one.
func canonical(key string, vals []sweep.Value) ([]sweep.Value, error) {
	out := make([]sweep.Value, len(vals))
	for i, v := range vals {
		c, err := paramValue(key, v.Lit)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = c
	}
	return out, nil
}

// canonicalWhen checks a condition of a definition of key: each parameter
// it names comes before key in spaceOrder and is defined in the space, and
// its values are values of that parameter.
func (s Space) canonicalWhen(key string, when map[string][]sweep.Value) (map[string][]sweep.Value, error) {
	if when == nil {
		return nil, nil
	}
	if len(when) == 0 {
		return nil, errors.New("when: empty condition")
	}
	out := map[string][]sweep.Value{}
	for _, k := range slices.Sorted(maps.Keys(when)) {
		if i, j := slices.Index(spaceOrder, k), slices.Index(spaceOrder, key); i < 0 || i >= j {
			return nil, fmt.Errorf("when.%s: a condition may name only a parameter before %s (in the order model, shape, hidden, layers, lr, batch)", k, key)
		}
		if !s.defines(k) {
			return nil, fmt.Errorf("when.%s: %s is not a parameter of the space", k, k)
		}
		if len(when[k]) == 0 {
			return nil, fmt.Errorf("when.%s: no value", k)
		}
		vs, err := canonical(k, when[k])
		if err != nil {
			return nil, fmt.Errorf("when.%s%w", k, err)
		}
		out[k] = vs
	}
	return out, nil
}

// defines reports whether the space gives key any value.
func (s Space) defines(key string) bool {
	if s.listAxis(key) != nil {
		return true
	}
	return slices.ContainsFunc(s.Axes, func(a sweep.Axis) bool { return a.Key == key }) ||
		slices.ContainsFunc(s.Dists, func(d sweep.Dist) bool { return d.Key == key })
}

// definitions checks the space's Model, Axes and Dists and returns, in
// spaceOrder, every parameter's grid axes (the lists as axes without a
// condition) and its drawn parameters, with canonical values. A key with a
// list may not also have an Axis or a Dist.
func (s Space) definitions() (axes []sweep.Axis, dists []sweep.Dist, err error) {
	for i, m := range s.Model {
		if _, err := paramValue(ParamModel, m); err != nil {
			return nil, nil, specErr(walk.Idx("space.model", i), "%v", err)
		}
		if j := slices.Index(s.Model[:i], m); j >= 0 {
			return nil, nil, specErr(walk.Idx("space.model", i), "%s repeats space.model[%d]", m, j)
		}
	}
	for _, a := range s.Axes {
		if !slices.Contains(spaceOrder, a.Key) {
			return nil, nil, specErr("space", "axis %q is not a parameter of the space (model, shape, hidden, layers, lr, batch)", a.Key)
		}
	}
	for _, d := range s.Dists {
		if !slices.Contains(spaceOrder, d.Key) {
			return nil, nil, specErr("space", "drawn parameter %q is not a parameter of the space (model, shape, hidden, layers, lr, batch)", d.Key)
		}
	}
	for _, k := range spaceOrder {
		key := "space." + k
		list := s.listAxis(k)
		if list != nil {
			axes = append(axes, *list)
		}
		for _, a := range s.Axes {
			if a.Key != k {
				continue
			}
			if list != nil {
				return nil, nil, specErr(key, "has a list and a conditional definition: put every value under a definition with its when")
			}
			if len(a.Values) == 0 {
				return nil, nil, specErr(key, "a definition without values")
			}
			c := sweep.Axis{Key: k, Short: shortOf[k]}
			if c.Values, err = canonical(k, a.Values); err != nil {
				return nil, nil, specErr(key, "values%v", err)
			}
			if c.When, err = s.canonicalWhen(k, a.When); err != nil {
				return nil, nil, specErr(key, "%v", err)
			}
			axes = append(axes, c)
		}
		for _, d := range s.Dists {
			if d.Key != k {
				continue
			}
			if list != nil {
				return nil, nil, specErr(key, "has a list and a drawn definition: give one")
			}
			c := d
			c.Short = shortOf[k]
			if err := checkDist(k, &c); err != nil {
				return nil, nil, specErr(key, "%v", err)
			}
			if c.When, err = s.canonicalWhen(k, d.When); err != nil {
				return nil, nil, specErr(key, "%v", err)
			}
			dists = append(dists, c)
		}
	}
	return axes, dists, nil
}

// checkDist checks that the distribution suits parameter key: uniform and
// log_uniform for the learning rate, int_uniform within an integer
// parameter's bounds, choice of the parameter's values; it canonicalises
// the choices.
func checkDist(key string, d *sweep.Dist) error {
	n := 0
	for _, set := range []bool{d.Uniform != nil, d.LogUniform != nil, d.IntUniform != nil, d.Choice != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("want exactly one of uniform, log_uniform, int_uniform, choice")
	}
	lo, hi, isInt := intParam(key)
	switch {
	case d.Uniform != nil || d.LogUniform != nil:
		r := d.Uniform
		if r == nil {
			r = d.LogUniform
		}
		if key != ParamLR {
			return fmt.Errorf("uniform and log_uniform draw the learning rate; %s takes int_uniform or a list", key)
		}
		if len(r) != 2 || !(r[0] > 0 && r[0] < r[1] && r[1] <= 10) {
			return fmt.Errorf("%v: want [lo, hi] with 0 < lo < hi ≤ 10", r)
		}
	case d.IntUniform != nil:
		if !isInt {
			return fmt.Errorf("int_uniform draws an integer parameter (hidden, layers, batch), not %s", key)
		}
		if len(d.IntUniform) != 2 || d.IntUniform[0] > d.IntUniform[1] || d.IntUniform[0] < int64(lo) || d.IntUniform[1] > int64(hi) {
			return fmt.Errorf("%v: want [lo, hi] with %d ≤ lo ≤ hi ≤ %d", d.IntUniform, lo, hi)
		}
	default:
		if len(d.Choice) == 0 {
			return errors.New("an empty choice")
		}
		c, err := canonical(key, d.Choice)
		if err != nil {
			return fmt.Errorf("choice%w", err)
		}
		d.Choice = c
	}
	return nil
}

// maxRange bounds the values a range expands to (the space's point limit).
const maxRange = maxPoints

// expandRange returns the values of a range from lo to hi: with step > 0,
// lo, lo+step, … up to hi; with count > 0, count values evenly spaced from
// lo to hi, both included, geometrically with log (0 < lo). Each value is
// rounded to 12 significant digits, so that 0.1 + 2×0.1 is 0.3, and to the
// nearest integer when integer is set (hidden, layers, batch).
func expandRange(lo, hi, step float64, count int, log, integer bool) ([]float64, error) {
	switch {
	case !(lo <= hi):
		return nil, fmt.Errorf("range [%v, %v]: want lo ≤ hi", lo, hi)
	case (step > 0) == (count > 0):
		return nil, errors.New("a range takes step or count (one of them)")
	case step > 0 && log:
		return nil, errors.New("log: true spaces count values; a step range is linear")
	case log && !(lo > 0):
		return nil, fmt.Errorf("log range [%v, %v]: want 0 < lo", lo, hi)
	case count == 1 && lo != hi:
		return nil, fmt.Errorf("count 1 from %v to %v: want count ≥ 2, or lo = hi", lo, hi)
	}
	n := count
	if step > 0 {
		k := math.Floor((hi-lo)/step*(1+1e-12)) + 1
		if !(k <= maxRange) {
			return nil, fmt.Errorf("range [%v, %v] step %v: more than %d values", lo, hi, step, maxRange)
		}
		n = int(k)
	} else if n > maxRange {
		return nil, fmt.Errorf("count %d: more than %d values", n, maxRange)
	}
	out := make([]float64, n)
	for i := range out {
		var x float64
		switch {
		case step > 0:
			x = lo + float64(i)*step
		case n == 1:
			x = lo
		case log:
			x = math.Exp(math.Log(lo) + float64(i)*(math.Log(hi)-math.Log(lo))/float64(n-1))
		default:
			x = lo + float64(i)*(hi-lo)/float64(n-1)
		}
		if i == n-1 && step == 0 {
			x = hi // the end is exact
		}
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
		if integer {
			x = math.Round(x)
		}
		out[i] = x
	}
	return out, nil
}

// definitionKeys are the keys of a definition written as a mapping.
var definitionKeys = []string{"values", "range", "step", "count", "log", "uniform", "log_uniform", "int_uniform", "when"}

// definition reads one definition of parameter k written as a mapping at
// key: values or a range without when extend k's list; with when they are a
// conditional axis; a distribution is a drawn parameter.
func (rd specReader) definition(n *yaml.Node, key, k string, sp *Space) error {
	m, err := rd.w.Mapping(n, key)
	if err != nil {
		return err
	}
	if err := rd.w.Keys(m, key, "a definition", definitionKeys); err != nil {
		return err
	}
	forms := 0
	for _, f := range []string{"values", "range", "uniform", "log_uniform", "int_uniform"} {
		if walk.Get(m, f) != nil {
			forms++
		}
	}
	if forms != 1 {
		return rd.w.Err(n, key, walk.ErrSchema, "want one of values, range, uniform, log_uniform, int_uniform")
	}
	for _, f := range []string{"step", "count", "log"} {
		if walk.Get(m, f) != nil && walk.Get(m, "range") == nil {
			return rd.w.Err(n, walk.Dot(key, f), walk.ErrSchema, "%s goes with range", f)
		}
	}
	var when map[string][]sweep.Value
	if wn := walk.Get(m, "when"); wn != nil {
		if when, err = rd.when(wn, walk.Dot(key, "when")); err != nil {
			return err
		}
	}
	_, _, isInt := intParam(k)
	var lits []string
	switch {
	case walk.Get(m, "values") != nil:
		vk := walk.Dot(key, "values")
		items, err := rd.w.Seq(walk.Get(m, "values"), vk)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return specErr(vk, "empty list: the search space is empty")
		}
		for i, it := range items {
			var l string
			if err := rd.str(it, walk.Idx(vk, i), &l); err != nil {
				return err
			}
			lits = append(lits, l)
		}
	case walk.Get(m, "range") != nil:
		if k == ParamShape || k == ParamModel {
			return rd.w.Err(n, walk.Dot(key, "range"), walk.ErrSchema, "%s takes a list of values, not a range", k)
		}
		var lo, hi, step float64
		var count int
		var log bool
		if err := rd.pair(walk.Get(m, "range"), walk.Dot(key, "range"), &lo, &hi); err != nil {
			return err
		}
		if sn := walk.Get(m, "step"); sn != nil {
			if err := rd.float(sn, walk.Dot(key, "step"), &step); err != nil {
				return err
			}
			if !(step > 0) {
				return rd.w.Err(sn, walk.Dot(key, "step"), walk.ErrSchema, "want a positive step, got %v", step)
			}
		}
		if cn := walk.Get(m, "count"); cn != nil {
			if err := rd.integer(cn, walk.Dot(key, "count"), &count); err != nil {
				return err
			}
			if count < 1 {
				return rd.w.Err(cn, walk.Dot(key, "count"), walk.ErrSchema, "want a count of at least 1")
			}
		}
		if ln := walk.Get(m, "log"); ln != nil {
			if err := rd.boolean(ln, walk.Dot(key, "log"), &log); err != nil {
				return err
			}
		}
		if isInt && (lo != math.Trunc(lo) || hi != math.Trunc(hi) || step != math.Trunc(step)) {
			return specErr(walk.Dot(key, "range"), "[%v, %v] step %v: %s takes integers", lo, hi, step, k)
		}
		xs, err := expandRange(lo, hi, step, count, log, isInt)
		if err != nil {
			return specErr(walk.Dot(key, "range"), "%v", err)
		}
		for _, x := range xs {
			lits = append(lits, strconv.FormatFloat(x, 'g', -1, 64))
		}
	default:
		d := sweep.Dist{Key: k, When: when}
		for _, f := range []string{"uniform", "log_uniform", "int_uniform"} {
			dn := walk.Get(m, f)
			if dn == nil {
				continue
			}
			var lo, hi float64
			if err := rd.pair(dn, walk.Dot(key, f), &lo, &hi); err != nil {
				return err
			}
			switch f {
			case "uniform":
				d.Uniform = []float64{lo, hi}
			case "log_uniform":
				d.LogUniform = []float64{lo, hi}
			default:
				if lo != math.Trunc(lo) || hi != math.Trunc(hi) || math.Abs(lo) > 1<<53 || math.Abs(hi) > 1<<53 {
					return specErr(walk.Dot(key, f), "[%v, %v]: want integers", lo, hi)
				}
				d.IntUniform = []int64{int64(lo), int64(hi)}
			}
		}
		if err := checkDist(k, &d); err != nil {
			return specErr(key, "%v", err)
		}
		sp.Dists = append(sp.Dists, d)
		return nil
	}
	vals := make([]sweep.Value, len(lits))
	for i, l := range lits {
		v, err := paramValue(k, l)
		if err != nil {
			return specErr(key, "value %d: %v", i, err)
		}
		vals[i] = v
	}
	if when != nil {
		sp.Axes = append(sp.Axes, sweep.Axis{Key: k, Values: vals, When: when})
		return nil
	}
	return sp.appendList(k, vals)
}

// appendList adds canonical values to parameter k's list.
func (sp *Space) appendList(k string, vals []sweep.Value) error {
	for _, v := range vals {
		switch k {
		case ParamModel:
			sp.Model = append(sp.Model, v.Lit)
		case ParamShape:
			sh, err := ParseShape(v.Lit)
			if err != nil {
				return err
			}
			sp.Shape = append(sp.Shape, sh)
		case ParamHidden:
			sp.Hidden = append(sp.Hidden, int(v.Int()))
		case ParamLayers:
			sp.Layers = append(sp.Layers, int(v.Int()))
		case ParamLR:
			sp.LearningRate = append(sp.LearningRate, v.Float())
		default:
			sp.Batch = append(sp.Batch, int(v.Int()))
		}
	}
	return nil
}

// pair reads [lo, hi].
func (rd specReader) pair(n *yaml.Node, key string, lo, hi *float64) error {
	items, err := rd.w.Seq(n, key)
	if err != nil {
		return err
	}
	if len(items) != 2 {
		return rd.w.Err(n, key, walk.ErrSchema, "want [lo, hi], got %d values", len(items))
	}
	if err := rd.float(items[0], walk.Idx(key, 0), lo); err != nil {
		return err
	}
	return rd.float(items[1], walk.Idx(key, 1), hi)
}

// when reads a condition {param: value} or {param: [values]}; the values
// stay literals here and are checked against their parameter by Validate.
func (rd specReader) when(n *yaml.Node, key string) (map[string][]sweep.Value, error) {
	m, err := rd.w.Mapping(n, key)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, rd.w.Err(n, key, walk.ErrSchema, "an empty condition")
	}
	if err := rd.w.Keys(m, key, "a condition", spaceOrder); err != nil {
		return nil, err
	}
	out := map[string][]sweep.Value{}
	for _, kv := range m {
		k, ck := kv[0].Value, walk.Dot(key, kv[0].Value)
		v := walk.Deref(kv[1])
		items := []*yaml.Node{kv[1]}
		if v != nil && v.Kind == yaml.SequenceNode {
			if items, err = rd.w.Seq(v, ck); err != nil {
				return nil, err
			}
			if len(items) == 0 {
				return nil, rd.w.Err(v, ck, walk.ErrSchema, "an empty list of values")
			}
		}
		for i, it := range items {
			var l string
			if err := rd.str(it, walk.Idx(ck, i), &l); err != nil {
				return nil, err
			}
			x, err := paramValue(k, l)
			if err != nil {
				return nil, rd.w.Err(it, ck, walk.ErrSchema, "%v", err)
			}
			out[k] = append(out[k], x)
		}
	}
	return out, nil
}

// spaceSpec is the search's sweep spec of a space with definitions: grid
// axes, or, when a parameter is drawn, every parameter drawn Random times
// (lists and conditional axes as choices). It also returns the number of
// points, after sweep's own checks (an axis that applies to no point, a
// condition on a value the parameter cannot take).
func (s *Spec) spaceSpec(ss *sweep.Spec) (int, error) {
	axes, dists, err := s.Space.definitions()
	if err != nil {
		return 0, err
	}
	if len(dists) == 0 {
		// Bound the expansion before sweep walks it: the product of each
		// parameter's values over all its definitions is at least the
		// number of points, and at most a few times it.
		bound := 1
		for _, k := range spaceOrder {
			c := 0
			for _, a := range axes {
				if a.Key == k {
					c += len(a.Values)
				}
			}
			if c > 0 && bound > 4*maxPoints/c {
				return 0, specErr("space", "more than %d points", maxPoints)
			}
			bound *= max(c, 1)
		}
		ss.Axes = axes
	} else {
		if s.Random < 1 {
			return 0, specErr("random", "a drawn parameter (uniform, log_uniform, int_uniform) needs random: N, the number of draws")
		}
		if s.Random > maxPoints {
			return 0, specErr("random", "%d draws; at most %d", s.Random, maxPoints)
		}
		var all []sweep.Dist
		for _, k := range spaceOrder {
			for _, a := range axes {
				if a.Key == k {
					all = append(all, sweep.Dist{Key: k, Short: a.Short, Choice: a.Values, When: a.When})
				}
			}
			for _, d := range dists {
				if d.Key == k {
					all = append(all, d)
				}
			}
		}
		ss.Samples = &sweep.Samples{Count: s.Random, Seed: s.Data.Seed, Dists: all}
	}
	seq, n, err := ss.Points()
	if err != nil {
		var se *sweep.SpecError
		if errors.As(err, &se) {
			return 0, specErr("space", "%s", strings.TrimPrefix(se.Err.Error(), sweep.ErrSpec.Error()+": "))
		}
		return 0, specErr("space", "%v", err)
	}
	if n > maxPoints {
		return 0, specErr("space", "%d points; at most %d", n, maxPoints)
	}
	for p := range seq {
		for _, k := range spaceOrder[1:] {
			if _, ok := p.Params[k]; !ok {
				return 0, specErr("space."+k, "the point %s has no %s: give %s a definition whose when holds there", p.Slug, k, k)
			}
		}
	}
	return n, nil
}

// shapes lists every shape the space may give a point, in the order of
// its definitions, each once: Parse builds the tensors of each.
func (s Space) shapes() []Shape {
	out := slices.Clone(s.Shape)
	add := func(vals []sweep.Value) {
		for _, v := range vals {
			if sh, err := ParseShape(v.Lit); err == nil && !slices.Contains(out, sh) {
				out = append(out, sh)
			}
		}
	}
	for _, a := range s.Axes {
		if a.Key == ParamShape {
			add(a.Values)
		}
	}
	for _, d := range s.Dists {
		if d.Key == ParamShape {
			add(d.Choice)
		}
	}
	return out
}
