package matcher

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/crosscluster/crosscluster/internal/walk"
	"go.yaml.in/yaml/v3"
)

// ReadJobspec reads one rainbow jobspec in either of its two YAML forms:
//
// The experiment-era form (2024): top-level "resources" is a list of
// {count, type: node, with: [{count, type: core}]}, and requirements sit under
// task.resources.<subsystem> as "match: [{field, value}]" (Equal) and
// "range: [{field, min, max}]" (InRange).
//
// The current form (nextgen v1, what WriteJobspec writes): top-level
// "resources" is a mapping of named groups {type: node, replicas|count,
// with: [...], requires: [{name, field, match | min | max}]}; "match" is
// Equal, min/max an InRange. A top-level "requires" list holds the job's
// own requirements.
//
// Counts multiply down the tree: 2 nodes with 4 cores each is Nodes 2,
// Cores 8. file names the input in errors. The job Name is "name" when
// present. task.attributes.parameter or attributes.parameter entries must
// be numbers. A key outside Flux's and rainbow's jobspec
// schema, at any level, is refused with its path, line and the nearest
// known key, and so is a key given twice, and a requires entry without a
// name, a field, or a match, min or max: a typo must not silently drop a
// requirement.
//
// The Job returned with an error matches nothing under the default Rules.
// Under Rules{Rainbow: true} it matches as rainbow would decide on the
// document, which rainbow's reader loads in many cases this one refuses
// (it drops an incomplete requires entry and ignores unknown keys): a
// caller deciding as rainbow does keeps the Job despite the error, and one
// that rainbow could not load either matches nothing.
func ReadJobspec(r io.Reader, file string) (Job, error) {
	j, err := readJobspec(r, file)
	if err != nil {
		j.unread = true
	}
	return j, err
}

func readJobspec(r io.Reader, file string) (Job, error) {
	w := jwalker{walk.NewYAML(file, parseError)}
	b, err := walk.ReadAll(r, file, parseError)
	if err != nil {
		return Job{}, err
	}
	root, err := w.Parse(b)
	if err != nil {
		return Job{}, err
	}
	top, err := w.Mapping(root, "")
	if err != nil {
		return Job{}, err
	}
	j, err := w.job(top)
	if err != nil {
		// rainbow's own reader loads much that this one refuses (a
		// requires entry without a field, an unknown key); what it would
		// read is kept for the Rainbow rules, and only for them. A
		// document whose aliases expand too far is refused under every
		// rule, as rainbow's YAML reader refuses excessive aliasing.
		if errors.Is(err, ErrTooComplex) {
			return Job{}, err
		}
		if rb, ok := readRainbowSpec(top, w.Limit()); ok {
			j := Job{rainbow: rb}
			if n := walk.Deref(walk.Get(top, "name")); n != nil && n.Kind == yaml.ScalarNode {
				j.Name = n.Value
			}
			return j, err
		}
		return Job{}, err
	}
	return j, nil
}

