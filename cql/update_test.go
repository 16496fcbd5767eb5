package cql

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/gradcheck"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// The scalar Adam (α, α′) adds ε = 1e-8 to √v̂ as PyTorch's Adam does: a
// gradient far below ε moves the parameter by lr·g/(|g| + ε), a small
// step in the gradient's descent direction (a sign slip in ε flips it).
func TestScalarAdamEpsilon(t *testing.T) {
	var s sac.ScalarAdam
	x := 0.0
	s.Step(&x, 1e-10, 1)
	want := -1e-10 / (1e-10 + 1e-8)
	if math.Abs(x-want) > 1e-12 {
		t.Fatalf("x after one step with g = 1e-10: %v, want %v", x, want)
	}
}

// The logsumexp's uniform actions are drawn from U[−1, 1]^A (the reference
// test replaces the noise, so it cannot see how it is drawn): after a step
// every one lies in [−1, 1], with mean ≈ 0 and variance ≈ 1/3.
func TestUniformActionsCoverBox(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 2, 300, rng)
	scale := sac.ActionScale{Low: []float32{-1, -1}, High: []float32{1, 1}}
	tr, err := NewTrainer(smallConfig(1), d, nil, scale)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.StepOnce(); err != nil {
		t.Fatal(err)
	}
	u := tr.Learner.ws.noise.unif
	if len(u) != 128*10*2 {
		t.Fatalf("%d uniform samples, want B·N·A = %d", len(u), 128*10*2)
	}
	var m, v float64
	for _, x := range u {
		if x < -1 || x > 1 {
			t.Fatalf("uniform action %v outside [−1, 1]", x)
		}
		m += float64(x)
		v += float64(x) * float64(x)
	}
	m /= float64(len(u))
	v = v/float64(len(u)) - m*m
	// SE of the mean is √(1/3/2560) ≈ 0.011, of the variance ≈ 0.0053.
	if math.Abs(m) > 0.05 || math.Abs(v-1.0/3) > 0.03 {
		t.Fatalf("uniform actions: mean %v, variance %v; want 0 and 1/3", m, v)
	}
}

// stateGradient (S4RL-Adv's ∂ min(Q1,Q2)(s, a)/∂s in raw state units)
// matches central finite differences of Σ_rows min_k Q_k(norm(s), a)
// through a normalizer with non-zero mean and non-unit std, with rows where
// each twin is the minimum.
func TestStateGradientMatchesFiniteDifferences(t *testing.T) {
	const S, A, rows = 3, 2, 6
	norm := &dataset.Normalizer{Mean: []float32{0.3, -0.2, 0.1}, Std: []float32{0.25, 0.5, 2}}
	l := NewLearner(smallConfig(1), S, A, norm, rand.New(rand.NewPCG(4, 4)))
	rng := rand.New(rand.NewPCG(5, 5))
	s, a := make([]float32, rows*S), make([]float32, rows*A)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	for i := range a {
		a[i] = float32(2*rng.Float64() - 1)
	}
	minQ := func() (float64, []bool) {
		x := make([]float32, rows*(S+A))
		sn := append([]float32(nil), s...)
		norm.Apply(sn)
		sac.ConcatSA(sn, S, a, A, rows, x)
		var c0, c1 nn.Cache
		q0 := append([]float32(nil), l.Q[0].Forward(&c0, x, rows)...)
		q1 := l.Q[1].Forward(&c1, x, rows)
		var sum float64
		first := make([]bool, rows)
		for i := range q0 {
			sum += float64(min(q0[i], q1[i]))
			first[i] = q0[i] <= q1[i]
		}
		return sum, first
	}
	_, first := minQ()
	if !slices.Contains(first, true) || !slices.Contains(first, false) {
		t.Fatalf("fixture: twin 0 is the minimum on rows %v; want both twins represented", first)
	}
	grad := make([]float32, rows*S)
	l.stateGradient(s, a, rows, grad)
	gradcheck.Check(t, "∂minQ/∂s", s, grad, func() float64 { v, _ := minQ(); return v },
		rand.New(rand.NewPCG(6, 6)), gradcheck.Options{Probes: rows * S, Step: 1e-3, RelTol: 2e-2, Floor: 0.05, SkipKinks: true})
}

// The α and α′ gradients handed to their Adam steps are the formulas'
// (checked through Adam's first moment after one step, m = 0.1·g, since a
// single Adam step moves by lr·sign(g) whatever g's size, which the
// parameter comparison in reference_test.go cannot see):
//
//	∂L_α/∂log α   = −(mean log π(ã|s) − |A|)          (target entropy −|A|)
//	∂L_α′/∂log α′ = −½ α′ Σ_k (w·gap_k − τ)
func TestDualGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 2, 300, rng)
	scale := sac.ActionScale{Low: []float32{-1, -1}, High: []float32{1, 1}}
	cfg := smallConfig(1)
	cfg.Lagrange, cfg.MinQWeight, cfg.LagrangeThres, cfg.AutoEntropy = true, 10, 3, true
	tr, err := NewTrainer(cfg, d, nil, scale)
	if err != nil {
		t.Fatal(err)
	}
	tr.Learner.LogAlphaPrime = math.Log(0.7)
	st, err := tr.StepOnce()
	if err != nil {
		t.Fatal(err)
	}
	l := tr.Learner
	if math.Abs(st.AlphaPrime-0.7) > 1e-12 {
		t.Fatalf("α′ used %v, want 0.7", st.AlphaPrime)
	}
	gsum := 0.0
	for k := range l.ws.crit {
		gsum += cfg.MinQWeight*l.ws.crit[k].gap - cfg.LagrangeThres
	}
	for _, c := range []struct {
		name    string
		got, wa float64
	}{
		{"α", l.scalar[0].M, 0.1 * -(st.LogPi - 2)},
		{"α′", l.scalar[1].M, 0.1 * -0.5 * 0.7 * gsum},
	} {
		if math.Abs(c.got-c.wa) > 1e-9*math.Max(1, math.Abs(c.wa)) || c.wa == 0 {
			t.Errorf("%s: Adam first moment %v, want 0.1·g = %v", c.name, c.got, c.wa)
		}
	}
}
