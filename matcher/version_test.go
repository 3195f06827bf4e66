package matcher

import (
	"errors"
	"testing"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"1.2.3", "1.2.3"},
		{"1.2", "1.2.0"},
		{"7", "7.0.0"},
		{"v2.0.1", "2.0.1"},
		{"V3.1", "3.1.0"},
		{" 1.0.0 ", "1.0.0"},
		{"1.2.3.4", "1.2.3.4"},
		{"1.0.0-rc.1", "1.0.0-rc.1"},
		{"1.0rc1", "1.0.0-rc1"},
		{"2.0.0beta", "2.0.0-beta"},
		{"1.2.3+build.5", "1.2.3"},
		{"8912645823", "8912645823.0.0"},
		{"14844923904.0", "14844923904.0.0"},
		{"2024.0.0", "2024.0.0"},
		{"3.2.00", "3.2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := ParseVersion(tt.in)
			if err != nil {
				t.Fatalf("ParseVersion(%q): %v", tt.in, err)
			}
			if got := v.String(); got != tt.want {
				t.Errorf("ParseVersion(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseVersionErrors(t *testing.T) {
	for _, in := range []string{"", "v", "abc", "1..2", "1.2.3.4.5", "1.x.3", "1.2.3-", "1.2.3-a..b",
		"99999999999999999999", "1.0rc1-beta", ".1"} {
		t.Run(in, func(t *testing.T) {
			_, err := ParseVersion(in)
			if !errors.Is(err, ErrVersion) {
				t.Errorf("ParseVersion(%q) error = %v, want ErrVersion", in, err)
			}
		})
	}
}

func TestVersionCompare(t *testing.T) {
	// Each version is strictly older than the next (semver 2.0 section 11
	// precedence, plus the tolerant forms).
	ordered := []string{"0.0.0", "0.9", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
		"1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.0.1", "1.0.1", "1.2", "1.10", "2",
		"10.0.0", "8912645823"}
	for i := range ordered {
		for j := range ordered {
			a, b := mustParseVersion(ordered[i]), mustParseVersion(ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if mustParseVersion("1.2").Compare(mustParseVersion("v1.2.0")) != 0 {
		t.Error("1.2 and v1.2.0 should be equal")
	}
}

func TestBounds(t *testing.T) {
	lo, hi := mustParseVersion("1.0.0"), mustParseVersion("2.0.0")
	tests := []struct {
		v          string
		incl, excl bool
	}{
		{"0.9.9", false, false},
		{"1.0.0", true, false},
		{"1.5.0", true, true},
		{"2.0.0", true, false},
		{"2.0.1", false, false},
	}
	for _, tt := range tests {
		v := mustParseVersion(tt.v)
		for _, b := range []struct {
			exclusive bool
			want      bool
		}{{false, tt.incl}, {true, tt.excl}} {
			if got := atLeast(v, lo, b.exclusive) && atMost(v, hi, b.exclusive); got != b.want {
				t.Errorf("%s in [1.0.0, 2.0.0] with exclusive=%v = %v, want %v", tt.v, b.exclusive, got, b.want)
			}
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.2.3", "v1.2", "1.0rc1", "1.0.0-rc.1+b", "8912645823", "2023.2.0", "3.2.00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			if !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v does not wrap ErrVersion", err)
			}
			return
		}
		w, err := ParseVersion(v.String())
		if err != nil {
			t.Fatalf("String() %q of %q does not parse: %v", v.String(), s, err)
		}
		if w.Compare(v) != 0 || v.Compare(w) != 0 {
			t.Fatalf("round trip of %q changed order: %s vs %s", s, v, w)
		}
	})
}

// mustParseVersion is ParseVersion for literals known to be valid; it panics
// otherwise.
func mustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic("matcher: invalid version literal")
	}
	return v
}