// job reads the document's top-level mapping.
func (w jwalker) job(top [][2]*yaml.Node) (Job, error) {
	var err error
	if err := w.Keys(top, "", "a jobspec", jobspecKeys); err != nil {
		return Job{}, err
	}
	var j Job
	if n := walk.Get(top, "name"); n != nil {
		if j.Name, err = w.Scalar(n, "name"); err != nil {
			return Job{}, err
		}
	}
	res := walk.Deref(walk.Get(top, "resources"))
	switch {
	case res == nil:
	case res.Kind == yaml.SequenceNode:
		items, _ := w.Seq(res, "resources")
		for i, it := range items {
			if err := w.counts(it, walk.Idx("resources", i), 1, &j); err != nil {
				return Job{}, err
			}
		}
	case res.Kind == yaml.MappingNode:
		groups, _ := w.Mapping(res, "resources")
		for _, g := range groups {
			p := walk.Dot("resources", g[0].Value)
			if err := w.counts(g[1], p, 1, &j); err != nil {
				return Job{}, err
			}
		}
	default:
		return Job{}, w.Err(res, "resources", ErrSchema, "want a list or a mapping")
	}
	if t := walk.Get(top, "task"); t != nil {
		tm, err := w.Mapping(t, "task")
		if err != nil {
			return Job{}, err
		}
		if err := w.Keys(tm, "task", "a task", taskKeys); err != nil {
			return Job{}, err
		}
		if tr := walk.Get(tm, "resources"); tr != nil {
			if err := w.taskResources(tr, "task.resources", &j); err != nil {
				return Job{}, err
			}
		}
		if err := w.params(tm, "task"); err != nil {
			return Job{}, err
		}
	}
	if err := w.params(top, ""); err != nil {
		return Job{}, err
	}
	// The job's own requirements (nextgen v1's top-level "requires"), met
	// by any vertex of the subsystem, as the experiment-era task's.
	if rq := walk.Get(top, "requires"); rq != nil {
		if err := w.requires(rq, "requires", "", &j); err != nil {
			return Job{}, err
		}
	}
	if rb, ok := readRainbowSpec(top, w.Limit()); ok {
		j.rainbow = rb
	}
	// A requirement reached twice (an aliased resource) counts once.
	seen := map[string]bool{}
	j.Requires = slices.DeleteFunc(j.Requires, func(q Requirement) bool {
		k := q.String()
		dup := seen[k]
		seen[k] = true
		return dup
	})
	return j, nil
}

// jwalker walks one jobspec document.
type jwalker struct{ walk.YAML }

// resourceKeys are the keys a resource may have (Flux's canonical jobspec
// and rainbow's extensions); any other is refused, so that a typo such as
// "reqiures" is not silently dropped.
var resourceKeys = []string{"type", "count", "replicas", "with", "requires", "label", "unit", "exclusive", "schedule", "id"}

// The keys of the other mappings a jobspec may hold, refused likewise:
// Flux's canonical jobspec (version, resources, tasks, attributes with
// system, user), rainbow's experiment-era single task and its
// match/range entries, and the current form's requires entries.
var (
	jobspecKeys   = []string{"version", "name", "resources", "requires", "task", "tasks", "groups", "attributes"}
	taskKeys      = []string{"command", "slot", "count", "resources", "attributes"}
	attributeKeys = []string{"parameter", "system", "user"}
	requireKeys   = []string{"name", "field", "match", "min", "max"}
	matchKeys     = []string{"field", "value"}
	rangeKeys     = []string{"field", "min", "max"}
)

// resourceTypes are the vertex types of the cluster graphs rainbow and Flux
// describe (and WriteCluster writes), plus Flux's "slot" and "gpu": a
// resource of any other type (a misspelt "cores") could never be found in a
// cluster, so it is refused rather than silently never matched.
var resourceTypes = []string{"cluster", "rack", "node", "socket", "core", "gpu", "memory", "slot"}

func quoted(ss []string) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	return b.String()
}

// maxNesting bounds resource trees; a YAML alias can make one cyclic.
const maxNesting = 32

// counts adds the node and core counts of one resource tree.
func (w jwalker) counts(n *yaml.Node, path string, mult int, j *Job) error {
	return w.countsDepth(n, path, mult, j, 0)
}

