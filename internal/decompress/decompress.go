// Package decompress reads gzip-compressed input transparently for the
// module's text readers (HTCondor event logs, job tables), and recognises
// the compressed formats it does not read.
package decompress

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// ErrUnsupported is wrapped by the error for input compressed with bzip2, xz
// or zstd, and for a gzip stream whose header is damaged.
var ErrUnsupported = errors.New("compressed input that cannot be read; decompress it first")

// Gzip returns br itself for input that is not compressed, and a reader of
// the decompressed stream for gzip input (its magic bytes 1f 8b), whose
// read errors (a truncated copy, a bad checksum) say "<name>: gzip-compressed
// <what>: ...". bzip2, xz and zstd input is an error wrapping
// ErrUnsupported.
func Gzip(br *bufio.Reader, name, what string) (*bufio.Reader, error) {
	b, _ := br.Peek(6)
	switch {
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w (%v)", ErrUnsupported, err)
		}
		return bufio.NewReaderSize(named{zr, name + ": gzip-compressed " + what}, br.Size()), nil
	case bytes.HasPrefix(b, []byte("BZh")), bytes.HasPrefix(b, []byte("\xfd7zXZ\x00")), bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return nil, ErrUnsupported
	}
	return br, nil
}

// named prefixes the read errors of r, other than io.EOF, with where.
type named struct {
	r     io.Reader
	where string
}

func (n named) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", n.where, err)
	}
	return k, err
}
