package matcher

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/crosscluster/crosscluster/internal/walk"
)

// jgfGraph is a decoded JSON Graph Format v2 document.
type jgfGraph struct {
	name  string
	nodes map[string]map[string]any // id -> metadata
	order []string                  // ids sorted
	// contains[target] = sources of "contains" edges
	contains map[string][]string
	// edges are the endpoints of every edge with its path, for checks.
	edges []jgfEdge
}

type jgfEdge struct {
	path, source, target, relation string
}

// checkEdges checks that the ends of every edge are vertices of the graph;
// with outsideSources, a source may be outside (a subsystem's edges come
// from the dominant graph's vertices it attaches to). rainbow refuses a
// "contains" edge with a missing end (refused) and skips any other edge
// (lenient: the first such error).
func checkEdges(w walk.JSON, g *jgfGraph, outsideSources bool) (refused, lenient error) {
	for _, e := range g.edges {
		if err := checkEdge(w, g, e, outsideSources); err != nil {
			if e.relation == "contains" {
				return err, nil
			}
			lenient = cmp.Or(lenient, err)
		}
	}
	return nil, lenient
}

func checkEdge(w walk.JSON, g *jgfGraph, e jgfEdge, outsideSources bool) error {
	if _, ok := g.nodes[e.target]; !ok && !(outsideSources && e.relation == "in") {
		return w.Err(e.path+".target", ErrSchema, "dangling edge: no vertex %q in graph.nodes", e.target)
	}
	if _, ok := g.nodes[e.source]; !ok && !(outsideSources && e.relation == "contains") {
		return w.Err(e.path+".source", ErrSchema, "dangling edge: no vertex %q in graph.nodes", e.source)
	}
	return nil
}

// roots returns the vertices no "contains" edge reaches.
func (g *jgfGraph) roots() []string {
	var out []string
	for _, id := range g.order {
		if len(g.contains[id]) == 0 {
			out = append(out, id)
		}
	}
	return out
}

func readGraph(w walk.JSON, r io.Reader) (*jgfGraph, error) {
	top, err := w.DecodeObject(r)
	if err != nil {
		return nil, err
	}
	g := &jgfGraph{nodes: map[string]map[string]any{}, contains: map[string][]string{}}
	if n, ok := top["name"]; ok {
		if g.name, err = w.Str(n, "name"); err != nil {
			return nil, err
		}
	}
	gm, err := w.Obj(top["graph"], "graph")
	if err != nil {
		return nil, err
	}
	nodes, err := w.Obj(gm["nodes"], "graph.nodes")
	if err != nil {
		return nil, err
	}
	for id, nv := range nodes {
		p := "graph.nodes." + id
		nm, err := w.Obj(nv, p)
		if err != nil {
			return nil, err
		}
		md := map[string]any{}
		if mv, ok := nm["metadata"]; ok {
			if md, err = w.Obj(mv, p+".metadata"); err != nil {
				return nil, err
			}
		}
		g.nodes[id] = md
		g.order = append(g.order, id)
	}
	slices.SortFunc(g.order, compareIDs)
	if ev, ok := gm["edges"]; ok && ev != nil {
		edges, ok := ev.([]any)
		if !ok {
			return nil, w.Err("graph.edges", ErrSchema, "want a list, got %s", walk.Kind(ev))
		}
		for i, e := range edges {
			p := "graph.edges[" + strconv.Itoa(i) + "]"
			em, err := w.Obj(e, p)
			if err != nil {
				return nil, err
			}
			rel := ""
			if rv, ok := em["relation"]; ok {
				if rel, err = w.Str(rv, p+".relation"); err != nil {
					return nil, err
				}
			}
			src, err := w.Str(em["source"], p+".source")
			if err != nil {
				return nil, err
			}
			dst, err := w.Str(em["target"], p+".target")
			if err != nil {
				return nil, err
			}
			g.edges = append(g.edges, jgfEdge{p, src, dst, rel})
			if rel == "contains" {
				g.contains[dst] = append(g.contains[dst], src)
			}
		}
	}
	return g, nil
}

