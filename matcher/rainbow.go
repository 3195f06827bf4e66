package matcher

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	semver "github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"

	"github.com/crosscluster/crosscluster/internal/walk"
)

// This file is the rainbow-compatible mode (Rules.Rainbow): the decision
// rainbow's memory graph backend and "match" algorithm make (rainbow at
// 075ee23), reproduced from the jobspec tree and the dominant graph as read,
// including the parts of it docs/rainbow.md lists as differences. The
// comments name the behaviour, not rainbow's code.

// rbResource is one jobspec resource as rainbow's jobspec types hold it.
type rbResource struct {
	typ, label      string
	replicas, count int32
	schedule        bool
	with            []rbResource
	requires        []map[string]string
}

// rbSpec is the part of a jobspec rainbow's search reads: its named
// resource groups, in document order.
type rbSpec struct {
	names  []string
	groups []rbResource
}

// rbVertex is one vertex of a cluster's dominant graph.
type rbVertex struct {
	id, typ  string
	size     int32
	children []int // "contains" edges, by index, in id order, once each
}

// rbGraph is a cluster's dominant graph as rainbow loads it: every vertex
// (orphans too), "contains" edges only, the count of vertices of each type,
// and the vertex whose id is "0", where rainbow's search starts (-1 when
// there is none).
type rbGraph struct {
	vertices []rbVertex
	index    map[string]int
	counts   map[string]int64
	root     int
}

// rbScalar is the string rainbow's reader makes of a YAML scalar read into
// a string: its jobspecs go through YAML 1.1 typing and JSON, so an
// unquoted 1.10 is the number 1.1 (formatted at 32-bit precision), 010 is
// octal 8, yes is true and ~ is empty.
func rbScalar(n *yaml.Node) (string, bool) {
	n = walk.Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle|yaml.TaggedStyle) != 0 {
		return n.Value, true
	}
	return yaml11String(n.Value), true
}

var yaml11Float = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// yaml11String resolves a plain scalar as YAML 1.1 does and formats the
// value as a string target receives it.
func yaml11String(in string) string {
	switch in {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return "true"
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return "false"
	case "", "~", "null", "Null", "NULL":
		return ""
	case ".nan", ".NaN", ".NAN":
		return strconv.FormatFloat(math.NaN(), 'g', -1, 32)
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return strconv.FormatFloat(math.Inf(1), 'g', -1, 32)
	case "-.inf", "-.Inf", "-.INF":
		return strconv.FormatFloat(math.Inf(-1), 'g', -1, 32)
	}
	c := in[0]
	switch {
	case c == '.':
		if f, err := strconv.ParseFloat(in, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 32)
		}
	case c >= '0' && c <= '9' || c == '+' || c == '-':
		plain := strings.ReplaceAll(in, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return strconv.FormatUint(u, 10)
		}
		if yaml11Float.MatchString(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return strconv.FormatFloat(f, 'g', -1, 32)
			}
		}
		if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if i, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return strconv.FormatInt(i, 10)
			}
		}
	}
	return in
}

// rbInt reads a count or replicas as an int32.
func rbInt(n *yaml.Node) (int32, bool) {
	s, ok := rbScalar(n)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 32)
	return int32(i), err == nil
}

// readRainbowSpec reads the resource groups of a nextgen v1 jobspec as
// rainbow's reader does; ok is false for a document it would not load or
// whose aliases expand to more than budget resources and requires entries
// (the walker's limit for the document, walk.YAML.Limit).
func readRainbowSpec(top [][2]*yaml.Node, budget int) (*rbSpec, bool) {
	res := walk.Deref(walk.Get(top, "resources"))
	s := &rbSpec{}
	if res == nil {
		return s, true
	}
	if res.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(res.Content); i += 2 {
		r, ok := readRainbowResource(res.Content[i+1], 0, &budget)
		if !ok {
			return nil, false
		}
		if k := slices.Index(s.names, res.Content[i].Value); k >= 0 {
			s.groups[k] = r
			continue
		}
		s.names = append(s.names, res.Content[i].Value)
		s.groups = append(s.groups, r)
	}
	return s, true
}

