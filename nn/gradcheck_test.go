package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/internal/gradcheck"
)

// checkGrad compares analytic gradients with central finite differences of
// loss with respect to the entries of x (40 probes, ReLU kinks skipped).
func checkGrad(t *testing.T, name string, x []float32, analytic []float32, loss func() float64, rng *rand.Rand) {
	t.Helper()
	gradcheck.Check(t, name, x, analytic, loss, rng, gradcheck.Options{Probes: 40, SkipKinks: true})
}

func randVec(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * rng.NormFloat64())
	}
	return v
}

// weightedSum is a loss Σ w_i y_i with fixed random weights, so ∂L/∂y = w.
func weightedSum(y, w []float32) float64 {
	var s float64
	for i := range y {
		s += float64(y[i]) * float64(w[i])
	}
	return s
}

func TestLinearGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, bias := range []bool{true, false} {
		l := NewLinear("l", 5, 4, bias, rng)
		if bias {
			copy(l.B.Data, randVec(rng, 4, 0.5))
		}
		rows := 3
		x := randVec(rng, rows*5, 1)
		w := randVec(rng, rows*4, 1)
		y := make([]float32, rows*4)
		loss := func() float64 { l.Forward(x, rows, y); return weightedSum(y, w) }
		loss()
		ZeroGrad(l.Params())
		dx := make([]float32, rows*5)
		l.Backward(x, w, rows, dx, true)
		checkGrad(t, "linear.x", x, dx, loss, rng)
		checkGrad(t, "linear.W", l.W.Data, l.W.Grad, loss, rng)
		if bias {
			checkGrad(t, "linear.b", l.B.Data, l.B.Grad, loss, rng)
		}
	}
}

func TestMLPGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		hidden, out Activation
	}{{ReLU, Identity}, {Tanh, Tanh}, {ReLU, Tanh}, {Tanh, Identity}} {
		m := NewMLP("m", []int{6, 16, 12, 3}, tc.hidden, tc.out, rng)
		for _, p := range m.Params() {
			if len(p.Shape) == 1 {
				copy(p.Data, randVec(rng, len(p.Data), 0.1))
			}
		}
		rows := 4
		x := randVec(rng, rows*6, 1)
		w := randVec(rng, rows*3, 1)
		var c Cache
		loss := func() float64 { return weightedSum(m.Forward(&c, x, rows), w) }
		loss()
		ZeroGrad(m.Params())
		dx := make([]float32, rows*6)
		m.Backward(&c, w, dx, true)
		checkGrad(t, tc.hidden.String()+".x", x, dx, loss, rng)
		for _, p := range m.Params() {
			checkGrad(t, tc.hidden.String()+"."+p.Name, p.Data, p.Grad, loss, rng)
		}
		// Input-only backward must give the same dx and leave param grads alone.
		ZeroGrad(m.Params())
		loss()
		dx2 := make([]float32, rows*6)
		m.Backward(&c, w, dx2, false)
		for i := range dx {
			if math.Abs(float64(dx[i]-dx2[i])) > 1e-6 {
				t.Fatalf("input-only backward differs at %d: %v vs %v", i, dx2[i], dx[i])
			}
		}
		for _, p := range m.Params() {
			for _, g := range p.Grad {
				if g != 0 {
					t.Fatalf("input-only backward touched %s", p.Name)
				}
			}
		}
	}
}

func TestLossGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	pred := randVec(rng, 20, 2)
	target := randVec(rng, 20, 2)
	g := make([]float32, 20)
	MSE(pred, target, g, 1)
	checkGrad(t, "mse", pred, g, func() float64 { return float64(MSE(pred, target, nil, 1)) }, rng)
	Huber(pred, target, 1, g, 1)
	checkGrad(t, "huber", pred, g, func() float64 { return float64(Huber(pred, target, 1, nil, 1)) }, rng)
	// MSE value against a hand computation.
	if v := MSE([]float32{1, 2}, []float32{0, 0}, nil, 1); math.Abs(float64(v)-2.5) > 1e-6 {
		t.Fatalf("MSE = %v, want 2.5", v)
	}
	// Huber: |d| = 0.5 → 0.125; |d| = 3 → 2.5; mean 1.3125.
	if v := Huber([]float32{0.5, 3}, []float32{0, 0}, 1, nil, 1); math.Abs(float64(v)-1.3125) > 1e-6 {
		t.Fatalf("Huber = %v, want 1.3125", v)
	}
	rows, cols := 3, 7
	x := randVec(rng, rows*cols, 3)
	out := make([]float32, rows)
	soft := make([]float32, rows*cols)
	w := randVec(rng, rows, 1)
	LogSumExpRows(x, rows, cols, out, soft)
	grad := make([]float32, rows*cols)
	for r := 0; r < rows; r++ {
		for j := 0; j < cols; j++ {
			grad[r*cols+j] = w[r] * soft[r*cols+j]
		}
	}
	checkGrad(t, "logsumexp", x, grad, func() float64 {
		LogSumExpRows(x, rows, cols, out, nil)
		return weightedSum(out, w)
	}, rng)
	// Stability: huge inputs stay finite and exact.
	LogSumExpRows([]float32{1000, 1000}, 1, 2, out, nil)
	if math.Abs(float64(out[0])-(1000+math.Ln2)) > 1e-3 {
		t.Fatalf("logsumexp(1000,1000) = %v", out[0])
	}
}

func TestTanhGaussianGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	rows, A := 5, 3
	out := randVec(rng, rows*2*A, 0.7)
	out[A] = 3 // clamped log-std: no gradient may flow
	noise := randVec(rng, rows*A, 1)
	act := make([]float32, rows*A)
	logp := make([]float32, rows)
	wa := randVec(rng, rows*A, 1)
	wl := randVec(rng, rows, 1)
	loss := func() float64 {
		TanhGaussianSample(out, rows, A, noise, act, logp)
		return weightedSum(act, wa) + weightedSum(logp, wl)
	}
	loss()
	dOut := make([]float32, rows*2*A)
	TanhGaussianSampleBackward(out, rows, A, noise, act, wa, wl, dOut)
	checkGrad(t, "tanhgauss.sample", out, dOut, loss, rng)
	if dOut[A] != 0 {
		t.Fatalf("clamped log-std got gradient %v", dOut[A])
	}
	// Log-prob of given actions, including actions at the ±1 boundary.
	given := make([]float32, rows*A)
	for i := range given {
		given[i] = float32(math.Tanh(rng.NormFloat64()))
	}
	given[1] = 1
	lossLP := func() float64 {
		TanhGaussianLogProb(out, rows, A, given, logp)
		return weightedSum(logp, wl)
	}
	lossLP()
	TanhGaussianLogProbBackward(out, rows, A, given, wl, dOut)
	checkGrad(t, "tanhgauss.logprob", out, dOut, lossLP, rng)
}

// The sampled log-prob must equal the log-prob evaluated at the sampled action,
// and integrate to one over the action interval (A = 1, numerically).
func TestTanhGaussianDensity(t *testing.T) {
	out := []float32{0.3, -0.5}
	noise := []float32{0.8}
	act := make([]float32, 1)
	lp1 := make([]float32, 1)
	lp2 := make([]float32, 1)
	TanhGaussianSample(out, 1, 1, noise, act, lp1)
	TanhGaussianLogProb(out, 1, 1, act, lp2)
	if math.Abs(float64(lp1[0]-lp2[0])) > 1e-4 {
		t.Fatalf("sample logp %v != logprob %v", lp1[0], lp2[0])
	}
	var integral float64
	const n = 200000
	for i := 0; i < n; i++ {
		a := -1 + (float64(i)+0.5)*2/n
		TanhGaussianLogProb(out, 1, 1, []float32{float32(a)}, lp2)
		integral += math.Exp(float64(lp2[0])) * 2 / n
	}
	if math.Abs(integral-1) > 1e-3 {
		t.Fatalf("density integrates to %v, want 1", integral)
	}
}

func TestAdamMatchesReference(t *testing.T) {
	// One scalar parameter, gradients 1 then -2; reference from the update rule
	// θ −= lr·m̂/(√v̂+ε) computed in float64 by hand.
	p := NewParam("p", 1)
	p.Data[0] = 1
	a := NewAdam([]*Param{p}, 0.1)
	want := 1.0
	m, v := 0.0, 0.0
	for step, g := range []float64{1, -2, 0.5} {
		p.Grad[0] = float32(g)
		a.Step()
		m = 0.9*m + 0.1*g
		v = 0.999*v + 0.001*g*g
		mh := m / (1 - math.Pow(0.9, float64(step+1)))
		vh := v / (1 - math.Pow(0.999, float64(step+1)))
		want -= 0.1 * mh / (math.Sqrt(vh) + 1e-8)
		if math.Abs(float64(p.Data[0])-want) > 1e-5 {
			t.Fatalf("step %d: %v, want %v", step, p.Data[0], want)
		}
	}
}

func TestOrthogonalInit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, s := range [][2]int{{8, 5}, {5, 8}, {6, 6}} {
		r, c := s[0], s[1]
		w := make([]float32, r*c)
		Orthogonal(w, r, c, 2, rng)
		// The smaller Gram matrix must be 4·I.
		n, inner := c, r
		at := func(i, j int) float64 { return float64(w[i*c+j]) }
		if r < c {
			n, inner = r, c
			at = func(i, j int) float64 { return float64(w[j*c+i]) }
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < inner; k++ {
					s += at(k, i) * at(k, j)
				}
				want := 0.0
				if i == j {
					want = 4
				}
				if math.Abs(s-want) > 1e-4 {
					t.Fatalf("%dx%d: gram[%d,%d]=%v want %v", r, c, i, j, s, want)
				}
			}
		}
	}
}
