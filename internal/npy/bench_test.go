package npy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkArchiveFloat64(b *testing.B) {
	for _, n := range []int{1e3, 1e6} {
		for _, compress := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%.0e/compress=%v", float64(n), compress), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				x := make([]float64, n)
				for i := range x {
					x[i] = r.NormFloat64()
				}
				var buf bytes.Buffer
				z := NewZipWriter(&buf, compress)
				if err := z.Add("x", []int{n}, x); err != nil {
					b.Fatal(err)
				}
				if err := z.Close(); err != nil {
					b.Fatal(err)
				}
				data := buf.Bytes()
				b.SetBytes(int64(8 * n))
				b.ReportAllocs()
				for b.Loop() {
					a, err := OpenArchive(bytes.NewReader(data), int64(len(data)))
					if err != nil {
						b.Fatal(err)
					}
					arr, err := a.Array("x")
					if err != nil {
						b.Fatal(err)
					}
					if _, err := arr.Float64(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
