package matcher_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/matcher"
	"github.com/crosscluster/crosscluster/matcher/experiment"
)

// versionCases are range checks of the kinds rainbow's jobspecs and the
// reliabuild data hold: plain three-part versions, two-part and one-part
// ones, a v prefix, four parts, release candidates and other pre-releases,
// build metadata, equal ends.
var versionCases = [][3]string{ // version, min, max
	{"1.2.3", "1.0.0", "2.0.0"}, {"2.0.0", "1.0.0", "2.0.0"}, {"1.0.0", "1.0.0", "2.0.0"},
	{"0.9.9", "1.0.0", "2.0.0"}, {"2.0.1", "1.0.0", "2.0.0"}, {"1.2", "1.0", "1.5"},
	{"7", "6", "8"}, {"v1.4.0", "1.0.0", "2.0.0"}, {"1.4.0", "v1.0.0", "v2.0.0"},
	{"10.0.0", "9.0.0", "11.0.0"}, {"1.10.0", "1.9.0", "1.11.0"}, {"3.2.00", "3.0.0", "3.5.0"},
	{"1.2.3+build.5", "1.0.0", "2.0.0"}, {"2.0.0+meta", "1.0.0", "2.0.0"},
	{"1.0.0-rc.1", "0.9.0", "2.0.0"}, {"2.0.0-rc.1", "1.0.0", "2.0.0"}, {"1.0.0-rc.1", "1.0.0", "2.0.0"},
	{"1.0.0-beta", "1.0.0-alpha", "1.0.0"}, {"1.5.0-alpha", "1.0.0", "2.0.0"}, {"1.0rc1", "0.9", "1.1"},
	{"2.0.0beta", "1.0.0", "3.0.0"}, {"1.2.3.4", "1.2.3", "1.2.4"}, {"1.2.3.4", "1.0.0", "2.0.0"},
	{"1.2.3", "1.2.3.1", "2.0.0"}, {"1.2.3.0", "1.2.3", "1.2.3"}, {"2024.1.0", "2023.0.0", "2025.0.0"},
	{"8912645823", "1", "9000000000"}, {"1.0.0", "1.0.0", "1.0.0"}, {"1.0.1", "1.0.0", "1.0.0"},
	{"0.0.1", "0.0.0", "0.0.2"}, {"1.2.3-rc.1", "1.2.3-rc.1", "1.2.3"}, {"1.2.3", "1.2.3-alpha", "1.2.3-beta"},
}

// ours matches version against [min, max] with the inclusive rule.
func ours(v, min, max string) (bool, string) {
	c := matcher.Cluster{Name: "c", Subsystems: map[string]*matcher.Subsystem{"pkg": {Name: "pkg", Vertices: []matcher.Vertex{{Fields: map[string]string{"version": v}}}}}}
	j := matcher.Job{Requires: []matcher.Requirement{{Subsystem: "pkg", Field: "version", Op: matcher.InRange, Min: min, Max: max}}}
	res := (matcher.Rules{}).Match(&j, &c)
	if res.Verdict == matcher.Matched {
		return true, ""
	}
	return false, res.Reasons[0].Kind.String()
}

// reference matches with Masterminds semver v3 (the library rainbow's
// range checks use), as a constraint ">= min, <= max".
func reference(v, min, max string) (bool, string) {
	sv, err := semver.NewVersion(v)
	if err != nil {
		return false, "unparseable version"
	}
	c, err := semver.NewConstraint(">= " + min + ", <= " + max)
	if err != nil {
		return false, "unparseable range"
	}
	return c.Check(sv), ""
}

// knownVersionDifferences are the cases where this package answers
// differently from Masterminds semver, each for a reason docs/rainbow.md
// gives; a change in the list fails the test so that it is looked at.
var knownVersionDifferences = []string{
	"1.0.0-rc.1 in [0.9.0, 2.0.0]",
	"2.0.0-rc.1 in [1.0.0, 2.0.0]",
	"1.5.0-alpha in [1.0.0, 2.0.0]",
	"1.0rc1 in [0.9, 1.1]",
	"2.0.0beta in [1.0.0, 3.0.0]",
	"1.2.3.4 in [1.2.3, 1.2.4]",
	"1.2.3.4 in [1.0.0, 2.0.0]",
	"1.2.3.0 in [1.2.3, 1.2.3]",
}

// TestVersionsAgainstMasterminds compares every case with the reference
// and checks that the differences are exactly the documented ones.
func TestVersionsAgainstMasterminds(t *testing.T) {
	var diff []string
	for _, c := range versionCases {
		o, why := ours(c[0], c[1], c[2])
		r, rwhy := reference(c[0], c[1], c[2])
		if o != r {
			name := fmt.Sprintf("%s in [%s, %s]", c[0], c[1], c[2])
			diff = append(diff, name)
			t.Logf("%-36s here %v (%s), Masterminds %v (%s)", name, o, why, r, rwhy)
		}
	}
	t.Logf("%d of %d cases differ", len(diff), len(versionCases))
	if !slices.Equal(diff, knownVersionDifferences) {
		t.Errorf("differences from Masterminds semver changed:\n got  %s\n want %s", strings.Join(diff, "; "), strings.Join(knownVersionDifferences, "; "))
	}
}

// TestReliabuildVersionsAgainstMasterminds runs every range of the
// published reliabuild jobspecs against every cluster's version of that
// dependency, here and with Masterminds semver; every disagreement must be
// of one of the two documented kinds (a pre-release inside release
// bounds, or a version Masterminds cannot parse).
func TestReliabuildVersionsAgainstMasterminds(t *testing.T) {
	dir := filepath.Join(pubdata.Need(t, "rainbow"), "reliabuild")
	w, err := experiment.LoadVersionWorld(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ v, min, max string }
	seen := map[key]bool{}
	checked, differ := 0, map[string]int{}
	for _, j := range w.Jobs {
		for _, r := range j.Ranges {
			for _, c := range w.Clusters {
				v, ok := c.Versions[r.Subsystem]
				if !ok {
					continue
				}
				k := key{v, r.Min, r.Max}
				if seen[k] {
					continue
				}
				seen[k] = true
				checked++
				o, _ := ours(v, r.Min, r.Max)
				ref, _ := reference(v, r.Min, r.Max)
				if o == ref {
					continue
				}
				sv, perr := semver.NewVersion(v)
				switch {
				case perr != nil:
					differ["version Masterminds cannot parse"]++
				case sv.Prerelease() != "":
					differ["pre-release inside release bounds"]++
				default:
					t.Errorf("%s in [%s, %s]: here %v, Masterminds %v, for no documented reason", v, r.Min, r.Max, o, ref)
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d distinct checks: data not as expected", checked)
	}
	t.Logf("%d distinct (version, range) checks from the reliabuild data; differences by kind: %v", checked, differ)
}
