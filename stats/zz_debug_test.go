package stats

import (
	"testing"
	"time"
)

func TestZZDebug(t *testing.T) {
	var g ksDistGolden
	ksLoadJSON(t, "ks_dist.json", &g)
	for _, c := range g.KSTwo {
		st := time.Now()
		KolmogorovSF(c.N, c.X)
		KolmogorovCDF(c.N, c.X)
		if el := time.Since(st); el > 20*time.Millisecond {
			t.Logf("slow kstwo n=%d x=%g %s %v", c.N, c.X, c.Branch, el)
		}
	}
	for _, c := range g.Smirnov {
		st := time.Now()
		SmirnovSF(c.N, c.X)
		if el := time.Since(st); el > 20*time.Millisecond {
			t.Logf("slow smirnov n=%d x=%g %v", c.N, c.X, el)
		}
	}
}
