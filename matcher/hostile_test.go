package matcher

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// aliasBomb returns a jobspec of about 1 KB whose "with" lists fan out
// 10 ways over 10 levels through YAML aliases: 10¹⁰ resource nodes when
// expanded.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("version: 1\na0: &a0 {type: core, count: 1}\n")
	for i := 1; i <= 10; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "a%d: &a%d {type: slot, count: 1, with: [%s]}\n", i, i, refs)
	}
	b.WriteString("resources:\n  - *a10\n")
	return b.String()
}

// TestAliasBomb: the 1 KB bomb of issue 16 is refused with ErrTooComplex,
// naming the file and the path, in well under 10 ms of work (the limit is
// measured as the best of three, so a loaded machine does not fail it).
func TestAliasBomb(t *testing.T) {
	bomb := aliasBomb()
	if len(bomb) > 1100 {
		t.Fatalf("bomb is %d bytes", len(bomb))
	}
	best := time.Hour
	for range 5 {
		start := time.Now()
		_, err := ReadJobspec(strings.NewReader(bomb), "bomb.yaml")
		best = min(best, time.Since(start))
		var pe *ParseError
		if !errors.Is(err, ErrTooComplex) || !errors.As(err, &pe) || pe.File != "bomb.yaml" || !strings.HasPrefix(pe.Path, "resources[0].with[0]") {
			t.Fatalf("err = %v, want a ParseError wrapping ErrTooComplex at resources[0].with[0]...", err)
		}
	}
	// The work is bounded by the budget whatever the machine does; the
	// wall-time bound of the issue (10 ms) is checked where timing means
	// something: not under the race detector, which slows this code about
	// tenfold (a soak run under load measured 12 ms there).
	t.Logf("best of 5: %v", best)
	if !raceEnabled && best > 10*time.Millisecond {
		t.Errorf("refusing the bomb took %v, want < 10 ms", best)
	}
	// The same shape with 3-way fan-out over 3 levels (27 cores) is fine.
	small := strings.Replace(strings.Split(bomb, "a4:")[0], "version: 1\n", "", 1)
	small = strings.ReplaceAll(small, "*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0", "*a0, *a0, *a0")
	small = strings.ReplaceAll(small, "*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1", "*a1, *a1, *a1")
	small = strings.ReplaceAll(small, "*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2", "*a2, *a2, *a2")
	small += "resources:\n  - *a3\n"
	j, err := ReadJobspec(strings.NewReader(small), "small.yaml")
	if err != nil || j.Cores != 27 {
		t.Errorf("3×3×3 aliases: cores %d, err %v; want 27", j.Cores, err)
	}
}

func TestDocumentTooLarge(t *testing.T) {
	big := bytes.Repeat([]byte("# padding\n"), MaxDocumentBytes/10+1)
	for name, read := range map[string]func() error{
		"jobspec": func() error { _, err := ReadJobspec(bytes.NewReader(big), "big.yaml"); return err },
		"builds":  func() error { _, err := ReadBuildJobs(bytes.NewReader(big), "big.yaml"); return err },
		"cluster": func() error { _, err := ReadCluster(bytes.NewReader(big), "big.json"); return err },
	} {
		err := read()
		var pe *ParseError
		if !errors.Is(err, ErrTooLarge) || !errors.As(err, &pe) || !strings.HasPrefix(pe.File, "big.") {
			t.Errorf("%s: err = %v, want a ParseError wrapping ErrTooLarge", name, err)
		}
	}
}

// TestErrorPrefixOnce: a ParseError says "matcher:" once (issue 16).
func TestErrorPrefixOnce(t *testing.T) {
	_, err := ReadJobspec(strings.NewReader("- 1\n"), "FILE")
	if err == nil {
		t.Fatal("a list accepted as a jobspec")
	}
	if msg := err.Error(); strings.Count(msg, "matcher:") != 1 || !errors.Is(err, ErrSchema) {
		t.Errorf("error %q: want one matcher: prefix, wrapping ErrSchema", msg)
	}
}

