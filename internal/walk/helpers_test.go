package walk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/pubdata"
)

// testErr is the ErrorFunc of the tests: a plain error with the location.
type testErr struct {
	file, path string
	line       int
	err        error
}

func (e *testErr) Error() string { return e.file + " " + e.path + ": " + e.err.Error() }
func (e *testErr) Unwrap() error { return e.err }

func mk(file, path string, line int, err error) error { return &testErr{file, path, line, err} }

// rainbowFile returns the bytes of a file of the public rainbow data, or
// skips t.
func rainbowFile(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pubdata.Need(t, "rainbow"), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seedFile adds the first bytes of a real data file to a corpus when the
// shared data is present.
func seedFile(f *testing.F, rel string, n int) {
	dir, err := pubdata.Dir("rainbow")
	if err != nil {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		return
	}
	f.Add(b[:min(n, len(b))])
	f.Add(b[:min(n/3, len(b))]) // truncated mid-document
}