// compareIDs orders numeric ids numerically, then others as strings.
func compareIDs(a, b string) int {
	na, ea := strconv.Atoi(a)
	nb, eb := strconv.Atoi(b)
	switch {
	case ea == nil && eb == nil:
		return na - nb
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return bytes.Compare([]byte(a), []byte(b))
}

func mdString(md map[string]any, key string) string {
	switch x := md[key].(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return ""
}

// ReadCluster reads a rainbow cluster graph (JGF v2 "nodes.json"): the
// cluster's name is the document's "name", else the basename of its vertex
// of type "cluster"; Nodes and Cores count the vertices of those types that
// are the root or are reached by "contains" edges; VertexTypes holds every
// vertex's type by id (metadata "type", "" when absent), so that subsystem
// vertices can be placed under the resource types jobspecs nest
// requirements under. file names the input in errors.
//
// A vertex no "contains" edge reaches (other than the cluster vertex) and
// an edge naming a vertex the graph does not have are errors. The Cluster
// returned with an error matches nothing under the default Rules; under
// Rules{Rainbow: true} it matches as rainbow would decide on the graph,
// which rainbow loads with orphan vertices (counted in its totals) and
// with other edges than "contains" naming missing vertices (ignored), but
// not with a dangling "contains" edge or without any edge.
func ReadCluster(r io.Reader, file string) (Cluster, error) {
	c, err := readCluster(r, file)
	if err != nil {
		c.unread = true
	}
	return c, err
}

func readCluster(r io.Reader, file string) (Cluster, error) {
	w := walk.NewJSON(file, parseError)
	g, err := readGraph(w, r)
	if err != nil {
		return Cluster{}, err
	}
	// rainbow refuses a "contains" edge to or from a vertex the graph does
	// not have; an orphan vertex, or another edge naming one, it loads.
	// Those are refused here too, but the cluster is returned with the
	// error for the Rainbow rules.
	refused, lenient := checkEdges(w, g, false)
	if refused != nil {
		return Cluster{}, refused
	}
	if rs := g.roots(); len(rs) > 1 && lenient == nil {
		// One root (the cluster vertex); another uncontained vertex is an
		// orphan that no path from the root reaches.
		for _, id := range rs {
			if mdString(g.nodes[id], "type") != "cluster" {
				lenient = w.Err("graph.nodes."+id, ErrSchema, "orphan vertex: no contains edge reaches it")
				break
			}
		}
	}
	c := Cluster{Name: g.name, Subsystems: map[string]*Subsystem{}, VertexTypes: make(map[string]string, len(g.order)),
		rainbow: rbGraphOf(g)}
	for _, id := range g.order {
		md := g.nodes[id]
		typ := mdString(md, "type")
		c.VertexTypes[id] = typ
		if typ == "cluster" && c.Name == "" {
			c.Name = mdString(md, "basename")
		}
		if typ != "cluster" && len(g.contains[id]) == 0 {
			continue
		}
		switch typ {
		case "node":
			c.Nodes++
		case "core":
			c.Cores++
		}
	}
	if c.Name == "" {
		return Cluster{}, w.Err("graph.nodes", ErrSchema, "no name and no vertex of type cluster")
	}
	return c, lenient
}

// ReadSubsystem reads a rainbow subsystem graph (JGF v2, e.g.
// "amrex-subsystem.json"). Every vertex becomes a Vertex whose Fields are its
// scalar metadata (nested values such as "paths" are dropped) and whose
// Parents are the ids outside the subsystem that contain it, i.e. the
// dominant-graph vertices it attaches to. Only "contains" edges count; the
// root vertex, which nothing contains, is left out. name
// is the subsystem's name (rainbow takes it from the file name).
//
// A second vertex nothing contains (an orphan) and an edge naming a vertex
// that is in neither graph are errors. The Subsystem returned with an
// error is no subsystem under the default Rules; under Rules{Rainbow:
// true} it counts as rainbow would load it: orphans and edges other than
// "contains" make no difference there, but a "contains" edge to a vertex
// the subsystem does not have makes rainbow refuse it.
func ReadSubsystem(r io.Reader, file, name string) (Subsystem, error) {
	s, err := readSubsystem(r, file, name)
	if err != nil {
		s.unread = true
	}
	return s, err
}

func readSubsystem(r io.Reader, file, name string) (Subsystem, error) {
	w := walk.NewJSON(file, parseError)
	g, err := readGraph(w, r)
	if err != nil {
		return Subsystem{}, err
	}
	// As for a cluster graph, what rainbow loads comes back with the error.
	refused, lenient := checkEdges(w, g, true)
	if refused != nil {
		return Subsystem{}, refused
	}
	if rs := g.roots(); len(rs) > 1 && lenient == nil {
		// The subsystem's root is the one vertex nothing contains; another
		// is an orphan that would silently drop out of the subsystem.
		lenient = w.Err("graph.nodes."+rs[1], ErrSchema, "orphan vertex: nothing contains it (the root is %q)", rs[0])
	}
	s := Subsystem{Name: name}
	for _, id := range g.order {
		if len(g.contains[id]) == 0 {
			continue // the subsystem's root: contained by nothing, attached to nothing
		}
		md := g.nodes[id]
		v := Vertex{ID: id, Type: mdString(md, "type"), Fields: map[string]string{}}
		for k, val := range md {
			switch x := val.(type) {
			case string:
				v.Fields[k] = x
			case json.Number:
				v.Fields[k] = x.String()
			case bool:
				v.Fields[k] = strconv.FormatBool(x)
			}
		}
		for _, src := range g.contains[id] {
			if _, inside := g.nodes[src]; !inside {
				v.Parents = append(v.Parents, src)
			}
		}
		slices.SortFunc(v.Parents, compareIDs)
		v.Parents = slices.Compact(v.Parents)
		s.Vertices = append(s.Vertices, v)
	}
	return s, lenient
}

// WriteCluster writes c as a JGF v2 cluster graph in rainbow's layout:
// cluster → rack0 → node i → socket i → cores, with Nodes nodes and
// Cores/Nodes cores per node (at least one node, and one core per node when
// Cores is zero). Vertex ids are decimal, as rainbow's generator made them;
// c.VertexTypes is not consulted (the layout defines the vertices). A
// Cluster ReadCluster returned with an error is refused (ErrSchema).
func WriteCluster(w io.Writer, c *Cluster) error {
	if c.unread {
		return fmt.Errorf("matcher: cluster %q: %w: it was read with an error and cannot be written", c.Name, ErrSchema)
	}
	nodes := max(c.Nodes, 1)
	per := max(1, c.Cores/nodes)
	type md = map[string]any
	vs := map[string]any{}
	var edges []md
	next := 0
	add := func(typ, name string, id int, parent string, path string) string {
		key := strconv.Itoa(next)
		vs[key] = md{"label": key, "metadata": md{"type": typ, "basename": typ, "name": name,
			"id": id, "uniq_id": next, "rank": -1, "exclusive": false, "size": 1, "unit": "",
			"paths": md{"containment": path}}}
		if parent != "" {
			edges = append(edges, md{"source": parent, "target": key, "relation": "contains", "metadata": md{}},
				md{"source": key, "target": parent, "relation": "in", "metadata": md{}})
		}
		next++
		return key
	}
	root := add("cluster", c.Name+"0", 0, "", "/"+c.Name+"0")
	vs[root].(md)["metadata"].(md)["basename"] = c.Name
	rack := add("rack", "rack0", 0, root, "/"+c.Name+"0/rack0")
	core := 0
	for i := 0; i < nodes; i++ {
		np := fmt.Sprintf("/%s0/rack0/node%d", c.Name, i)
		n := add("node", fmt.Sprintf("node%d", i), i, rack, np)
		s := add("socket", fmt.Sprintf("socket%d", i), i, n, fmt.Sprintf("%s/socket%d", np, i))
		for k := 0; k < per; k++ {
			add("core", fmt.Sprintf("core%d", core), core, s, fmt.Sprintf("%s/socket%d/core%d", np, i, core))
			core++
		}
	}
	return writeJSON(w, md{"name": c.Name, "graph": md{"directed": true, "nodes": vs, "edges": edges}})
}

// WriteSubsystem writes s as a JGF v2 subsystem graph: a root vertex
// "<name>0" followed by s.Vertices (ids "<name>1", ... unless a vertex has
// an ID), each with its Fields as metadata and a "contains" edge from every
// parent.
func WriteSubsystem(w io.Writer, s *Subsystem) error {
	type md = map[string]any
	vs := map[string]any{}
	var edges []md
	root := s.Name + "0"
	vs[root] = md{"label": root, "metadata": md{"type": s.Name, "basename": s.Name, "name": root,
		"id": 0, "uniq_id": 0, "exclusive": false, "size": 1, "paths": md{"containment": "/" + root}}}
	for i, v := range s.Vertices {
		id := v.ID
		if id == "" || id == root {
			id = s.Name + strconv.Itoa(i+1)
		}
		m := md{"id": i + 1, "uniq_id": i + 1, "exclusive": true, "size": 1,
			"paths": md{"containment": "/" + root + "/" + id}}
		for k, val := range v.Fields {
			m[k] = val
		}
		if v.Type != "" {
			m["type"] = v.Type
		}
		vs[id] = md{"label": id, "metadata": m}
		for _, p := range v.Parents {
			edges = append(edges, md{"source": p, "target": id, "relation": "contains"},
				md{"source": id, "target": p, "relation": "in"})
		}
	}
	return writeJSON(w, md{"graph": md{"directed": true, "nodes": vs, "edges": edges}})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
