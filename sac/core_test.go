package sac

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/nn"
)

// PolicyLoss is mean(α log π − min(Q1, Q2)), its ∂/∂Q_k is −1/B on the
// smaller critic's rows (critic 0 on a tie) and 0 on the other's, and
// PolicyActionGrad sums the two critics' action columns.
func TestPolicyLossAndGradients(t *testing.T) {
	const B, S, A = 4, 2, 1
	logp := []float32{-1, 0.5, 2, -0.25}
	q := [2][]float32{{1, 2, 3, 4}, {2, 1, 3, 5}}
	dq := [2][]float32{make([]float32, B), make([]float32, B)}
	const alpha = 0.2
	got := PolicyLoss(alpha, logp, q, dq)
	want := 0.0
	for i := range logp {
		want += alpha*float64(logp[i]) - math.Min(float64(q[0][i]), float64(q[1][i]))
	}
	want /= B
	if math.Abs(got-want) > 1e-12 {
		t.Fatalf("loss %v, want %v", got, want)
	}
	wantD := [2][]float32{{-0.25, 0, -0.25, -0.25}, {0, -0.25, 0, 0}} // row 2 is a tie: critic 0
	for k := range dq {
		for i := range dq[k] {
			if dq[k][i] != wantD[k][i] {
				t.Fatalf("dq[%d] = %v, want %v", k, dq[k], wantD[k])
			}
		}
	}
	dX := [2][]float32{make([]float32, B*(S+A)), make([]float32, B*(S+A))}
	for k := range dX {
		for i := range dX[k] {
			dX[k][i] = float32(10*k + i)
		}
	}
	dAct := make([]float32, B*A)
	PolicyActionGrad(dX, S, A, dAct)
	for i := 0; i < B; i++ {
		if w := dX[0][i*(S+A)+S] + dX[1][i*(S+A)+S]; dAct[i] != w {
			t.Fatalf("dAct[%d] = %v, want %v", i, dAct[i], w)
		}
	}
}

// Descend steps critic k only and moves its target to (1 − τ)Q̄ + τQ with
// Q after the step; NewTwin starts each target equal to its critic.
func TestTwinDescend(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	net := DefaultNetConfig()
	net.Hidden = []int{8}
	var q, qt [2]*nn.MLP
	for k := range q {
		q[k], qt[k] = NewCritic("q", net, 3, 1, rng), NewCritic("q", net, 3, 1, rng)
	}
	tw := NewTwin(q, qt, 1e-2)
	for k := range q {
		for i, p := range q[k].Params() {
			if p.Data[0] != qt[k].Params()[i].Data[0] {
				t.Fatalf("target %d not a copy of its critic", k)
			}
		}
	}
	x := []float32{0.1, -0.2, 0.3, 0.5, 1, 0, -1, 0.25}
	var c nn.Cache
	q[1].Forward(&c, x, 2)
	old1 := append([]float32(nil), q[1].Params()[0].Data...)
	oldT1 := append([]float32(nil), qt[1].Params()[0].Data...)
	old0 := append([]float32(nil), q[0].Params()[0].Data...)
	const tau = 0.25
	tw.Descend(1, &c, []float32{1, -1}, tau)
	new1, newT1 := q[1].Params()[0].Data, qt[1].Params()[0].Data
	moved := false
	for j := range new1 {
		moved = moved || new1[j] != old1[j]
		want := (1-tau)*oldT1[j] + tau*new1[j]
		if math.Abs(float64(newT1[j]-want)) > 1e-6 {
			t.Fatalf("target[%d] = %v, want %v", j, newT1[j], want)
		}
	}
	if !moved || tw.Opt[1].T != 1 || tw.Opt[0].T != 0 {
		t.Fatalf("critic 1 moved %v, Adam steps %d, %d; want moved, 0, 1", moved, tw.Opt[0].T, tw.Opt[1].T)
	}
	for j, v := range q[0].Params()[0].Data {
		if v != old0[j] {
			t.Fatalf("critic 0 changed")
		}
	}
}

// TestScalarAdamMatchesReference: ScalarAdam follows Adam (Kingma & Ba,
// Algorithm 1, PyTorch's defaults) step by step against a float64
// reference written here with the bias corrections as running products,
// on gradients of both signs and sizes spanning four orders of magnitude;
// the moments, the step count and the parameter must all agree.
func TestScalarAdamMatchesReference(t *testing.T) {
	grads := []float64{0.5, -2, 3, 0.01, -0.3, 7, -7, 1e-3, 2.5, -0.04}
	const lr = 0.03
	var a ScalarAdam
	x := 1.25
	m, v, ref := 0.0, 0.0, 1.25
	b1t, b2t := 1.0, 1.0
	for i, g := range grads {
		a.Step(&x, g, lr)
		m = 0.9*m + (1-0.9)*g
		v = 0.999*v + (1-0.999)*g*g
		b1t *= 0.9
		b2t *= 0.999
		ref -= lr * (m / (1 - b1t)) / (math.Sqrt(v/(1-b2t)) + 1e-8)
		if a.T != i+1 || math.Abs(a.M-m) > 1e-12*math.Abs(m)+1e-15 || math.Abs(a.V-v) > 1e-12*v+1e-18 ||
			math.Abs(x-ref) > 1e-12 {
			t.Fatalf("step %d: T=%d M=%g V=%g x=%.15g; want T=%d M=%g V=%g x=%.15g", i+1, a.T, a.M, a.V, x, i+1, m, v, ref)
		}
	}
	// The first step moves by lr·sign(g) (up to ε): the bias corrections at work.
	var b ScalarAdam
	y := 0.0
	b.Step(&y, -4, lr)
	if math.Abs(y-lr) > 1e-9 {
		t.Errorf("first step moved %g, want +%g", y, lr)
	}
}
