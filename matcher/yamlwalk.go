package matcher

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// ywalk resolves YAML nodes (aliases included) and builds errors that name
// the file, the path and the line. Every mapping and sequence it opens
// counts against a work budget set by parse from the document's size, so
// that aliases cannot make a walk expand exponentially.
type ywalk struct {
	file   string
	budget *budget
}

type budget struct{ used, limit int }

func newWalk(file string) ywalk { return ywalk{file: file, budget: &budget{limit: 10_000}} }

// spend charges n node visits at n and fails with ErrTooComplex past the
// limit.
func (w ywalk) spend(at *yaml.Node, path string, n int) error {
	w.budget.used += n
	if w.budget.used > w.budget.limit {
		return w.err(at, path, ErrTooComplex, "aliases expand to more than %d nodes (%d× the document's)", w.budget.limit, MaxExpansion)
	}
	return nil
}

// countNodes counts the nodes of a document without following aliases.
func countNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

func (w ywalk) err(n *yaml.Node, path string, sentinel error, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ParseError{File: w.file, Path: path, Line: line, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

// deref follows documents and aliases a bounded number of times (a
// self-referential alias must not loop).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && i < 16; i++ {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

func (w ywalk) parse(b []byte) (*yaml.Node, error) {
	if root, ok := fastYAML(b); ok {
		w.budget.limit = max(w.budget.limit, MaxExpansion*countNodes(root))
		return root, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &ParseError{File: w.file, Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
	}
	w.budget.limit = max(w.budget.limit, MaxExpansion*countNodes(&doc))
	return deref(&doc), nil
}

func (w ywalk) seq(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, w.err(n, path, ErrSchema, "want a list")
	}
	if err := w.spend(n, path, 1+len(n.Content)); err != nil {
		return nil, err
	}
	return n.Content, nil
}

// mapping returns key/value pairs of a mapping node.
func (w ywalk) mapping(n *yaml.Node, path string) ([][2]*yaml.Node, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, w.err(n, path, ErrSchema, "want a mapping")
	}
	if err := w.spend(n, path, 1+len(n.Content)); err != nil {
		return nil, err
	}
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			return nil, w.err(n.Content[i], path, ErrSchema, "want scalar keys")
		}
		out = append(out, [2]*yaml.Node{k, n.Content[i+1]})
	}
	return out, nil
}

// get returns the value under key, or nil.
func get(pairs [][2]*yaml.Node, key string) *yaml.Node {
	for _, p := range pairs {
		if p[0].Value == key {
			return p[1]
		}
	}
	return nil
}

func (w ywalk) scalar(n *yaml.Node, path string) (string, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", w.err(n, path, ErrSchema, "want a scalar")
	}
	return n.Value, nil
}

func (w ywalk) number(n *yaml.Node, path string) (float64, error) {
	s, err := w.scalar(n, path)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, w.err(n, path, ErrSchema, "want a number, got %q", s)
	}
	return f, nil
}

func (w ywalk) integer(n *yaml.Node, path string) (int, error) {
	s, err := w.scalar(n, path)
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 {
		return 0, w.err(n, path, ErrSchema, "want a non-negative integer, got %q", s)
	}
	return i, nil
}

func idx(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func dot(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
