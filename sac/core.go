package sac

import (
	"math"

	"github.com/koopq/koopq/nn"
)

// This file is the SAC core that both Agent (online SAC) and cql.Learner
// use, as d3rlpy's CQLImpl extends SACImpl: the twin critics with their
// targets and the Polyak step (Twin), SAC's policy loss and its gradients
// (PolicyLoss, PolicyActionGrad, PolicyLogpGrad, MeanLogProb), and the
// entropy temperature's loss gradient and scalar Adam (TemperatureGrad,
// ScalarAdam). CQL adds only its conservative term to the critics' ∂L/∂Q
// and the Lagrange multiplier α′ (another ScalarAdam). What stays with
// each caller is how it schedules the work on two goroutines (nn.Pair)
// and its Bellman target (CQL has options SAC lacks).
//
// The arithmetic of each function is, operation for operation, what both
// callers computed before it was shared, so their results are unchanged
// bit for bit; keep it that way (cql's reference test, resume tests and
// the committed resume fixture check it).

// Twin is SAC's pair of soft Q-functions Q_k(s, a), k = 0, 1 (input rows
// [s, a] of width S+A, output one value per row), with their
// Polyak-averaged target networks Q̄_k and Adam optimizers. Critic k's
// work is meant for goroutine k of an nn.Pair: nothing in Twin is shared
// between k = 0 and k = 1.
type Twin struct {
	Q, QT [2]*nn.MLP  // critics Q_k and targets Q̄_k
	Opt   [2]*nn.Adam // Adam over Q[k]'s parameters

	// Parameter lists of Q[k] and QT[k], made once (MLP.Params allocates).
	params, targets [2][]*nn.Param
}

// NewTwin makes a Twin of the critics q and targets qt, which must have
// the same shapes: it copies each critic into its target (Q̄_k = Q_k) and
// makes each critic's Adam with learning rate lr. The networks are built
// by the caller, so each keeps its own order of random draws.
func NewTwin(q, qt [2]*nn.MLP, lr float64) Twin {
	t := Twin{Q: q, QT: qt}
	for k := range t.Q {
		t.params[k], t.targets[k] = q[k].Params(), qt[k].Params()
		nn.CopyParams(t.targets[k], t.params[k])
		t.Opt[k] = nn.NewAdam(t.params[k], lr)
	}
	return t
}

// Descend takes critic k's gradient step for a loss whose gradient with
// respect to the critic's outputs is dy (one value per row of the forward
// pass cached in c): it zeroes the critic's gradients, back-propagates dy
// into them, takes the Adam step and then moves the target towards the
// critic, Q̄_k ← (1 − τ)Q̄_k + τQ_k (float32(tau)).
func (t *Twin) Descend(k int, c *nn.Cache, dy []float32, tau float64) {
	nn.ZeroGrad(t.params[k])
	t.Q[k].Backward(c, dy, nil, true)
	t.Opt[k].Step()
	nn.Polyak(t.targets[k], t.params[k], float32(tau))
}

// PolicyLoss returns SAC's policy loss
//
//	mean_i (α log π(ã_i|s_i) − min_k Q_k(s_i, ã_i))
//
// over the B = len(logp) rows, from the critics' values q[k] [B] at
// (s, ã), and writes each critic's ∂loss/∂Q_k(s, ã) into dq[k] [B]: −1/B
// where critic k is the smaller (critic 0 on ties), 0 elsewhere. The mean
// is accumulated in float64 as Σ (α·log π − min Q)/B, term by term.
func PolicyLoss(alpha float64, logp []float32, q, dq [2][]float32) float64 {
	B := len(logp)
	var loss float64
	for i := 0; i < B; i++ {
		q0, q1 := q[0][i], q[1][i]
		loss += (alpha*float64(logp[i]) - float64(min(q0, q1))) / float64(B)
		if q0 <= q1 {
			dq[0][i], dq[1][i] = -1/float32(B), 0
		} else {
			dq[0][i], dq[1][i] = 0, -1/float32(B)
		}
	}
	return loss
}

// PolicyActionGrad writes the policy loss's gradient with respect to the
// sampled actions, dAct [B, A] = Σ_k ∂(−min Q)/∂ã, from the critics' input
// gradients dX[k] [B, S+A] (back-propagated from PolicyLoss's dq[k]; only
// the action columns S..S+A−1 are read).
func PolicyActionGrad(dX [2][]float32, S, A int, dAct []float32) {
	W := S + A
	B := len(dAct) / A
	for i := 0; i < B; i++ {
		for j := 0; j < A; j++ {
			dAct[i*A+j] = dX[0][i*W+S+j] + dX[1][i*W+S+j]
		}
	}
}

// PolicyLogpGrad writes the policy loss's gradient with respect to each
// row's log π(ã|s), α/B, into dLogp [B].
func PolicyLogpGrad(alpha float32, dLogp []float32) {
	B := len(dLogp)
	for i := range dLogp {
		dLogp[i] = alpha / float32(B)
	}
}

// MeanLogProb is mean_i log π(ã_i|s_i) over logp [B], accumulated in
// float64 as Σ log π/B term by term: the batch estimate of −entropy that
// TemperatureGrad takes.
func MeanLogProb(logp []float32) float64 {
	var m float64
	for _, v := range logp {
		m += float64(v) / float64(len(logp))
	}
	return m
}

// TemperatureGrad is the gradient with respect to log α of SAC's
// temperature loss L_α = −log α·(mean log π(ã|s) + H̄), H̄ the target
// entropy (−|A| by default): −(lpMean + H̄).
func TemperatureGrad(lpMean, targetEntropy float64) float64 {
	return -(lpMean + targetEntropy)
}

// ScalarAdam is Adam (PyTorch's defaults β1 = 0.9, β2 = 0.999, ε = 1e-8,
// bias-corrected) on one float64 scalar: SAC's log α and CQL's log α′.
// M and V are the moment estimates and T the number of steps taken, the
// state a checkpoint must keep.
type ScalarAdam struct {
	M, V float64
	T    int
}

// Step applies one Adam step with gradient g and learning rate lr to *x.
func (s *ScalarAdam) Step(x *float64, g, lr float64) {
	s.T++
	s.M = 0.9*s.M + 0.1*g
	s.V = 0.999*s.V + 0.001*g*g
	mh := s.M / (1 - math.Pow(0.9, float64(s.T)))
	vh := s.V / (1 - math.Pow(0.999, float64(s.T)))
	*x -= lr * mh / (math.Sqrt(vh) + 1e-8)
}
