package matcher

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
	"go.yaml.in/yaml/v3"
)

// Selector chooses among the clusters that matched a job. Candidates arrive
// sorted by name and must not be modified. Returning several clusters means
// "satisfy only": all of them are acceptable and none is consumed. Returning
// none means the job stays unassigned.
type Selector interface {
	Select(j *Job, candidates []*Cluster) ([]*Cluster, error)
}

// Random selects one candidate uniformly with Rand, rainbow's default.
// A nil Rand is a caller mistake and panics.
type Random struct{ Rand *rand.Rand }

func (s Random) Select(_ *Job, c []*Cluster) ([]*Cluster, error) {
	if s.Rand == nil {
		panic("matcher: Random selector needs a Rand")
	}
	if len(c) == 0 {
		return nil, nil
	}
	i := s.Rand.IntN(len(c))
	return c[i : i+1], nil
}

// First selects the first candidate by name.
type First struct{}

func (First) Select(_ *Job, c []*Cluster) ([]*Cluster, error) {
	if len(c) == 0 {
		return nil, nil
	}
	return c[:1], nil
}

// Last selects the last candidate by name.
type Last struct{}

func (Last) Select(_ *Job, c []*Cluster) ([]*Cluster, error) {
	if len(c) == 0 {
		return nil, nil
	}
	return c[len(c)-1:], nil
}

// All returns every candidate (rainbow's satisfy-only mode).
type All struct{}

func (All) Select(_ *Job, c []*Cluster) ([]*Cluster, error) { return c, nil }

// Chain applies selectors in turn, each to the previous one's output; it
// stops early when a selector returns nothing.
type Chain []Selector

func (ch Chain) Select(j *Job, c []*Cluster) ([]*Cluster, error) {
	for _, s := range ch {
		var err error
		if c, err = s.Select(j, c); err != nil || len(c) == 0 {
			return nil, err
		}
	}
	return c, nil
}

// CostAware selects the candidate with the lowest predicted cost,
// Model.Predict(job package, memory) / 3600 × cost per node hour, reading
// memory and cost from the cluster state (MemoryKey, default
// "memory_per_node"; CostKey, default "cost_per_node_hour"). Ties go to the
// first candidate by name. A candidate lacking either key is skipped.
type CostAware struct {
	Model     RuntimeModel
	MemoryKey string
	CostKey   string
}

func (s CostAware) Select(j *Job, c []*Cluster) ([]*Cluster, error) {
	if s.Model == nil {
		panic("matcher: CostAware selector needs a Model")
	}
	mk, ck := cmp.Or(s.MemoryKey, "memory_per_node"), cmp.Or(s.CostKey, "cost_per_node_hour")
	best, bestCost := -1, math.Inf(1)
	for i, cl := range c {
		mem, ok1 := cl.State[mk]
		rate, ok2 := cl.State[ck]
		if !ok1 || !ok2 {
			continue
		}
		d, err := s.Model.Predict(j.Package, mem)
		if err != nil {
			return nil, err
		}
		if cost := d / 3600 * rate; cost < bestCost {
			best, bestCost = i, cost
		}
	}
	if best < 0 {
		return nil, nil
	}
	return c[best : best+1], nil
}

// Step is one step of a constraint priority, rainbow's format: exactly one
// field is set.
//
//	filter: "nodes_free > 0"          keep clusters where the expression is true
//	calc: "build_cost=cost_per_node_hour*2"  define a variable per cluster
//	sort_ascending / sort_descending: build_cost
//	select: first | last | random
type Step struct {
	Filter   string `yaml:"filter"`
	Calc     string `yaml:"calc"`
	SortAsc  string `yaml:"sort_ascending"`
	SortDesc string `yaml:"sort_descending"`
	Select   string `yaml:"select"`
}

// Priority is an ordered list of steps; lower Priority numbers are tried
// first and a priority that leaves no cluster falls through to the next.
type Priority struct {
	Priority int    `yaml:"priority"`
	Steps    []Step `yaml:"steps"`
}

