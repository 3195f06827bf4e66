package regime

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Node describes the nodes of one partition.
type Node struct {
	NodeType        string  `yaml:"node_type" json:"node_type"`
	NodeCores       int     `yaml:"node_cores" json:"node_cores"`
	NodeMemoryGB    float64 `yaml:"node_memory_gb" json:"node_memory_gb"`
	GPUCountPerNode int     `yaml:"gpu_count_per_node" json:"gpu_count_per_node"`
	GPUModel        string  `yaml:"gpu_model,omitempty" json:"gpu_model,omitempty"`
	// WorkloadRegime, when set, overrides the rule for this node type.
	WorkloadRegime Label `yaml:"workload_regime,omitempty" json:"workload_regime,omitempty"`
}

// Cluster describes one cluster's partitions. Default, when set, applies to
// partitions the map does not name.
type Cluster struct {
	Partitions map[string]Node `yaml:"partitions" json:"partitions"`
	Default    *Node           `yaml:"default,omitempty" json:"default,omitempty"`
}

// Hardware is a hardware table: clusters → partitions (or default) → node.
type Hardware struct {
	Clusters map[string]Cluster `yaml:"clusters" json:"clusters"`
}

// lookup returns the node of a cluster's partition, falling back to the
// cluster's default. It reports false when neither is known or partition
// is empty and the cluster has no default.
func (h *Hardware) lookup(cluster, partition string) (Node, bool) {
	if h == nil {
		return Node{}, false
	}
	c, ok := h.Clusters[cluster]
	if !ok {
		return Node{}, false
	}
	if n, ok := c.Partitions[partition]; ok && partition != "" {
		return n, true
	}
	if c.Default != nil {
		return *c.Default, true
	}
	return Node{}, false
}

// ReadHardware decodes a hardware table in YAML (or JSON, which YAML
// accepts) and checks every entry: workload_regime, when set, must be a
// regime; node_cores and gpu_count_per_node must not be negative; and
// node_memory_gb must be positive and finite unless workload_regime is set,
// because an entry without it would otherwise read as a 0 GB (standard
// memory) node. Every error wraps ErrBadValue: a document that does not
// decode (with the YAML decoder's line), or an entry that fails a check,
// named by cluster and partition.
func ReadHardware(r io.Reader) (*Hardware, error) {
	var h Hardware
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("regime: hardware table: %w: %w", ErrBadValue, err)
	}
	for cn, c := range h.Clusters {
		check := func(where string, n Node) error {
			bad := func(what string, v any) error {
				return fmt.Errorf("regime: hardware table: cluster %q %s: %w: %s %v", cn, where, ErrBadValue, what, v)
			}
			switch {
			case n.WorkloadRegime != "" && !n.WorkloadRegime.Valid():
				return bad("workload_regime", strconv.Quote(string(n.WorkloadRegime)))
			case n.NodeCores < 0:
				return bad("node_cores", n.NodeCores)
			case n.GPUCountPerNode < 0:
				return bad("gpu_count_per_node", n.GPUCountPerNode)
			case n.WorkloadRegime == "" && (!(n.NodeMemoryGB > 0) || math.IsInf(n.NodeMemoryGB, 0)):
				return bad("node_memory_gb (missing or not positive, and no workload_regime)", n.NodeMemoryGB)
			}
			return nil
		}
		for pn, n := range c.Partitions {
			if err := check("partition "+pn, n); err != nil {
				return nil, err
			}
		}
		if c.Default != nil {
			if err := check("default", *c.Default); err != nil {
				return nil, err
			}
		}
	}
	return &h, nil
}

// KnownHardware returns a new hardware table for Anvil (Purdue), Conte
// (Purdue) and Stampede (TACC) as their centres' public user guides describe
// them. Anvil's gpu partition has exactly 512 GB per node and is marked
// gpu_standard explicitly. Conte's Xeon Phi coprocessors are not GPUs. Check
// the entries against your own site's records before an authoritative claim.
// Stampede has no default: the public accounting extracts anonymise queue
// names (QUEUE4), so their jobs fall back to the proxy rule.
func KnownHardware() *Hardware {
	return &Hardware{Clusters: map[string]Cluster{
		"anvil": {
			Partitions: map[string]Node{
				"wholenode": {NodeType: "cpu", NodeCores: 128, NodeMemoryGB: 256},
				"wide":      {NodeType: "cpu", NodeCores: 128, NodeMemoryGB: 256},
				"shared":    {NodeType: "cpu", NodeCores: 128, NodeMemoryGB: 256},
				"debug":     {NodeType: "cpu", NodeCores: 128, NodeMemoryGB: 256},
				"highmem":   {NodeType: "largemem", NodeCores: 128, NodeMemoryGB: 1024},
				"gpu":       {NodeType: "gpu", NodeCores: 128, NodeMemoryGB: 512, GPUCountPerNode: 4, GPUModel: "NVIDIA A100 40GB", WorkloadRegime: GPUStandard},
				"gpu-debug": {NodeType: "gpu", NodeCores: 128, NodeMemoryGB: 512, GPUCountPerNode: 4, GPUModel: "NVIDIA A100 40GB", WorkloadRegime: GPUStandard},
			},
		},
		"conte": {
			Default: &Node{NodeType: "cpu", NodeCores: 16, NodeMemoryGB: 64},
		},
		"stampede": {
			Partitions: map[string]Node{
				"normal":      {NodeType: "cpu", NodeCores: 16, NodeMemoryGB: 32},
				"development": {NodeType: "cpu", NodeCores: 16, NodeMemoryGB: 32},
				"largemem":    {NodeType: "largemem", NodeCores: 32, NodeMemoryGB: 1024},
				"gpu":         {NodeType: "gpu", NodeCores: 16, NodeMemoryGB: 32, GPUCountPerNode: 1, GPUModel: "NVIDIA K20"},
			},
		},
	}}
}
