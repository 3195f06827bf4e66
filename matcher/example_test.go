package matcher_test

import (
	"fmt"
	"strings"

	"github.com/crosscluster/crosscluster/matcher"
)

func ExampleParseVersion() {
	for _, s := range []string{"1.2", "v2.0.1", "1.2.3.4", "1.0rc1", "8912645823", "x.y"} {
		v, err := matcher.ParseVersion(s)
		if err != nil {
			fmt.Println(s, "->", err)
			continue
		}
		fmt.Println(s, "->", v)
	}
	// Output:
	// 1.2 -> 1.2.0
	// v2.0.1 -> 2.0.1
	// 1.2.3.4 -> 1.2.3.4
	// 1.0rc1 -> 1.0.0-rc1
	// 8912645823 -> 8912645823.0.0
	// x.y -> matcher: invalid version: "x.y": part 1 is not a number
}

func ExampleRules_Match() {
	c := matcher.Cluster{Name: "keebler", Nodes: 4, State: map[string]float64{"nodes_free": 4},
		Subsystems: map[string]*matcher.Subsystem{
			"spack": {Name: "spack", Vertices: []matcher.Vertex{{Fields: map[string]string{"version": "0.5.1"}}}},
			"io":    {Name: "io", Vertices: []matcher.Vertex{{Fields: map[string]string{"type": "shm"}}}},
		}}
	j := matcher.Job{Name: "ior", Nodes: 2, Requires: []matcher.Requirement{
		{Subsystem: "spack", Field: "version", Op: matcher.InRange, Min: "0.5.1", Max: "0.5.5"},
		{Subsystem: "io", Field: "type", Op: matcher.Equal, Value: "nfs"},
	}}
	for _, exclusive := range []bool{false, true} {
		res := matcher.Rules{Exclusive: exclusive}.Match(&j, &c)
		fmt.Println("exclusive:", exclusive, res.Verdict)
		for _, r := range res.Reasons {
			fmt.Printf("  requirement %d: %s\n", r.Requirement, r)
		}
	}
	// Output:
	// exclusive: false never
	//   requirement 1: not equal: type="shm" does not satisfy io.type == nfs
	// exclusive: true never
	//   requirement 0: out of range: version="0.5.1" does not satisfy spack.version in [0.5.1, 0.5.5]
	//   requirement 1: not equal: type="shm" does not satisfy io.type == nfs
}

// A requirement nested under a resource of the jobspec is met only through
// vertices of that type: here the shm vertex hangs off a socket.
func ExampleRules_Match_nested() {
	j, err := matcher.ReadJobspec(strings.NewReader(`
resources:
  ior:
    type: node
    replicas: 1
    requires:
    - {name: io, field: type, match: shm}
`), "jobspec-io.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	c := matcher.Cluster{Name: "red", VertexTypes: map[string]string{"0": "cluster", "1": "node", "2": "socket"},
		Subsystems: map[string]*matcher.Subsystem{"io": {Name: "io", Vertices: []matcher.Vertex{
			{ID: "io1", Fields: map[string]string{"type": "shm"}, Parents: []string{"2"}},
		}}}}
	fmt.Println(j.Requires[0])
	res := matcher.Rules{}.Match(&j, &c)
	fmt.Println(res.Verdict, res.Reasons[0])
	c.Subsystems["io"].Vertices[0].Parents = []string{"1"}
	fmt.Println(matcher.Rules{}.Match(&j, &c).Verdict)
	// Output:
	// io.type == shm (under node)
	// never not attached: io vertex "io1" meets io.type == shm (under node), but is attached to socket "2", not to a node
	// match
}

func ExamplePool_Submit() {
	clusters := []matcher.Cluster{
		{Name: "a", State: map[string]float64{"nodes_free": 0}},
		{Name: "b", State: map[string]float64{"nodes_free": 4}},
		{Name: "c", State: map[string]float64{"nodes_free": 2}},
	}
	pool, err := matcher.NewPool(clusters, matcher.Rules{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each 2-node job holds its nodes until released: b fills, then c.
	for _, name := range []string{"j1", "j2", "j3", "j4"} {
		a, err := pool.Submit(&matcher.Job{Name: name, Nodes: 2}, matcher.First{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(name, "->", a.Clusters)
	}
	if err := pool.Release("j1"); err != nil {
		fmt.Println(err)
		return
	}
	a, _ := pool.Submit(&matcher.Job{Name: "j5", Nodes: 2}, matcher.First{})
	fmt.Println("j5 ->", a.Clusters)
	// Output:
	// j1 -> [b]
	// j2 -> [b]
	// j3 -> [c]
	// j4 -> []
	// j5 -> [b]
}