func readRainbowResource(n *yaml.Node, depth int, budget *int) (rbResource, bool) {
	var r rbResource
	n = walk.Deref(n)
	if n == nil || n.Kind != yaml.MappingNode || depth > maxNesting {
		return r, false
	}
	if *budget -= 1 + len(n.Content)/2; *budget < 0 {
		return r, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		ok := true
		switch n.Content[i].Value {
		case "type":
			r.typ, ok = rbScalar(v)
		case "label":
			r.label, ok = rbScalar(v)
		case "replicas":
			r.replicas, ok = rbInt(v)
		case "count":
			r.count, ok = rbInt(v)
		case "schedule":
			var s string
			s, ok = rbScalar(v)
			r.schedule = s == "true"
		case "with":
			w := walk.Deref(v)
			if w == nil || w.Kind != yaml.SequenceNode {
				return r, false
			}
			r.with = nil
			for _, c := range w.Content {
				cr, ok := readRainbowResource(c, depth+1, budget)
				if !ok {
					return r, false
				}
				r.with = append(r.with, cr)
			}
		case "requires":
			w := walk.Deref(v)
			if w == nil || w.Kind != yaml.SequenceNode {
				return r, false
			}
			r.requires = nil
			for _, c := range w.Content {
				c = walk.Deref(c)
				if c == nil || c.Kind != yaml.MappingNode {
					return r, false
				}
				if *budget -= 1 + len(c.Content)/2; *budget < 0 {
					return r, false
				}
				m := map[string]string{}
				for k := 0; k+1 < len(c.Content); k += 2 {
					val, ok := rbScalar(c.Content[k+1])
					if !ok {
						return r, false
					}
					m[c.Content[k].Value] = val
				}
				r.requires = append(r.requires, m)
			}
		}
		if !ok {
			return r, false
		}
	}
	return r, true
}

// rbGraphOf builds the dominant graph rainbow loads from a JGF document.
func rbGraphOf(g *jgfGraph) *rbGraph {
	if len(g.order) == 0 || len(g.edges) == 0 {
		return nil // rainbow refuses a graph without vertices or without edges
	}
	rg := &rbGraph{index: make(map[string]int, len(g.order)), counts: map[string]int64{"cluster": 0}, root: -1}
	for i, id := range g.order {
		md := g.nodes[id]
		v := rbVertex{id: id, typ: "resource", size: 1}
		if t, ok := md["type"].(string); ok {
			v.typ = t
		}
		if n, ok := md["size"].(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				v.size = int32(f)
			}
		}
		rg.counts[v.typ]++
		rg.index[id] = i
		rg.vertices = append(rg.vertices, v)
		if id == "0" {
			rg.root = i
		}
	}
	for _, e := range g.edges {
		if e.relation != "contains" {
			continue
		}
		s, ok1 := rg.index[e.source]
		t, ok2 := rg.index[e.target]
		if ok1 && ok2 && !slices.Contains(rg.vertices[s].children, t) {
			rg.vertices[s].children = append(rg.vertices[s].children, t)
		}
	}
	for i := range rg.vertices {
		slices.SortFunc(rg.vertices[i].children, func(a, b int) int { return compareIDs(rg.vertices[a].id, rg.vertices[b].id) })
	}
	return rg
}

// rbNeed is one need of a requires entry: an equality or a range.
type rbNeed struct {
	isRange                bool
	field, value, min, max string
}

// rbEntryNeeds are the needs rainbow makes of one requires entry: a range
// when there is a field and a min or a max, and an equality when there are
// a field and a non-empty match, both when both are present.
func rbEntryNeeds(e map[string]string) map[rbNeed]bool {
	needs := map[rbNeed]bool{}
	f := e["field"]
	if f != "" && (e["min"] != "" || e["max"] != "") {
		needs[rbNeed{isRange: true, field: f, min: e["min"], max: e["max"]}] = false
	}
	if m, ok := e["match"]; ok && f != "" && m != "" {
		needs[rbNeed{field: f, value: m}] = false
	}
	return needs
}

