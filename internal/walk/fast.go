package walk

import "go.yaml.in/yaml/v3"

// The jobspec lists of the spack-build experiment are 13 MB of the plainest
// block YAML (no comments, quotes, anchors or flow collections), and
// gopkg.in/yaml.v3 spends about 1 s of CPU tokenising them. fastYAML builds
// the same *yaml.Node tree yaml.v3 would for a strict subset of block YAML
// and declines (ok false) on anything outside it, so that YAML.Parse falls
// back to yaml.v3 and the walkers, their paths, lines and errors, are the
// same either way. FuzzFastYAML checks that every accepted input gives
// yaml.v3's tree (kinds, values, lines, columns).
//
// The subset: lines of spaces-indented text over the bytes
// [A-Za-z0-9 _.+/:-] and '\n'; no blank lines, tabs or trailing spaces;
// block mappings of "key: value" and "key:" followed by a more indented
// block or by a sequence at the key's indent; block sequences of "- value"
// and "- key: value ..."; keys and values are single words that contain no
// ':' and are not YAML's null spellings; keys are at most maxFastKey bytes
// and indentation at most maxFastIndent columns. The root is a mapping or a
// sequence.
func fastYAML(b []byte) (root *yaml.Node, ok bool) {
	lines := 1
	for _, c := range b {
		if !fastByte(c) {
			return nil, false
		}
		if c == '\n' {
			lines++
		}
	}
	ls := make([]fline, 0, lines)
	for ln, start := 1, 0; start < len(b); ln++ {
		end := start
		for end < len(b) && b[end] != '\n' {
			end++
		}
		ind := start
		for ind < end && b[ind] == ' ' {
			ind++
		}
		if ind == end || b[end-1] == ' ' || ind-start > maxFastIndent {
			return nil, false // blank line, trailing space or deep nesting
		}
		ls = append(ls, fline{line: ln, indent: ind - start, text: b[ind:end]})
		start = end + 1
	}
	if len(ls) == 0 {
		return nil, false
	}
	p := fparser{ls: ls}
	root = p.block(ls[0].indent)
	if p.bad || p.i != len(ls) {
		return nil, false
	}
	return root, true
}

// fastByte reports whether c may appear in the fast subset.
func fastByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case ' ', '_', '.', '+', '/', ':', '-', '\n':
		return true
	}
	return false
}

// maxFastKey bounds key length: YAML limits implicit keys to 1024
// characters and yaml.v3 enforces it with its own counting, so the subset
// stays far below (FuzzFastYAML found a key over 1,024 bytes that yaml.v3 rejects).
const maxFastKey = 128

// maxFastIndent bounds indentation and so nesting (each level indents at
// least one more column every two levels), keeping the recursion shallow
// and far below yaml.v3's own depth limit.
const maxFastIndent = 256

type fline struct {
	line, indent int
	text         []byte
}

type fparser struct {
	ls  []fline
	i   int
	bad bool
}

func isEntry(t []byte) bool { return len(t) >= 1 && t[0] == '-' && (len(t) == 1 || t[1] == ' ') }

// block parses the mapping or sequence whose lines start at indent.
func (p *fparser) block(indent int) *yaml.Node {
	if isEntry(p.ls[p.i].text) {
		return p.seq(indent)
	}
	return p.mapping(indent)
}

func (p *fparser) seq(indent int) *yaml.Node {
	l := p.ls[p.i]
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: l.line, Column: indent + 1}
	for !p.bad && p.i < len(p.ls) && p.ls[p.i].indent == indent && isEntry(p.ls[p.i].text) {
		l := p.ls[p.i]
		rest := l.text[min(2, len(l.text)):]
		if len(rest) == 0 || rest[0] == ' ' || isEntry(rest) {
			p.bad = true // "-" alone, extra spaces or "- - x": outside the subset
			break
		}
		// The entry's content starts two columns in; parse it as if it
		// were a line of its own at that indent.
		p.ls[p.i] = fline{line: l.line, indent: indent + 2, text: rest}
		if hasColon(rest) {
			n.Content = append(n.Content, p.mapping(indent+2))
		} else {
			v := p.scalar(rest, l.line, indent+3)
			p.i++
			if p.i < len(p.ls) && p.ls[p.i].indent > indent {
				p.bad = true // a continuation line
			}
			n.Content = append(n.Content, v)
		}
	}
	if p.i < len(p.ls) && p.ls[p.i].indent > indent {
		p.bad = true
	}
	return n
}

func (p *fparser) mapping(indent int) *yaml.Node {
	l := p.ls[p.i]
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: l.line, Column: indent + 1}
	for !p.bad && p.i < len(p.ls) && p.ls[p.i].indent == indent && !isEntry(p.ls[p.i].text) {
		l := p.ls[p.i]
		c := 0
		for c < len(l.text) && l.text[c] != ':' {
			c++
		}
		if c == 0 || c > maxFastKey || c == len(l.text) || !plainWord(l.text[:c]) {
			p.bad = true
			break
		}
		key := string(l.text[:c])
		for i := 0; i < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				p.bad = true // duplicate key: let yaml.v3 decide
			}
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: l.line, Column: indent + 1}
		rest := l.text[c+1:]
		var v *yaml.Node
		switch {
		case len(rest) == 0:
			p.i++
			switch {
			case p.i < len(p.ls) && p.ls[p.i].indent > indent:
				v = p.block(p.ls[p.i].indent)
			case p.i < len(p.ls) && p.ls[p.i].indent == indent && isEntry(p.ls[p.i].text):
				v = p.seq(indent)
			default:
				p.bad = true // an empty (null) value
			}
		case rest[0] == ' ' && len(rest) > 1 && !hasColon(rest[1:]):
			v = p.scalar(rest[1:], l.line, indent+c+3)
			p.i++
			if p.i < len(p.ls) && p.ls[p.i].indent > indent {
				p.bad = true // a continuation line
			}
		default:
			p.bad = true
		}
		if p.bad {
			break
		}
		n.Content = append(n.Content, k, v)
	}
	if p.i < len(p.ls) && p.ls[p.i].indent > indent {
		p.bad = true
	}
	return n
}

func (p *fparser) scalar(t []byte, line, col int) *yaml.Node {
	if !plainWord(t) {
		p.bad = true
	}
	switch string(t) {
	case "null", "Null", "NULL":
		p.bad = true
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: string(t), Line: line, Column: col}
}

func hasColon(t []byte) bool {
	for _, c := range t {
		if c == ':' {
			return true
		}
	}
	return false
}

// plainWord reports whether t is one word YAML reads as a plain scalar with
// t as its value: no spaces or ':', and no leading indicator ('-' only
// before a digit or '.', as in "-1" or "-.5").
func plainWord(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	for _, c := range t {
		if c == ' ' || c == ':' {
			return false
		}
	}
	if t[0] == '-' {
		return len(t) > 1 && (t[1] >= '0' && t[1] <= '9' || t[1] == '.')
	}
	return true
}
