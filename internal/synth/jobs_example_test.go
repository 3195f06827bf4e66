package synth_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/crosscluster/crosscluster/internal/synth"
)

// Two seeded clusters' telemetry tables, written as FRESCO-style CSV.
func ExampleJobsWriteCSV() {
	rng := rand.New(rand.NewPCG(1, 2))
	anvil := synth.JobTable(synth.AnvilLike(), 50, rng)
	conte := synth.JobTable(synth.ConteLike(), 50, rng)
	var buf bytes.Buffer
	if err := synth.JobsWriteCSV(&buf, append(anvil, conte...)); err != nil {
		fmt.Println(err)
		return
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	fmt.Println(lines[0])
	fmt.Println(len(lines)-1 == len(anvil)+len(conte))
	// Output:
	// time,submit_time,start_time,end_time,timelimit,nhosts,ncores,queue,host,jid,username,exitcode,cluster,value_cpuuser,value_gpu,value_memused
	// true
}
