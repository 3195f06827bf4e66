package lstm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// kernelTol bounds the difference between the FMA kernels and the Go loops:
// FMA rounds once per multiply-add instead of twice, a relative 1e-16 per
// term over at most a few hundred terms of order 1.
const kernelTol = 1e-12

// TestGemmAcc checks gemm in float64 (assembly where available) against a naive
// triple loop, for sizes that exercise the 8×16 and 4×8 blocks and the
// edges the Go loops handle.
func TestGemmAcc(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 3))
	for _, sz := range [][3]int{{1, 1, 1}, {4, 8, 3}, {5, 9, 7}, {1, 32, 4}, {3, 70, 5}, {8, 256, 64}, {7, 33, 0}} {
		R, C, n := sz[0], sz[1], sz[2]
		for _, layout := range []string{"rows", "cols"} {
			t.Run(fmt.Sprintf("R=%d/C=%d/n=%d/%s", R, C, n, layout), func(t *testing.T) {
				cRow, cStep := n, 1
				if layout == "cols" {
					cRow, cStep = 1, R
				}
				c := randSlice(rnd, R*max(n, 1))
				w := randSlice(rnd, max(n, 1)*C+3)
				d := randSlice(rnd, R*C+2)
				want := append([]float64(nil), d...)
				for r := range R {
					for j := range C {
						for p := range n {
							want[r*C+j] += c[r*cRow+p*cStep] * w[p*C+j]
						}
					}
				}
				gemm(kernelsFor[float64](), R, C, n, c, cRow, cStep, w, C, d, C)
				for i := range want {
					if math.Abs(want[i]-d[i]) > kernelTol {
						t.Fatalf("element %d: got %v, want %v", i, d[i], want[i])
					}
				}
			})
		}
	}
}

func randSlice(rnd *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 2*rnd.Float64() - 1
	}
	return s
}

// kernel32Tol: float32 products of values in [-1, 1] summed over at most 64
// terms, against a float64 reference: 64 × 6e-8 ≈ 4e-6.
const kernel32Tol = 1e-5

func TestGemmAcc32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 5))
	for _, sz := range [][3]int{{1, 1, 1}, {4, 16, 3}, {5, 17, 7}, {8, 256, 64}, {7, 40, 0}, {12, 48, 9}} {
		R, C, n := sz[0], sz[1], sz[2]
		t.Run(fmt.Sprintf("R=%d/C=%d/n=%d", R, C, n), func(t *testing.T) {
			c := to[float32](randSlice(rnd, R*max(n, 1)))
			w := to[float32](randSlice(rnd, max(n, 1)*C+3))
			d := to[float32](randSlice(rnd, R*C+2))
			want := make([]float64, len(d))
			for i, v := range d {
				want[i] = float64(v)
			}
			for r := range R {
				for j := range C {
					for p := range n {
						want[r*C+j] += float64(c[r*n+p]) * float64(w[p*C+j])
					}
				}
			}
			gemm(kernelsFor[float32](), R, C, n, c, n, 1, w, C, d, C)
			for i := range want {
				if math.Abs(want[i]-float64(d[i])) > kernel32Tol {
					t.Fatalf("element %d: got %v, want %v", i, d[i], want[i])
				}
			}
		})
	}
}

func TestAxpy(t *testing.T) {
	rnd := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{0, 1, 15, 16, 17, 33, 64, 256, 259} {
		x, y := randSlice(rnd, n+1), randSlice(rnd, n)
		want := append([]float64(nil), y...)
		for i := range want {
			want[i] += 0.75 * x[i]
		}
		axpy(0.75, x, y)
		x32, y32 := to[float32](x), to[float32](want)
		for i := range y32 {
			y32[i] = float32(want[i] - 0.75*x[i]) // back to the start, in float32
		}
		axpy32(0.75, x32, y32)
		for i := range want {
			if math.Abs(want[i]-y[i]) > kernelTol || math.Abs(want[i]-float64(y32[i])) > kernel32Tol {
				t.Fatalf("n=%d element %d: float64 %v, float32 %v, want %v", n, i, y[i], y32[i], want[i])
			}
		}
	}
}