// ParsePriorities reads rainbow's YAML list of priorities (the text of the
// constraint algorithm's "priorities" option). A key other than those of
// Priority and Step (a typo such as "fitler") is refused, and so is a
// document over MaxDocumentBytes; yaml.v3 bounds alias expansion when
// decoding into these types.
func ParsePriorities(text []byte) ([]Priority, error) {
	if len(text) > MaxDocumentBytes {
		return nil, &ParseError{Path: "priorities", Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxDocumentBytes)}
	}
	var ps []Priority
	d := yaml.NewDecoder(bytes.NewReader(text))
	d.KnownFields(true)
	if err := d.Decode(&ps); err != nil && err != io.EOF {
		sentinel := ErrSyntax
		var te *yaml.TypeError
		if errors.As(err, &te) {
			sentinel = ErrSchema // well-formed YAML of the wrong shape
		}
		return nil, &ParseError{Path: "priorities", Err: fmt.Errorf("%w: %v", sentinel, err)}
	}
	return ps, nil
}

// Constraint is rainbow's constraint selection algorithm over cluster state
// and job parameters, with expressions evaluated by github.com/expr-lang/expr.
// Build one with NewConstraint. Expression variables are the cluster's
// state keys, the job's Params (cluster state wins on a clash) and earlier
// calc results. A priority without a select step returns every remaining
// cluster (satisfy only).
type Constraint struct {
	prios []cprio
	rng   *rand.Rand
}

type cstep struct {
	kind string // filter, calc, asc, desc, select
	name string // calc variable, sort key or select mode
	prog *vm.Program
	src  string
	vars []string // the variables the expression reads (not function names)
}

// varsOf returns the names an expression reads as variables: identifiers
// that are not the callee of a call (min, max, len, ...).
func varsOf(prog *vm.Program) []string {
	v := &varCollector{callees: map[ast.Node]bool{}}
	root := prog.Node()
	ast.Walk(&root, v)
	slices.Sort(v.names)
	return slices.Compact(v.names)
}

type varCollector struct {
	names   []string
	callees map[ast.Node]bool
}

func (v *varCollector) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.CallNode:
		v.callees[x.Callee] = true
	case *ast.IdentifierNode:
		if !v.callees[x] {
			v.names = append(v.names, x.Value)
		}
	}
}

// missing returns the first of vars that env lacks, or "".
func missing(vars []string, env map[string]any) string {
	for _, name := range vars {
		if _, ok := env[name]; !ok {
			return name
		}
	}
	return ""
}

type cprio struct {
	n     int
	steps []cstep
}

// NewConstraint compiles the priorities. r is used by "select: random" and
// may be nil when no step selects at random. Expressions that do not compile,
// a calc without "name=", a step with no or several fields, or an unknown
// select mode give an error wrapping ErrExpr.
func NewConstraint(prios []Priority, r *rand.Rand) (*Constraint, error) {
	c := &Constraint{rng: r}
	for _, p := range prios {
		cp := cprio{n: p.Priority}
		for si, s := range p.Steps {
			where := fmt.Sprintf("priority %d step %d", p.Priority, si+1)
			var st cstep
			set := 0
			for _, f := range []string{s.Filter, s.Calc, s.SortAsc, s.SortDesc, s.Select} {
				if f != "" {
					set++
				}
			}
			if set != 1 {
				return nil, fmt.Errorf("%w: %s: want exactly one of filter, calc, sort_ascending, sort_descending, select", ErrExpr, where)
			}
			switch {
			case s.Filter != "":
				st = cstep{kind: "filter", src: s.Filter}
			case s.Calc != "":
				name, src, ok := splitCalc(s.Calc)
				if !ok {
					return nil, fmt.Errorf("%w: %s: calc %q is not name=expression", ErrExpr, where, s.Calc)
				}
				st = cstep{kind: "calc", name: name, src: src}
			case s.SortAsc != "":
				st = cstep{kind: "asc", name: strings.TrimSpace(s.SortAsc)}
			case s.SortDesc != "":
				st = cstep{kind: "desc", name: strings.TrimSpace(s.SortDesc)}
			default:
				mode := strings.TrimSpace(s.Select)
				if mode != "first" && mode != "last" && mode != "random" {
					return nil, fmt.Errorf("%w: %s: unknown select %q", ErrExpr, where, s.Select)
				}
				if mode == "random" && r == nil {
					return nil, fmt.Errorf("%w: %s: select random needs a generator", ErrExpr, where)
				}
				st = cstep{kind: "select", name: mode}
			}
			if st.src != "" {
				prog, err := expr.Compile(st.src)
				if err != nil {
					return nil, fmt.Errorf("%w: %s: %q: %v", ErrExpr, where, st.src, err)
				}
				st.prog = prog
				st.vars = varsOf(prog)
			}
			cp.steps = append(cp.steps, st)
		}
		c.prios = append(c.prios, cp)
	}
	slices.SortStableFunc(c.prios, func(a, b cprio) int { return cmp.Compare(a.n, b.n) })
	return c, nil
}

