package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLedgerFileRefused: a path that is not a ledger gets our words, not
// SQLite's, for the controller and for the read-only view.
func TestLedgerFileRefused(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello, this is not SQLite\n"), 0o644)
	for _, tc := range []struct{ path, want string }{
		{empty, "is an empty file, not a ledger"},
		{dir, "is a directory, not a ledger file"},
		{text, "is not a sweep ledger (not an SQLite database)"},
	} {
		for name, open := range map[string]func(string) (*Ledger, error){"OpenLedger": OpenLedger, "OpenLedgerReadOnly": OpenLedgerReadOnly} {
			l, err := open(tc.path)
			if err == nil {
				l.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SQL") && !strings.Contains(err.Error(), "SQLite database") {
				t.Errorf("%s(%s): %v, want %q", name, filepath.Base(tc.path), err, tc.want)
			}
		}
	}
	if b, _ := os.ReadFile(empty); len(b) != 0 {
		t.Errorf("the empty file was written to (%d bytes)", len(b))
	}
}

// TestSlugsDistinct: values that differ only in characters a slug cannot
// hold still get distinct slugs.
func TestSlugsDistinct(t *testing.T) {
	s := &Spec{Name: "sl", Axes: []Axis{{Key: "opt", Values: []Value{strValue("a b"), strValue("a/b"), strValue("a_b"), strValue("a~b"), strValue("a~20b"), strValue("é")}}}}
	pts, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, p := range pts {
		if prev, ok := seen[p.Slug]; ok {
			t.Errorf("slug %q for %q and %q", p.Slug, prev, p.Params["opt"].Lit)
		}
		seen[p.Slug] = p.Params["opt"].Lit
		if strings.ContainsAny(p.Slug, " /\\") {
			t.Errorf("slug %q holds a space or a slash", p.Slug)
		}
	}
	if got := slugText("a b") + " " + slugText("a_b"); got != "a~20b a_b" {
		t.Errorf("slugs %q", got)
	}
}

// TestSpecMessages: an empty choice and a negative seed say what is wrong.
func TestSpecMessages(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: x\nsamples:\n  count: 2\n  seed: 1\n  params:\n    - {key: opt, choice: []}\n", "samples.params[0].choice: malformed spec: line 6: an empty list: a choice needs at least one value"},
		{"name: x\nsamples:\n  count: 2\n  seed: -1\n  params:\n    - {key: lr, uniform: [0, 1]}\n", `samples.seed: malformed spec: line 4: "-1" is not a seed: a whole number from 0 to 18446744073709551615`},
		{"name: x\nsamples:\n  count: -2\n  params:\n    - {key: lr, uniform: [0, 1]}\n", `samples.count: malformed spec: line 3: "-2" is not a sample count`},
	} {
		_, err := LoadSpec(strings.NewReader(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.yaml, err, tc.want)
		}
	}
}
