package matcher

import (
	"errors"
	"fmt"
	"io"
	"strings"
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
	// ErrTooLarge: a document longer than MaxDocumentBytes.
	ErrTooLarge = errors.New("matcher: document too large")
	// ErrTooComplex: a YAML document whose aliases expand to more nodes
	// than the work limit allows (see MaxExpansion).
	ErrTooComplex = errors.New("matcher: document expands too far")
)

// MaxDocumentBytes caps every document the readers accept (16 MiB; the
// largest rainbow input is a few hundred KB).
const MaxDocumentBytes = 16 << 20

// MaxExpansion bounds the work YAML aliases can cause: a reader visits at
// most MaxExpansion times as many nodes as the document holds, and at least
// 10,000 (as yaml.v3 bounds alias expansion by a ratio to the document's
// size). A 1 KB document whose aliases fan out 10 ways over 10 levels
// (10¹⁰ nodes when expanded) is refused with ErrTooComplex in about a
// millisecond.
const MaxExpansion = 16

// readDoc reads a whole document of at most MaxDocumentBytes.
func readDoc(r io.Reader, file string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxDocumentBytes+1))
	if err != nil {
		return nil, &ParseError{File: file, Err: err}
	}
	if len(b) > MaxDocumentBytes {
		return nil, &ParseError{File: file, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxDocumentBytes)}
	}
	return b, nil
}

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
	// The sentinels carry the package prefix for use on their own; here
	// it is said once.
	return s + ": " + strings.TrimPrefix(e.Err.Error(), "matcher: ")
}

func (e *ParseError) Unwrap() error { return e.Err }
