package walk

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// sameTree reports the first difference between the fast parser's tree and
// yaml.v3's: kind, value, line, column, style and children. Scalar tags are
// not compared (the walkers read values, not tags) except that yaml.v3 must
// not see a null where the fast path produced a value.
func sameTree(fast, ref *yaml.Node, path string) error {
	switch {
	case fast == nil || ref == nil:
		if fast != ref {
			return fmt.Errorf("%s: fast %v, yaml.v3 %v", path, fast, ref)
		}
		return nil
	case fast.Kind != ref.Kind:
		return fmt.Errorf("%s: kind %v, yaml.v3 %v", path, fast.Kind, ref.Kind)
	case fast.Value != ref.Value:
		return fmt.Errorf("%s: value %q, yaml.v3 %q", path, fast.Value, ref.Value)
	case fast.Line != ref.Line || fast.Column != ref.Column:
		return fmt.Errorf("%s: at %d:%d, yaml.v3 %d:%d", path, fast.Line, fast.Column, ref.Line, ref.Column)
	case fast.Style != ref.Style:
		return fmt.Errorf("%s: style %v, yaml.v3 %v", path, fast.Style, ref.Style)
	case ref.Tag == "!!null" || ref.Anchor != "" || ref.Alias != nil:
		return fmt.Errorf("%s: yaml.v3 has tag %q anchor %q alias %v", path, ref.Tag, ref.Anchor, ref.Alias)
	case fast.Kind != yaml.ScalarNode && fast.Tag != ref.Tag:
		return fmt.Errorf("%s: tag %q, yaml.v3 %q", path, fast.Tag, ref.Tag)
	case len(fast.Content) != len(ref.Content):
		return fmt.Errorf("%s: %d children, yaml.v3 %d", path, len(fast.Content), len(ref.Content))
	}
	for i := range fast.Content {
		if err := sameTree(fast.Content[i], ref.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// checkFast fails if fastYAML accepts b but yaml.v3 rejects it or reads a
// different tree. It reports whether the fast path accepted b.
func checkFast(t *testing.T, b []byte) bool {
	t.Helper()
	fast, ok := fastYAML(b)
	if !ok {
		return false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("fast path accepted what yaml.v3 rejects (%v):\n%s", err, b)
	}
	if err := sameTree(fast, Deref(&doc), ""); err != nil {
		t.Fatalf("fast path differs from yaml.v3: %v\ninput:\n%s", err, b)
	}
	return true
}

func TestFastYAML(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool // whether the fast path should accept it
	}{
		{"spack jobspec", "- attributes:\n    duration: 3336.694354\n  name: 366405\n  package: llvm\n  resources:\n    arch:\n      arch: linux-ubuntu22.04-x86_64_v3\n    memory:\n      mem_max: 14844923904.0\n", true},
		{"indentless sequence", "a:\n- x\n- y: 1\n  z: 2\nb: 3\n", true},
		{"nested sequence", "a:\n  - 1\n  - -2\n  - .5\n", true},
		{"no final newline", "a: b", true},
		{"indented root", "  a: b\n  c: d\n", true},
		{"anchor", "a: &x 1\nb: *x\n", false},
		{"comment", "a: 1 # one\n", false},
		{"quoted", "a: \"1\"\n", false},
		{"flow", "a: {b: 1}\n", false},
		{"empty value", "a:\nb: 1\n", false},
		{"null value", "a: null\n", false},
		{"blank line", "a: 1\n\nb: 2\n", false},
		{"continuation", "a: 1\n  2\n", false},
		{"seq continuation", "- a\n  b\n", false},
		{"bad indent", "a:\n  b: 1\n c: 2\n", false},
		{"duplicate key", "a: 1\na: 2\n", false},
		{"value with colon", "a: b:c\n", false},
		{"space in value", "a: b c\n", false},
		{"seq then map", "- a\nb: 1\n", false},
		{"map then seq", "a: 1\n- b\n", false},
		{"nested inline seq", "- - a\n", false},
		{"bare dash", "-\n  a: 1\n", false},
		{"scalar root", "abc\n", false},
		{"tab", "a:\t1\n", false},
		{"crlf", "a: 1\r\n", false},
		{"document marker", "---\na: 1\n", false},
		{"empty", "", false},
		{"long key", strings.Repeat("k", maxFastKey+1) + ": 1\n", false},
		{"longest key", strings.Repeat("k", maxFastKey) + ": 1\n", true},
		{"deep indent", "a:\n" + strings.Repeat(" ", maxFastIndent+1) + "b: 1\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkFast(t, []byte(tt.in)); got != tt.ok {
				t.Errorf("fast path accepted = %v, want %v", got, tt.ok)
			}
		})
	}
}

// TestFastYAMLRealFiles checks that the fast path takes the published
// spack-build jobspec files and reads them exactly as yaml.v3 does, and
// that the reliabuild files (YAML anchors) fall back to yaml.v3.
func TestFastYAMLRealFiles(t *testing.T) {
	// Two files here; the reproduction tests read all of them through the
	// fast path and would miss the published counts if it misread any.
	files := []string{"spack-build/jobspecs/jobspecs-31622.yaml"}
	if !raceEnabled {
		files = append(files, "spack-build/jobspecs/jobspecs-1000.yaml")
	}
	for _, f := range files {
		b := rainbowFile(t, f)
		if !checkFast(t, b) {
			t.Errorf("%s: fast path declined a published spack-build file", f)
		}
	}
	if b := rainbowFile(t, "reliabuild/jobspecs/jobspecs-10.yaml"); checkFast(t, b) {
		t.Error("fast path accepted a reliabuild file, which uses anchors")
	}
}

// FuzzFastYAML is a differential fuzzer: whatever the fast path accepts,
// yaml.v3 must accept and read to the same tree.
func FuzzFastYAML(f *testing.F) {
	f.Add([]byte("- a: 1\n  b:\n    c: d\n  e:\n  - 1\n  - x\n"))
	f.Add([]byte("a:\n- x\n- y: 1\n  z: 2\nb: 3\n"))
	f.Add([]byte("  a: b\n  c:\n    - -1\n"))
	seedFile(f, "spack-build/jobspecs/jobspecs-1000.yaml", 1500)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFast(t, b)
	})
}

// TestAliasBudget: a walk over a document whose aliases fan out 10 ways
// over 10 levels (10¹⁰ nodes when expanded) stops with ErrTooComplex
// having visited no more than its budget.
func TestAliasBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [1]\n")
	for i := 1; i <= 10; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, refs)
	}
	w := NewYAML("bomb.yaml", mk)
	root, err := w.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Mapping(root, "")
	if err != nil {
		t.Fatal(err)
	}
	var visit func(n *yaml.Node, path string) error
	visit = func(n *yaml.Node, path string) error {
		items, err := w.Seq(n, path)
		if err != nil {
			return err
		}
		for i, it := range items {
			if Deref(it).Kind == yaml.SequenceNode {
				if err := visit(it, Idx(path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err = visit(Get(m, "a10"), "a10")
	if !errors.Is(err, ErrTooComplex) {
		t.Fatalf("err = %v, want ErrTooComplex", err)
	}
	if w.budget.used > w.budget.limit+64 || w.budget.limit != minBudget {
		t.Errorf("the walk visited %d nodes, limit %d (want at most the limit, %d)", w.budget.used, w.budget.limit, minBudget)
	}
}
