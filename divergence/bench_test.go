package divergence

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crosscluster/crosscluster/internal/cputime"
	"github.com/crosscluster/crosscluster/internal/npy"
)

// BenchmarkCompare is the Go side of bench/divergence/peer.py: 3 hosts x 2
// keys (omega_b: n float64, 1-D; z_b: the same n values as (n/2, 2)),
// x_i = sin(i*1e-3 + h*1e-9) for host h, stored and deflated. The archives
// are written to a temporary directory before timing starts.
//
//	go test ./divergence/ -run '^$' -bench Compare -benchtime 3x
//
// The "norm" sub-benchmarks are the peer's work; "allclose" adds the
// element-wise statistics (Options.Close).
func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{1e5, 1e7} {
		for _, compress := range []bool{false, true} {
			mode := map[bool]string{false: "stored", true: "compressed"}[compress]
			b.Run(fmt.Sprintf("n=%.0e/%s", float64(n), mode), func(b *testing.B) {
				dir := b.TempDir()
				var runs []NamedRun
				x := make([]float64, n)
				for h := range 3 {
					for i := range x {
						x[i] = math.Sin(float64(i)*1e-3 + float64(h)*1e-9)
					}
					p := filepath.Join(dir, fmt.Sprintf("h%d.npz", h))
					if err := writeBenchArchive(p, x, compress); err != nil {
						b.Fatal(err)
					}
					runs = append(runs, NamedRun{Name: fmt.Sprint("h", h), Path: p})
				}
				x = nil
				for _, allclose := range []bool{false, true} {
					name := "norm"
					opt := Options{}
					if allclose {
						// The element-wise statistics of assert_allclose too.
						name, opt.Close = "allclose", map[string]Closeness{"*": {RTol: 1e-7}}
					}
					b.Run(name, func(b *testing.B) {
						b.SetBytes(int64(3 * 2 * 8 * n))
						b.ReportAllocs()
						// CPU time (all threads) per op is reported beside wall
						// time because the machine the numbers come from is shared.
						before := cpuTime()
						ops := 0
						for b.Loop() {
							rows := compareRows(runs, []string{"z_b", "omega_b"}, opt)
							if len(rows) != 6 || rows[0].Warning != "" || allclose != (rows[0].Elements == n) {
								b.Fatalf("rows %v", rows)
							}
							ops++
						}
						b.ReportMetric((cpuTime()-before).Seconds()/float64(ops), "cpu-s/op")
					})
				}
			})
		}
	}
}

// cpuTime is this process's CPU time (0 where the system cannot tell).
func cpuTime() time.Duration {
	d, _ := cputime.Self()
	return d
}

func writeBenchArchive(path string, x []float64, compress bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	z := npy.NewZipWriter(f, compress)
	if err := z.Add("omega_b", []int{len(x)}, x); err != nil {
		return err
	}
	if err := z.Add("z_b", []int{len(x) / 2, 2}, x); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return f.Close()
}