// TestAppendNonZero checks the scan for non-zeros (assembly where available)
// against a plain loop: rows of every width up to 70, sparse and dense, with
// -0 (skipped, as it equals zero), NaN and ±Inf at every position (listed
// with check false, the first one reported with check true), appended after
// earlier entries.
func TestAppendNonZero(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	specials := []float64{math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1)}
	for width := range 71 {
		for trial := range 20 {
			row := make([]float64, width)
			for i := range row {
				switch r := rnd.IntN(10); {
				case r < trial%3:
					row[i] = rnd.NormFloat64()
				case r == 9 && trial > 10:
					row[i] = specials[rnd.IntN(len(specials))]
				}
			}
			var wantIdx []int32
			var wantVal []float64
			wantBad := -1
			for i, v := range row {
				if v != 0 {
					if wantBad < 0 && (math.IsNaN(v) || math.IsInf(v, 0)) {
						wantBad = i
					}
					wantIdx = append(wantIdx, int32(i))
					wantVal = append(wantVal, v)
				}
			}
			for _, check := range []bool{false, true} {
				idx, val, bad := appendNonZero([]int32{-1}, []float64{-1}, row, check)
				wi, wv, wb := wantIdx, wantVal, -1
				if check && wantBad >= 0 {
					n := 0
					for wantIdx[n] != int32(wantBad) {
						n++
					}
					wi, wv, wb = wantIdx[:n], wantVal[:n], wantBad
				}
				if bad != wb || len(idx) != len(wi)+1 || len(val) != len(wv)+1 || idx[0] != -1 || val[0] != -1 {
					t.Fatalf("width %d trial %d check %v: bad %d, %d indices, %d values; want bad %d, %d of each after the first",
						width, trial, check, bad, len(idx), len(val), wb, len(wi))
				}
				for i := range wi {
					if idx[i+1] != wi[i] || math.Float64bits(val[i+1]) != math.Float64bits(wv[i]) {
						t.Fatalf("width %d trial %d check %v: entry %d is (%d, %v), want (%d, %v)", width, trial, check, i, idx[i+1], val[i+1], wi[i], wv[i])
					}
				}
			}
		}
	}
}

// TestCells checks the fused cell kernels: the AVX-512 kernel gives the
// bits of the AVX2 one; c, tanh(c) and h follow from the activated gates
// as specified (c = f·cp + i·g and h = o·tc rounded as in Go, tanh(c) the
// same function as the g gate's); on pre-activations from small to past
// the exponential's clamp, NaN and ±Inf, with and without a previous cell
// state, and with the previous state in the same memory as the new one, as
// inference runs it.
func TestCells(t *testing.T) {
	rnd := rand.New(rand.NewPCG(8, 8))
	value := func() float64 {
		switch rnd.IntN(20) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*rnd.IntN(2))
		case 2:
			return 800 * (2*rnd.Float64() - 1)
		case 3:
			return 0
		}
		return 6 * rnd.NormFloat64()
	}
	t.Run("float64", func(t *testing.T) { checkCells(t, kernelsFor[float64](), value) })
	t.Run("float32", func(t *testing.T) { checkCells(t, kernelsFor[float32](), value) })
}

