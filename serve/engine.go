package serve

import (
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// engine computes a policy's deterministic actions for rows of
// observations. It does what sac.Policy.Act does (observations to float32,
// the normalizer, the actor, tanh of the mean, scaling to env units), on
// its own buffers and network cache; like sac.Policy it is not safe for
// concurrent use, so only the batcher's goroutine calls it.
//
// A forward pass over n rows is a GEMM with n rows, and a GEMM backend may
// pick another kernel (and summation order) for another row count, so a
// batched forward need not give the bits of n one-row forwards. New probes
// the backend for every row count up to maxBatch; when any differs in any
// bit the engine runs rows one at a time (batched = false), so answers are
// always those of the policy's own Act.
type engine struct {
	p        *sac.Policy
	obsDim   int
	actDim   int
	maxBatch int
	batched  bool

	cache nn.Cache
	obs   []float32
	act   []float32
}

func newEngine(p *sac.Policy, maxBatch int) *engine {
	e := &engine{p: p, obsDim: p.Actor.In(), actDim: p.ActDim, maxBatch: maxBatch}
	e.batched = maxBatch > 1 && e.probe()
	return e
}

// compute writes the actions (env units) of rows observations obs
// [rows, obsDim] into act [rows, actDim] and, when logStd is not nil, the
// clamped log standard deviations of the policy's Gaussian (before tanh)
// into logStd [rows, actDim]. Values must be finite (the server checks).
// It returns the row counts of the forward passes it ran.
func (e *engine) compute(obs []float64, rows int, act, logStd []float64) []int {
	step := 1
	if e.batched {
		step = e.maxBatch
	}
	var passes []int
	for r := 0; r < rows; r += step {
		n := min(step, rows-r)
		out := e.forward(obs[r*e.obsDim:(r+n)*e.obsDim], n)
		A := e.actDim
		nn.TanhGaussianMode(out, n, A, e.act)
		for i := range n {
			row := r + i
			e.p.Scale.ToEnv(e.act[i*A:(i+1)*A], act[row*A:(row+1)*A])
			if logStd != nil {
				for j := range A {
					logStd[row*A+j] = float64(clampLogStd(out[i*2*A+A+j]))
				}
			}
		}
		passes = append(passes, n)
	}
	return passes
}

// forward runs the actor on n rows of obs and returns its output [n, 2A].
func (e *engine) forward(obs []float64, n int) []float32 {
	e.obs = grow(e.obs, n*e.obsDim)
	e.act = grow(e.act, n*e.actDim)
	x := e.obs[:n*e.obsDim]
	for i, v := range obs {
		x[i] = float32(v)
	}
	if e.p.Norm != nil {
		e.p.Norm.Apply(x)
	}
	return e.p.Actor.Forward(&e.cache, x, n)
}

// probe reports whether a forward pass over n rows gives, for every n up
// to maxBatch, bit for bit the outputs of n one-row passes.
func (e *engine) probe() bool {
	rng := rand.New(rand.NewPCG(0x5e7e, uint64(e.maxBatch)))
	obs := make([]float64, e.maxBatch*e.obsDim)
	for i := range obs {
		obs[i] = rng.NormFloat64()
		if e.p.Norm != nil {
			j := i % e.obsDim
			obs[i] = float64(e.p.Norm.Mean[j]) + obs[i]*float64(e.p.Norm.Std[j])
		}
	}
	w := 2 * e.actDim
	single := make([]float32, e.maxBatch*w)
	for r := range e.maxBatch {
		copy(single[r*w:(r+1)*w], e.forward(obs[r*e.obsDim:(r+1)*e.obsDim], 1))
	}
	for n := 2; n <= e.maxBatch; n++ {
		out := e.forward(obs[:n*e.obsDim], n)
		for i := range n * w {
			if math.Float32bits(out[i]) != math.Float32bits(single[i]) {
				return false
			}
		}
	}
	return true
}

// clampLogStd clamps a log standard deviation as the policy's sampler does.
func clampLogStd(v float32) float32 { return max(nn.LogStdMin, min(nn.LogStdMax, v)) }

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}
