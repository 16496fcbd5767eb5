package cql

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/gradcheck"
	"github.com/koopq/koopq/nn"
)

// criticLoss is an independent implementation of critic 0's loss from the
// CQL paper (Kumar et al. 2020, Eq. 4 with the importance-sampled CQL(H)
// estimator of the authors' code), evaluated on the inputs Step built:
//
//	L = mean_i (Q(s̃_i,a_i) − y_i)² + α'·w·( mean_i LSE_i − mean_i Q(s̃_i,a_i) )
//	LSE_i = log Σ_k exp(c_ik),  c = [Q(s,a_unif) − log 2^−A, Q(s,a'~π(s')) − log π, Q(s,a~π(s)) − log π]
//
// With PushUpClean the last term is mean_i Q(s_i, a_i), read from the B rows
// after the logsumexp samples.
func criticLoss(l *Learner, B int, alphaPrime float64) float64 {
	w := &l.ws
	N, A := l.Cfg.NumActions, l.ActDim
	R := B * (1 + 3*N)
	up := 0 // row offset of the push-up rows
	if l.Cfg.PushUpClean {
		up = R
		R += B
	}
	var c nn.Cache
	q := l.Q[0].Forward(&c, w.xBig, R)
	var mse, lse, qd float64
	for i := 0; i < B; i++ {
		d := float64(q[i]) - float64(w.y[i])
		mse += d * d / float64(B)
		qd += float64(q[up+i]) / float64(B)
		var terms []float64
		for k := 0; k < N; k++ {
			terms = append(terms, float64(q[B+i*N+k])+float64(A)*math.Ln2)
		}
		for k := 0; k < N; k++ {
			terms = append(terms, float64(q[B+2*B*N+i*N+k])-float64(w.logpOOD[B*N+i*N+k]))
		}
		for k := 0; k < N; k++ {
			terms = append(terms, float64(q[B+B*N+i*N+k])-float64(w.logpOOD[i*N+k]))
		}
		m := math.Inf(-1)
		for _, v := range terms {
			m = math.Max(m, v)
		}
		var s float64
		for _, v := range terms {
			s += math.Exp(v - m)
		}
		lse += (m + math.Log(s)) / float64(B)
	}
	return mse + alphaPrime*l.Cfg.MinQWeight*(lse-qd)
}

// The critic gradient that Step back-propagates (Bellman error plus the CQL
// regularizer, through the whole network) matches finite differences of the
// independently written loss above.
func TestCriticGradientMatchesFiniteDifferences(t *testing.T) {
	for _, clean := range []bool{false, true} {
		t.Run(map[bool]string{false: "push-up at s̃", true: "push-up clean"}[clean], func(t *testing.T) { criticGradientCheck(t, clean) })
	}
}

func criticGradientCheck(t *testing.T, pushUpClean bool) {
	rng := rand.New(rand.NewPCG(3, 3))
	d := dataset.Synthetic(4, 2, 200, rng)
	cfg := DefaultConfig()
	cfg.Net.Hidden = []int{16, 16}
	cfg.Batch = 8
	cfg.NumActions = 3
	cfg.BCSteps = 0
	cfg.PushUpClean = pushUpClean
	l := NewLearner(cfg, 4, 2, nil, rng)
	l.LogAlphaPrime = math.Log(0.7)
	// Smooth hidden units: with ReLU, hundreds of rows put some unit within
	// the finite-difference step of its kink. The loss plumbing under test
	// does not depend on the activation.
	for _, q := range append(l.Q[:], l.QT[:]...) {
		q.Hidden = nn.Tanh
	}
	b := dataset.NewBatch(cfg.Batch, 4, 2)
	dataset.NewSampler(d, rng).Sample(b)
	var before []*nn.Param
	for _, p := range l.Q[0].Params() {
		before = append(before, &nn.Param{Name: p.Name, Data: append([]float32(nil), p.Data...)})
	}
	if _, err := l.Step(b, augment.Gaussian{Sigma: 0.05}, rng); err != nil {
		t.Fatal(err)
	}
	nn.CopyParams(l.Q[0].Params(), before) // undo Adam; Grad still holds ∂L/∂θ at θ0
	for _, p := range l.Q[0].Params() {
		gradcheck.Check(t, "Step's gradient of "+p.Name, p.Data, p.Grad, func() float64 { return criticLoss(l, cfg.Batch, 0.7) }, rng,
			gradcheck.Options{Probes: 12, Floor: 0.1})
	}
}