func checkCells[T float](t *testing.T, k *kernels[T], value func() float64) {
	if k.cell == nil {
		t.Skip("no fused cell kernel on this machine")
	}
	bits := func(x ...T) []uint64 {
		out := make([]uint64, len(x))
		for i, v := range x {
			out[i] = math.Float64bits(float64(v))
		}
		return out
	}
	fill := func(n int) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = T(value())
		}
		return x
	}
	lanes := k.cellLanes
	for _, H := range []int{lanes, 2 * lanes, 64, 5 * lanes} {
		for _, rows := range []int{1, 3, 16} {
			for _, prev := range []string{"none", "separate", "in-place"} {
				G0 := fill(rows * 4 * H)
				var cp []T
				if prev != "none" {
					cp = fill(rows * H)
				}
				run := func(k *kernels[T]) (G, c, tc, h []T) {
					G, c, tc, h = slices.Clone(G0), make([]T, rows*H), make([]T, rows*H), make([]T, rows*H)
					cpr := cp
					if prev == "in-place" {
						copy(c, cp)
						cpr = c
					}
					cells(k, H, rows, G, cpr, c, tc, h)
					return G, c, tc, h
				}
				name := fmt.Sprintf("H=%d rows=%d previous %s", H, rows, prev)
				G, c, tc, h := run(k)
				// tanh(c) through the g gate of a second pass.
				G3 := make([]T, rows*4*H)
				for b := range rows {
					copy(G3[b*4*H+2*H:b*4*H+3*H], c[b*H:(b+1)*H])
				}
				cells(k, H, rows, G3, nil, make([]T, rows*H), make([]T, rows*H), make([]T, rows*H))
				for b := range rows {
					for j := range H {
						gb := G[b*4*H:]
						i, f, g, o := gb[j], gb[H+j], gb[2*H+j], gb[3*H+j]
						wantC := i * g
						if cp != nil {
							wantC = T(f*cp[b*H+j]) + T(i*g)
						}
						r := b*H + j
						if got := bits(c[r], tc[r], h[r]); !slices.Equal(got, bits(wantC, G3[b*4*H+2*H+j], o*tc[r])) {
							t.Fatalf("%s: row %d unit %d: c, tanh(c), h = %v, %v, %v; want %v, %v, %v",
								name, b, j, c[r], tc[r], h[r], wantC, G3[b*4*H+2*H+j], o*tc[r])
						}
					}
				}
			}
		}
	}
}

// Accuracy of the fused cell's activations (cell_amd64.s) against package
// math in float64: the Padé approximant's truncation is far below an ulp,
// so what remains is the rounding of a dozen operations and of the
// reference 1/(1+math.Exp(−x)) itself, observed up to 4.6 ulps (5.1e-16
// relative) for σ and 2.2e-16 absolute for tanh near 0 (where
// (D−M)/(D+M) loses relative accuracy as 2/(1+e^t)−1 does), 4.4e-16
// relative above 0.5. The float32 kernel is compared with float64 math:
// 3 float32 ulps for σ, 1.5e-7 absolute for tanh.
const (
	actTolSigmoid64   = 1e-15
	actTolTanhAbs64   = 5e-16
	actTolSigmoid32   = 4e-7
	actTolTanhAbs32   = 3e-7
	actSigmoidFloor64 = -700 // below, the exact σ underflows while the kernel clamps
	actSigmoidFloor32 = -80
)

// TestActivationAccuracy bounds the fused cell's σ and tanh against
// package math over small, moderate, large and clamped arguments, and
// checks NaN and ±Inf.
func TestActivationAccuracy(t *testing.T) {
	rnd := rand.New(rand.NewPCG(15, 15))
	var xs []float64
	for _, scale := range []float64{1e-3, 2, 40, 800} {
		for range 4096 {
			xs = append(xs, scale*(2*rnd.Float64()-1))
		}
	}
	xs = append(xs, 0, math.Copysign(0, -1), 1e-300, -1e-300, 708, -708, 709.5, -709.5)
	t.Run("float64", func(t *testing.T) {
		checkActivations(t, kernelsFor[float64](), xs, actTolSigmoid64, actTolTanhAbs64, actSigmoidFloor64)
	})
	t.Run("float32", func(t *testing.T) {
		x32 := make([]float64, len(xs))
		for i, v := range xs {
			x32[i] = float64(float32(v))
		}
		checkActivations(t, kernelsFor[float32](), x32, actTolSigmoid32, actTolTanhAbs32, actSigmoidFloor32)
	})
}

// activations returns σ and tanh of xs through the fused cell kernel (the
// i and g gates of one row).
func activations[T float](k *kernels[T], xs []float64) (sig, th []float64) {
	H := len(xs)
	G := make([]T, 4*H)
	for j, x := range xs {
		G[j], G[H+j], G[2*H+j], G[3*H+j] = T(x), T(x), T(x), T(x)
	}
	cells(k, H, 1, G, nil, make([]T, H), make([]T, H), make([]T, H))
	sig, th = make([]float64, H), make([]float64, H)
	for j := range xs {
		sig[j], th[j] = float64(G[j]), float64(G[2*H+j])
	}
	return sig, th
}

