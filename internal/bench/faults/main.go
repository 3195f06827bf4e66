// Command faults measures what the first touch of fresh memory costs in a
// new process: it allocates -mb MiB, writes one byte per 4 KiB page on
// -threads goroutines, and prints the wall time, the process's kernel CPU
// time and its minor page faults over the touch. With -huge (Linux) the
// memory is mapped outside the Go heap and advised for transparent huge
// pages, as NumPy advises arrays of 4 MiB and more. docs/overlap.md quotes
// it for the cost of overlap.Fit's column copy on a fresh process:
//
//	go run ./internal/bench/faults -mb 48 -threads 2
//	go run ./internal/bench/faults -mb 110 -huge
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"
)

func main() {
	mb := flag.Int("mb", 48, "MiB to touch")
	threads := flag.Int("threads", 1, "goroutines touching the memory")
	huge := flag.Bool("huge", false, "map the memory outside the Go heap and advise transparent huge pages (Linux)")
	flag.Parse()
	n := *mb << 20
	var b []byte
	if *huge {
		var err error
		if b, err = hugeMap(n); err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.Exit(1)
		}
	} else {
		b = make([]byte, n)
	}
	u0, ok0 := usage()
	t := time.Now()
	var wg sync.WaitGroup
	for w := range max(1, *threads) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := w*n/max(1, *threads), (w+1)*n/max(1, *threads)
			for i := lo; i < hi; i += 4096 {
				b[i] = 1
			}
		}()
	}
	wg.Wait()
	wall := time.Since(t)
	u1, ok1 := usage()
	if !ok0 || !ok1 {
		fmt.Printf("%d MiB, %d threads, huge %v: wall %v\n", *mb, *threads, *huge, wall)
		return
	}
	fmt.Printf("%d MiB, %d threads, huge %v: wall %v, kernel CPU %v, %d minor faults\n",
		*mb, *threads, *huge, wall, u1.sys-u0.sys, u1.minflt-u0.minflt)
}
