package cql

import "github.com/koopq/koopq/nn"

// stateGradient implements augment.QGradient: ∂ min(Q1,Q2)(s, a)/∂s for raw
// states s [rows, S] and actions a [rows, A], through the state normalizer
// (∂/∂s = ∂/∂s_norm / std). It allocates; S4RL-Adv calls it once per batch.
func (l *Learner) stateGradient(s, a []float32, rows int, grad []float32) {
	S, A := l.ObsDim, l.ActDim
	W := S + A
	sn := append([]float32(nil), s[:rows*S]...)
	l.Norm.Apply(sn)
	x := make([]float32, rows*W)
	for i := 0; i < rows; i++ {
		copy(x[i*W:i*W+S], sn[i*S:(i+1)*S])
		copy(x[i*W+S:(i+1)*W], a[i*A:(i+1)*A])
	}
	var c [2]nn.Cache
	q0 := append([]float32(nil), l.Q[0].Forward(&c[0], x, rows)...)
	q1 := l.Q[1].Forward(&c[1], x, rows)
	d := [2][]float32{make([]float32, rows), make([]float32, rows)}
	for i := 0; i < rows; i++ {
		if q0[i] <= q1[i] {
			d[0][i] = 1
		} else {
			d[1][i] = 1
		}
	}
	dx := [2][]float32{make([]float32, rows*W), make([]float32, rows*W)}
	for k := 0; k < 2; k++ {
		l.Q[k].Backward(&c[k], d[k], dx[k], false)
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < S; j++ {
			grad[i*S+j] = (dx[0][i*W+j] + dx[1][i*W+j]) / l.Norm.Std[j]
		}
	}
}
