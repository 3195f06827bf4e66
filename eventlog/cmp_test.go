package eventlog_test

import (
	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/google/go-cmp/cmp"
)

// unexported lets cmp look inside Event and Sample, whose unexported fields
// (a JSON event's attributes, a sample's context jobs) are part of what the
// tests compare.
var unexported = cmp.AllowUnexported(eventlog.Event{}, eventlog.Sample{})

func diff(x, y any, opts ...cmp.Option) string {
	return cmp.Diff(x, y, append(opts, unexported)...)
}
