package regime

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

func TestZZHarness2(t *testing.T) {
	if os.Getenv("HARNESS2") == "" {
		t.Skip()
	}
	g := 1.5
	var buf bytes.Buffer
	parquet.Write(&buf, []pqRow{{Jid: "J1", Queue: "q", EndTime: "2023-01-01 00:00:00", ValueGPU: &g}})
	seed := buf.Bytes()
	rng := rand.New(rand.NewPCG(1, 2))
	deadline := time.Now().Add(60 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		d := bytes.Clone(seed)
		k := 1 + rng.IntN(8)
		for range k {
			switch rng.IntN(3) {
			case 0:
				d[rng.IntN(len(d))] = byte(rng.IntN(256))
			case 1:
				i := rng.IntN(len(d))
				d[i] ^= 1 << rng.IntN(8)
			case 2:
				i := rng.IntN(len(d) - 4)
				copy(d[i:], []byte{0xff, 0xff, 0xff, 0x7f}[:min(4, len(d)-i)])
			}
		}
		os.WriteFile("/tmp/lastpq.bin", d, 0o644)
		ReadParquet(bytes.NewReader(d), int64(len(d)), "x", "c")
		n++
	}
	t.Logf("%d inputs", n)
}
