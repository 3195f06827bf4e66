package heldjobs

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// specFileIDs are the run ids and slugs of the committed specs' points as
// Sweep gave them when the space took lists only (printed by the loop of
// TestSpecFilesKeepIDs before the space took sweep's vocabulary): list
// axes stay valid, so the same spec files name the same runs, and a ledger
// of an earlier search is resumed, not retrained.
const specFileIDs = `small 39d74cdd26f3ca13 base-s3x6x60s-h4-l1-lr0.003-b32
small 448afbeda41f7f1f base-s3x6x60s-h8-l1-lr0.003-b32
small 100637e65f87cc43 base-s2x4x120s-h4-l1-lr0.003-b32
small 89e57255a8f56597 base-s2x4x120s-h8-l1-lr0.003-b32
published16 eb3f238f224cc91d base-s10x10x30s-h64-l2-lr0.0003-b256
published16 eb884217e650b457 base-s10x10x30s-h64-l2-lr0.001-b256
published16 45c9f90ac9a2164e base-s10x10x30s-h64-l2-lr0.003-b256
published16 541af131c7748f40 base-s10x10x30s-h64-l2-lr0.01-b256
published16 4132e948a4b968d6 base-s10x10x60s-h64-l2-lr0.0003-b256
published16 4176b61ca4df05ea base-s10x10x60s-h64-l2-lr0.001-b256
published16 c1329cf22fadfeb7 base-s10x10x60s-h64-l2-lr0.003-b256
published16 f30c39adf3b38aab base-s10x10x60s-h64-l2-lr0.01-b256
published16 5683b1584eb6011e base-s10x10x120s-h64-l2-lr0.0003-b256
published16 3dd12aae36fc75ac base-s10x10x120s-h64-l2-lr0.001-b256
published16 c38b086e0e9cd136 base-s10x10x120s-h64-l2-lr0.003-b256
published16 54125cdb3499df76 base-s10x10x120s-h64-l2-lr0.01-b256
published16 2e4612f398e23722 base-s10x10x300s-h64-l2-lr0.0003-b256
published16 683cddcd7dad055c base-s10x10x300s-h64-l2-lr0.001-b256
published16 0ac9bc024f6f7753 base-s10x10x300s-h64-l2-lr0.003-b256
published16 42ff500273a79e86 base-s10x10x300s-h64-l2-lr0.01-b256
`

func TestSpecFilesKeepIDs(t *testing.T) {
	var got strings.Builder
	for _, f := range []string{"small", "published16"} {
		r, err := os.Open("../../specs/" + f + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		s, err := LoadSpec(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		_, pts, err := s.Sweep("x")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			fmt.Fprintf(&got, "%s %s %s\n", f, p.ID, p.Slug)
		}
	}
	if got.String() != specFileIDs {
		t.Errorf("points of the spec files:\n%s\nwant\n%s", got.String(), specFileIDs)
	}
}
