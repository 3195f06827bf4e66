package matcher

import (
	"strconv"
	"strings"
)

// Vertex is one vertex of a subsystem graph: its type and string fields
// (for example "version": "2.69.0" or "value": "gcc"), and the ids of the
// dominant-graph vertices it is attached to by "contains" edges.
type Vertex struct {
	ID      string
	Type    string
	Fields  map[string]string
	Parents []string
}

// Subsystem is a named set of vertices registered for a cluster.
type Subsystem struct {
	Name     string
	Vertices []Vertex

	unread bool // ReadSubsystem returned it with its error: only the Rainbow rules count it
}

// Cluster is a scheduling target: its totals from the dominant (containment)
// graph, a key/value state such as "nodes_free" or "cost_per_node_hour", and
// its subsystems by name. Nodes or Cores of zero mean unknown and skip the
// corresponding count check.
//
// VertexTypes holds the type of every dominant-graph vertex by id ("2":
// "node"), as ReadCluster reads them; it is how a subsystem vertex's
// Parents are placed under a resource type for a requirement nested under
// one (see Requirement.Under). nil means unknown: such a cluster meets no
// nested requirement, and the reason says why. Matching reads it when a
// cluster is compiled (Match, NewPool, LivePool.Register), not later.
type Cluster struct {
	Name        string
	Nodes       int
	Cores       int
	State       map[string]float64
	Subsystems  map[string]*Subsystem
	VertexTypes map[string]string

	rainbow *rbGraph // the dominant graph as rainbow loads it (ReadCluster)
	unread  bool     // ReadCluster returned it with its error: only the Rainbow rules match it
}

// Op is how a requirement compares a field.
type Op int

const (
	Equal   Op = iota // field == Value (exact string)
	InRange           // Min <= field <= Max as versions; either end may be empty
)

var opNames = [...]string{"equal", "range"}

func (o Op) name() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return "Op(" + strconv.Itoa(int(o)) + ")"
}

// Requirement is one condition a job puts on one subsystem. It is met when
// any vertex of the subsystem satisfies it; with Under set, only a vertex
// attached (Vertex.Parents) to a dominant-graph vertex of that type counts.
type Requirement struct {
	Subsystem string
	Field     string
	Op        Op
	Value     string // Equal
	Min, Max  string // InRange; an empty end is unbounded
	// Under is the type of the jobspec resource the requirement was nested
	// under ("node", "core"). rainbow checks such a requirement through the
	// subsystem edges of the vertices of that type, so a subsystem vertex
	// that satisfies it but hangs off another type does not meet it. Empty
	// for a requirement of the job or its task (the experiment-era
	// task.resources form), which any vertex of the subsystem meets.
	Under string
}

func (r Requirement) String() string {
	var b strings.Builder
	b.WriteString(r.Subsystem)
	b.WriteByte('.')
	b.WriteString(r.Field)
	b.WriteByte(' ')
	switch r.Op {
	case Equal:
		b.WriteString("== " + r.Value)
	case InRange:
		b.WriteString("in [" + r.Min + ", " + r.Max + "]")
	default:
		b.WriteString(r.Op.name())
	}
	if r.Under != "" {
		b.WriteString(" (under " + r.Under + ")")
	}
	return b.String()
}

// Job is what a user submits: a name, how many nodes and cores in total it
// needs, and its requirements.
type Job struct {
	Name     string
	Nodes    int
	Cores    int
	Requires []Requirement

	rainbow *rbSpec // the resource groups as rainbow reads them (ReadJobspec)
	unread  bool    // ReadJobspec returned it with its error: only the Rainbow rules match it
}
