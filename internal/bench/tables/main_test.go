package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/crosscluster/crosscluster/internal/synth"
)

// TestWriteTable: a table has the header once, exactly the rows asked
// for, and job IDs that are unique to each job (the chunks renumbered) with
// a job's rows together.
func TestWriteTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	const rows = 30*chunk + 17 // three batches of ConteLike jobs (about 12 rows each), the last cut in a job
	jobs, size, err := writeTable(path, synth.ConteLike(), rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() != size {
		t.Errorf("size %d, file %d bytes", size, st.Size())
	}
	if len(recs) != rows+1 || recs[0][9] != "jid" {
		t.Fatalf("%d records (header %q), want a header and %d rows", len(recs), recs[0], rows)
	}
	seen := map[string]bool{}
	last := ""
	for _, r := range recs[1:] {
		if id := r[9]; id != last {
			if seen[id] {
				t.Fatalf("job %s appears in two places", id)
			}
			seen[id], last = true, id
		}
	}
	if len(seen) != jobs {
		t.Errorf("%d distinct jobs, writeTable says %d", len(seen), jobs)
	}
}
