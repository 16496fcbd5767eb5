package cql

import "github.com/koopq/koopq/nn"

// advWS is stateGradient's scratch, kept between calls so that S4RL-Adv's
// per-batch gradient allocates no buffers once the batch size is known.
type advWS struct {
	x  []float32    // [rows, S+A] normalized states and actions
	c  [2]nn.Cache  // each critic's forward pass at x
	q  [2][]float32 // [rows] Q_k(s, a)
	d  [2][]float32 // [rows] ∂ min(Q1,Q2)/∂Q_k: 1 where critic k is the minimum
	dx [2][]float32 // [rows, S+A] ∂ min(Q1,Q2)/∂x through critic k

	rows int // rows of the call in progress, for the parallel phases
}

// stateGradient implements QGradient: ∂ min(Q1,Q2)(s, a)/∂s for raw
// states s [rows, S] and actions a [rows, A], written to grad [rows, S],
// through the state normalizer (∂/∂s = ∂/∂s_norm / std). Ties go to
// critic 0. The two critics run concurrently (Learner.pool), as in Step;
// S4RL-Adv calls it once per batch, never concurrently.
func (l *Learner) stateGradient(s, a []float32, rows int, grad []float32) {
	S, A := l.ObsDim, l.ActDim
	W := S + A
	g := &l.adv
	g.x = grow(g.x, rows*W)
	for i := 0; i < rows; i++ {
		copy(g.x[i*W:i*W+S], s[i*S:(i+1)*S])
		copy(g.x[i*W+S:(i+1)*W], a[i*A:(i+1)*A])
	}
	for i := 0; i < rows; i++ {
		l.Norm.Apply(g.x[i*W : i*W+S])
	}
	g.rows = rows
	l.pool.Run(l.phaseAdvQ)
	for k := range g.d {
		g.d[k] = grow(g.d[k], rows)
	}
	for i := 0; i < rows; i++ {
		d0 := float32(0)
		if g.q[0][i] <= g.q[1][i] {
			d0 = 1
		}
		g.d[0][i], g.d[1][i] = d0, 1-d0
	}
	l.pool.Run(l.phaseAdvGrad)
	for i := 0; i < rows; i++ {
		for j := 0; j < S; j++ {
			grad[i*S+j] = (g.dx[0][i*W+j] + g.dx[1][i*W+j]) / l.Norm.Std[j]
		}
	}
}

// doAdvQ is stateGradient's forward phase for critic k: Q_k at adv.x.
func (l *Learner) doAdvQ(k int) {
	g := &l.adv
	g.q[k] = grow(g.q[k], g.rows)
	copy(g.q[k], l.Q[k].Forward(&g.c[k], g.x, g.rows))
}

// doAdvGrad is stateGradient's backward phase for critic k: ∂/∂x of
// adv.d[k]·Q_k into adv.dx[k].
func (l *Learner) doAdvGrad(k int) {
	g := &l.adv
	g.dx[k] = grow(g.dx[k], g.rows*(l.ObsDim+l.ActDim))
	l.Q[k].Backward(&g.c[k], g.d[k], g.dx[k], false)
}
