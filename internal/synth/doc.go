// Package synth holds seeded generators of realistic test data for every
// workflow: cluster job tables, rainbow experiment worlds, HTCondor event logs
// and training curves. Every generator takes an explicit seed or *rand.Rand,
// so the same seed gives the same data.
package synth