func checkActivations[T float](t *testing.T, k *kernels[T], xs []float64, tolSig, tolTanh, floor float64) {
	if k.cell == nil {
		t.Skip("no fused cell kernel on this machine")
	}
	lanes := k.cellLanes
	for len(xs)%lanes != 0 {
		xs = append(xs, 0.5)
	}
	sig, th := activations(k, xs)
	for j, x := range xs {
		ws, wt := 1/(1+math.Exp(-x)), math.Tanh(x)
		if x > floor && math.Abs(sig[j]-ws) > tolSig*ws {
			t.Errorf("σ(%v) = %v, want %v within %g relative", x, sig[j], ws, tolSig)
		}
		if math.Abs(th[j]-wt) > max(tolTanh, tolSig*math.Abs(wt)) {
			t.Errorf("tanh(%v) = %v, want %v within %g", x, th[j], wt, tolTanh)
		}
	}
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for len(special)%lanes != 0 {
		special = append(special, 0)
	}
	sig, th = activations(k, special)
	if !math.IsNaN(sig[0]) || !math.IsNaN(th[0]) {
		t.Errorf("σ(NaN), tanh(NaN) = %v, %v, want NaN", sig[0], th[0])
	}
	if sig[1] != 1 || th[1] != 1 || !(sig[2] >= 0 && sig[2] < 1e-37) || th[2] != -1 {
		t.Errorf("σ(±Inf), tanh(±Inf) = %v, %v, %v, %v; want 1, 1, ~0, -1", sig[1], th[1], sig[2], th[2])
	}
}

// TestGemmSameBits checks that the AVX-512 blocks give the bits of the AVX2
// blocks and Go loops they replace, in both precisions, for products with
// rows and columns left over at every level of the blocking.
func TestGemmSameBits(t *testing.T) {
	t.Run("float64", func(t *testing.T) { checkGemmSameBits(t, kernelsFor[float64]()) })
	t.Run("float32", func(t *testing.T) { checkGemmSameBits(t, kernelsFor[float32]()) })
}

func checkGemmSameBits[T float](t *testing.T, k *kernels[T]) {
	if k.wide == nil {
		t.Skip("no AVX-512 blocks on this machine")
	}
	narrow := *k
	narrow.wide = nil
	sizes := [][3]int{{8, 16, 5}, {8, 64, 64}, {32, 256, 64}, {13, 70, 9}, {20, 45, 33}, {64, 32, 256}, {7, 40, 3}}
	checkGemmBits(t, rand.New(rand.NewPCG(9, 9)), sizes, &narrow, k, "the AVX2 blocks", false)
}

// checkGemmBits runs gemm with ref and with k on random products of every
// size and both layouts of c (by rows, by columns) and fails where an
// element's bits differ. With zeros, a third of the coefficients are ±0
// and a fifth of the sums start at −0.
func checkGemmBits[T float](t *testing.T, rnd *rand.Rand, sizes [][3]int, ref, k *kernels[T], refName string, zeros bool) {
	t.Helper()
	for _, sz := range sizes {
		R, C, n := sz[0], sz[1], sz[2]
		for _, layout := range []string{"rows", "cols"} {
			cRow, cStep := n, 1
			if layout == "cols" {
				cRow, cStep = 1, R
			}
			c := to[T](randSlice(rnd, R*n))
			w := to[T](randSlice(rnd, n*C))
			d0 := to[T](randSlice(rnd, R*C))
			if zeros {
				for i := range c {
					switch rnd.IntN(6) {
					case 0:
						c[i] = 0
					case 1:
						c[i] = T(math.Copysign(0, -1))
					}
				}
				for i := range d0 {
					if rnd.IntN(5) == 0 {
						d0[i] = T(math.Copysign(0, -1))
					}
				}
			}
			want, got := slices.Clone(d0), slices.Clone(d0)
			gemm(ref, R, C, n, c, cRow, cStep, w, C, want, C)
			gemm(k, R, C, n, c, cRow, cStep, w, C, got, C)
			for i := range want {
				if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
					t.Fatalf("R=%d C=%d n=%d %s: element %d is %v, %s give %v", R, C, n, layout, i, got[i], refName, want[i])
				}
			}
		}
	}
}

func to[T float](x []float64) []T {
	out := make([]T, len(x))
	for i, v := range x {
		out[i] = T(v)
	}
	return out
}

