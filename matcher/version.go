package matcher

import (
	"fmt"
	"strconv"
	"strings"
)

// maxParts is the number of numeric components a Version keeps: enough for
// four-part versions such as "1.2.3.4" that strict semver rejects.
const maxParts = 4

// Version is a tolerant semantic version. Missing numeric components are
// zero ("1.2" equals "1.2.0"), so bare integers such as memory sizes in bytes
// order numerically. The zero value is version 0.0.0.
type Version struct {
	nums [maxParts]uint64
	pre  string // pre-release identifiers without the leading '-', "" for a release
}

// ParseVersion parses s tolerantly: surrounding space and a leading "v" or
// "V" are dropped; one to four dot-separated numeric components are allowed
// ("2", "1.2", "1.2.3", "1.2.3.4"); a pre-release follows "-" ("1.0.0-rc.1")
// or directly follows the last number ("1.0rc1", "2.0.0beta"); build metadata
// after "+" is ignored, as semver says. A float-looking integer such as
// "14844923904.0" is major 14844923904, minor 0. Anything else is an error
// wrapping ErrVersion; ParseVersion never panics.
func ParseVersion(s string) (Version, error) {
	var v Version
	t := strings.TrimSpace(s)
	if t == "" {
		return v, fmt.Errorf("%w: empty string", ErrVersion)
	}
	if t[0] == 'v' || t[0] == 'V' {
		t = t[1:]
	}
	if i := strings.IndexByte(t, '+'); i >= 0 {
		t = t[:i]
	}
	core, pre, hasPre := strings.Cut(t, "-")
	if hasPre && pre == "" {
		return v, fmt.Errorf("%w: %q has an empty pre-release", ErrVersion, s)
	}
	parts := strings.Split(core, ".")
	if len(parts) > maxParts {
		return v, fmt.Errorf("%w: %q has more than %d numeric parts", ErrVersion, s, maxParts)
	}
	for i, p := range parts {
		j := 0
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j == 0 {
			return v, fmt.Errorf("%w: %q: part %d is not a number", ErrVersion, s, i+1)
		}
		if j < len(p) {
			// "1.0rc1": letters may only trail the last number.
			if i != len(parts)-1 || hasPre {
				return v, fmt.Errorf("%w: %q: part %d is not a number", ErrVersion, s, i+1)
			}
			pre = p[j:]
			hasPre = true
		}
		n, err := strconv.ParseUint(p[:j], 10, 64)
		if err != nil {
			return v, fmt.Errorf("%w: %q: part %d overflows", ErrVersion, s, i+1)
		}
		v.nums[i] = n
	}
	if hasPre {
		for _, id := range strings.Split(pre, ".") {
			if id == "" {
				return v, fmt.Errorf("%w: %q has an empty pre-release identifier", ErrVersion, s)
			}
			// SemVer §9: identifiers are [0-9A-Za-z-]; anything else (a
			// space before build metadata, say) would not survive String.
			for _, c := range id {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
					return v, fmt.Errorf("%w: %q: pre-release %q has %q", ErrVersion, s, id, c)
				}
			}
		}
		v.pre = pre
	}
	return v, nil
}

// String formats v with at least three numeric components.
func (v Version) String() string {
	n := 3
	if v.nums[3] != 0 {
		n = 4
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.FormatUint(v.nums[i], 10))
	}
	if v.pre != "" {
		b.WriteByte('-')
		b.WriteString(v.pre)
	}
	return b.String()
}

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
// Numeric components compare numerically; a pre-release is older than its
// release, and pre-releases compare identifier by identifier as semver 2.0
// says (numeric identifiers numerically and below alphanumeric ones).
func (v Version) Compare(w Version) int {
	for i := range v.nums {
		if v.nums[i] != w.nums[i] {
			if v.nums[i] < w.nums[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.pre == w.pre:
		return 0
	case v.pre == "":
		return 1
	case w.pre == "":
		return -1
	}
	a, b := strings.Split(v.pre, "."), strings.Split(w.pre, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareIdent(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func compareIdent(a, b string) int {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		switch {
		case na < nb:
			return -1
		case na > nb:
			return 1
		}
		return 0
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// atLeast reports v >= min, or v > min when exclusive.
func atLeast(v, min Version, exclusive bool) bool {
	c := v.Compare(min)
	return c > 0 || (c == 0 && !exclusive)
}

// atMost reports v <= max, or v < max when exclusive.
func atMost(v, max Version, exclusive bool) bool {
	c := v.Compare(max)
	return c < 0 || (c == 0 && !exclusive)
}