// met reports whether a subsystem vertex's fields meet the need; a range
// reads its ends as Masterminds constraints (">= min", "<= max") and the
// vertex's value as a Masterminds version.
func (n rbNeed) met(fields map[string]string) bool {
	v, ok := fields[n.field]
	if !ok {
		return false
	}
	if !n.isRange {
		return v == n.value
	}
	ver, err := semver.NewVersion(v)
	if err != nil {
		return false
	}
	for _, c := range [...]string{">= " + n.min, "<= " + n.max} {
		if len(c) == 3 {
			continue
		}
		con, err := semver.NewConstraint(c)
		if err != nil || !con.Check(ver) {
			return false
		}
	}
	return true
}

// rbNeeds is the state of one slot's search: needs by vertex type and
// subsystem, counts by type still to find, slots found and needed. Met
// needs stay met and counts are not restored when a slot is found, as in
// rainbow.
type rbNeeds struct {
	subs             map[string]map[string]map[rbNeed]bool
	counts           map[string]int32
	found, needed    int32
	subsOK, countsOK bool
}

func (s *rbNeeds) subsSatisfied() bool {
	if s.subsOK {
		return true
	}
	for _, bySub := range s.subs {
		for _, needs := range bySub {
			for _, ok := range needs {
				if !ok {
					return false
				}
			}
		}
	}
	s.subsOK = true
	return true
}

func (s *rbNeeds) countsSatisfied() bool {
	if s.countsOK {
		return true
	}
	for _, c := range s.counts {
		if c > 0 {
			return false
		}
	}
	s.countsOK = true
	return true
}

// slotNeeds gathers the needs of a slot and everything under it: for each
// resource type the requires of its last resource with any, for each
// subsystem the last entry that gives a need, and for each type the last
// positive count, read as a total.
func slotNeeds(r *rbResource) *rbNeeds {
	s := &rbNeeds{subs: map[string]map[string]map[rbNeed]bool{}, counts: map[string]int32{}}
	var walkRes func(r *rbResource)
	walkRes = func(r *rbResource) {
		bySub := map[string]map[rbNeed]bool{}
		for _, e := range r.requires {
			name, ok := e["name"]
			if !ok {
				continue
			}
			if n := rbEntryNeeds(e); len(n) > 0 {
				bySub[name] = n
			}
		}
		if len(bySub) > 0 {
			s.subs[r.typ] = bySub
		}
		if r.count > 0 {
			s.counts[r.typ] = r.count
		}
		for i := range r.with {
			walkRes(&r.with[i])
		}
	}
	walkRes(r)
	s.subsSatisfied()
	s.countsSatisfied()
	return s
}

// rbSlots are the slots rainbow schedules: every group with replicas, and
// the first resource of type slot under each group; when there are none,
// every group as one slot; only those marked schedule when any is; one per
// label, the last.
func (s *rbSpec) slots() []rbResource {
	var slots, faux []rbResource
	var firstSlot func(r *rbResource) *rbResource
	firstSlot = func(r *rbResource) *rbResource {
		if r.typ == "slot" {
			return r
		}
		for i := range r.with {
			if f := firstSlot(&r.with[i]); f != nil {
				return f
			}
		}
		return nil
	}
	for i, g := range s.groups {
		f := g
		f.replicas = 1
		if f.label == "" {
			f.label = s.names[i]
		}
		faux = append(faux, f)
		if g.replicas > 0 {
			slots = append(slots, g)
		}
		for k := range g.with {
			if f := firstSlot(&g.with[k]); f != nil {
				slots = append(slots, *f)
			}
		}
	}
	if len(slots) == 0 {
		slots = faux
	}
	if sched := slices.DeleteFunc(slices.Clone(slots), func(r rbResource) bool { return !r.schedule }); len(sched) > 0 {
		slots = sched
	}
	var out []rbResource
	labels := map[string]int{}
	for _, r := range slots {
		if k, ok := labels[r.label]; ok {
			out[k] = r
			continue
		}
		labels[r.label] = len(out)
		out = append(out, r)
	}
	return out
}

