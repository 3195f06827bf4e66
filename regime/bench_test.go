package regime

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// telemetryText returns a FRESCO-style CSV of n rows, three samples per job.
func telemetryText(n int) []byte {
	var b strings.Builder
	b.WriteString("time,submit_time,start_time,end_time,timelimit,nhosts,ncores,queue,host,jid,value_cpuuser,value_gpu,value_memused\n")
	for i := range n {
		fmt.Fprintf(&b, "2023-02-01 00:%02d:00,2023-02-01 00:00:00,2023-02-01 00:01:00,2023-02-01 01:01:00,7200,1,16,shared,h%d,J%d,%d,,%d.5\n",
			i%60, i%7, i/3, i%100, i%256)
	}
	return []byte(b.String())
}

func BenchmarkReadCSVAggregate(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			data := telemetryText(n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				tab, err := readCSV(bytes.NewReader(data), "bench.csv", "anvil")
				if err != nil {
					b.Fatal(err)
				}
				aggregate(tab, nil)
			}
		})
	}
}
