package eventlog_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/eventlog"
	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/pubdata"
	"github.com/crosscluster/crosscluster/internal/synth"
)

// benchGB streams that many gigabytes through BenchmarkRead's "large" case:
//
//	go test -run '^$' -bench 'Read/size=large' -eventlog.gb 1 ./eventlog/
var benchGB = flag.Float64("eventlog.gb", 0, "also run BenchmarkRead on this many GB of synthetic log (e.g. 1)")

// repeatReader streams data n times: a large log without holding it in
// memory. Each copy is a complete log, so the reader sees whole events.
type repeatReader struct {
	data []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.data[r.off:])
	r.off += k
	if r.off == len(r.data) {
		r.off = 0
		r.n--
	}
	return k, nil
}

func synthLog(b *testing.B, size int64) []byte {
	b.Helper()
	var buf bytes.Buffer
	buf.Grow(int(size + size/8))
	if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: 1, Bytes: size, Noise: true, JobAds: true, Header: true}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkRead(b *testing.B) {
	const chunk = 16 << 20
	data := synthLog(b, chunk)
	sizes := []struct {
		name   string
		copies int
	}{{"size=16MB", 1}, {"size=128MB", 8}}
	if *benchGB > 0 {
		sizes = append(sizes, struct {
			name   string
			copies int
		}{"size=large", int(*benchGB * (1 << 30) / float64(len(data)))})
	}
	for _, mode := range []struct {
		name string
		fold bool
	}{{"keep", false}, {"fold", true}} {
		for _, sz := range sizes {
			b.Run(mode.name+"/"+sz.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)) * int64(sz.copies))
				b.ReportAllocs()
				var events, maxHeap uint64
				var ms0, ms1, ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms0)
				cpu0 := cpuTime()
				for b.Loop() {
					r := eventlog.NewReader(&repeatReader{data: data, n: sz.copies})
					r.Year, r.Location, r.FoldJobAds = 2024, time.UTC, mode.fold
					readEach(b, r, func() {
						events++
						if events%(1<<15) == 0 {
							runtime.ReadMemStats(&ms)
							maxHeap = max(maxHeap, ms.HeapInuse)
						}
					})
				}
				cpu := cpuTime() - cpu0
				runtime.ReadMemStats(&ms1)
				// On a shared machine wall time includes waiting for a
				// core; CPU time (user+system of the whole process, GC
				// included) is what one core spends.
				b.ReportMetric(float64(len(data))*float64(sz.copies)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(events), "allocs/event")
				b.ReportMetric(float64(maxHeap)/(1<<20), "max-heap-MB")
				b.ReportMetric(float64(events)/float64(b.N), "events/op")
			})
		}
	}
}

func BenchmarkBuild(b *testing.B) {
	for _, jobsN := range []int{2000, 10000} {
		var buf bytes.Buffer
		if _, err := synth.CondorGlobalLog(&buf, synth.CondorLogConfig{Seed: 2, Jobs: jobsN, HoldRate: 0.3}); err != nil {
			b.Fatal(err)
		}
		r := eventlog.NewReader(&buf)
		r.Year, r.Location = 2023, time.UTC
		evs, err := r.ReadAll()
		if err != nil {
			b.Fatal(err)
		}
		jobs := eventlog.Group("bench", evs)
		for _, compat := range []bool{false, true} {
			name := fmt.Sprintf("jobs=%d/m=10/j=10/seedcompat=%v", jobsN, compat)
			b.Run(name, func(b *testing.B) {
				bl := eventlog.Builder{M: 10, J: 10, Seed: 1, SeedCompat: compat}
				b.ReportAllocs()
				n := 0
				start := time.Now()
				cpu0 := cpuTime()
				for b.Loop() {
					s, err := bl.Build(jobs)
					if err != nil {
						b.Fatal(err)
					}
					n += len(s)
				}
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "samples/s")
				b.ReportMetric(float64(n)/(cpuTime()-cpu0).Seconds(), "samples/cpu-s")
				b.ReportMetric(float64(n)/float64(b.N), "samples/op")
			})
		}
	}
}

// cpuTime is this process's CPU time (0 where the system cannot tell).
func cpuTime() time.Duration {
	d, _ := cputime.Self()
	return d
}

// realLog concatenates the real HTCondor event logs of the test data
// (pubdata's htcondor source, read in place) and repeats them to at least
// size bytes, each copy whole, so the benchmark reads text shaped like real
// logs: their codes, bodies, placeholder ids and yearless dates.
func realLog(b *testing.B, size int) []byte {
	b.Helper()
	dir := pubdata.Need(b, "htcondor")
	paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no .log files in %s: %v", dir, err)
	}
	var one []byte
	for _, p := range paths {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, d...)
		if len(d) > 0 && d[len(d)-1] != '\n' {
			one = append(one, '\n')
		}
	}
	return bytes.Repeat(one, (size+len(one)-1)/len(one))
}

// BenchmarkReadReal reads 64 MB of the real logs, repeated, event by event
// (classic text, lenient as the examples read, 028 events kept). Each
// iteration is one read of the whole 64 MB from a fresh Reader; the
// MB/cpu-s metric is bytes over the process's CPU time (user+system, GC
// included). A steady state is many iterations in one process:
//
//	go test -run '^$' -bench ReadReal -benchtime 10x -count 7 ./eventlog/
//
// and a fresh process is one iteration per process:
//
//	for i in 1 2 3 4 5 6 7; do go test -run '^$' -bench ReadReal -benchtime 1x -count 1 ./eventlog/; done
func BenchmarkReadReal(b *testing.B) {
	data := realLog(b, 64<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	cpu0 := cpuTime()
	for b.Loop() {
		r := eventlog.NewReader(bytes.NewReader(data))
		r.Year, r.Location, r.Lenient = 2024, time.UTC, true
		readEach(b, r, func() { events++ })
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// readEach reads r to its end, calling each after every event; an error
// fails the benchmark.
func readEach(b *testing.B, r *eventlog.Reader, each func()) {
	for {
		_, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		each()
	}
}
