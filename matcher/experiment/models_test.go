package experiment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFastestMemory(t *testing.T) {
	var s []sample
	// 20 builds: durations 20, 19, ..., 1 at memories 1..20, so the fastest
	// is memory 20 and the fastest tenth (2 builds) has mean memory 19.5.
	for i := 1; i <= 20; i++ {
		s = append(s, sample{Package: "p", Memory: float64(i), Duration: float64(21 - i)})
	}
	in := append([]sample(nil), s...)
	if got := fastestMemory(s, fastestBuild)["p"]; got != 20 {
		t.Errorf("FastestBuild = %g, want 20", got)
	}
	if got := fastestMemory(s, fastestTenth)["p"]; got != 19.5 {
		t.Errorf("FastestTenth = %g, want 19.5", got)
	}
	if diff := cmp.Diff(in, s); diff != "" {
		t.Errorf("input changed:\n%s", diff)
	}
}