func (w jwalker) countsDepth(n *yaml.Node, path string, mult int, j *Job, depth int) error {
	if depth > maxNesting {
		return w.Err(n, path, ErrSchema, "resources nested more than %d deep (cyclic alias?)", maxNesting)
	}
	m, err := w.Mapping(n, path)
	if err != nil {
		return err
	}
	if err := w.Keys(m, path, "a resource", resourceKeys); err != nil {
		return err
	}
	typ := ""
	if v := walk.Get(m, "type"); v != nil {
		if typ, err = w.Scalar(v, walk.Dot(path, "type")); err != nil {
			return err
		}
		if !slices.Contains(resourceTypes, typ) {
			return w.Err(v, walk.Dot(path, "type"), ErrSchema, "unknown resource type %q (known: %s)", typ, quoted(resourceTypes))
		}
	}
	if rq := walk.Get(m, "requires"); rq != nil {
		// Honoured at every level of the tree, not only the top, and only
		// through vertices of the resource's type, as rainbow checks it;
		// without a type no vertex could meet it.
		if typ == "" {
			at := rq
			for _, kv := range m {
				if kv[0].Value == "requires" {
					at = kv[0] // the key's line
				}
			}
			return w.Err(at, walk.Dot(path, "requires"), ErrSchema, "requires under a resource without a type")
		}
		if err := w.requires(rq, walk.Dot(path, "requires"), typ, j); err != nil {
			return err
		}
	}
	c := 1
	for _, key := range []string{"count", "replicas"} {
		if v := walk.Get(m, key); v != nil {
			if c, err = w.Integer(v, walk.Dot(path, key)); err != nil {
				return err
			}
		}
	}
	if mult > 1<<20 || c > 1<<20 {
		return w.Err(n, path, ErrSchema, "count too large")
	}
	total := mult * c
	switch typ {
	case "node":
		j.Nodes += total
	case "core":
		j.Cores += total
	}
	if with := walk.Get(m, "with"); with != nil {
		items, err := w.Seq(with, walk.Dot(path, "with"))
		if err != nil {
			return err
		}
		for i, it := range items {
			if err := w.countsDepth(it, walk.Idx(walk.Dot(path, "with"), i), total, j, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w jwalker) taskResources(n *yaml.Node, path string, j *Job) error {
	subs, err := w.Mapping(n, path)
	if err != nil {
		return err
	}
	for _, s := range subs {
		sp := walk.Dot(path, s[0].Value)
		kinds, err := w.Mapping(s[1], sp)
		if err != nil {
			return err
		}
		if err := w.Keys(kinds, sp, "a subsystem's resources", []string{"match", "range"}); err != nil {
			return err
		}
		for _, k := range kinds {
			kp := walk.Dot(sp, k[0].Value)
			items, err := w.Seq(k[1], kp)
			if err != nil {
				return err
			}
			for i, it := range items {
				ip := walk.Idx(kp, i)
				m, err := w.Mapping(it, ip)
				if err != nil {
					return err
				}
				allowed := matchKeys
				if k[0].Value == "range" {
					allowed = rangeKeys
				}
				if err := w.Keys(m, ip, "a "+k[0].Value+" entry", allowed); err != nil {
					return err
				}
				q := Requirement{Subsystem: s[0].Value}
				if q.Field, err = w.Field(m, it, ip, "field"); err != nil {
					return err
				}
				switch k[0].Value {
				case "match":
					q.Op = Equal
					if q.Value, err = w.Field(m, it, ip, "value"); err != nil {
						return err
					}
				default: // "range", the only other key Keys lets through
					q.Op = InRange
					if err := w.minmax(m, it, ip, &q); err != nil {
						return err
					}
				}
				j.Requires = append(j.Requires, q)
			}
		}
	}
	return nil
}

// requires reads the requires list of a resource of type under.
func (w jwalker) requires(n *yaml.Node, path, under string, j *Job) error {
	items, err := w.Seq(n, path)
	if err != nil {
		return err
	}
	for i, it := range items {
		ip := walk.Idx(path, i)
		m, err := w.Mapping(it, ip)
		if err != nil {
			return err
		}
		if err := w.Keys(m, ip, "a requirement", requireKeys); err != nil {
			return err
		}
		q := Requirement{Under: under}
		if q.Subsystem, err = w.Field(m, it, ip, "name"); err != nil {
			return err
		}
		if q.Field, err = w.Field(m, it, ip, "field"); err != nil {
			return err
		}
		if walk.Get(m, "match") != nil {
			q.Op = Equal
			if q.Value, err = w.Field(m, it, ip, "match"); err != nil {
				return err
			}
		} else {
			q.Op = InRange
			if err := w.minmax(m, it, ip, &q); err != nil {
				return err
			}
		}
		j.Requires = append(j.Requires, q)
	}
	return nil
}

func (w jwalker) minmax(m [][2]*yaml.Node, at *yaml.Node, path string, q *Requirement) error {
	var err error
	if v := walk.Get(m, "min"); v != nil {
		if q.Min, err = w.Scalar(v, walk.Dot(path, "min")); err != nil {
			return err
		}
	}
	if v := walk.Get(m, "max"); v != nil {
		if q.Max, err = w.Scalar(v, walk.Dot(path, "max")); err != nil {
			return err
		}
	}
	if q.Min == "" && q.Max == "" {
		return w.Err(at, path, ErrSchema, "range needs min or max")
	}
	return nil
}

func (w jwalker) params(m [][2]*yaml.Node, path string) error {
	a := walk.Get(m, "attributes")
	if a == nil {
		return nil
	}
	am, err := w.Mapping(a, walk.Dot(path, "attributes"))
	if err != nil {
		return err
	}
	if err := w.Keys(am, walk.Dot(path, "attributes"), "attributes", attributeKeys); err != nil {
		return err
	}
	p := walk.Get(am, "parameter")
	if p == nil {
		return nil
	}
	pp := walk.Dot(walk.Dot(path, "attributes"), "parameter")
	pm, err := w.Mapping(p, pp)
	if err != nil {
		return err
	}
	for _, kv := range pm {
		if _, err := w.Number(kv[1], walk.Dot(pp, kv[0].Value)); err != nil {
			return err
		}
	}
	return nil
}

// WriteJobspec writes j as a nextgen v1 jobspec, the form rainbow and
// jobspec-go load (a mapping of named resources):
//
//	version: 1
//	name: <Name>
//	resources:
//	  job:
//	    type: node
//	    replicas: <Nodes>
//	    requires: [<requirements nested under "node">]
//	    with:
//	    - type: core
//	      count: <Cores/Nodes>
//	      requires: [<requirements nested under "core">]
//	requires: [<requirements of the job itself>]
//	tasks:
//	- command: [app]
//	  resources: job
//
// Each requirement is an entry {name: subsystem, field, match: value} or
// {name, field, min, max} with its ends as strings. A requirement of the
// job itself (Under empty) goes in the top-level "requires" list, which
// jobspec-go reads but rainbow's match does not check (see docs/rainbow.md);
// one nested under another resource type has no place in this form and is
// skipped. Nodes of zero is written as one node; Cores that do not divide
// among the nodes are rounded down (at least one core per node).
// ReadJobspec reads what WriteJobspec writes back to the same Job. A Job
// ReadJobspec returned with an error is refused (ErrSchema): writing it
// would turn a refused document into an accepted one.
func WriteJobspec(w io.Writer, j *Job) error {
	if j.unread {
		return fmt.Errorf("matcher: job %q: %w: it was read with an error and cannot be written", j.Name, ErrSchema)
	}
	type item = map[string]any
	nodes := max(j.Nodes, 1)
	node := item{"type": "node", "replicas": nodes}
	var core item
	if j.Cores > 0 {
		core = item{"type": "core", "count": max(1, j.Cores/nodes)}
		node["with"] = []item{core}
	}
	var top []item
	for _, q := range j.Requires {
		e := item{"name": q.Subsystem, "field": q.Field}
		switch q.Op {
		case Equal:
			e["match"] = q.Value
		case InRange:
			if q.Min != "" {
				e["min"] = q.Min
			}
			if q.Max != "" {
				e["max"] = q.Max
			}
		default:
			continue
		}
		switch q.Under {
		case "":
			top = append(top, e)
		case "node", "core":
			at := node
			if q.Under == "core" {
				if core == nil {
					continue
				}
				at = core
			}
			l, _ := at["requires"].([]item)
			at["requires"] = append(l, e)
		}
	}
	doc := item{"version": 1, "resources": item{"job": node},
		"tasks": []item{{"command": []string{"app"}, "resources": "job"}}}
	if len(top) > 0 {
		doc["requires"] = top
	}
	if j.Name != "" {
		doc["name"] = j.Name
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return enc.Close()
}
