package walk

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// YAML resolves YAML nodes (aliases included) and builds errors that name
// the file, the path and the line. Every mapping and sequence it opens
// counts against a work budget set by Parse from the document's size, so
// that aliases cannot make a walk expand exponentially. The zero value is
// not usable; use NewYAML.
type YAML struct {
	file   string
	mk     ErrorFunc
	budget *budget
}

type budget struct{ used, limit int }

// NewYAML returns a walker for one document named file.
func NewYAML(file string, mk ErrorFunc) YAML {
	return YAML{file: file, mk: mk, budget: &budget{limit: minBudget}}
}

// spend charges n node visits at n and fails with ErrTooComplex past the
// limit.
func (w YAML) spend(at *yaml.Node, path string, n int) error {
	w.budget.used += n
	if w.budget.used > w.budget.limit {
		return w.Err(at, path, ErrTooComplex, "aliases expand to more than %d nodes (%d× the document's)", w.budget.limit, MaxExpansion)
	}
	return nil
}

// Limit returns the number of node visits the document parsed last may
// cost a walk, aliases followed (MaxExpansion times its own nodes, at least
// a minimum): a second reading of the same document, such as the matcher's
// reading as rainbow reads, is held to it too.
func (w YAML) Limit() int { return w.budget.limit }

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

// Err builds an error at node n (for its line) and path wrapping sentinel.
func (w YAML) Err(n *yaml.Node, path string, sentinel error, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return w.mk(w.file, path, line, fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...)))
}

// Deref follows documents and aliases a bounded number of times (a
// self-referential alias must not loop).
func Deref(n *yaml.Node) *yaml.Node {
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

// Parse parses a document, through the fast subset reader when it takes
// it and yaml.v3 otherwise (the trees are the same), and sets the work
// budget from its size.
func (w YAML) Parse(b []byte) (*yaml.Node, error) {
	if root, ok := fastYAML(b); ok {
		w.budget.limit = max(w.budget.limit, MaxExpansion*countNodes(root))
		return root, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, w.mk(w.file, "", 0, fmt.Errorf("%w: %v", ErrSyntax, err))
	}
	w.budget.limit = max(w.budget.limit, MaxExpansion*countNodes(&doc))
	return Deref(&doc), nil
}

// List reads b whole and returns the items of its top-level sequence.
func (w YAML) List(b []byte) ([]*yaml.Node, error) {
	root, err := w.Parse(b)
	if err != nil {
		return nil, err
	}
	return w.Seq(root, "")
}

// Seq returns the items of a sequence node.
func (w YAML) Seq(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, w.Err(n, path, ErrSchema, "want a list")
	}
	if err := w.spend(n, path, 1+len(n.Content)); err != nil {
		return nil, err
	}
	return n.Content, nil
}

// Mapping returns the key/value pairs of a mapping node.
func (w YAML) Mapping(n *yaml.Node, path string) ([][2]*yaml.Node, error) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, w.Err(n, path, ErrSchema, "want a mapping")
	}
	if err := w.spend(n, path, 1+len(n.Content)); err != nil {
		return nil, err
	}
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := Deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			return nil, w.Err(n.Content[i], path, ErrSchema, "want scalar keys")
		}
		out = append(out, [2]*yaml.Node{k, n.Content[i+1]})
	}
	if i, j := duplicateKey(out); j >= 0 {
		return nil, w.Err(out[j][0], Dot(path, out[j][0].Value), ErrSchema, "duplicate key %q (first on line %d)", out[j][0].Value, out[i][0].Line)
	}
	return out, nil
}

// duplicateKey returns the indices of the first key that repeats an
// earlier one, or -1, -1. yaml.v3 accepts duplicate keys in a node tree (it
// refuses them only when decoding into a map or struct), and a walk that
// takes the first would silently drop the second.
func duplicateKey(m [][2]*yaml.Node) (first, dup int) {
	if len(m) <= 32 {
		for j := 1; j < len(m); j++ {
			for i := range j {
				if m[i][0].Value == m[j][0].Value {
					return i, j
				}
			}
		}
		return -1, -1
	}
	seen := make(map[string]int, len(m))
	for j, kv := range m {
		if i, ok := seen[kv[0].Value]; ok {
			return i, j
		}
		seen[kv[0].Value] = j
	}
	return -1, -1
}

// Get returns the value under key, or nil.
func Get(pairs [][2]*yaml.Node, key string) *yaml.Node {
	for _, p := range pairs {
		if p[0].Value == key {
			return p[1]
		}
	}
	return nil
}

// Scalar returns a scalar node's value.
func (w YAML) Scalar(n *yaml.Node, path string) (string, error) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", w.Err(n, path, ErrSchema, "want a scalar")
	}
	return n.Value, nil
}

// Number returns a scalar node's value as a float.
func (w YAML) Number(n *yaml.Node, path string) (float64, error) {
	s, err := w.Scalar(n, path)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, w.Err(n, path, ErrSchema, "want a number, got %q", s)
	}
	return f, nil
}

// Integer returns a scalar node's value as a non-negative integer.
func (w YAML) Integer(n *yaml.Node, path string) (int, error) {
	s, err := w.Scalar(n, path)
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 {
		return 0, w.Err(n, path, ErrSchema, "want a non-negative integer, got %q", s)
	}
	return i, nil
}

// Field returns the scalar under key of mapping m (at node at, path path),
// or an error naming the missing key.
func (w YAML) Field(m [][2]*yaml.Node, at *yaml.Node, path, key string) (string, error) {
	v := Get(m, key)
	if v == nil {
		return "", w.Err(at, path, ErrSchema, "missing %q", key)
	}
	return w.Scalar(v, Dot(path, key))
}

// Keys refuses a key of m outside allowed, naming the nearest allowed one,
// so that a typo such as "reqiures" is not silently ignored. what names the
// mapping in the message ("a resource").
func (w YAML) Keys(m [][2]*yaml.Node, path, what string, allowed []string) error {
	for _, kv := range m {
		k := kv[0].Value
		if slices.Contains(allowed, k) {
			continue
		}
		best, bestD := "", 3
		for _, a := range allowed {
			if d := editDistance(k, a); d < bestD {
				best, bestD = a, d
			}
		}
		if best != "" {
			return w.Err(kv[0], Dot(path, k), ErrSchema, "unknown key %q (did you mean %q?)", k, best)
		}
		return w.Err(kv[0], Dot(path, k), ErrSchema, "unknown key %q (%s has %s)", k, what, strings.Join(allowed, ", "))
	}
	return nil
}

// editDistance is the Levenshtein distance of two short strings, with a
// transposition counting once (so "reqiures" is 1 from "requires").
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
