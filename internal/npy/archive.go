package npy

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	kflate "github.com/klauspost/compress/flate"
)

// inflateBuffer is the read size for deflated members.
const inflateBuffer = 256 << 10

// maxDeflateRatio is deflate's largest possible expansion (258 bytes from
// a 2-bit code, RFC 1951), used to cap preallocation for deflated members.
const maxDeflateRatio = 1032

// Archive is an opened .npz archive. Arrays are read one key at a time;
// opening the archive reads only its central directory.
type Archive struct {
	size  int64
	keys  []string
	files map[string]*zip.File
}

// OpenArchive opens the .npz archive in r, which holds size bytes.
// Bytes that are not a zip archive give an error wrapping [ErrArchive].
func OpenArchive(r io.ReaderAt, size int64) (*Archive, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Member names are never used as paths, so insecure names are fine.
		return nil, fmt.Errorf("%w: %v", ErrArchive, err)
	}
	// klauspost/compress's inflater is about twice as fast as
	// compress/flate's on float data; registering it on this reader
	// changes no global state. The buffer turns the inflater's byte reads
	// into large ReadAt calls instead of one system call per 4 KiB.
	zr.RegisterDecompressor(zip.Deflate, func(r io.Reader) io.ReadCloser {
		return kflate.NewReader(bufio.NewReaderSize(r, inflateBuffer))
	})
	a := &Archive{size: size, files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		// Keys follow numpy.lib.npyio.NpzFile: ".npy" stripped when present.
		k := strings.TrimSuffix(f.Name, ".npy")
		// Of duplicate names the last member wins, as in numpy.load
		// (zipfile's name lookup keeps the last entry; checked with NumPy
		// 1.24.2); the key keeps its first position.
		if _, dup := a.files[k]; !dup {
			a.keys = append(a.keys, k)
		}
		a.files[k] = f
	}
	return a, nil
}

// Keys returns the keys in archive order. The slice is a copy.
func (a *Archive) Keys() []string { return append([]string(nil), a.keys...) }

// Array reads the whole array stored under key. The member's length must
// equal the header plus the data its shape calls for; errors are wrapped in
// a [*KeyError].
func (a *Archive) Array(key string) (*Array, error) {
	r, f, err := a.open(key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h, err := readHeader(r)
	if err != nil {
		return nil, &KeyError{Key: key, Err: err}
	}
	if err := checkMemberSize(f, h); err != nil {
		return nil, &KeyError{Key: key, Err: err}
	}
	data, err := readData(r, h.nbytes, a.hint(f))
	if err != nil {
		return nil, &KeyError{Key: key, Err: err}
	}
	if err := expectEnd(r); err != nil {
		return nil, &KeyError{Key: key, Err: err}
	}
	return newArray(h, data), nil
}

// Reader opens the array stored under key for streaming. The caller must
// Close it. Reaching the end checks the member's checksum and that no bytes
// follow the data.
func (a *Archive) Reader(key string) (*Reader, error) {
	r, f, err := a.open(key)
	if err != nil {
		return nil, err
	}
	h, err := readHeader(r)
	if err == nil {
		err = checkMemberSize(f, h)
	}
	if err != nil {
		r.Close()
		return nil, &KeyError{Key: key, Err: err}
	}
	rd := newReader(h, r)
	rd.closer, rd.member, rd.key = r, true, key
	rd.after = func() error {
		if err := expectEnd(r); err != nil {
			return &KeyError{Key: key, Err: err}
		}
		return nil
	}
	return rd, nil
}

func (a *Archive) open(key string) (io.ReadCloser, *zip.File, error) {
	f, ok := a.files[key]
	if !ok {
		return nil, nil, &KeyError{Key: key, Err: ErrNoKey}
	}
	if f.Method != zip.Store && f.Method != zip.Deflate {
		return nil, nil, &KeyError{Key: key, Err: fmt.Errorf("%w: compression method %d", ErrArchive, f.Method)}
	}
	r, err := f.Open()
	if err != nil {
		return nil, nil, &KeyError{Key: key, Err: fmt.Errorf("%w: %v", ErrArchive, err)}
	}
	return &errMapper{r}, f, nil
}

// hint caps the first allocation for a member by the bytes that exist.
func (a *Archive) hint(f *zip.File) int64 {
	c := min(int64(f.CompressedSize64), a.size)
	if c < 0 {
		c = a.size
	}
	if f.Method == zip.Deflate {
		return c * maxDeflateRatio
	}
	return c
}

// checkMemberSize compares the member's declared size with the header.
func checkMemberSize(f *zip.File, h header) error {
	want := uint64(h.hlen) + uint64(h.nbytes)
	if f.UncompressedSize64 < want {
		return fmt.Errorf("%w: member holds %d bytes, header and shape %v need %d", ErrTruncated, f.UncompressedSize64, h.shape, want)
	}
	if f.UncompressedSize64 > want {
		return fmt.Errorf("%w: member holds %d bytes, header and shape %v need only %d", ErrSize, f.UncompressedSize64, h.shape, want)
	}
	return nil
}

// expectEnd reads to the member's end so archive/zip verifies the CRC.
func expectEnd(r io.Reader) error {
	var b [1]byte
	n, err := io.ReadFull(r, b[:])
	if n > 0 {
		return fmt.Errorf("%w: bytes follow the data", ErrSize)
	}
	if err == io.EOF {
		return nil
	}
	return err
}

// errMapper turns archive/zip's read errors (bad checksum, bad deflate
// stream) into ErrArchive and keeps io.EOF and io.ErrUnexpectedEOF.
type errMapper struct{ r io.ReadCloser }

func (m *errMapper) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		err = fmt.Errorf("%w: %v", ErrArchive, err)
	}
	return n, err
}

func (m *errMapper) Close() error { return m.r.Close() }
