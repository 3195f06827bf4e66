package matcher

import (
	"fmt"
	"strconv"
	"strings"
)

// Verdict is the outcome of matching one job to one cluster.
type Verdict int

const (
	// Matched: every requirement is met and there is capacity now.
	Matched Verdict = iota
	// Never: the cluster cannot run the job as registered (too few nodes or
	// cores in total, or a requirement no vertex meets).
	Never
	// NotNow: the job would match but the cluster has no free capacity now.
	NotNow
)

func (v Verdict) String() string {
	switch v {
	case Matched:
		return "match"
	case Never:
		return "never"
	case NotNow:
		return "not-now"
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// ReasonKind classifies why a requirement failed.
type ReasonKind int

const (
	MissingSubsystem ReasonKind = iota + 1 // the cluster has no such subsystem
	MissingField                           // no vertex carries the field
	NotEqual                               // values present, none equal
	OutOfRange                             // versions present, none within the bounds
	BadVersion                             // the requirement's or every vertex's version does not parse
	TooFewNodes                            // the cluster has fewer nodes than the job needs
	TooFewCores                            // the cluster has fewer cores than the job needs
	NoFreeNodes                            // state nodes_free is below the job's nodes
	// NotAttached: a vertex meets a requirement nested under a resource
	// type, but no such vertex is attached to a dominant-graph vertex of
	// that type (rainbow would never see it from there).
	NotAttached
	// UnknownParent: a vertex meets a requirement nested under a resource
	// type, but the type of a dominant-graph vertex it attaches to is
	// unknown: the cluster has no VertexTypes (built without ReadCluster),
	// or the parent is not a vertex of its graph (a subsystem registered on
	// another cluster; rainbow refuses it).
	UnknownParent
)

var reasonNames = [...]string{"", "missing subsystem", "missing field", "not equal", "out of range",
	"unparseable version", "too few nodes", "too few cores", "no free nodes",
	"not attached", "unknown parent"}

func (k ReasonKind) String() string {
	if k > 0 && int(k) < len(reasonNames) {
		return reasonNames[k]
	}
	return "ReasonKind(" + strconv.Itoa(int(k)) + ")"
}

// Reason explains one failure. Requirement is the index into Job.Requires,
// or -1 for the count and capacity checks.
type Reason struct {
	Requirement int
	Kind        ReasonKind
	Detail      string
}

func (r Reason) String() string { return r.Kind.String() + ": " + r.Detail }

// Result is the outcome of matching a job against a cluster.
type Result struct {
	Cluster string
	Verdict Verdict
	Reasons []Reason // empty when Verdict is Matched
}

// ok reports whether the job matched.
func (r Result) ok() bool { return r.Verdict == Matched }

// freeKey is the cluster state key holding free nodes, as in rainbow.
const freeKey = "nodes_free"

// Rules are the matching rules. The zero value uses inclusive bounds.
type Rules struct {
	// Exclusive excludes a range's ends (min < v < max), as the published
	// reliabuild driver scored; by default they are included, as rainbow's
	// range matcher has since 2024-03-31.
	Exclusive bool
	// Rainbow decides as rainbow's match algorithm does (its memory graph
	// backend at converged-computing/rainbow 075ee23), from the jobspec
	// and cluster graph ReadJobspec and ReadCluster read: see
	// docs/rainbow.md for what that means. The verdict is Matched or
	// Never, with no reasons (rainbow answers yes or no), and state plays
	// no part in Match; a Pool then filters on free nodes (NotNow) as
	// rainbow's selection step does, and does not refuse a job for a
	// subsystem no cluster has. A job or cluster not read by them, or a
	// document rainbow could not load, matches nothing; what the readers
	// return with an error for a document rainbow loads counts as
	// rainbow decides (see ReadJobspec, ReadCluster, ReadSubsystem).
	// Exclusive is ignored.
	Rainbow bool
}

// Match matches j against c. Counts are checked first (nodes, cores); if
// they pass, every requirement is checked and a Reason recorded for each that
// fails, so the result lists all failed requirements in order. A requirement
// with Under set is met only by a vertex attached to a vertex of that type
// in c.VertexTypes. The verdict and the reasons' kinds do not depend on the
// order of vertices or subsystems. A cluster whose
// state has the free-nodes key below j.Nodes gives NotNow when everything
// else matches. A job or cluster a reader returned with its error is Never,
// with no reason (the error is the reason). Match does not modify j or c.
func (r Rules) Match(j *Job, c *Cluster) Result {
	if r.Rainbow {
		if rainbowMatch(j, c) {
			return Result{Cluster: c.Name, Verdict: Matched}
		}
		return Result{Cluster: c.Name, Verdict: Never}
	}
	return r.matchCompiled(j, compileReqs(j.Requires), compileCluster(c))
}

func (r Rules) matchCompiled(j *Job, reqs []creq, c *ccluster) Result {
	res := Result{Cluster: c.name}
	if j.unread || c.unread {
		// A reader refused the document; its error is the reason.
		res.Verdict = Never
		return res
	}
	if c.nodes > 0 && j.Nodes > c.nodes {
		res.Verdict = Never
		res.Reasons = append(res.Reasons, Reason{-1, TooFewNodes,
			fmt.Sprintf("job needs %d nodes, cluster has %d", j.Nodes, c.nodes)})
		return res
	}
	if c.cores > 0 && j.Cores > c.cores {
		res.Verdict = Never
		res.Reasons = append(res.Reasons, Reason{-1, TooFewCores,
			fmt.Sprintf("job needs %d cores, cluster has %d", j.Cores, c.cores)})
		return res
	}
	for i := range reqs {
		if ok, kind, detail := reqs[i].check(c, r.Exclusive); !ok {
			res.Verdict = Never
			res.Reasons = append(res.Reasons, Reason{i, kind, detail})
		}
	}
	if res.Verdict == Never {
		return res
	}
	if free, ok := c.state[freeKey]; ok && free < float64(max(j.Nodes, 1)) {
		res.Verdict = NotNow
		res.Reasons = append(res.Reasons, Reason{-1, NoFreeNodes,
			fmt.Sprintf("%s is %g, job needs %d", freeKey, free, max(j.Nodes, 1))})
	}
	return res
}

// cfield is a vertex field with its version parsed once.
type cfield struct {
	s   string
	v   Version
	err error
}

type ccluster struct {
	name         string
	nodes, cores int
	state        map[string]float64
	subs         map[string][]cvertex
	typesKnown   bool // the cluster has VertexTypes
	unread       bool // Cluster.unread
}

// cvertex is a subsystem vertex with its fields compiled and its parents'
// types looked up once.
type cvertex struct {
	id      string
	fields  map[string]*cfield
	parents []cparent // in Vertex.Parents order
}

// cparent is a dominant-graph vertex a subsystem vertex attaches to; known
// is false when the cluster's VertexTypes does not hold its id.
type cparent struct {
	id, typ string
	known   bool
}

// compileCluster parses every vertex field once so that repeated checks
// compare parsed versions, and resolves each vertex's parents to their
// types. Vertices are kept in their given order; checks are ANY-of, so the
// order does not change results.
func compileCluster(c *Cluster) *ccluster {
	cc := &ccluster{name: c.Name, nodes: c.Nodes, cores: c.Cores, state: c.State,
		subs: make(map[string][]cvertex, len(c.Subsystems)), typesKnown: c.VertexTypes != nil, unread: c.unread}
	for name, s := range c.Subsystems {
		if s == nil || s.unread {
			continue
		}
		vs := make([]cvertex, 0, len(s.Vertices))
		for _, v := range s.Vertices {
			cv := cvertex{id: v.ID, fields: make(map[string]*cfield, len(v.Fields))}
			for k, val := range v.Fields {
				ver, err := ParseVersion(val)
				cv.fields[k] = &cfield{s: val, v: ver, err: err}
			}
			if len(v.Parents) > 0 {
				cv.parents = make([]cparent, len(v.Parents))
				for i, p := range v.Parents {
					t, ok := c.VertexTypes[p]
					cv.parents[i] = cparent{id: p, typ: t, known: ok}
				}
			}
			vs = append(vs, cv)
		}
		cc.subs[name] = vs
	}
	return cc
}

// placement is 0 when v may meet q as far as its place in the graph goes
// (q is not nested, or v attaches to a vertex of q's type), else
// UnknownParent when one of v's parents has no known type, else
// NotAttached.
func (q *creq) placement(v *cvertex) ReasonKind {
	if q.Under == "" {
		return 0
	}
	kind := NotAttached
	for _, p := range v.parents {
		switch {
		case p.known && p.typ == q.Under:
			return 0
		case !p.known:
			kind = UnknownParent
		}
	}
	return kind
}

// placementDetail explains why v, which satisfies q's condition, does not
// meet it.
func (q *creq) placementDetail(c *ccluster, v *cvertex, kind ReasonKind) string {
	name := strconv.Quote(v.id)
	if v.id == "" {
		name = "(no id)"
	}
	head := fmt.Sprintf("%s vertex %s meets %s", q.Subsystem, name, q.Requirement)
	if kind == UnknownParent {
		if !c.typesKnown {
			return fmt.Sprintf("%s, but cluster %s records no vertex types (read it with ReadCluster or set VertexTypes), so it cannot be placed under a %s",
				head, c.name, q.Under)
		}
		for _, p := range v.parents {
			if !p.known {
				return fmt.Sprintf("%s, but is attached to %q, which is not a vertex of cluster %s's graph", head, p.id, c.name)
			}
		}
	}
	if len(v.parents) == 0 {
		return fmt.Sprintf("%s, but is attached to no vertex of the cluster graph, so to no %s", head, q.Under)
	}
	var at []string
	for i, p := range v.parents {
		if i == 3 {
			at = append(at, fmt.Sprintf("%d more", len(v.parents)-i))
			break
		}
		t := p.typ
		if t == "" {
			t = "untyped vertex"
		}
		at = append(at, fmt.Sprintf("%s %q", t, p.id))
	}
	return fmt.Sprintf("%s, but is attached to %s, not to a %s", head, strings.Join(at, ", "), q.Under)
}

// creq is a requirement with its versions parsed.
type creq struct {
	Requirement
	min, max       Version
	minErr, maxErr error
}

func compileReqs(rs []Requirement) []creq {
	out := make([]creq, len(rs))
	for i, r := range rs {
		out[i].Requirement = r
		switch r.Op {
		case InRange:
			if r.Min != "" {
				out[i].min, out[i].minErr = ParseVersion(r.Min)
			}
			if r.Max != "" {
				out[i].max, out[i].maxErr = ParseVersion(r.Max)
			}
		}
	}
	return out
}

// check reports whether any vertex of the requirement's subsystem satisfies
// it (and, for a nested requirement, is attached under the resource type).
// When none does, the reason is the most informative one seen: a vertex
// that satisfies the condition but is placed elsewhere (an unknown parent
// before a parent of another type), then a value that was compared and
// failed, then an unparseable value, then a missing field.
func (q *creq) check(c *ccluster, excl bool) (bool, ReasonKind, string) {
	vs, ok := c.subs[q.Subsystem]
	if !ok {
		return false, MissingSubsystem, fmt.Sprintf("cluster %s has no subsystem %q", c.name, q.Subsystem)
	}
	if err := q.ownErr(); err != nil {
		return false, BadVersion, fmt.Sprintf("requirement %s: %v", q.Requirement, err)
	}
	kind := MissingField
	var detail string
	var placed *cvertex // the first vertex that satisfies q but is placed elsewhere
	var placedKind ReasonKind
	for i := range vs {
		v := &vs[i]
		f, ok := v.fields[q.Field]
		if !ok {
			continue
		}
		if sat, k := q.test(f, excl); !sat {
			if rank(k) > rank(kind) || detail == "" {
				kind = k
				detail = fmt.Sprintf("%s=%q does not satisfy %s", q.Field, f.s, q.Requirement)
			}
			continue
		}
		pk := q.placement(v)
		if pk == 0 {
			return true, 0, ""
		}
		if placed == nil || pk == UnknownParent && placedKind == NotAttached {
			placed, placedKind = v, pk
		}
	}
	if placed != nil {
		return false, placedKind, q.placementDetail(c, placed, placedKind)
	}
	if kind == MissingField {
		detail = fmt.Sprintf("no %s vertex has field %q", q.Subsystem, q.Field)
	}
	return false, kind, detail
}

// satisfied is check without the reason, for bulk evaluation.
func (q *creq) satisfied(c *ccluster, excl bool) bool {
	vs, ok := c.subs[q.Subsystem]
	if !ok || q.ownErr() != nil {
		return false
	}
	for i := range vs {
		v := &vs[i]
		f, ok := v.fields[q.Field]
		if !ok {
			continue
		}
		if sat, _ := q.test(f, excl); !sat {
			continue
		}
		if q.placement(v) == 0 {
			return true
		}
	}
	return false
}

func rank(k ReasonKind) int {
	switch k {
	case MissingField:
		return 0
	case BadVersion:
		return 1
	}
	return 2
}

func (q *creq) ownErr() error {
	for _, e := range []error{q.minErr, q.maxErr} {
		if e != nil {
			return e
		}
	}
	return nil
}

func (q *creq) test(f *cfield, excl bool) (bool, ReasonKind) {
	switch q.Op {
	case Equal:
		return f.s == q.Value, NotEqual
	}
	if f.err != nil {
		return false, BadVersion
	}
	switch q.Op {
	case InRange:
		if q.Min != "" && !atLeast(f.v, q.min, excl) {
			return false, OutOfRange
		}
		if q.Max != "" && !atMost(f.v, q.max, excl) {
			return false, OutOfRange
		}
		return true, 0
	}
	return false, NotEqual
}
