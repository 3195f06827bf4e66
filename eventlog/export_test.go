package eventlog

import (
	"iter"
	"time"
)

// Names the tests use for unexported parts of the package.

// The event numbers without an exported name.
const (
	ExecutableError = codeExecutableError
	ImageSize       = codeImageSize
	ShadowException = codeShadowException
	Generic         = codeGeneric
	Suspended       = codeSuspended
	Unsuspended     = codeUnsuspended
	NodeTerminated  = codeNodeTerminated
	Disconnected    = codeDisconnected
	Reconnected     = codeReconnected
	ReconnectFailed = codeReconnectFailed
	AttributeUpdate = codeAttributeUpdate
	FileTransfer    = codeFileTransfer

	PostScriptTerminated Code = 16
	CommonFiles          Code = 47
	EPResourceMend       Code = 111
)

const DefaultMaxEventSize = maxEventSize

func (c Code) Known() bool { return c.known() }

func (id JobID) IsJob() bool { return id.isJob() }

type GlobalHeader = globalHeader

func ParseGlobalHeader(ev Event) (GlobalHeader, bool) { return parseGlobalHeader(ev) }

func SourceOf(file string) string { return sourceOf(file) }

// WithFileTime sets the modification time Files gives each file's Reader.
func WithFileTime(o Options, t time.Time) Options { o.fileTime = t; return o }

// WithMaxEventSize lowers the cap on one event.
func WithMaxEventSize(o Options, n int) Options { o.maxEventSize = n; return o }

// WithPoll sets Follow's pause between looks.
func WithPoll(o FollowOptions, d time.Duration) FollowOptions { o.poll = d; return o }

// SetOverlapWindow bounds the overlap Files searches at each boundary.
func (fs *Files) SetOverlapWindow(n int) { fs.overlapWindow = n }

func (b Builder) Sample(primary *Job, context []*Job) (Sample, error) {
	return b.sample(primary, context)
}

func (s *Sample) At(j, m, e int) float32 {
	if j < 0 || j >= s.J || m < 0 || m >= s.M || e < 0 || e >= s.E {
		panic("eventlog: Sample.At index out of range")
	}
	return s.X[(j*s.M+m)*s.E+e]
}

func (s *Sample) Rows() [][]float32 {
	flat := s.rowsInto(nil)
	rows := make([][]float32, s.M)
	w := s.J * s.E
	for m := range rows {
		rows[m] = flat[m*w : (m+1)*w : (m+1)*w]
	}
	return rows
}

func (s *Sample) Context() []Key { return s.contextJobs }

func (ev *Event) Attrs() map[string]any { return ev.attrs }

func (r *Reader) All() iter.Seq2[Event, error] { return all(r.Read) }

func GroupSeq(source string, events iter.Seq2[Event, error]) ([]*Job, error) {
	return groupKeyed(events, func(ev *Event) Key { return Key{source, ev.Job} })
}

func (r *Reader) SetFileTime(t time.Time) { r.fileTime = t }

func (r *Reader) SetMaxEventSize(n int) { r.maxEventSize = n }
func (fs *Files) Read() (Event, error)  { return fs.read() }

// SetChunks sets the size of the reader's first and largest input chunks
// and the least room it reads into, before the first Read.
func (r *Reader) SetChunks(first, largest, minRead int) {
	r.in.next, r.in.max, r.in.minRead = first, largest, minRead
}

// LineByLine makes the reader go line by line, without the fast path that
// takes a whole event at once.
func (r *Reader) LineByLine() { r.slow = true }
