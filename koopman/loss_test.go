package koopman

// Tests of Step 1's training objective against an independent float64
// computation of the paper's loss (appendix "The Koopman forward model"):
//
//	l̄(D(K(a)E(s)), s') + γ_2 · l̄(D(E(s + s_ε)), s + s_ε),   s_ε ~ N(0, σ_x²)
//
// with l̄ the Huber loss (the authors' smooth_l1_loss with β = HuberDelta),
// a mean over elements. koopq applies the autoencoder term to both states of
// the transition, x̃ = [s; s'] + noise (TrainConfig's doc), with the noisy
// input as its own target (the paper's formula; not a denoising target).

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/nn"
)

// refMLP evaluates an nn.MLP in float64 from its parameters (y = x W + b,
// W [In, Out] row-major; hidden activation after every layer but the last).
func refMLP(m *nn.MLP, x []float64) []float64 {
	act := func(a nn.Activation, v float64) float64 {
		switch a {
		case nn.Tanh:
			return math.Tanh(v)
		case nn.ReLU:
			return math.Max(v, 0)
		}
		return v
	}
	for li, l := range m.Layers {
		y := make([]float64, l.Out)
		for o := 0; o < l.Out; o++ {
			v := float64(l.B.Data[o])
			for i := 0; i < l.In; i++ {
				v += x[i] * float64(l.W.Data[i*l.Out+o])
			}
			a := m.Hidden
			if li == len(m.Layers)-1 {
				a = m.Output
			}
			y[o] = act(a, v)
		}
		x = y
	}
	return x
}

// refStep is K(a) g = (K0 + Σ_i a_i K_i) g in float64 (K blocks row-major,
// g'_r = Σ_c K[r, c] g_c).
func refStep(m *Model, g []float64, a []float32) []float64 {
	n := m.N()
	out := make([]float64, n)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			k := float64(m.K.Data[r*n+c])
			for i, ai := range a {
				k += float64(ai) * float64(m.K.Data[(i+1)*n*n+r*n+c])
			}
			out[r] += k * g[c]
		}
	}
	return out
}

