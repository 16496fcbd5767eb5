package cql

import (
	"fmt"
	"math"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// Diagnostics are offline measures of the current actor and critics on a
// set of transitions (a run without a simulator computes them on held-out
// episodes every evaluation interval). All are means over the transitions.
type Diagnostics struct {
	Transitions int `json:"transitions"`
	// QData is the mean of min_k Q_k(s, a) at the data's actions.
	QData float64 `json:"q_data"`
	// TDError is the root mean square of the Bellman residual
	// Q_k(s, a) − (r̃ + γ(1 − terminal)·min_j Q̄_j(s', tanh μ(s'))) over both
	// critics k: r̃ the reward as training transforms it, Q̄ the target
	// critics, the next action the policy's deterministic one (no sampling,
	// no entropy term), so the number is reproducible.
	TDError float64 `json:"td_error"`
	// LogLikelihood is the mean log π(a|s) of the data's actions (mapped to
	// [−1, 1] and clipped as in training), in nats per transition.
	LogLikelihood float64 `json:"log_likelihood"`
	// ActionMSE is the mean over transitions and dimensions of the squared
	// difference between the deterministic action and the data's action,
	// in the data's (env) units.
	ActionMSE float64 `json:"action_mse"`
}

// diagnoseChunk bounds the rows of one forward pass in Diagnose.
const diagnoseChunk = 1024

// Diagnose computes Diagnostics of the current networks on d (same
// dimensions as the training data; d's rewards as stored, transformed as
// training transforms them). It does not change the trainer or draw random
// numbers.
func (t *Trainer) Diagnose(d *dataset.Dataset) (Diagnostics, error) {
	l := t.Learner
	S, A := l.ObsDim, l.ActDim
	if d == nil || d.Len() == 0 {
		return Diagnostics{}, fmt.Errorf("cql: diagnostics need at least one transition")
	}
	if d.ObsDim != S || d.ActDim != A {
		return Diagnostics{}, fmt.Errorf("cql: diagnostics data has %d/%d-dimensional states/actions, the networks %d/%d", d.ObsDim, d.ActDim, S, A)
	}
	scale, bias, transform := l.Cfg.rewardTransform()
	g := l.Cfg.Gamma
	s := make([]float32, diagnoseChunk*S)
	s2 := make([]float32, diagnoseChunk*S)
	a := make([]float32, diagnoseChunk*A)
	a2 := make([]float32, diagnoseChunk*A)
	mode := make([]float32, diagnoseChunk*A)
	logp := make([]float32, diagnoseChunk)
	sa := make([]float32, diagnoseChunk*(S+A))
	var actC, actC2 nn.Cache
	var qC, qtC [2]nn.Cache
	var sumQ, sumTD, sumLL, sumSE float64
	n := d.Len()
	for lo := 0; lo < n; lo += diagnoseChunk {
		B := min(diagnoseChunk, n-lo)
		copy(s, d.Observations[lo*S:(lo+B)*S])
		copy(s2, d.NextObservations[lo*S:(lo+B)*S])
		copy(a, d.Actions[lo*A:(lo+B)*A])
		t.Scale.FromEnv(a[:B*A])
		if l.Norm != nil {
			l.Norm.Apply(s[:B*S])
			l.Norm.Apply(s2[:B*S])
		}
		out := l.Actor.Forward(&actC, s[:B*S], B)
		nn.TanhGaussianLogProb(out, B, A, a, logp)
		nn.TanhGaussianMode(out, B, A, mode)
		for i := 0; i < B; i++ {
			sumLL += float64(logp[i])
			for j := 0; j < A; j++ {
				lo64, hi64 := float64(t.Scale.Low[j]), float64(t.Scale.High[j])
				act := lo64 + (float64(mode[i*A+j])+1)/2*(hi64-lo64)
				e := act - float64(d.Actions[(lo+i)*A+j])
				sumSE += e * e
			}
		}
		nn.TanhGaussianMode(l.Actor.Forward(&actC2, s2[:B*S], B), B, A, a2)
		var q, qt [2][]float32
		sac.ConcatSA(s, S, a, A, B, sa)
		for k := range 2 {
			q[k] = l.Q[k].Forward(&qC[k], sa[:B*(S+A)], B)
		}
		sac.ConcatSA(s2, S, a2, A, B, sa)
		for k := range 2 {
			qt[k] = l.QT[k].Forward(&qtC[k], sa[:B*(S+A)], B)
		}
		for i := 0; i < B; i++ {
			r := float64(d.Rewards[lo+i]) * t.rewardK
			if transform {
				r = scale*r + bias
			}
			y := r + g*(1-float64(d.Terminals[lo+i]))*math.Min(float64(qt[0][i]), float64(qt[1][i]))
			sumQ += math.Min(float64(q[0][i]), float64(q[1][i]))
			for k := range 2 {
				e := float64(q[k][i]) - y
				sumTD += e * e
			}
		}
	}
	return Diagnostics{Transitions: n, QData: sumQ / float64(n), TDError: math.Sqrt(sumTD / float64(2*n)),
		LogLikelihood: sumLL / float64(n), ActionMSE: sumSE / float64(n*A)}, nil
}