// TestCellBackwardSameBits checks the assembly of cellBackward against its
// Go loop, bit for bit, in both precisions, with and without a previous
// cell state.
func TestCellBackwardSameBits(t *testing.T) {
	t.Run("float64", func(t *testing.T) { checkCellBackward(t, kernelsFor[float64]()) })
	t.Run("float32", func(t *testing.T) { checkCellBackward(t, kernelsFor[float32]()) })
}

func checkCellBackward[T float](t *testing.T, k *kernels[T]) {
	if k.bwd == nil {
		t.Skip("no assembly on this machine")
	}
	goLoop := *k
	goLoop.bwd = nil
	rnd := rand.New(rand.NewPCG(10, 10))
	fill := func(n int, act bool) []T {
		x := make([]T, n)
		for i := range x {
			if act {
				x[i] = T(2*rnd.Float64() - 1)
			} else {
				x[i] = T(rnd.NormFloat64())
			}
		}
		return x
	}
	for _, H := range []int{k.cellLanes, 3 * k.cellLanes, 64} {
		for _, rows := range []int{1, 5, 32} {
			for _, first := range []bool{false, true} {
				G, tc := fill(rows*4*H, true), fill(rows*H, true)
				u, dh, dc := fill(rows*H, false), fill(rows*H, false), fill(rows*H, false)
				var cp []T
				if !first {
					cp = fill(rows*H, false)
				}
				zero := make([]T, H)
				wantG, wantDC := slices.Clone(G), slices.Clone(dc)
				cellBackward(&goLoop, H, rows, wantG, tc, u, dh, wantDC, cp, zero)
				cellBackward(k, H, rows, G, tc, u, dh, dc, cp, zero)
				if !slices.Equal(G, wantG) || !slices.Equal(dc, wantDC) {
					t.Errorf("H=%d rows=%d first step %v: the assembly differs from the Go loop", H, rows, first)
				}
			}
		}
	}
}

// TestAdamUpdateSameBits checks adamUpdate (assembly where available)
// against the Adam loop in Go, bit for bit, for lengths with and without a
// tail.
func TestAdamUpdateSameBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 11))
	for _, n := range []int{1, 3, 4, 7, 64, 1001} {
		w, g := randSlice(rnd, n), randSlice(rnd, n)
		mom, vel := randSlice(rnd, n), randSlice(rnd, n)
		for i := range vel {
			vel[i] = math.Abs(vel[i]) * 1e-3
		}
		ww, wm, wv := slices.Clone(w), slices.Clone(mom), slices.Clone(vel)
		const stepSize, sq2 = 1e-3 / 0.19, 0.0446
		for i, v := range g {
			wm[i] = float64(adamBeta1*wm[i]) + float64((1-adamBeta1)*v)
			wv[i] = float64(adamBeta2*wv[i]) + float64((1-adamBeta2)*v*v)
			ww[i] -= stepSize * wm[i] / (math.Sqrt(wv[i])/sq2 + adamEps)
		}
		adamUpdate(w, g, mom, vel, stepSize, sq2)
		if !slices.Equal(w, ww) || !slices.Equal(mom, wm) || !slices.Equal(vel, wv) {
			t.Errorf("n=%d: adamUpdate differs from the Go loop", n)
		}
	}
}

// TestGemmGoBlocksSameBits checks gemm's pure-Go block (kernel_go.go)
// against the Go loops it replaces (one axpy per non-zero coefficient,
// math.FMA), bit for bit, on every architecture: rows and columns left
// over, zero coefficients of either sign and sums that are −0, which
// skipping a zero coefficient keeps.
func TestGemmGoBlocksSameBits(t *testing.T) {
	axpy := func(a float64, x, y []float64) {
		for i := range y {
			y[i] = math.FMA(a, x[i], y[i])
		}
	}
	loops := &kernels[float64]{axpy: axpy}
	blocked := &kernels[float64]{axpy: axpy, goBlock: block4Go64}
	sizes := [][3]int{{4, 4, 1}, {8, 16, 5}, {5, 9, 7}, {16, 256, 64}, {13, 70, 9}, {7, 3, 4}, {12, 45, 33}}
	checkGemmBits(t, rand.New(rand.NewPCG(11, 11)), sizes, loops, blocked, "the Go loops", true)
}
