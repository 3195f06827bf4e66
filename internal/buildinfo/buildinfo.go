// Package buildinfo reads what the Go toolchain recorded about the running
// binary: the VCS revision it was built from, for provenance records.
package buildinfo

import "runtime/debug"

// Revision returns the VCS revision the binary was built from and whether
// the checkout had uncommitted changes; ok is false when none was recorded
// (go run and go test record none; go build inside a checkout does).
func Revision() (rev string, dirty, ok bool) {
	bi, found := debug.ReadBuildInfo()
	if !found {
		return "", false, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty, rev != ""
}

// ModuleVersion returns the version of module path in the binary (the
// main module or a dependency), or "" when it is not there or a
// development build.
func ModuleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := ""
	if bi.Main.Path == path {
		v = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			v = d.Version
		}
	}
	if v == "(devel)" {
		v = ""
	}
	return v
}
