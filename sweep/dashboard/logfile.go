package dashboard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crosscluster/crosscluster/sweep"
)

// maxLogRead bounds what is read of a log to show its tail.
const maxLogRead = 64 << 10

// logTail returns the last lines of the log of an attempt of run id, ""
// when there is none. The log is a file a worker wrote, so it is opened
// inside the work directory only (os.Root: no symbolic link or ".."
// leads out of it), never through a symbolic link at its end, without
// blocking (a FIFO opens at once), and read only when it is a regular
// file.
func (d *dash) logTail(workDir, id string, attempt int) (string, error) {
	if attempt <= 0 {
		return "", errors.New("the run has not started")
	}
	if workDir == "" {
		return "", errors.New("the ledger records no work directory (no controller has run it)")
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	rel := filepath.Join(sweep.AttemptDir("", id, attempt), "log")
	f, err := root.OpenFile(rel, os.O_RDONLY|openNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // the run wrote no log
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%v)", rel, fi.Mode().Type())
	}
	off := max(fi.Size()-maxLogRead, 0)
	b := make([]byte, fi.Size()-off)
	k, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(b[:k]), "\n"), "\n")
	if off > 0 && len(lines) > 1 {
		lines = lines[1:] // the first is cut
	}
	if len(lines) > logLines {
		lines = lines[len(lines)-logLines:]
	}
	return strings.ToValidUTF8(strings.Join(lines, "\n"), "\uFFFD"), nil
}
