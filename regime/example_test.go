package regime_test

import (
	"fmt"
	"strings"

	"github.com/crosscluster/crosscluster/regime"
)

func ExampleRules_Node() {
	var r regime.Rules // 512 GB threshold, node_memory_gb >= 512 is large
	fmt.Println(r.Node(regime.Node{NodeMemoryGB: 256}))
	fmt.Println(r.Node(regime.Node{NodeMemoryGB: 1024}))
	fmt.Println(r.Node(regime.Node{NodeMemoryGB: 512, GPUCountPerNode: 4}))
	// Anvil's GPU nodes have exactly 512 GB but are standard GPU nodes.
	fmt.Println(r.Node(regime.Node{NodeMemoryGB: 512, GPUCountPerNode: 4, WorkloadRegime: regime.GPUStandard}))
	// Output:
	// cpu_standard
	// cpu_largemem
	// gpu_largemem
	// gpu_standard
}

func ExampleSafeFeatures() {
	const cpuCluster = `jid,submit_time,start_time,end_time,timelimit,nhosts,ncores,value_gpu
a1,2023-02-01 00:00:00,2023-02-01 00:01:00,2023-02-01 00:31:00,3600,1,16,
a2,2023-02-01 00:00:00,2023-02-01 00:05:00,2023-02-01 00:06:00,3600,1,4,
`
	const gpuCluster = `jid,submit_time,start_time,end_time,timelimit,nhosts,ncores,value_gpu
b1,2023-02-01 00:00:00,2023-02-01 00:00:10,2023-02-01 00:10:10,1800,1,8,80
`
	read := func(name, text string) []regime.Job {
		tab, err := regime.ReadCSV(strings.NewReader(text), name+".csv", name)
		if err != nil {
			panic(err)
		}
		jobs := regime.Aggregate(tab, regime.DefaultUnits())
		regime.Rules{}.LabelAll(jobs)
		return jobs
	}
	a, b := read("cpu", cpuCluster), read("gpu", gpuCluster)
	fmt.Println(a[0].Regime, b[0].Regime, a[0].Basis)
	fmt.Println(regime.SafeFeatures(nil, a, b))
	// Output:
	// cpu_standard gpu_standard proxy-only
	// [ncores nhosts timelimit_sec runtime_sec queue_time_sec runtime_fraction value_gpu_cnt]
}
