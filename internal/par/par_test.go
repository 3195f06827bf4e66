package par

import (
	"strings"
	"sync/atomic"
	"testing"
)

func TestForRunsEachTaskOnce(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, workers int
	}{
		{"none", 0, 4}, {"serial", 100, 1}, {"default", 1000, 0}, {"more workers than tasks", 3, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counts := make([]atomic.Int32, tc.n)
			maxW := atomic.Int32{}
			For(tc.n, tc.workers, func(w, k int) {
				counts[k].Add(1)
				for {
					m := maxW.Load()
					if int32(w) <= m || maxW.CompareAndSwap(m, int32(w)) {
						break
					}
				}
			})
			for k := range counts {
				if c := counts[k].Load(); c != 1 {
					t.Fatalf("task %d ran %d times", k, c)
				}
			}
			if tc.n > 0 && int(maxW.Load()) >= Workers(tc.n, tc.workers) {
				t.Errorf("worker index %d not below Workers = %d", maxW.Load(), Workers(tc.n, tc.workers))
			}
		})
	}
}

func TestForPanicReachesCaller(t *testing.T) {
	defer func() {
		r := recover()
		p, ok := r.(*Panic)
		if !ok {
			t.Fatalf("recovered %T %v, want *Panic", r, r)
		}
		if p.Value != "boom" || !strings.Contains(p.Error(), "boom") {
			t.Errorf("panic value %v", p.Value)
		}
	}()
	For(1000, 4, func(w, k int) {
		if k == 500 {
			panic("boom")
		}
	})
	t.Fatal("For returned after a task panicked")
}
