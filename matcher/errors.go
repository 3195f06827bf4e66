package matcher

import (
	"errors"
	"fmt"
	"strings"

	"github.com/crosscluster/crosscluster/internal/walk"
)

// Sentinel errors wrapped by the errors this package returns.
var (
	// ErrSyntax: the bytes are not valid JSON or YAML.
	ErrSyntax = walk.ErrSyntax
	// ErrSchema: valid JSON or YAML of the wrong shape (missing key, wrong
	// type, unknown or duplicate key).
	ErrSchema = walk.ErrSchema
	// ErrVersion: a version string that does not parse.
	ErrVersion = errors.New("matcher: invalid version")
	// ErrUnknownSubsystem: a job names a subsystem no cluster provides.
	ErrUnknownSubsystem = errors.New("matcher: unknown subsystem")
	// ErrNoClusters: an empty cluster set, or (Pool) no registered cluster
	// has the name.
	ErrNoClusters = errors.New("matcher: no clusters")
	// ErrTooLarge: a document longer than 16 MiB (the largest rainbow input
	// is a few hundred KB).
	ErrTooLarge = walk.ErrTooLarge
	// ErrTooComplex: a YAML document whose aliases expand to more nodes
	// than the work limit allows (see the package documentation).
	ErrTooComplex = walk.ErrTooComplex
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
	// Some sentinels carry the package prefix for use on their own; here
	// it is said once.
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "matcher: ")
}

func (e *ParseError) Unwrap() error { return e.Err }

// parseError is the walk.ErrorFunc of this package's readers.
func parseError(file, path string, line int, err error) error {
	return &ParseError{File: file, Path: path, Line: line, Err: err}
}
