package plot

import (
	"slices"
	"testing"
)

// TestShortNames: long file-stem names lose the parts they all share at
// the same place, so the heatmap's axes stay readable (the full names
// overlapped each other); short names are kept as they are.
func TestShortNames(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
		changed  bool
	}{
		{[]string{"anvil", "conte", "stampede"}, []string{"anvil", "conte", "stampede"}, false},
		{[]string{"stampede_feb_2018_job_accounting-1", "stampede_feb_2018_job_accounting-2", "stampede_mar_2018_job_accounting-1"},
			[]string{"feb-1", "feb-2", "mar-1"}, true},
		{[]string{"a_very_long_cluster_name_one", "b"}, []string{"a_very_long_clust…", "b"}, true},
		{[]string{"cluster_alpha_with_a_long_name", "cluster_alpha_with_a_long_name"}, []string{"cluster_alpha_wit…", "cluster_alpha_wit…"}, true},
	} {
		got, changed := shortNames(tc.in)
		if !slices.Equal(got, tc.want) || changed != tc.changed {
			t.Errorf("shortNames(%q) = %q, %v; want %q, %v", tc.in, got, changed, tc.want, tc.changed)
		}
	}
}
