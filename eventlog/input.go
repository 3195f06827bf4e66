package eventlog

import (
	"bufio"
	"bytes"
	"io"
)

// textInput buffers a Reader's classic-text input in chunks that event
// bodies point into, so each byte is copied once: from the input into a
// chunk. An event's Body is a string over the bytes of its chunk, which are
// never written over; when a chunk runs out, its unread rest (usually part
// of an event) is carried over to a new chunk. A chunk no body points into
// is reused in place. Reads and errors follow bufio.Reader: an error is
// returned once, after the bytes read before it.
type textInput struct {
	src  io.Reader // the Reader's bufio.Reader: reads of its size or more go straight to the input
	buf  []byte    // the current chunk: buf[:w] read, buf[r:w] not consumed
	r, w int
	err  error
	kept bool // a Body points into buf
	next int  // size of the next chunk
	// max is the largest chunk: lines and fast-path events up to half of
	// it are read in place, longer ones are copied (nextLine, readText).
	max int
	// minRead is the least room a read gets: the size of the bufio.Reader
	// in front of the input, so that it does not copy what it passes on.
	minRead int
}

// The chunk sizes: the first is as large as the bufio.Reader in front, each
// next one twice the last, up to maxChunk.
const (
	firstChunk = 64 << 10
	maxChunk   = 1 << 20
)

// limit is the longest line or event read in place.
func (in *textInput) limit() int { return in.max / 2 }

// readErr returns the pending error and clears it.
func (in *textInput) readErr() error {
	err := in.err
	in.err = nil
	return err
}

// fill reads more input, at least one byte or an error, keeping the bytes
// from buf[from] on (from <= r). When the chunk has too little room left it
// moves them to the start of the chunk, or to a new chunk when a body
// points into this one; it returns how far they moved.
func (in *textInput) fill(from int) int {
	shift := 0
	if len(in.buf)-in.w < in.minRead {
		keep := in.w - from
		if !in.kept && len(in.buf)-keep >= in.minRead {
			copy(in.buf, in.buf[from:in.w])
		} else {
			nb := make([]byte, max(in.next, keep+in.minRead))
			in.next = min(2*in.next, in.max)
			copy(nb, in.buf[from:in.w])
			in.buf, in.kept = nb, false
		}
		shift = from
		in.r -= from
		in.w = keep
	}
	for range 100 { // as bufio: give up after 100 empty reads
		n, err := in.src.Read(in.buf[in.w:])
		in.w += n
		if err != nil {
			in.err = err
			return shift
		}
		if n > 0 {
			return shift
		}
	}
	in.err = io.ErrNoProgress
	return shift
}

// readSlice is bufio.Reader.ReadSlice('\n') on the chunk: it returns the
// next line with its "\n" and the line's offset in buf, valid until the
// next read. A line longer than limit comes in pieces, all but the last
// with bufio.ErrBufferFull.
func (in *textInput) readSlice() ([]byte, int, error) {
	searched := 0
	for {
		if i := bytes.IndexByte(in.buf[in.r+searched:in.w], '\n'); i >= 0 {
			start := in.r
			in.r += searched + i + 1
			return in.buf[start:in.r], start, nil
		}
		start := in.r
		if in.err != nil {
			in.r = in.w
			return in.buf[start:in.w], start, in.readErr()
		}
		if in.w-in.r >= in.limit() {
			in.r = in.w
			return in.buf[start:in.w], start, bufio.ErrBufferFull
		}
		searched = in.w - in.r
		in.fill(in.r)
	}
}
