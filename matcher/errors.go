package matcher

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by the errors this package returns.
var (
	// ErrSyntax: the bytes are not valid JSON or YAML.
	ErrSyntax = errors.New("matcher: syntax error")
	// ErrSchema: valid JSON or YAML of the wrong shape (missing key, wrong type).
	ErrSchema = errors.New("matcher: unexpected structure")
	// ErrVersion: a version string that does not parse.
	ErrVersion = errors.New("matcher: invalid version")
	// ErrUnknownSubsystem: a job names a subsystem no cluster provides.
	ErrUnknownSubsystem = errors.New("matcher: unknown subsystem")
	// ErrNoClusters: an empty cluster set.
	ErrNoClusters = errors.New("matcher: no clusters")
	// ErrExpr: a constraint expression that does not compile, fails to
	// evaluate, or has the wrong result type.
	ErrExpr = errors.New("matcher: constraint expression")
	// ErrUnknownPackage: a runtime model has no data for a job's package.
	ErrUnknownPackage = errors.New("matcher: no runtime model for package")
)

// ParseError reports malformed input: the file, the path inside it (JSON
// pointer-like, "graph.nodes.amrex1.metadata.version" or "[3].resources.m4.min")
// and, for YAML, the line.
type ParseError struct {
	File string // as given to the loader; may be empty for readers
	Path string // location inside the document; empty for the whole document
	Line int    // 1-based line for YAML input, 0 when unknown
	Err  error  // wraps one of the sentinel errors
}

func (e *ParseError) Error() string {
	s := "matcher: "
	if e.File != "" {
		s += e.File
	} else {
		s += "input"
	}
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Path != "" {
		s += " at " + e.Path
	}
	return s + ": " + e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }
