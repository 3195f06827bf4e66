package main

import (
	"context"
	"math"
	"math/rand/v2"
)

// The training task: a one-hidden-layer network (tanh) learning a synthetic
// 5-class problem in 20 dimensions from a fixed random teacher network of
// the same form (16 tanh units, arg-max labels, no label noise), as in
// teacher–student studies of learning curves. Training data is a stream:
// every step draws a fresh minibatch from the teacher, so an "epoch" is
// nTrain new points and the validation loss measures generalisation rather
// than memorisation of a small set (the earlier fixed 512-point set with 10%
// label noise overfitted within a few epochs). Learning rates follow the
// schedules such runs use: cosine annealing to zero for SGD with momentum,
// and for AdamW a linear warm-up over the first epoch followed by cosine
// annealing. Variants change the optimiser (SGD with momentum or AdamW), the
// width (32 or 8 hidden units; the teacher has 16, so the narrow student
// cannot represent it) and normalisation (batch norm on the hidden
// pre-activations, without affine parameters, or none).

const (
	nIn, nClass    = 20, 5
	nTeacher       = 16 // teacher hidden units
	nTrain, nVal   = 512, 256
	dataSeed       = 20261121 // the teacher and validation set are the same for every run
	momentum       = 0.9
	adamB1, adamB2 = 0.9, 0.999
	adamEps        = 1e-8
	bnEps          = 1e-5
	bnMomentum     = 0.1
	warmupEpochs   = 1 // AdamW's linear warm-up
)

type hyper struct {
	lr, wd    float64
	seed      uint64
	hidden    int
	norm      bool
	adamw     bool
	epochs    int
	batchSize int
}

type dataset struct {
	x [][]float64
	y []int
}

// teacher labels inputs by the arg-max of a fixed random tanh network.
type teacher struct {
	w1, w2 [][]float64 // nTeacher×nIn, nClass×nTeacher
}

func newTeacher(rng *rand.Rand) *teacher {
	t := &teacher{w1: alloc(nTeacher, nIn), w2: alloc(nClass, nTeacher)}
	for _, w := range [][][]float64{t.w1, t.w2} {
		for _, row := range w {
			for j := range row {
				row[j] = rng.NormFloat64()
			}
		}
	}
	return t
}

// draw fills x with a standard normal input and returns its label; h is
// scratch of length nTeacher, so that runs can share the teacher.
func (t *teacher) draw(rng *rand.Rand, x, h []float64) int {
	for j := range x {
		x[j] = rng.NormFloat64()
	}
	for i := range h {
		h[i] = math.Tanh(dot(t.w1[i], x) / math.Sqrt(nIn))
	}
	best, arg := math.Inf(-1), 0
	for c := range nClass {
		if a := dot(t.w2[c], h); a > best {
			best, arg = a, c
		}
	}
	return arg
}

// makeTask returns the teacher and the fixed validation set.
func makeTask() (*teacher, dataset) {
	rng := rand.New(rand.NewPCG(dataSeed, 1))
	t := newTeacher(rng)
	va := dataset{x: alloc(nVal, nIn), y: make([]int, nVal)}
	h := make([]float64, nTeacher)
	for s := range nVal {
		va.y[s] = t.draw(rng, va.x[s], h)
	}
	return t, va
}

type net struct {
	h       int
	w1, b1  []float64 // h×nIn, h
	w2, b2  []float64 // nClass×h, nClass
	runMean []float64
	runVar  []float64
	norm    bool
	params  [][]float64
	decay   []bool // weight decay applies to weights, not biases
	m, v    [][]float64
	step    int
	adamw   bool
	lr, wd  float64
}

func newNet(hp hyper, rng *rand.Rand) *net {
	n := &net{h: hp.hidden, norm: hp.norm, adamw: hp.adamw, lr: hp.lr, wd: hp.wd}
	n.w1 = make([]float64, hp.hidden*nIn)
	n.b1 = make([]float64, hp.hidden)
	n.w2 = make([]float64, nClass*hp.hidden)
	n.b2 = make([]float64, nClass)
	for i := range n.w1 {
		n.w1[i] = rng.NormFloat64() / math.Sqrt(nIn)
	}
	for i := range n.w2 {
		n.w2[i] = rng.NormFloat64() / math.Sqrt(float64(hp.hidden))
	}
	n.runMean = make([]float64, hp.hidden)
	n.runVar = make([]float64, hp.hidden)
	for i := range n.runVar {
		n.runVar[i] = 1
	}
	n.params = [][]float64{n.w1, n.b1, n.w2, n.b2}
	n.decay = []bool{true, false, true, false}
	for _, p := range n.params {
		n.m = append(n.m, make([]float64, len(p)))
		n.v = append(n.v, make([]float64, len(p)))
	}
	return n
}

// forward computes hidden activations and logits for a batch; with train
// set, batch norm uses the batch statistics and updates the running ones.
func (n *net) forward(xs [][]float64, train bool, pre, xhat, act, logits [][]float64, invStd []float64) {
	B := len(xs)
	for s, x := range xs {
		for i := range n.h {
			pre[s][i] = n.b1[i] + dot(n.w1[i*nIn:(i+1)*nIn], x)
		}
	}
	for i := range n.h {
		if !n.norm {
			for s := range B {
				xhat[s][i] = pre[s][i]
			}
			continue
		}
		var mean, vr float64
		if train {
			for s := range B {
				mean += pre[s][i]
			}
			mean /= float64(B)
			for s := range B {
				d := pre[s][i] - mean
				vr += d * d
			}
			vr /= float64(B)
			n.runMean[i] = (1-bnMomentum)*n.runMean[i] + bnMomentum*mean
			n.runVar[i] = (1-bnMomentum)*n.runVar[i] + bnMomentum*vr
		} else {
			mean, vr = n.runMean[i], n.runVar[i]
		}
		is := 1 / math.Sqrt(vr+bnEps)
		invStd[i] = is
		for s := range B {
			xhat[s][i] = (pre[s][i] - mean) * is
		}
	}
	for s := range B {
		for i := range n.h {
			act[s][i] = math.Tanh(xhat[s][i])
		}
		for c := range nClass {
			logits[s][c] = n.b2[c] + dot(n.w2[c*n.h:(c+1)*n.h], act[s])
		}
	}
}

// dot returns a·b over len(a) ≤ len(b), in four interleaved partial sums.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy adds g·x to y (len(y) ≥ len(x)).
func axpy(g float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += g * v
	}
}

func softmaxCE(logits []float64, y int, dst []float64) float64 {
	m := math.Inf(-1)
	for _, v := range logits {
		m = max(m, v)
	}
	sum := 0.0
	for c, v := range logits {
		dst[c] = math.Exp(v - m)
		sum += dst[c]
	}
	for c := range dst {
		dst[c] /= sum
	}
	return -math.Log(max(dst[y], 1e-300))
}

func alloc(b, w int) [][]float64 {
	out := make([][]float64, b)
	for i := range out {
		out[i] = make([]float64, w)
	}
	return out
}

