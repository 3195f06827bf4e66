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

func ExampleScreenProfiles() {
	const cpuCluster = `jid,submit_time,start_time,end_time,timelimit,nhosts,ncores,value_gpu
a1,2023-02-01 00:00:00,2023-02-01 00:01:00,2023-02-01 00:31:00,3600,1,16,
a2,2023-02-01 00:00:00,2023-02-01 00:05:00,2023-02-01 00:06:00,3600,1,4,
`
	const gpuCluster = `jid,submit_time,start_time,end_time,timelimit,nhosts,ncores,value_gpu
b1,2023-02-01 00:00:00,2023-02-01 00:00:10,2023-02-01 00:10:10,1800,1,8,80
`
	read := func(name, text string) []regime.Job {
		tab, err := regime.ReadJobsCSV(strings.NewReader(text), name+".csv", regime.ReadConfig{Cluster: name, Units: regime.DefaultUnits()})
		if err != nil {
			panic(err)
		}
		jobs := tab.Jobs
		regime.Rules{}.LabelAll(jobs)
		return jobs
	}
	a, b := read("cpu", cpuCluster), read("gpu", gpuCluster)
	fmt.Println(a[0].Regime, b[0].Regime, a[0].Basis)
	profile := func(jobs []regime.Job) *regime.FeatureProfile {
		p := regime.NewFeatureProfile(nil)
		for i := range jobs {
			p.Add(&jobs[i])
		}
		return p
	}
	s := regime.ScreenProfiles(nil, []string{"cpu", "gpu"}, profile(a), profile(b))
	fmt.Println(s.Features)
	for _, d := range s.Dropped {
		fmt.Println(d.Name+":", d.Reason)
	}
	// Output:
	// cpu_standard gpu_standard proxy-only
	// [ncores timelimit_sec runtime_sec queue_time_sec runtime_fraction]
	// nhosts: constant (1) in every cluster: zero variance
}
