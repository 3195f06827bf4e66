package npy

import (
	"errors"
	"strconv"
)

// Sentinel errors. Errors returned by this package wrap one of them; test
// with errors.Is.
var (
	// ErrMagic: the bytes do not start with NumPy's "\x93NUMPY" magic.
	ErrMagic = errors.New("npy: not an npy file (bad magic)")
	// ErrVersion: a format version other than 1.0, 2.0 or 3.0.
	ErrVersion = errors.New("npy: unsupported format version")
	// ErrHeader: the header dictionary is malformed or has wrong keys.
	ErrHeader = errors.New("npy: malformed header")
	// ErrDType: a dtype this package does not read (structured, object,
	// string, complex, datetime), or a conversion it refuses.
	ErrDType = errors.New("npy: unsupported dtype")
	// ErrTruncated: fewer data bytes than the shape requires.
	ErrTruncated = errors.New("npy: truncated data")
	// ErrSize: the data length disagrees with the shape (too many bytes in
	// an archive member, or a shape whose size overflows).
	ErrSize = errors.New("npy: data length does not match shape")
	// ErrArchive: the bytes are not a readable zip archive.
	ErrArchive = errors.New("npy: not a readable npz archive")
	// ErrNoKey: the archive has no member with that key.
	ErrNoKey = errors.New("npy: no such key")
)

// KeyError wraps an error met while reading one key of an archive.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string {
	return "npy: key " + strconv.Quote(e.Key) + ": " + trimPrefix(e.Err.Error())
}

func (e *KeyError) Unwrap() error { return e.Err }

func trimPrefix(s string) string {
	const p = "npy: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
