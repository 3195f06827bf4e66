package lstm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The engines' exact output bits, recorded from the code before the float32
// and float64 engines were folded into one generic implementation (issue
// 17) and before training and inference were spread over every core (issue
// 19): the folded, parallel code must reproduce them bit for bit, whatever
// the number of workers. Each case hashes (SHA-256) the IEEE bits of every
// number it produces; a failure names the case.
//
// testdata/enginebits.json holds one set of hashes per arithmetic mode: "fma"
// (amd64 with AVX2/FMA, the assembly kernels) and "go" (the pure-Go loops:
// -tags purego, or an amd64 without FMA). On arm64 the inference cases
// (inferenceBits) must give the "go" hashes as well: the pure-Go passes
// round every product they do not fuse on purpose, so arm64 computes
// amd64's pure-Go bits. Its losses, and so its training cases, are not
// checked: package math's Log is assembly on amd64 and Go on arm64, and
// the two differ in the last bit for some arguments. Other architectures
// are not checked. The hashes were generated
// at commit 0319512 (before the fold) by
//
//	go test -run TestEngineBits ./lstm/ -args -update-bits
//	go test -tags purego -run TestEngineBits ./lstm/ -args -update-bits
//
// Regenerate them only for a change meant to alter the arithmetic, and say so
// in the commit. That happened once since: the "fma" hashes of the published
// and newest-first cases were regenerated when the fused cell kernels
// (cell_amd64.s) replaced the Taylor polynomial of exp by a Padé approximant
// that shares the activation's division (a few ulps either way, see
// TestActivationAccuracy); the "odd" case (H = 13, which runs cellForward
// and package vmath's activations) and the "go" hashes are unchanged, as are
// the newest-first inference and published/evaluate hashes, whose outputs
// came out bit for bit the same. The AVX-512 and AVX2 kernels give the same
// bits, so one "fma" set serves both (GODEBUG=cpu.avx512f=off runs the AVX2
// ones).
var updateBits = flag.Bool("update-bits", false, "rewrite testdata/enginebits.json for this arithmetic mode")

const engineBitsFile = "testdata/enginebits.json"

// bitsCase is a data set and a model for the engine-bits cases.
type bitsCase struct {
	name          string
	I, H, L, T, n int
	newestFirst   bool
}

// bitsData returns n sequences of T rows over I features with a mix of
// empty rows, one-hot rows and rows of two events, one of them a count of 2,
// so that both the zero-skipping and the value-scaling paths run.
func bitsData(rnd *rand.Rand, n, T, I int) Data {
	d := Data{X: make([][][]float64, n), Y: make([]int, n)}
	for i := range d.X {
		d.X[i] = make([][]float64, T)
		for t := range d.X[i] {
			row := make([]float64, I)
			switch rnd.IntN(5) {
			case 0:
			case 1:
				row[rnd.IntN(I)] = 2
				row[rnd.IntN(I)] = 1
			default:
				row[rnd.IntN(I)] = 1
			}
			d.X[i][t] = row
		}
		d.Y[i] = rnd.IntN(2)
	}
	d.Y[0], d.Y[1] = 0, 1
	return d
}