func splitCalc(s string) (name, src string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '=' || i > 0 && strings.ContainsRune("!<>=", rune(s[i-1])) {
			return "", "", false
		}
		name = strings.TrimSpace(s[:i])
		src = strings.TrimSpace(s[i+1:])
		return name, src, name != "" && src != ""
	}
	return "", "", false
}

func (c *Constraint) Select(j *Job, cands []*Cluster) ([]*Cluster, error) {
	for _, p := range c.prios {
		out, err := c.run(p, j, cands)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, nil
}

type centry struct {
	cl  *Cluster
	env map[string]any
}

func (c *Constraint) run(p cprio, j *Job, cands []*Cluster) ([]*Cluster, error) {
	cur := make([]centry, len(cands))
	for i, cl := range cands {
		env := make(map[string]any, len(cl.State)+len(j.Params)+2)
		for k, v := range j.Params {
			env[k] = v
		}
		for k, v := range cl.State {
			env[k] = v
		}
		cur[i] = centry{cl, env}
	}
	for _, st := range p.steps {
		switch st.kind {
		case "filter":
			kept := cur[:0:0]
			for _, e := range cur {
				if missing(st.vars, e.env) != "" {
					// As rainbow: a cluster without a key the filter reads
					// is skipped for this filter, not an error for all.
					continue
				}
				out, err := expr.Run(st.prog, e.env)
				if err != nil {
					return nil, fmt.Errorf("%w: filter %q on cluster %s: %v", ErrExpr, st.src, e.cl.Name, err)
				}
				b, ok := out.(bool)
				if !ok {
					return nil, fmt.Errorf("%w: filter %q on cluster %s gave %T, want bool", ErrExpr, st.src, e.cl.Name, out)
				}
				if b {
					kept = append(kept, e)
				}
			}
			cur = kept
		case "calc":
			for _, e := range cur {
				if missing(st.vars, e.env) != "" {
					// As rainbow: no value for this cluster; a later sort
					// on the variable leaves the cluster out.
					continue
				}
				out, err := expr.Run(st.prog, e.env)
				if err != nil {
					return nil, fmt.Errorf("%w: calc %q on cluster %s: %v", ErrExpr, st.src, e.cl.Name, err)
				}
				f, ok := toFloat(out)
				if !ok {
					return nil, fmt.Errorf("%w: calc %q on cluster %s gave %T, want a number", ErrExpr, st.src, e.cl.Name, out)
				}
				e.env[st.name] = f
			}
		case "asc", "desc":
			// Clusters without the key drop out of the ranking (as
			// rainbow); a key that is there but not a number is an error.
			have := cur[:0:0]
			for _, e := range cur {
				if _, ok := e.env[st.name]; ok {
					have = append(have, e)
				}
			}
			cur = have
			keys := make([]float64, len(cur))
			for i, e := range cur {
				f, ok := toFloat(e.env[st.name])
				if !ok {
					return nil, fmt.Errorf("%w: sort key %q is not a number on cluster %s", ErrExpr, st.name, e.cl.Name)
				}
				keys[i] = f
			}
			idx := make([]int, len(cur))
			for i := range idx {
				idx[i] = i
			}
			slices.SortStableFunc(idx, func(a, b int) int {
				if st.kind == "desc" {
					return cmp.Compare(keys[b], keys[a])
				}
				return cmp.Compare(keys[a], keys[b])
			})
			sorted := make([]centry, len(cur))
			for i, k := range idx {
				sorted[i] = cur[k]
			}
			cur = sorted
		case "select":
			if len(cur) == 0 {
				return nil, nil
			}
			switch st.name {
			case "first":
				cur = cur[:1]
			case "last":
				cur = cur[len(cur)-1:]
			default:
				i := c.rng.IntN(len(cur))
				cur = cur[i : i+1]
			}
		}
	}
	out := make([]*Cluster, len(cur))
	for i, e := range cur {
		out[i] = e.cl
	}
	return out, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint:
		return float64(x), true
	}
	return 0, false
}