// TestJGFValidation: a dangling edge or an orphan vertex is refused with
// its path (issue 16: both were accepted; rainbow rejects them).
func TestJGFValidation(t *testing.T) {
	var cl, sub bytes.Buffer
	if err := WriteCluster(&cl, &Cluster{Name: "c", Nodes: 2, Cores: 4}); err != nil {
		t.Fatal(err)
	}
	if err := WriteSubsystem(&sub, &Subsystem{Name: "io", Vertices: []Vertex{{Type: "shm", Fields: map[string]string{"type": "shm"}, Parents: []string{"2"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCluster(bytes.NewReader(cl.Bytes()), "nodes.json"); err != nil {
		t.Fatalf("written cluster: %v", err)
	}
	if _, err := ReadSubsystem(bytes.NewReader(sub.Bytes()), "io.json", "io"); err != nil {
		t.Fatalf("written subsystem: %v", err)
	}
	for _, tc := range []struct {
		name, doc, wantPath string
		read                func([]byte) error
	}{
		{"cluster dangling target", strings.Replace(cl.String(), `"target": "3"`, `"target": "99"`, 1), "graph.edges[", readCl},
		{"cluster orphan", strings.Replace(cl.String(), `"nodes": {`, `"nodes": {"77": {"label": "77", "metadata": {"type": "node"}},`, 1), "graph.nodes.77", readCl},
		{"subsystem orphan", strings.Replace(sub.String(), `"nodes": {`, `"nodes": {"io9": {"label": "io9", "metadata": {"type": "shm"}},`, 1), "graph.nodes.io", func(b []byte) error {
			_, err := ReadSubsystem(bytes.NewReader(b), "io.json", "io")
			return err
		}},
	} {
		if tc.doc == cl.String() || tc.doc == sub.String() {
			t.Fatalf("%s: the test's edit did not apply", tc.name)
		}
		err := tc.read([]byte(tc.doc))
		var pe *ParseError
		if !errors.Is(err, ErrSchema) || !errors.As(err, &pe) || !strings.HasPrefix(pe.Path, tc.wantPath) {
			t.Errorf("%s: err %v, want ErrSchema at %s...", tc.name, err, tc.wantPath)
		}
	}
}

// TestNestedRequiresAndTypos: requires is honoured at every level of a
// resource tree (issue 16: nested ones were dropped without a word), an
// aliased requirement counts once, and an unknown key is refused with the
// nearest known one.
func TestNestedRequiresAndTypos(t *testing.T) {
	doc := `resources:
- type: node
  count: 2
  requires:
  - {name: io, field: type, match: shm}
  with:
  - &core
    type: core
    count: 4
    requires:
    - {name: arch, field: value, match: x86_64}
  - *core
`
	j, err := ReadJobspec(strings.NewReader(doc), "nested.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range j.Requires {
		got = append(got, q.String())
	}
	if j.Nodes != 2 || j.Cores != 16 || len(got) != 2 || !strings.HasPrefix(got[0], "io.type") || !strings.HasPrefix(got[1], "arch.value") {
		t.Errorf("nodes %d, cores %d, requires %q; want 2, 16, [io.type... arch.value...]", j.Nodes, j.Cores, got)
	}
	typo := strings.Replace(doc, "  requires:\n  - {name: io", "  reqiures:\n  - {name: io", 1)
	_, err = ReadJobspec(strings.NewReader(typo), "typo.yaml")
	var pe *ParseError
	if !errors.Is(err, ErrSchema) || !errors.As(err, &pe) || pe.Path != "resources[0].reqiures" || pe.Line != 4 || !strings.Contains(err.Error(), `did you mean "requires"`) {
		t.Errorf("typo: %v; want ErrSchema at resources[0].reqiures line 4 suggesting requires", err)
	}
}
