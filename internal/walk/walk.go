// Package walk reads the library's YAML and JSON documents (the matcher's
// inputs, its experiment data, the sweep and held-job specs) with bounded
// work: documents are capped in size, YAML aliases cannot make a walk expand
// beyond a multiple of the document's own nodes, and every error names the
// file, the line where known, and the path of the offending key
// ("[3].resources.m4.min", "graph.edges[2].target").
//
// Errors are built by the calling package's constructor (an ErrorFunc), so
// that callers see that package's error type; they wrap one of this
// package's sentinels, which the calling package re-exports.
package walk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Sentinels wrapped by every error of this package. They carry no package
// name: the calling package's error type says it once.
var (
	ErrSyntax     = errors.New("syntax error")
	ErrSchema     = errors.New("unexpected structure")
	ErrTooLarge   = errors.New("document too large")
	ErrTooComplex = errors.New("document expands too far")
)

// MaxBytes caps every document (16 MiB; the largest rainbow input is a few
// hundred KB).
const MaxBytes = 16 << 20

// MaxExpansion bounds the work YAML aliases can cause: a walk visits at most
// MaxExpansion times as many nodes as the document holds, and at least
// minBudget (as yaml.v3 bounds alias expansion by a ratio to the document's
// size).
const MaxExpansion = 16

const minBudget = 10_000

// ErrorFunc builds the calling package's error for a problem in file at
// path (line 0 when unknown); err wraps one of the sentinels.
type ErrorFunc func(file, path string, line int, err error) error

// ReadAll reads a whole document of at most MaxBytes, without a leading
// UTF-8 byte order mark (which YAML allows and JSON parsers may ignore, RFC
// 8259 section 8.1; a file saved by a Windows editor has one).
func ReadAll(r io.Reader, file string, mk ErrorFunc) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, mk(file, "", 0, err)
	}
	if len(b) > MaxBytes {
		return nil, mk(file, "", 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxBytes))
	}
	return bytes.TrimPrefix(b, []byte(BOM)), nil
}

// BOM is the UTF-8 byte order mark ReadAll drops.
const BOM = "\ufeff"

// Idx is path[i].
func Idx(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Dot is path.key, or key at the root.
func Dot(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
