// Package par runs independent tasks on a bounded number of goroutines: the
// one worker pool of the module.
package par

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns how many workers For uses for n tasks when asked for
// workers (≤ 0 means GOMAXPROCS): never more than n, at least 1.
func Workers(n, workers int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(workers, n))
}

// For calls fn(w, k) once for every task k in [0, n), on Workers(n, workers)
// goroutines numbered w = 0, 1, ...; tasks are handed out in increasing k as
// workers free up, so w indexes per-worker scratch memory safely. For returns
// when every call has returned. With one worker the calls run on the
// caller's goroutine, in order.
//
// A panic in fn does not kill the process from a goroutine no recover can
// reach: the remaining tasks are skipped and For panics on the caller's
// goroutine with the first panic's value (wrapped with its worker's stack).
func For(n, workers int, fn func(w, k int)) {
	if n <= 0 {
		return
	}
	nw := Workers(n, workers)
	if nw == 1 {
		for k := range n {
			fn(0, k)
		}
		return
	}
	var (
		next     atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
		once     sync.Once
		panicked any
	)
	work := func(w int) {
		defer func() {
			if r := recover(); r != nil {
				stop.Store(true)
				once.Do(func() { panicked = &Panic{Value: r, Stack: stack()} })
			}
		}()
		for !stop.Load() {
			k := int(next.Add(1) - 1)
			if k >= n {
				return
			}
			fn(w, k)
		}
	}
	for w := 1; w < nw; w++ {
		wg.Go(func() { work(w) })
	}
	work(0)
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// Panic is the value For panics with when a task panicked on a worker.
type Panic struct {
	Value any    // what the task panicked with
	Stack []byte // the worker's stack at the panic
}

func (p *Panic) Error() string { return fmt.Sprintf("par: task panicked: %v\n%s", p.Value, p.Stack) }

func stack() []byte {
	buf := make([]byte, 16<<10)
	return buf[:runtime.Stack(buf, false)]
}
