// Package lastline picks the line of a command's output that an error
// message quotes: the last one, cut to a length a message can carry. The
// sweep controller quotes a failed worker's log with it, and the DAGMan
// stand-in a failed POST script's output.
package lastline

import "strings"

// MaxLen is the most bytes Of returns.
const MaxLen = 300

// Of returns the last line of s, trailing newlines aside, at most MaxLen
// bytes of it (a cut may split a multi-byte character).
func Of(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > MaxLen {
		s = s[:MaxLen]
	}
	return s
}
