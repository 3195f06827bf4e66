// Package errtest checks the messages of the errors a package returns, for
// the table tests that assert each documented error (errors_test.go in each
// package): the package's prefix once, and the place (file, line, key,
// index) the documentation promises. errors.Is and errors.As stay in the
// tests themselves, where the sentinel or type is named.
package errtest

import (
	"strings"
	"testing"
)

// Check fails t unless err is not nil, its message starts with prefix (such
// as "stats: ") and holds it nowhere else, and the message contains each of
// want.
func Check(t testing.TB, err error, prefix string, want ...string) {
	t.Helper()
	check(t, err, prefix, want)
}

func check(t testing.TB, err error, prefix string, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("got no error, want one prefixed %q", prefix)
		return
	}
	msg := err.Error()
	if n := strings.Count(msg, prefix); n != 1 {
		t.Errorf("%q holds %q %d times, want once", msg, prefix, n)
	} else if !strings.HasPrefix(msg, prefix) {
		t.Errorf("%q does not start with %q", msg, prefix)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%q does not name %q", msg, w)
		}
	}
}
