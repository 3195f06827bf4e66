package buildinfo

import "testing"

// Test binaries record no VCS revision; the functions say so instead of
// inventing one.
func TestTestBinary(t *testing.T) {
	if rev, _, ok := Revision(); ok && rev == "" {
		t.Errorf("ok with an empty revision")
	}
	if v := ModuleVersion("example.com/not/linked"); v != "" {
		t.Errorf("version %q of a module not in the binary", v)
	}
}
