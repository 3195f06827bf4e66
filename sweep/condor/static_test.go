package condor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckStatic(t *testing.T) {
	if err := CheckStatic("/bin/sh"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("/bin/sh: %v", err)
	}
	p := filepath.Join(t.TempDir(), "script")
	os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
	if err := CheckStatic(p); !errors.Is(err, ErrInvalid) {
		t.Errorf("a script: %v", err)
	}
}
