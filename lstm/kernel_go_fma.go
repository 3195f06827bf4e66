//go:build !amd64 || amd64.v3

package lstm

// blockedGo: math.FMA is one instruction here, so gemm's pure-Go blocks
// (kernel_go.go) run.
const blockedGo = true
