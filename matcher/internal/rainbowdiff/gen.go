package main

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/matcher"
)

// layout is a generated cluster: WriteCluster's graph (cluster 0, rack 1,
// then per node: node, socket, cores) and the ids of its vertices by type.
type layout struct {
	name  string
	nodes string
	ids   map[string][]string // type -> vertex ids
}

func newLayout(name string, nodes, perNode int) (layout, error) {
	c := matcher.Cluster{Name: name, Nodes: nodes, Cores: nodes * perNode}
	var b bytes.Buffer
	if err := matcher.WriteCluster(&b, &c); err != nil {
		return layout{}, err
	}
	l := layout{name: name, nodes: b.String(), ids: map[string][]string{}}
	id := 2
	for range nodes {
		l.ids["node"] = append(l.ids["node"], fmt.Sprint(id))
		l.ids["socket"] = append(l.ids["socket"], fmt.Sprint(id+1))
		for k := range perNode {
			l.ids["core"] = append(l.ids["core"], fmt.Sprint(id+2+k))
		}
		id += 2 + perNode
	}
	return l, nil
}

// subsystem writes one subsystem graph whose vertices carry fields and
// attach to the given dominant ids.
func subsystem(name string, vs []matcher.Vertex) (string, error) {
	var b bytes.Buffer
	s := matcher.Subsystem{Name: name, Vertices: vs}
	err := matcher.WriteSubsystem(&b, &s)
	return b.String(), err
}

type gen struct {
	r     *rand.Rand
	cases []caseDoc
	next  int
}