// smoothL1 is PyTorch's smooth_l1_loss element term with β = delta.
func smoothL1(d, delta float64) float64 {
	if math.Abs(d) < delta {
		return 0.5 * d * d / delta
	}
	return math.Abs(d) - 0.5*delta
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// refLoss is the paper's two terms for transitions s, a, s' [rows, ·] and
// the autoencoder input x̃ [2·rows, S]; it also counts elements on each side
// of the Huber threshold.
func refLoss(m *Model, s, a, s2, x []float32, rows int, delta float64) (fwd, ae float64, small, large int) {
	S, M := m.S(), m.M()
	term := func(d float64) float64 {
		if math.Abs(d) < delta {
			small++
		} else {
			large++
		}
		return smoothL1(d, delta)
	}
	for r := 0; r < rows; r++ {
		g := refMLP(m.Enc, f64(s[r*S:(r+1)*S]))
		pred := refMLP(m.Dec, refStep(m, g, a[r*M:(r+1)*M]))
		for j := 0; j < S; j++ {
			fwd += term(pred[j] - float64(s2[r*S+j]))
		}
	}
	for r := 0; r < 2*rows; r++ {
		xr := f64(x[r*S : (r+1)*S])
		rec := refMLP(m.Dec, refMLP(m.Enc, xr))
		for j := 0; j < S; j++ {
			ae += term(rec[j] - xr[j])
		}
	}
	return fwd / float64(rows*S), ae / float64(2*rows*S), small, large
}

// lossSetup is a small untrained model (S = 3, m = 1, N = 4) and a batch of
// the linear controlled system s' = A s + B a.
func lossSetup(t *testing.T, rows int) (*Model, [3][]float32, []int) {
	t.Helper()
	obs, act, next := linearSystemData(rows, 3)
	m, err := NewModel(ModelConfig{ObsDim: 3, ActDim: 1, Latent: 4, Hidden: []int{8},
		EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "tanh", Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, rows)
	for i := range idx {
		idx[i] = (i * 7) % rows // a permutation (7 and rows coprime)
	}
	return m, [3][]float32{obs, act, next}, idx
}

// The trainer's forward and autoencoder terms equal the paper's equation
// computed here in float64: the forward term compares D(K(a)E(s)) with s'
// (not s), the autoencoder term compares D(E(x̃)) with the noisy x̃ itself,
// x̃ = [s; s'] + N(0, NoiseSigma²) (checked for its σ and independence of
// the clean states), both as smooth-L1 means with the configured threshold
// (cases with elements on both sides of it).
func TestLossTermsMatchPaper(t *testing.T) {
	const rows = 301 // odd: the two goroutines' autoencoder shares differ
	m, data, idx := lossSetup(t, rows)
	for _, c := range []struct{ delta, sigma, gamma float64 }{{1, 0.06, 10}, {0.05, 0.3, 3}} {
		cfg := DefaultTrainConfig()
		cfg.HuberDelta, cfg.NoiseSigma, cfg.AEWeight = c.delta, c.sigma, c.gamma
		tr := &trainer{m: m, cfg: cfg}
		tr.gather(data[0], data[1], data[2], idx, cfg.NoiseSigma, rand.New(rand.NewPCG(1, 2)))
		S := m.S()
		// The batch holds rows idx in order; x̃ is [s; s'] plus N(0, σ²).
		var z []float64
		for r, i := range idx {
			for j := 0; j < S; j++ {
				if tr.s[r*S+j] != data[0][i*S+j] || tr.s2[r*S+j] != data[2][i*S+j] {
					t.Fatalf("batch row %d is not dataset row %d", r, i)
				}
				z = append(z, float64(tr.x[r*S+j]-data[0][i*S+j]), float64(tr.x[(rows+r)*S+j]-data[2][i*S+j]))
			}
		}
		mean, std := 0.0, 0.0
		for _, v := range z {
			mean += v
		}
		mean /= float64(len(z))
		for _, v := range z {
			std += (v - mean) * (v - mean)
		}
		std = math.Sqrt(std / float64(len(z)-1))
		if !(math.Abs(std/c.sigma-1) < 0.08) || !(math.Abs(mean) < 5*c.sigma/math.Sqrt(float64(len(z)))) {
			t.Fatalf("σ_x %v: autoencoder input noise has mean %.3g, std %.4g", c.sigma, mean, std)
		}
		x := append([]float32(nil), tr.x...)
		wantF, wantA, small, large := refLoss(m, tr.s, tr.a, tr.s2, x, rows, c.delta)
		if small == 0 || large == 0 {
			t.Fatalf("δ %v: %d elements below and %d above the threshold; want both", c.delta, small, large)
		}
		gotF, gotA := tr.lossGrad(rows, false)
		if math.Abs(gotF-wantF) > 1e-5*wantF || math.Abs(gotA-wantA) > 1e-5*wantA {
			t.Fatalf("δ %v σ %v: loss terms fwd %.7g ae %.7g, paper's equation %.7g, %.7g", c.delta, c.sigma, gotF, gotA, wantF, wantA)
		}
		t.Logf("δ %v σ %v γ %v: fwd %.6g ae %.6g (%d / %d elements below / above δ)", c.delta, c.sigma, c.gamma, gotF, gotA, small, large)
	}
}

// The gradient the trainer applies is that of the weighted objective
// fwd + γ_ae·ae of the paper's equation: analytic gradients of E, D and K
// match central differences of the float64 reference (refLoss) at the same
// noisy input, for two weights γ_ae (so a dropped or doubled weight, or a
// gradient of one term only, fails).
func TestLossGradientIsWeightedObjective(t *testing.T) {
	const rows = 9
	m, data, idx := lossSetup(t, rows)
	for i := range m.K.Data { // make the bilinear term matter
		m.K.Data[i] *= 2
	}
	for _, gamma := range []float64{10, 0.5} {
		cfg := DefaultTrainConfig()
		cfg.AEWeight, cfg.HuberDelta, cfg.NoiseSigma = gamma, 0.2, 0.1
		tr := &trainer{m: m, cfg: cfg}
		tr.gather(data[0], data[1], data[2], idx, cfg.NoiseSigma, rand.New(rand.NewPCG(5, 6)))
		x := append([]float32(nil), tr.x...)
		nn.ZeroGrad(m.Params())
		tr.lossGrad(rows, true)
		total := func() float64 {
			f, a, _, _ := refLoss(m, tr.s, tr.a, tr.s2, x, rows, cfg.HuberDelta)
			return f + gamma*a
		}
		rng := rand.New(rand.NewPCG(7, 8))
		for _, p := range m.Params() {
			for k := 0; k < 6; k++ {
				i := rng.IntN(len(p.Data))
				orig := p.Data[i]
				p.Data[i] = orig + 1e-3
				up, hUp := total(), float64(p.Data[i])
				p.Data[i] = orig - 1e-3
				down, hDown := total(), float64(p.Data[i])
				p.Data[i] = orig
				fd := (up - down) / (hUp - hDown)
				got := float64(p.Grad[i])
				if math.Abs(got-fd) > 2e-3*math.Max(math.Abs(fd), 1e-2) {
					t.Errorf("γ_ae %v %s[%d]: gradient %.6g, central difference of the paper's objective %.6g", gamma, p.Name, i, got, fd)
				}
			}
		}
	}
}

// The validation losses that early stopping and the learning-rate plateau
// rule read are the paper's two terms on the validation rows without input
// noise, and ValTotal = ValFwd + γ_ae·ValAE.
func TestValidationLossIsNoiseFreeObjective(t *testing.T) {
	m, data, _ := lossSetup(t, 200)
	cfg := DefaultTrainConfig()
	cfg.MaxEpochs, cfg.Batch, cfg.AEWeight, cfg.NoiseSigma, cfg.Seed = 1, 32, 4, 0.5, 3
	res, err := Train(context.Background(), m, data[0], data[1], data[2], cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	S := m.S()
	var s, a, s2 []float32
	for _, i := range res.ValIdx {
		s = append(s, data[0][i*S:(i+1)*S]...)
		s2 = append(s2, data[2][i*S:(i+1)*S]...)
		a = append(a, data[1][i])
	}
	x := append(append([]float32(nil), s...), s2...)
	wantF, wantA, _, _ := refLoss(m, s, a, s2, x, len(res.ValIdx), cfg.HuberDelta)
	es := res.Epochs[0]
	if math.Abs(es.ValFwd-wantF) > 1e-5*wantF || math.Abs(es.ValAE-wantA) > 1e-5*wantA {
		t.Fatalf("validation fwd %.7g ae %.7g, paper's terms without noise %.7g, %.7g", es.ValFwd, es.ValAE, wantF, wantA)
	}
	if want := wantF + cfg.AEWeight*wantA; math.Abs(es.ValTotal-want) > 1e-5*want {
		t.Fatalf("validation total %.7g, want fwd + γ_ae·ae = %.7g", es.ValTotal, want)
	}
}

// Training on the linear controlled system s' = A s + B a learns its
// dynamics: the held-out forward prediction D(K(a)E(s)) has a mean squared
// error below a tenth of the trivial model s' = s (which knows neither A
// nor B), and below a tenth of the best action-blind linear map s' = Â s
// fitted here by least squares on the training rows (which ignores B a).
func TestTrainingLearnsLinearSystem(t *testing.T) {
	obs, act, next := linearSystemData(3000, 9)
	m, err := NewModel(ModelConfig{ObsDim: 3, ActDim: 1, Latent: 6, Hidden: []int{32, 32},
		EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "tanh", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultTrainConfig()
	cfg.MaxEpochs, cfg.Batch, cfg.LR, cfg.Seed = 30, 64, 2e-3, 2
	res, err := Train(context.Background(), m, obs, act, next, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	const S = 3
	var vo, va, vn []float32
	for _, i := range res.ValIdx {
		vo = append(vo, obs[i*S:(i+1)*S]...)
		vn = append(vn, next[i*S:(i+1)*S]...)
		va = append(va, act[i])
	}
	rows := len(res.ValIdx)
	mse := func(pred []float64) float64 {
		e := 0.0
		for k, v := range pred {
			d := v - float64(vn[k])
			e += d * d
		}
		return e / float64(len(pred))
	}
	model := mse(f64(m.Predict(vo, va, rows)))
	same := mse(f64(vo))
	// Action-blind least squares Â = (Σ s'sᵀ)(Σ s sᵀ)⁻¹ on the training rows.
	var ss, ns [S][S]float64
	for _, i := range res.TrainIdx {
		for r := 0; r < S; r++ {
			for c := 0; c < S; c++ {
				ss[r][c] += float64(obs[i*S+r]) * float64(obs[i*S+c])
				ns[r][c] += float64(next[i*S+r]) * float64(obs[i*S+c])
			}
		}
	}
	inv := inv3(ss)
	lin := make([]float64, rows*S)
	for r := 0; r < rows; r++ {
		for i := 0; i < S; i++ {
			for j := 0; j < S; j++ {
				aij := 0.0
				for k := 0; k < S; k++ {
					aij += ns[i][k] * inv[k][j]
				}
				lin[r*S+i] += aij * float64(vo[r*S+j])
			}
		}
	}
	blind := mse(lin)
	t.Logf("held-out MSE: model %.3g, s'=s %.3g, action-blind linear %.3g (%d epochs, best %d)", model, same, blind, len(res.Epochs), res.BestEpoch)
	if !(model < same/10) || !(model < blind/10) {
		t.Fatalf("forward MSE %.3g is not below a tenth of s'=s (%.3g) and of the action-blind linear fit (%.3g)", model, same, blind)
	}
}

// inv3 inverts a 3×3 matrix by cofactors.
func inv3(a [3][3]float64) [3][3]float64 {
	var c [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			i1, i2, j1, j2 := (i+1)%3, (i+2)%3, (j+1)%3, (j+2)%3
			c[j][i] = a[i1][j1]*a[i2][j2] - a[i1][j2]*a[i2][j1]
		}
	}
	det := a[0][0]*c[0][0] + a[0][1]*c[1][0] + a[0][2]*c[2][0]
	for i := range c {
		for j := range c[i] {
			c[i][j] /= det
		}
	}
	return c
}

// TestAEWeightZeroDropsTheTerm: with γ_ae = 0 the autoencoder term is not
// computed (reported 0) and the gradient is the forward term's alone.
func TestAEWeightZeroDropsTheTerm(t *testing.T) {
	const rows = 9
	m, data, idx := lossSetup(t, rows)
	cfg := DefaultTrainConfig()
	cfg.AEWeight, cfg.NoiseSigma = 0, 0
	tr := &trainer{m: m, cfg: cfg}
	tr.gather(data[0], data[1], data[2], idx, 0, nil)
	x := append([]float32(nil), tr.x...)
	nn.ZeroGrad(m.Params())
	fwd, ae := tr.lossGrad(rows, true)
	if ae != 0 {
		t.Errorf("γ_ae = 0: autoencoder loss %v reported, want 0 (not computed)", ae)
	}
	wantF, _, _, _ := refLoss(m, tr.s, tr.a, tr.s2, x, rows, cfg.HuberDelta)
	if math.Abs(fwd-wantF) > 1e-5*wantF {
		t.Errorf("forward term %v, reference %v", fwd, wantF)
	}
}

// TestGatherCopiesTheRowsAsked: the batch holds dataset rows idx in order
// for states, next states and, with a 2-D action (m = 1 cannot tell a row
// offset r·m from r/m), actions; x = [s; s'] when there is no noise.
func TestGatherCopiesTheRowsAsked(t *testing.T) {
	const rows, S, M = 6, 3, 2
	m, err := NewModel(ModelConfig{ObsDim: S, ActDim: M, Latent: 4, Hidden: []int{4},
		EncoderHidden: "tanh", EncoderOutput: "tanh", DecoderHidden: "tanh", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := 10
	obs, act, next := make([]float32, n*S), make([]float32, n*M), make([]float32, n*S)
	for i := range obs {
		obs[i], next[i] = float32(i), float32(1000+i)
	}
	for i := range act {
		act[i] = float32(-i)
	}
	idx := []int{7, 2, 9, 0, 4, 4}
	tr := &trainer{m: m, cfg: DefaultTrainConfig()}
	tr.gather(obs, act, next, idx, 0, nil)
	for r, i := range idx {
		for j := range S {
			if tr.s[r*S+j] != obs[i*S+j] || tr.s2[r*S+j] != next[i*S+j] || tr.x[r*S+j] != obs[i*S+j] || tr.x[(rows+r)*S+j] != next[i*S+j] {
				t.Fatalf("batch row %d: states are not dataset row %d", r, i)
			}
		}
		for j := range M {
			if tr.a[r*M+j] != act[i*M+j] {
				t.Fatalf("batch row %d: action %v, dataset row %d has %v", r, tr.a[r*M:(r+1)*M], i, act[i*M:(i+1)*M])
			}
		}
	}
}
