// Package npy reads and writes NumPy's .npy arrays and .npz archives.
//
// Supported: format versions 1.0, 2.0 and 3.0 (header keys in any order);
// dtypes bool, int8–int64, uint8–uint64 and float16/32/64 in either byte
// order; C and Fortran order (Fortran arrays are returned in C order);
// .npz archives whose members are stored or deflated, with or without zip64
// records. Structured, object, string, complex and datetime dtypes are
// refused with [ErrDType].
//
// The readers never panic on bad bytes and never allocate from a size a
// header claims beyond the bytes that actually exist: data buffers grow as
// bytes arrive, and an archive member's preallocation is capped by its
// compressed size (times deflate's maximum ratio of 1032:1). Every error is
// one of the sentinel errors below, wrapped with detail and, inside an
// archive, in a [*KeyError] naming the key.
//
// Deflated members are inflated with github.com/klauspost/compress/flate
// (registered on each archive's zip reader, not globally), which is about
// twice as fast as compress/flate on float data.
//
// The format is specified by NumPy's numpy.lib.format module documentation
// (NEP 1). Unlike sbinet/npyio, a truncated file is an error, not a panic.
package npy
