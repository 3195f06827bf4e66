package matcher

import (
	"errors"
	"fmt"
	"strings"

	"github.com/crosscluster/crosscluster/matcher/internal/walk"
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
	// ErrNoClusters: an empty cluster set.
	ErrNoClusters = errors.New("matcher: no clusters")
	// ErrExpr: a constraint expression that does not compile, fails to
	// evaluate, or has the wrong result type.
	ErrExpr = errors.New("matcher: constraint expression")
	// ErrUnknownPackage: a runtime model has no data for a job's package.
	ErrUnknownPackage = errors.New("matcher: no runtime model for package")
	// ErrTooLarge: a document longer than MaxDocumentBytes.
	ErrTooLarge = walk.ErrTooLarge
	// ErrTooComplex: a YAML document whose aliases expand to more nodes
	// than the work limit allows (see MaxExpansion).
	ErrTooComplex = walk.ErrTooComplex
)

// MaxDocumentBytes caps every document the readers accept (16 MiB; the
// largest rainbow input is a few hundred KB).
const MaxDocumentBytes = walk.MaxBytes

// MaxExpansion bounds the work YAML aliases can cause: a reader visits at
// most MaxExpansion times as many nodes as the document holds, and at least
// 10,000 (as yaml.v3 bounds alias expansion by a ratio to the document's
// size). A 1 KB document whose aliases fan out 10 ways over 10 levels
// (10¹⁰ nodes when expanded) is refused with ErrTooComplex in about a
// millisecond.
const MaxExpansion = walk.MaxExpansion

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
