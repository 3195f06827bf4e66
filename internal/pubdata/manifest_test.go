package pubdata

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crosscluster/crosscluster/internal/testenv"
)

// TestManifest checks scripts/testdata.tsv, the checksum list that
// scripts/fetch-testdata.sh downloads and verifies, against the copy of the
// data on this machine: every listed file is present with its size and
// SHA-256, and every data file present is listed (SOURCES.md files are the
// data owner's descriptions and are not downloaded).
func TestManifest(t *testing.T) {
	root, err := Root()
	if err != nil {
		testenv.Skip(t, err)
	}
	f, err := os.Open("../../scripts/testdata.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 4 {
			t.Fatalf("testdata.tsv:%d: %d columns, want 4 (path, sha256, size, urls)", line, len(cols))
		}
		path, sum, sizeText, urls := cols[0], cols[1], cols[2], cols[3]
		listed[path] = true
		if !strings.HasPrefix(urls, "https://") {
			t.Errorf("testdata.tsv:%d: source %q is not an https URL", line, urls)
		}
		size, err := strconv.ParseInt(sizeText, 10, 64)
		if err != nil {
			t.Fatalf("testdata.tsv:%d: size %q: %v", line, sizeText, err)
		}
		got, n, err := hashFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got != sum || n != size {
			t.Errorf("%s: sha256 %s, %d bytes; testdata.tsv says %s, %d bytes", path, got, n, sum, size)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "SOURCES.md" {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if !listed[filepath.ToSlash(rel)] {
			t.Errorf("%s is in %s but not in scripts/testdata.tsv", rel, root)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

func TestRootFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(Env, dir)
	got, err := Root()
	if err != nil || got != dir {
		t.Fatalf("Root() = %q, %v; want %q", got, err, dir)
	}
	if _, err := Dir("htcondor"); err == nil {
		t.Error("Dir found a source that is not there")
	}
	t.Setenv(Env, filepath.Join(dir, "nope"))
	if _, err := Root(); err == nil {
		t.Error("Root accepted a missing $" + Env)
	}
}
