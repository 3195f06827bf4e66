package matcher

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// ywalk resolves YAML nodes (aliases included) and builds errors that name
// the file, the path and the line.
type ywalk struct{ file string }

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
		return root, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &ParseError{File: w.file, Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
	}
	return deref(&doc), nil
}

func (w ywalk) seq(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, w.err(n, path, ErrSchema, "want a list")
	}
	return n.Content, nil
}

// mapping returns key/value pairs of a mapping node.
func (w ywalk) mapping(n *yaml.Node, path string) ([][2]*yaml.Node, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, w.err(n, path, ErrSchema, "want a mapping")
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
