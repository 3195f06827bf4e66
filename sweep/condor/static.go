package condor

import (
	"debug/elf"
	"fmt"
)

// CheckStatic reports whether the executable at path can be shipped to an
// HTCondor execute point on its own: a Linux ELF file with no program
// interpreter and no shared-library dependency, as Go builds with
// CGO_ENABLED=0. Anything else is an error wrapping ErrInvalid that says
// how to build one.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("condor: %w: %s is not an ELF executable for an execute point (%v); build one with CGO_ENABLED=0 GOOS=linux go build", ErrInvalid, path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("condor: %w: %s is dynamically linked (it has a program interpreter); build it with CGO_ENABLED=0 go build", ErrInvalid, path)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("condor: %w: %s needs shared libraries %v; build it with CGO_ENABLED=0 go build", ErrInvalid, path, libs)
	}
	return nil
}