// train runs the configuration and returns the validation-loss trajectory
// (every quarter epoch), the training loss per quarter and the final
// validation accuracy. report, when non-nil, gets each quarter's values as
// they are computed (the metrics a run streams); its error stops training.
func train(ctx context.Context, hp hyper, tch *teacher, va dataset, report func(epoch, val, train float64) error) (epochs, valLoss, trainLoss []float64, acc float64, err error) {
	rng := rand.New(rand.NewPCG(hp.seed, 0x10552))
	n := newNet(hp, rng)
	B := hp.batchSize
	pre, xhat, act, logits := alloc(B, n.h), alloc(B, n.h), alloc(B, n.h), alloc(B, nClass)
	invStd := make([]float64, n.h)
	probs := make([]float64, nClass)
	grads := make([][]float64, len(n.params))
	for i, p := range n.params {
		grads[i] = make([]float64, len(p))
	}
	dAct := alloc(B, n.h)
	dPre := alloc(B, n.h)
	// The data stream has its own generator, so that the initialisation
	// does not depend on how many points were drawn.
	data := rand.New(rand.NewPCG(hp.seed, 0xda7a))
	xbuf, ys, th := alloc(B, nIn), make([]int, B), make([]float64, nTeacher)
	stepsPerEpoch := nTrain / B
	quarter := max(stepsPerEpoch/4, 1)
	vpre, vxhat, vact, vlogits := alloc(nVal, n.h), alloc(nVal, n.h), alloc(nVal, n.h), alloc(nVal, nClass)
	evaluate := func() (float64, float64) {
		n.forward(va.x, false, vpre, vxhat, vact, vlogits, invStd)
		loss, right := 0.0, 0
		for s := range nVal {
			loss += softmaxCE(vlogits[s], va.y[s], probs)
			best := 0
			for c := range nClass {
				if vlogits[s][c] > vlogits[s][best] {
					best = c
				}
			}
			if best == va.y[s] {
				right++
			}
		}
		return loss / nVal, float64(right) / nVal
	}
	xs := make([][]float64, B)
	runLoss, runN := 0.0, 0
	for ep := range hp.epochs {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, 0, err
		}
		for st := range stepsPerEpoch {
			for s := range B {
				ys[s] = tch.draw(data, xbuf[s], th)
				xs[s] = xbuf[s]
			}
			n.forward(xs, true, pre, xhat, act, logits, invStd)
			for _, g := range grads {
				clear(g)
			}
			gw1, gb1, gw2, gb2 := grads[0], grads[1], grads[2], grads[3]
			for s := range B {
				runLoss += softmaxCE(logits[s], ys[s], probs)
				probs[ys[s]]--
				for c := range nClass {
					g := probs[c] / float64(B)
					gb2[c] += g
					axpy(g, act[s], gw2[c*n.h:(c+1)*n.h])
				}
				for i := range n.h {
					d := 0.0
					for c := range nClass {
						d += (probs[c] / float64(B)) * n.w2[c*n.h+i]
					}
					dAct[s][i] = d * (1 - act[s][i]*act[s][i])
				}
			}
			runN += B
			// Back through batch norm (no affine): dx = is/B·(B·dy − Σdy − x̂·Σdy·x̂).
			for i := range n.h {
				if !n.norm {
					for s := range B {
						dPre[s][i] = dAct[s][i]
					}
					continue
				}
				var sd, sdx float64
				for s := range B {
					sd += dAct[s][i]
					sdx += dAct[s][i] * xhat[s][i]
				}
				for s := range B {
					dPre[s][i] = invStd[i] / float64(B) * (float64(B)*dAct[s][i] - sd - xhat[s][i]*sdx)
				}
			}
			for s := range B {
				for i := range n.h {
					g := dPre[s][i]
					gb1[i] += g
					axpy(g, xs[s], gw1[i*nIn:(i+1)*nIn])
				}
			}
			n.update(grads, n.schedule(ep*stepsPerEpoch+st, hp.epochs*stepsPerEpoch, stepsPerEpoch))
			if (st+1)%quarter == 0 {
				vl, _ := evaluate()
				e, tl := float64(ep)+float64(st+1)/float64(stepsPerEpoch), runLoss/float64(runN)
				epochs = append(epochs, e)
				valLoss = append(valLoss, vl)
				trainLoss = append(trainLoss, tl)
				runLoss, runN = 0, 0
				if report != nil {
					if err := report(e, vl, tl); err != nil {
						return nil, nil, nil, 0, err
					}
				}
			}
		}
	}
	_, acc = evaluate()
	return epochs, valLoss, trainLoss, acc, nil
}

// schedule returns the learning rate of step (0-based) of total: cosine
// annealing from the peak rate to zero, the usual schedule for SGD with
// momentum; AdamW first warms up linearly over warmupEpochs, as it usually
// is in practice, then anneals.
func (n *net) schedule(step, total, stepsPerEpoch int) float64 {
	warm := 0
	if n.adamw {
		warm = min(warmupEpochs*stepsPerEpoch, total-1)
	}
	if step < warm {
		return n.lr * float64(step+1) / float64(warm)
	}
	return n.lr * 0.5 * (1 + math.Cos(math.Pi*float64(step-warm)/float64(total-warm)))
}

// update takes one optimiser step with learning rate lr.
func (n *net) update(grads [][]float64, lr float64) {
	n.step++
	if n.adamw {
		c1 := 1 - math.Pow(adamB1, float64(n.step))
		c2 := 1 - math.Pow(adamB2, float64(n.step))
		for k, p := range n.params {
			m, v, g := n.m[k], n.v[k], grads[k]
			for i := range p {
				if n.decay[k] {
					p[i] -= lr * n.wd * p[i] // decoupled weight decay
				}
				m[i] = adamB1*m[i] + (1-adamB1)*g[i]
				v[i] = adamB2*v[i] + (1-adamB2)*g[i]*g[i]
				p[i] -= lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + adamEps)
			}
		}
		return
	}
	for k, p := range n.params {
		m, g := n.m[k], grads[k]
		for i := range p {
			gi := g[i]
			if n.decay[k] {
				gi += n.wd * p[i]
			}
			m[i] = momentum*m[i] + gi
			p[i] -= lr * m[i]
		}
	}
}
