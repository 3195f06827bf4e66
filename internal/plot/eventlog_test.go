package plot

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/plottest"
)

func TestHoldCodes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "holds.png")
	if err := HoldCodes(path, "Holds by HoldReasonCode", map[int]int{1: 40, 3: 7, 12: 130, 13: 2, 26: 55, 34: 9}); err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, path, 600, 400)
	empty := filepath.Join(dir, "none.png")
	if err := HoldCodes(empty, "none", map[int]int{5: 0}); !errors.Is(err, ErrNoData) {
		t.Errorf("no holds: err %v, want ErrNoData", err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a figure was written for no holds (%v)", err)
	}
}
