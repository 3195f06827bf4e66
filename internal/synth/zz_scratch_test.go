package synth

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
)

func TestZZScratch(t *testing.T) {
	var buf bytes.Buffer
	CondorGlobalLog(&buf, CondorLogConfig{Seed: 1, Jobs: 100000, HoldRate: 0.3, Header: true})
	r := eventlog.NewReader(&buf)
	r.Location = time.UTC
	evs, _ := r.ReadAll()
	jobs := eventlog.Group("s", evs)
	b := eventlog.Builder{M: 10, J: 1, SeedCompat: true, Pad: true}
	ss, err := b.Build(jobs)
	if err != nil {
		t.Fatal(err)
	}
	type cnt struct{ rel, rem int }
	pat := map[string]*cnt{}
	keys := []string{}
	for i, s := range ss {
		var sb strings.Builder
		for m := 0; m < s.M; m++ {
			c := -1
			for e := 0; e < s.E; e++ {
				if s.At(0, m, e) == 1 {
					c = e
				}
			}
			fmt.Fprintf(&sb, "%d ", c)
		}
		k := sb.String()
		if i%2 == 1 {
			continue
		}
		if pat[k] == nil {
			pat[k] = &cnt{}
			keys = append(keys, k)
		}
		if s.Label == eventlog.Release {
			pat[k].rel++
		} else {
			pat[k].rem++
		}
	}
	var vis [2][2]int
	for _, s := range ss {
		tr := false
		for m := 1; m < s.M; m++ {
			for _, e := range []int{4, 7, 22, 23, 24} {
				if s.At(0, m, e) == 1 {
					tr = true
				}
			}
		}
		l := 0
		if s.Label == eventlog.Release {
			l = 1
		}
		if tr {
			vis[l][1]++
		} else {
			vis[l][0]++
		}
	}
	t.Logf("visible trouble: remove %v release %v", vis[0], vis[1])
	{
		var c [2][2]int
		for _, s := range ss {
			row0 := -1
			for e := 0; e < s.E; e++ {
				if s.At(0, 0, e) == 1 {
					row0 = e
				}
			}
			tr := false
			prev := row0
			for m := 1; m < s.M; m++ {
				code := -1
				for e := 0; e < s.E; e++ {
					if s.At(0, m, e) == 1 {
						code = e
					}
				}
				if code != prev && (code == 4 || code == 7 || code == 22 || code == 24) {
					tr = true
				}
				prev = code
			}
			l := 0
			if s.Label == eventlog.Release {
				l = 1
			}
			if tr {
				c[l][1]++
			} else {
				c[l][0]++
			}
		}
		tp, fn, fp := c[1][0], c[1][1], c[0][0]
		t.Logf("rule B: remove %v release %v F1 %.3f", c[0], c[1], 2*float64(tp)/float64(2*tp+fn+fp))
	}
	// lookup classifier on odd half
	tp, fp, fn, tn := 0, 0, 0, 0
	for i, s := range ss {
		if i%2 == 0 {
			continue
		}
		var sb strings.Builder
		for m := 0; m < s.M; m++ {
			c := -1
			for e := 0; e < s.E; e++ {
				if s.At(0, m, e) == 1 {
					c = e
				}
			}
			fmt.Fprintf(&sb, "%d ", c)
		}
		pred := true
		if p := pat[sb.String()]; p != nil {
			pred = p.rel >= p.rem
		}
		act := s.Label == eventlog.Release
		switch {
		case pred && act:
			tp++
		case pred && !act:
			fp++
		case !pred && act:
			fn++
		default:
			tn++
		}
	}
	f1 := 2 * float64(tp) / float64(2*tp+fp+fn)
	t.Logf("n=%d lookup: tp %d fp %d fn %d tn %d acc %.3f F1 %.3f", len(ss), tp, fp, fn, tn, float64(tp+tn)/float64(tp+fp+fn+tn), f1)
	sort.Slice(keys, func(i, j int) bool { return pat[keys[i]].rel+pat[keys[i]].rem > pat[keys[j]].rel+pat[keys[j]].rem })
	for _, k := range keys[:min(25, len(keys))] {
		t.Logf("%-40s rel %4d rem %4d", k, pat[k].rel, pat[k].rem)
	}
}