// rbTopCounts is rainbow's first check: for each resource with replicas R
// (searched from the top, not below one), every resource directly under it
// needs at least R vertices of its type in the whole graph.
func (s *rbSpec) topCounts(g *rbGraph) bool {
	var check func(r *rbResource) bool
	check = func(r *rbResource) bool {
		for i := range r.with {
			w := &r.with[i]
			if r.replicas != 0 {
				n, ok := g.counts[w.typ]
				if !ok || n < int64(r.replicas) {
					return false
				}
			} else if !check(w) {
				return false
			}
		}
		return true
	}
	for i := range s.groups {
		if !check(&s.groups[i]) {
			return false
		}
	}
	return true
}

// rbAttached is a dominant vertex's subsystem vertices, by subsystem name
// and then vertex id.
type rbAttached map[int][]rbEdge

type rbEdge struct {
	subsystem string
	fields    map[string]string
}

func attachments(g *rbGraph, c *Cluster) rbAttached {
	at := rbAttached{}
	names := make([]string, 0, len(c.Subsystems))
	for n := range c.Subsystems {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		s := c.Subsystems[name]
		if s == nil {
			continue
		}
		vs := slices.Clone(s.Vertices)
		slices.SortFunc(vs, func(a, b Vertex) int { return compareIDs(a.ID, b.ID) })
		for _, v := range vs {
			for _, p := range v.Parents {
				if i, ok := g.index[p]; ok {
					at[i] = append(at[i], rbEdge{name, v.Fields})
				}
			}
		}
	}
	return at
}

// maxRainbowVisits bounds the vertices one match visits (a graph whose
// contains edges share children or form cycles is walked more than once).
const maxRainbowVisits = 1 << 22

// rainbowMatch decides as rainbow's match algorithm does.
func rainbowMatch(j *Job, c *Cluster) bool {
	spec, g := j.rainbow, c.rainbow
	if spec == nil || g == nil {
		return false
	}
	if !spec.topCounts(g) {
		return false
	}
	slots := spec.slots()
	if len(slots) == 0 {
		return true
	}
	if g.root < 0 {
		// The search starts at a vertex with no edges.
		return false
	}
	at := attachments(g, c)
	// visit checks a vertex against the slot's needs: its attached
	// vertices, in order, each leaving every need of its subsystem met or
	// refusing the vertex; then its size counts against its type.
	visit := func(s *rbNeeds, i int) bool {
		v := &g.vertices[i]
		count, ok := s.counts[v.typ]
		bySub, ok2 := s.subs[v.typ]
		if !ok && !ok2 {
			return true
		}
		for _, e := range at[i] {
			needs := bySub[e.subsystem]
			for n, met := range needs {
				if !met && n.met(e.fields) {
					needs[n] = true
				}
			}
			for _, met := range needs {
				if !met {
					return false
				}
			}
		}
		s.counts[v.typ] = count - v.size
		return true
	}
	// A cycle of contains edges would make rainbow's search run until its
	// stack is exhausted; here the walk stops, refusing the cluster.
	visits := 0
	var traverse func(s *rbNeeds, i, depth int) bool
	traverse = func(s *rbNeeds, i, depth int) bool {
		visits++
		if depth > len(g.vertices) || visits > maxRainbowVisits || !visit(s, i) {
			return false
		}
		if s.subsSatisfied() && s.countsSatisfied() {
			s.found++
			s.subsOK, s.countsOK = false, false
			if s.found >= s.needed {
				return true
			}
		}
		for _, k := range g.vertices[i].children {
			if traverse(s, k, depth+1) {
				return true
			}
		}
		return false
	}
	var findSlot func(r *rbResource) bool
	findSlot = func(r *rbResource) bool {
		// Requirements above the slot never refuse a cluster.
		if r.replicas == 0 {
			for k := range r.with {
				if findSlot(&r.with[k]) {
					return true
				}
			}
			return false
		}
		s := slotNeeds(r)
		s.needed = r.replicas
		for _, k := range g.vertices[g.root].children {
			if traverse(s, k, 0) {
				return true
			}
		}
		return false
	}
	for i := range slots {
		if !findSlot(&slots[i]) {
			return false
		}
	}
	return true
}