func (g *gen) add(cat, jobspec string, clusters ...clusterDoc) {
	g.next++
	g.cases = append(g.cases, caseDoc{ID: fmt.Sprintf("%s-%d", cat, g.next), Category: cat, Jobspec: jobspec, Clusters: clusters})
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// world builds three small clusters with an io subsystem (shm or nvme
// vertices attached to nodes, sockets or cores) and a spack subsystem (one
// version, attached to nodes).
func (g *gen) world(versions []string) ([]clusterDoc, error) {
	var out []clusterDoc
	for i := range 3 {
		l, err := newLayout(fmt.Sprintf("c%d", i), 1+g.r.IntN(3), 1+g.r.IntN(3))
		if err != nil {
			return nil, err
		}
		var io []matcher.Vertex
		for k := range 1 + g.r.IntN(2) {
			at := pick(g.r, "node", "node", "socket", "core")
			ids := l.ids[at]
			io = append(io, matcher.Vertex{ID: fmt.Sprintf("io%d", k+1), Type: pick(g.r, "shm", "nvme"),
				Fields: map[string]string{"type": pick(g.r, "shm", "nvme")}, Parents: []string{pick(g.r, ids...)}})
		}
		ios, err := subsystem("io", io)
		if err != nil {
			return nil, err
		}
		sp, err := subsystem("spack", []matcher.Vertex{{ID: "spack1", Type: "package",
			Fields: map[string]string{"version": pick(g.r, versions...)}, Parents: l.ids["node"]}})
		if err != nil {
			return nil, err
		}
		out = append(out, clusterDoc{Name: l.name, Nodes: l.nodes, Subsystems: map[string]string{"io": ios, "spack": sp}})
	}
	return out, nil
}

// reshape returns the clusters with their dominant graphs rewritten.
func reshape(w []clusterDoc, f func(string) string) []clusterDoc {
	out := make([]clusterDoc, len(w))
	for i, c := range w {
		c.Nodes = f(c.Nodes)
		out[i] = c
	}
	return out
}

var versionField = regexp.MustCompile(`"version": "[^"]*"`)

var versions = []string{"0.5.1", "0.6.0", "1.2.0", "1.2.5", "1.10.0", "2.0.0-rc.1", "1.2.3.4"}

// generate makes n variants of every category, then adds rainbow's
// example jobspecs and the published samples.
func generate(seed uint64, n int) ([]caseDoc, error) {
	g := &gen{r: rand.New(rand.NewPCG(seed, 29))}
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	for range n {
		w, err := g.world(versions)
		if err != nil {
			return nil, err
		}
		rep, cnt := 1+g.r.IntN(3), 1+g.r.IntN(5)
		typ := pick(g.r, "shm", "nvme")
		lo, hi := pick(g.r, versions...), pick(g.r, versions...)
		g.add("counts", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: %d\n    with:\n    - type: core\n      count: %d\n", rep, cnt), w...)
		g.add("counts-node-count", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    count: %d\n    with:\n    - type: slot\n      replicas: 1\n      with:\n      - type: core\n        count: %d\n", rep, cnt), w...)
		g.add("requires-match-under-node", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: io, field: type, match: %s}\n    with:\n    - {type: core, count: 1}\n", typ), w...)
		g.add("requires-match-under-core", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    with:\n    - type: core\n      count: 1\n      requires:\n      - {name: io, field: type, match: %s}\n", typ), w...)
		g.add("requires-range", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: spack, field: version, min: %s, max: %s}\n    with:\n    - {type: core, count: 1}\n", q(lo), q(hi)), w...)
		g.add("requires-range-constraint", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: spack, field: version, max: %s}\n    with:\n    - {type: core, count: 1}\n", q(pick(g.r, "1.2.x", "1.2", "1", "1.x"))), w...)
		g.add("requires-two-for-one-subsystem", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: spack, field: version, min: %s}\n    - {name: spack, field: version, max: %s}\n    with:\n    - {type: core, count: 1}\n", q(lo), q(hi)), w...)
		g.add("requires-top-level", fmt.Sprintf("version: 1\nrequires:\n- {name: io, field: type, match: %s}\nresources:\n  job:\n    type: node\n    replicas: 1\n    with:\n    - {type: core, count: 1}\n", typ), w...)
		g.add("requires-above-slot", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: rack\n    count: 1\n    requires:\n    - {name: io, field: type, match: %s}\n    with:\n    - type: node\n      replicas: 1\n      with:\n      - {type: core, count: 1}\n", typ), w...)
		g.add("resource-type-gpu", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: %d\n    with:\n    - {type: gpu, count: 1}\n", rep), w...)
		g.add("yaml-scalar", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: spack, field: version, min: %s}\n    with:\n    - {type: core, count: 1}\n", pick(g.r, "1.10", "010", "1.2", "0.6")), w...)
		g.add("requires-match-empty-or-with-range", pick(g.r,
			fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: io, field: type, match: \"\"}\n    with:\n    - {type: core, count: %d}\n", cnt),
			fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: spack, field: version, match: %s, max: %s}\n    with:\n    - {type: core, count: 1}\n", q(lo), q(hi))), w...)
		g.add("slot-type-with-count", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    count: %d\n    with:\n    - type: slot\n      count: 1\n      with:\n      - {type: core, count: %d}\n", rep, cnt), w...)
		g.add("group-without-slot", fmt.Sprintf("version: 1\nresources:\n  a:\n    type: node\n    replicas: %d\n    with:\n    - {type: core, count: 1}\n  b:\n    type: node\n    count: 1\n    with:\n    - {type: %s, count: %d}\n", rep, pick(g.r, "core", "gpu"), cnt), w...)
		g.add("two-unlabelled-slots", fmt.Sprintf("version: 1\nresources:\n  a:\n    type: node\n    count: 1\n    with:\n    - type: slot\n      replicas: 1\n      with:\n      - {type: core, count: %d}\n  b:\n    type: node\n    count: 1\n    with:\n    - type: slot\n      replicas: %d\n      with:\n      - {type: core, count: %d}\n", cnt, rep, pick(g.r, 1, cnt)), w...)
		sized := reshape(w, func(nodes string) string {
			return strings.ReplaceAll(nodes, "\"size\": 1,\n          \"type\": \"core\"", fmt.Sprintf("\"size\": %d,\n          \"type\": \"core\"", 1+g.r.IntN(3)))
		})
		g.add("vertex-size", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: %d\n    with:\n    - {type: core, count: %d}\n", rep, cnt), sized...)
		rooted := reshape(w, func(nodes string) string {
			if g.r.IntN(2) == 0 {
				return strings.ReplaceAll(nodes, `"0"`, `"r"`)
			}
			return nodes
		})
		g.add("graph-root", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    with:\n    - {type: core, count: %d}\n", cnt), rooted...)
		orphans := reshape(w, func(nodes string) string {
			switch g.r.IntN(3) {
			case 0:
				return strings.Replace(nodes, `"nodes": {`, `"nodes": {"999": {"metadata": {"type": "node", "basename": "node"}}, `, 1)
			case 1:
				return strings.Replace(nodes, `"edges": [`, `"edges": [{"source": "998", "target": "0", "relation": "in"}, `, 1)
			}
			return nodes
		})
		g.add("graph-orphan-or-dangling-in-edge", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: %d\n    with:\n    - {type: core, count: 1}\n", rep), orphans...)
		other := pick(g.r, "shm", "nvme")
		g.add("requires-incomplete", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n%s    with:\n    - {type: core, count: 1}\n", pick(g.r,
			fmt.Sprintf("    - {name: io, match: %s}\n", typ),
			fmt.Sprintf("    - {field: type, match: %s}\n", typ),
			"    - {name: io, field: type}\n",
			fmt.Sprintf("    - {name: io, field: type, match: %s}\n    - {name: io, match: %s}\n", typ, other),
			fmt.Sprintf("    - {name: io, field: type}\n    - {name: io, field: type, match: %s}\n", typ))), w...)
		// Edges other than "contains" between vertices the graph has, and
		// orphan cores, which rainbow's top-level count check counts.
		edged := reshape(w, func(nodes string) string {
			switch g.r.IntN(3) {
			case 0:
				return strings.Replace(nodes, `"edges": [`, `"edges": [{"source": "2", "target": "0", "relation": "uses"}, {"source": "1", "target": "2", "relation": "connects"}, `, 1)
			case 1:
				return strings.Replace(nodes, `"nodes": {`, `"nodes": {"997": {"metadata": {"type": "core", "basename": "core"}}, "996": {"metadata": {"type": "core", "basename": "core", "size": 2}}, `, 1)
			}
			return nodes
		})
		g.add("graph-orphan-core-or-other-edge", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    with:\n    - {type: core, count: %d}\n", cnt), edged...)
		g.add("slot-labels-schedule", fmt.Sprintf("version: 1\nresources:\n  a:\n    type: node\n    replicas: %d\n%s    with:\n    - {type: core, count: 1}\n  b:\n    type: node\n    replicas: 1\n%s    with:\n    - {type: core, count: %d}\n",
			rep, pick(g.r, "", "    label: x\n", "    label: x\n    schedule: true\n"), pick(g.r, "", "    label: x\n", "    label: y\n", "    schedule: true\n"), cnt), w...)
		// The same in the io subsystem: an orphan vertex, an "in" edge from
		// a vertex in neither graph, or an edge of another relation.
		subEdged := make([]clusterDoc, len(w))
		for i, c := range w {
			c.Subsystems = maps.Clone(c.Subsystems)
			switch g.r.IntN(3) {
			case 0:
				c.Subsystems["io"] = strings.Replace(c.Subsystems["io"], `"nodes": {`, `"nodes": {"io9": {"metadata": {"type": "shm", "basename": "io"}}, `, 1)
			case 1:
				c.Subsystems["io"] = strings.Replace(c.Subsystems["io"], `"edges": [`, `"edges": [{"source": "io8", "target": "2", "relation": "in"}, `, 1)
			default:
				c.Subsystems["io"] = strings.Replace(c.Subsystems["io"], `"edges": [`, `"edges": [{"source": "io0", "target": "io1", "relation": "uses"}, `, 1)
			}
			subEdged[i] = c
		}
		g.add("subsystem-orphan-or-other-edge", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: io, field: type, match: %s}\n    with:\n    - {type: core, count: 1}\n", typ), subEdged...)
		// A number where rainbow wants a string makes its match panic.
		numeric := make([]clusterDoc, len(w))
		for i, c := range w {
			c.Subsystems = maps.Clone(c.Subsystems)
			c.Subsystems["spack"] = versionField.ReplaceAllString(c.Subsystems["spack"], `"version": `+pick(g.r, "1", "2", "0.5"))
			numeric[i] = c
		}
		g.add("metadata-numeric", fmt.Sprintf("version: 1\nresources:\n  job:\n    type: node\n    replicas: 1\n    requires:\n    - {name: spack, field: version, min: %q}\n    with:\n    - {type: core, count: 1}\n", pick(g.r, "0.5", "1")), numeric...)
	}
	if err := g.rainbowExamples(); err != nil {
		return nil, err
	}
	if err := g.published(200); err != nil {
		return nil, err
	}
	return g.cases, nil
}

// rainbowExamples asks rainbow's three example jobspecs (in
// matcher/testdata/rainbow-examples, with their subsystem graphs) of the
// examples' cluster (3 nodes of 12 cores, subsystems attached to nodes 2,
// 16 and 30 as published) and of the same cluster with the attachments
// moved to the sockets.
func (g *gen) rainbowExamples() error {
	dir := filepath.Join("matcher", "testdata", "rainbow-examples")
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		return string(b), err
	}
	l, err := newLayout("cluster-red", 3, 12)
	if err != nil {
		return err
	}
	io, err := read("cluster-io-subsystem.json")
	if err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}
	sp, err := read("spack-subsystem.json")
	if err != nil {
		return err
	}
	onNodes := clusterDoc{Name: "red-nodes", Nodes: l.nodes, Subsystems: map[string]string{"io": io, "spack": sp}}
	moved := strings.NewReplacer(`"source": "2"`, `"source": "3"`, `"source": "16"`, `"source": "17"`, `"source": "30"`, `"source": "31"`)
	onSockets := clusterDoc{Name: "red-sockets", Nodes: l.nodes, Subsystems: map[string]string{"io": moved.Replace(io), "spack": moved.Replace(sp)}}
	for _, f := range []string{"jobspec-io.yaml", "jobspec-valid-range.yaml", "jobspec-invalid-range.yaml"} {
		js, err := read(f)
		if err != nil {
			return err
		}
		g.add("rainbow-examples", js, onNodes, onSockets)
	}
	return nil
}

// published asks jobs of the published experiments of their jgf-sample
// clusters: reliabuild ranges and spack-build arch/compiler/memory
// requirements, written by WriteJobspec nested under the node.
func (g *gen) published(perExperiment int) error {
	root, err := pubdata.Dir("rainbow")
	if err != nil {
		fmt.Fprintln(os.Stderr, "rainbowdiff: no published data:", err)
		return nil
	}
	for _, e := range []string{"reliabuild", "spack-build"} {
		sample := filepath.Join(root, e, "jgf-sample")
		dirs, _ := filepath.Glob(filepath.Join(sample, "*"))
		if _, err := os.Stat(filepath.Join(sample, "nodes.json")); err == nil {
			dirs = []string{sample} // one cluster, its files in place
		}
		var clusters []clusterDoc
		reqs := map[string][]matcher.Requirement{} // subsystem -> values seen
		for _, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, "nodes.json"))
			if err != nil {
				continue
			}
			cd := clusterDoc{Name: e + "-" + filepath.Base(d), Nodes: string(b), Subsystems: map[string]string{}}
			subs, _ := filepath.Glob(filepath.Join(d, "*-subsystem.json"))
			for _, s := range subs {
				sb, err := os.ReadFile(s)
				if err != nil {
					return err
				}
				name := strings.TrimSuffix(filepath.Base(s), "-subsystem.json")
				cd.Subsystems[name] = string(sb)
				sub, err := matcher.ReadSubsystem(bytes.NewReader(sb), s, name)
				if err != nil {
					return err
				}
				for _, v := range sub.Vertices {
					for f, val := range v.Fields {
						if f == "version" || f == "value" {
							reqs[name] = append(reqs[name], matcher.Requirement{Subsystem: name, Field: f, Op: matcher.Equal, Value: val, Under: "node"})
						}
					}
				}
			}
			clusters = append(clusters, cd)
		}
		if len(clusters) == 0 {
			continue
		}
		names := make([]string, 0, len(reqs))
		for k := range reqs {
			names = append(names, k)
		}
		sort.Strings(names)
		for range perExperiment {
			var j matcher.Job
			j.Nodes = 1 + g.r.IntN(2)
			for _, n := range names {
				if g.r.IntN(2) == 0 {
					continue
				}
				q := pick(g.r, reqs[n]...)
				if q.Field == "version" && g.r.IntN(2) == 0 {
					q = matcher.Requirement{Subsystem: n, Field: "version", Op: matcher.InRange, Min: pick(g.r, "0", "1.0", "2.5"), Max: pick(g.r, "3", "10.2", ""), Under: "node"}
				}
				j.Requires = append(j.Requires, q)
			}
			var b bytes.Buffer
			if err := matcher.WriteJobspec(&b, &j); err != nil {
				return err
			}
			g.add("published-"+e, b.String(), clusters...)
		}
	}
	return nil
}
