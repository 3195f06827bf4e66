//go:build amd64 && !amd64.v3

package lstm

// blockedGo: on amd64 below GOAMD64=v3 every math.FMA checks the CPU and
// keeps a call to the software fallback beside the instruction, which
// makes the Go compiler spill the blocks' sums around it; one axpy per
// coefficient is faster there. The assembly serves such builds anyway,
// unless built with purego.
const blockedGo = false
