package experiment

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/matcher"
	"github.com/google/go-cmp/cmp"
)

func TestReadVersionJobsAnchors(t *testing.T) {
	in := `- name: j1
  package: zlib
  package_version: 1.2.11
  resources:
    m4: &id001
      max: 1.4.20
      min: 1.4.19
    cmake:
      max: 3
      min: 0.0.0
- name: j2
  package: xz
  resources:
    m4: *id001
- name: j3
  package: papi
  resources: {}
`
	got, err := readVersionJobs(strings.NewReader(in), "inline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []VersionJob{
		{Name: "j1", Package: "zlib", File: "inline.yaml", Ranges: []matcher.Requirement{{Subsystem: "cmake", Field: "version", Op: matcher.InRange, Min: "0.0.0", Max: "3"}, {Subsystem: "m4", Field: "version", Op: matcher.InRange, Min: "1.4.19", Max: "1.4.20"}}},
		{Name: "j2", Package: "xz", File: "inline.yaml", Ranges: []matcher.Requirement{{Subsystem: "m4", Field: "version", Op: matcher.InRange, Min: "1.4.19", Max: "1.4.20"}}},
		{Name: "j3", Package: "papi", File: "inline.yaml"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	u, rep := uniqueVersionJobs(append(got, got[0]))
	if len(u) != 2 || rep != 1 {
		t.Errorf("UniqueVersionJobs: %d unique, %d repeated; want 2 and 1 (j3 has no resources)", len(u), rep)
	}
}

func TestJGFSample(t *testing.T) {
	dir := needData(t, "spack-build/jgf-sample")
	f, err := os.Open(filepath.Join(dir, "nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := matcher.ReadCluster(f, "nodes.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "cluster-antiquewhite" || c.Nodes != 4 || c.Cores != 8 {
		t.Errorf("cluster = %s with %d nodes, %d cores; want cluster-antiquewhite, 4, 8", c.Name, c.Nodes, c.Cores)
	}
	feats, err := loadFile(filepath.Join(dataDir, "spack-build/cluster-features.json"), readBuildClusters)
	if err != nil {
		t.Fatal(err)
	}
	var aw BuildCluster
	for _, x := range feats {
		if x.Name == "antiquewhite" {
			aw = x
		}
	}
	c.Subsystems = map[string]*matcher.Subsystem{}
	for _, name := range []string{"arch", "compiler", "memory"} {
		s, err := loadFile(filepath.Join(dir, name+"-subsystem.json"), func(r io.Reader, file string) (matcher.Subsystem, error) {
			return matcher.ReadSubsystem(r, file, name)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range s.Vertices {
			if len(v.Parents) == 0 {
				t.Errorf("%s vertex %s is attached to nothing", name, v.ID)
			}
		}
		c.Subsystems[name] = &s
	}
	if got := c.Subsystems["compiler"].Vertices[0].Parents; !cmp.Equal(got, []string{"2", "5", "10", "14"}) {
		t.Errorf("compiler parents = %v, want [2 5 10 14] (contains edges only)", got)
	}
	// The registered graph and the features file describe the same cluster:
	// every requirement the driver would send for these features matches.
	job := matcher.BuildJob{Arch: aw.Arch, Compiler: aw.Compiler, CompilerVersion: aw.CompilerVersion, MemMax: aw.Memory - 1}
	j := matcher.Job{Nodes: 2, Requires: requirements(&job, "arch", "compiler-version", "memory")}
	if res := (matcher.Rules{}).Match(&j, &c); res.Verdict != matcher.Matched {
		t.Errorf("features of antiquewhite do not match its JGF: %v", res.Reasons)
	}
	j.Nodes = 5
	if res := (matcher.Rules{}).Match(&j, &c); res.Verdict != matcher.Never || res.Reasons[0].Kind != matcher.TooFewNodes {
		t.Errorf("5 nodes on a 4-node cluster: %v", res)
	}
}

func TestReliabuildJGFSample(t *testing.T) {
	dir := needData(t, "reliabuild/jgf-sample")
	feats, err := loadFile(filepath.Join(dataDir, "reliabuild/cluster-features.json"), readVersionClusters)
	if err != nil {
		t.Fatal(err)
	}
	var ab VersionCluster
	for _, c := range feats {
		if c.Name == "aliceblue" {
			ab = c
		}
	}
	for _, name := range []string{"abyss", "adios", "adios2", "adlbx", "amrex"} {
		s, err := loadFile(filepath.Join(dir, name+"-subsystem.json"), func(r io.Reader, file string) (matcher.Subsystem, error) {
			return matcher.ReadSubsystem(r, file, name)
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Vertices) != 1 {
			t.Fatalf("%s: %d vertices, want 1 package vertex", name, len(s.Vertices))
		}
		if got, want := s.Vertices[0].Fields["version"], ab.Versions[name]; got != want {
			t.Errorf("%s: JGF version %q, features %q", name, got, want)
		}
	}
}

func TestFeaturesRoundTrip(t *testing.T) {
	vc := []VersionCluster{{Name: "blue", Versions: map[string]string{"m4": "1.4.19"}}, {Name: "red", Versions: map[string]string{"m4": "1.4.18", "zlib": "1.2.11"}}}
	var buf bytes.Buffer
	if err := WriteVersionClusters(&buf, vc); err != nil {
		t.Fatal(err)
	}
	gv, err := readVersionClusters(&buf, "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(vc, gv); diff != "" {
		t.Errorf("version clusters (-want +got):\n%s", diff)
	}
	bc := []BuildCluster{{Name: "coral", Memory: 46258933800, CostPerNodeHour: 4.2, Arch: "linux-ubuntu20.04-x86_64_v3", Compiler: "gcc", CompilerVersion: "11.1.0"}}
	buf.Reset()
	if err := WriteBuildClusters(&buf, bc); err != nil {
		t.Fatal(err)
	}
	gb, err := readBuildClusters(&buf, "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(bc, gb); diff != "" {
		t.Errorf("build clusters (-want +got):\n%s", diff)
	}
}

func readVJ(b []byte) error { _, err := readVersionJobs(bytes.NewReader(b), "in.txt"); return err }

func readVC(b []byte) error { _, err := readVersionClusters(bytes.NewReader(b), "in.txt"); return err }

func readBC(b []byte) error { _, err := readBuildClusters(bytes.NewReader(b), "in.txt"); return err }

func TestLoaderErrors(t *testing.T) {
	tests := []struct {
		name     string
		read     func([]byte) error
		in       string
		sentinel error
		path     string
		line     int
	}{
		{"yaml syntax", readVJ, "- name: [", matcher.ErrSyntax, "", 0},
		{"not a list", readVJ, "name: x", matcher.ErrSchema, "", 1},
		{"missing package", readVJ, "- name: a\n  resources: {}\n", matcher.ErrSchema, "[0]", 1},
		{"range not a map", readVJ, "- name: a\n  package: b\n  resources:\n    m4: 3\n", matcher.ErrSchema, "[0].resources.m4", 4},
		{"missing min", readVJ, "- name: a\n  package: b\n  resources:\n    m4:\n      max: 2\n", matcher.ErrSchema, "[0].resources.m4", 5},
		{"features json syntax", readVC, "{\"red\": {\"m4\": \"1.4\",}}", matcher.ErrSyntax, "", 1},
		{"features value type", readVC, `{"red": {"m4": ["1.4"]}}`, matcher.ErrSchema, "red.m4", 0},
		{"build features missing cost", readBC, `{"red": {"memory": 1, "arch": "a", "compiler": "gcc", "compiler_version": "1"}}`, matcher.ErrSchema, "red.cost_per_node_hour", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.read([]byte(tt.in))
			var pe *matcher.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tt.sentinel)
			}
			if pe.File != "in.txt" || !strings.Contains(err.Error(), "in.txt") {
				t.Errorf("error %q does not name the file", err)
			}
			if pe.Path != tt.path {
				t.Errorf("path = %q, want %q (%v)", pe.Path, tt.path, err)
			}
			if pe.Line != tt.line {
				t.Errorf("line = %d, want %d (%v)", pe.Line, tt.line, err)
			}
		})
	}
}