// hashFloats returns the hex SHA-256 of the bits of every value of xs.
func hashFloats(xs ...[]float64) string {
	h := sha256.New()
	var b [8]byte
	for _, x := range xs {
		for _, v := range x {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// engineBitsMode names the arithmetic the kernels run, or "" where the
// recorded bits do not apply.
func engineBitsMode() string {
	if runtime.GOARCH == "arm64" {
		return "go"
	}
	if runtime.GOARCH != "amd64" {
		return ""
	}
	if useFMA {
		return "fma"
	}
	return "go"
}

// engineBits computes every case's hash.
func engineBits(t *testing.T) map[string]string {
	out := map[string]string{}
	cases := []bitsCase{
		{"published", 460, 64, 2, 10, 37, false},
		{"odd", 23, 13, 3, 4, 10, false},
		{"newest-first", 9, 8, 1, 5, 6, true},
	}
	for _, c := range cases {
		rnd := rand.New(rand.NewPCG(19, uint64(c.H)))
		m := New(Architecture{Inputs: c.I, Hidden: c.H, Layers: c.L, NewestFirst: c.newestFirst}, rnd)
		d := bitsData(rnd, c.n, c.T, c.I)
		valid := bitsData(rnd, 7, c.T, c.I)

		loss, grad, err := m.LossGrad(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[c.name+"/lossgrad64"] = hashFloats([]float64{loss}, grad)
		loss32, p32, grad32 := lossGrad32(t, m, d)
		out[c.name+"/lossgrad32"] = hashFloats([]float64{loss32}, p32, grad32)

		p, err := m.Probabilities(d.X)
		if err != nil {
			t.Fatal(err)
		}
		out[c.name+"/probabilities"] = hashFloats(p)
		var one []float64
		for _, seq := range d.X[:5] {
			one = append(one, m.Predict(seq))
		}
		out[c.name+"/predict"] = hashFloats(one)
		ragged := slices.Clone(d.X[:6])
		ragged[2] = ragged[2][:c.T-1]
		if p, err = m.Probabilities(ragged); err != nil {
			t.Fatal(err)
		}
		out[c.name+"/probabilities-ragged"] = hashFloats(p)
		if p, err = m.Predictor().Probabilities(d.X); err != nil {
			t.Fatal(err)
		}
		out[c.name+"/predictor"] = hashFloats(p)
		_, vloss, err := Evaluate(m, valid, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[c.name+"/evaluate"] = hashFloats([]float64{vloss})

		for _, tc := range []struct {
			name string
			cfg  Config
		}{
			{"train64", Config{BatchSize: 6, Epochs: 3, Patience: -1, Seed: 5}},
			{"train32", Config{BatchSize: 6, Epochs: 3, Patience: -1, Seed: 5, Engine: Native32}},
			{"train64-clip-sgd", Config{BatchSize: 16, Epochs: 2, Patience: -1, Seed: 6, ClipNorm: 0.5, Optimizer: SGD, LearningRate: 0.1}},
			{"train32-clip", Config{BatchSize: 16, Epochs: 2, Patience: -1, Seed: 6, ClipNorm: 0.5, Engine: Native32}},
		} {
			mm := m.Clone()
			h, err := Train(context.Background(), mm, tc.cfg, d, valid)
			if err != nil {
				t.Fatal(err)
			}
			var losses []float64
			for _, e := range h.Epochs {
				losses = append(losses, e.TrainLoss, e.ValidLoss)
			}
			out[c.name+"/"+tc.name] = hashFloats(losses, mm.Params())
		}
	}
	return out
}

// lossGrad32 runs the float32 engine on all of d.
func lossGrad32(t *testing.T, m *Model, d Data) (float64, []float64, []float64) {
	pk, err := pack(d, m.inputs, m.newestFirst, false)
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, len(m.params))
	loss, p := newGradEngine(m, Native32, pk.n, pk.T, 0).lossGrad(pk, seqIndices(pk.n), grad)
	return loss, slices.Clone(p), grad
}

func TestEngineBits(t *testing.T) {
	mode := engineBitsMode()
	if mode == "" {
		t.Skipf("no recorded engine bits for %s", runtime.GOARCH)
	}
	got := engineBits(t)
	recorded := map[string]map[string]string{}
	if b, err := os.ReadFile(engineBitsFile); err == nil {
		if err := json.Unmarshal(b, &recorded); err != nil {
			t.Fatal(err)
		}
	} else if !*updateBits {
		t.Fatal(err)
	}
	if *updateBits {
		if runtime.GOARCH != "amd64" {
			t.Fatal("-update-bits records amd64's bits; run it there")
		}
		recorded[mode] = got
		b, err := json.MarshalIndent(recorded, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Clean(engineBitsFile), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, ok := recorded[mode]
	if !ok {
		t.Fatalf("%s has no %q mode", engineBitsFile, mode)
	}
	if len(want) != len(got) {
		t.Errorf("%d cases recorded, %d computed", len(want), len(got))
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if runtime.GOARCH != "amd64" && !inferenceBits(k) {
			continue
		}
		if got[k] != want[k] {
			t.Errorf("%s: bits differ from the recorded ones", k)
		}
	}
}

// inferenceBits reports whether the engine-bits case k measures inference
// only (no loss, no training), the cases checked on arm64.
func inferenceBits(k string) bool {
	_, what, _ := strings.Cut(k, "/")
	switch what {
	case "probabilities", "probabilities-ragged", "predict", "predictor":
		return true
	}
	return false
}

// TestWorkersSameBits checks that training and inference give the same bits
// on one goroutine as on several, including more goroutines than shards.
func TestWorkersSameBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(19, 6))
	m := New(Architecture{Inputs: 40, Hidden: 13, Layers: 2}, rnd)
	d := bitsData(rnd, 75, 6, 40)
	valid := bitsData(rnd, 41, 6, 40)
	run := func(workers int) map[string]string {
		out := map[string]string{}
		for _, eng := range []Engine{Native, Native32} {
			mm := m.Clone()
			cfg := Config{BatchSize: 70, Epochs: 2, Patience: -1, Seed: 3, Engine: eng, Workers: workers}
			h, err := Train(context.Background(), mm, cfg, d, valid)
			if err != nil {
				t.Fatal(err)
			}
			var losses []float64
			for _, e := range h.Epochs {
				losses = append(losses, e.TrainLoss, e.ValidLoss)
			}
			out[fmt.Sprint("train", eng)] = hashFloats(losses, mm.Params())
		}
		prev := runtime.GOMAXPROCS(workers)
		defer runtime.GOMAXPROCS(prev)
		p, err := m.Probabilities(d.X)
		if err != nil {
			t.Fatal(err)
		}
		out["probabilities"] = hashFloats(p)
		if p, err = m.Predictor().Probabilities(d.X); err != nil {
			t.Fatal(err)
		}
		out["predictor"] = hashFloats(p)
		return out
	}
	want := run(1)
	for _, workers := range []int{2, 3, 16} {
		if got := run(workers); !maps.Equal(got, want) {
			t.Errorf("%d workers: %v, one worker: %v", workers, got, want)
		}
	}
}
