package lastline

import (
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	long := strings.Repeat("x", MaxLen+5)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"one\ntwo\n", "two"},
		{"one\ntwo\n\n\n", "two"},
		{"a\n" + long, long[:MaxLen]},
		{"\n", ""},
	} {
		if got := Of(tc.in); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
