package cql

// An independent reference for one full CQL update, in plain float64 and
// without any of Step's workspaces, batching or offset arithmetic. It is
// written from the CQL paper (Kumar et al. 2020, Eq. 4 and App. F: CQL(H)
// with the importance-sampled logsumexp), the SAC policy step (Haarnoja et
// al. 2018) and the KFC authors' update (KFC_prime.update_parameters, which
// decides where shifted states enter), in the order of CORL's single-file
// cql.py:
//
//	y_i   = r_i + γ(1 − d_i)·[min_k Q̄_k(s̃'_i, a'_i) − α·log π(a'_i|s'_i)],  a'_i ~ π(·|s'_i)
//	        (the −α log π term only with BackupEntropy; r_i ← scale·r_i + bias
//	        with a reward transform; with MaxTargetBackup a'_i is the argmax
//	        over N samples a'_ij ~ π(·|s'_i) of min_k Q̄_k(s̃'_i, a'_ij))
//	L_Qk  = mean_i (Q_k(s̃_i, a_i) − y_i)² + α'·w·(mean_i T·LSE_j(c_kij/T) − mean_i Q_k(s̃_i, a_i))
//	c_ki· = [Q_k(s_i, u_ij) − log 2^−A]_{j<N} ∪ [Q_k(s_i, a^{s'}_ij) − log π(a^{s'}_ij|s'_i)]_{j<N}
//	        ∪ [Q_k(s_i, a^{s}_ij) − log π(a^{s}_ij|s_i)]_{j<N}
//	L_π   = mean_i α·log π(ã_i|s_i) − log π(a_i|s_i)             (behaviour cloning, first BCSteps updates)
//	L_π   = mean_i α·log π(ã_i|s_i) − min_k Q_k(s_i, ã_i)        (afterwards; Q before this update's step)
//	L_α   = −log α · mean_i (log π(ã_i|s_i) − A)                   (AutoEntropy; target entropy −A)
//	L_α'  = −½ Σ_k α'·(w·gap_k − τ_lagrange)                      (Lagrange; gap_k = mean LSE − mean Q_k(s̃,a))
//	ClipDiff: mean LSE − mean Q_k(s̃,a) becomes mean_i clamp(T·LSE_i − Q_k(s̃_i,a_i), min, max)
//	        in L_Qk and gap_k (a clamped state passes no gradient)
//	PushUpClean: the clean Q_k(s_i, a_i) replaces Q_k(s̃_i, a_i) in the last term of L_Qk, in
//	        gap_k and in ClipDiff's difference (the Bellman error keeps s̃_i)
//	Q̄_k  ← (1 − τ)·Q̄_k + τ·Q_k after the critics' Adam step
//
// s̃, s̃' are the augmenter's outputs; every other state is clean. Gradients
// are derived by hand below (the chain rule through u = μ + σξ, a = tanh u),
// not taken from package nn.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"gonum.org/v1/gonum/floats"
)

// mlp64 is a float64 ReLU network with a linear output: layer l computes
// x·W[l] + b[l] with W[l] [in, out] row-major (nn.Linear's layout).
type mlp64 struct {
	sizes []int
	w, b  [][]float64
}

func toMLP64(m *nn.MLP) *mlp64 {
	r := &mlp64{sizes: append([]int(nil), m.Sizes...)}
	for _, l := range m.Layers {
		r.w = append(r.w, f64(l.W.Data))
		r.b = append(r.b, f64(l.B.Data))
	}
	return r
}

func f64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// params lists the tensors in nn.MLP.Params order (weight, bias per layer).
func (m *mlp64) params() [][]float64 {
	var ps [][]float64
	for l := range m.w {
		ps = append(ps, m.w[l], m.b[l])
	}
	return ps
}

func (m *mlp64) zeros() [][]float64 {
	var ps [][]float64
	for _, p := range m.params() {
		ps = append(ps, make([]float64, len(p)))
	}
	return ps
}

// forward returns the activations of every layer for one input row
// (acts[0] = x, acts[L] = output).
func (m *mlp64) forward(x []float64) [][]float64 {
	acts := [][]float64{x}
	L := len(m.w)
	for l := 0; l < L; l++ {
		in, out := m.sizes[l], m.sizes[l+1]
		y := append([]float64(nil), m.b[l]...)
		for i := 0; i < in; i++ {
			for j := 0; j < out; j++ {
				y[j] += x[i] * m.w[l][i*out+j]
			}
		}
		if l < L-1 {
			for j := range y {
				y[j] = math.Max(y[j], 0)
			}
		}
		acts = append(acts, y)
		x = y
	}
	return acts
}

func (m *mlp64) out(x []float64) []float64 {
	a := m.forward(x)
	return a[len(a)-1]
}

// backward adds ∂L/∂θ for one row (dy = ∂L/∂output) into grads (params
// order) when grads is non-nil and returns ∂L/∂x.
func (m *mlp64) backward(acts [][]float64, dy []float64, grads [][]float64) []float64 {
	d := append([]float64(nil), dy...)
	for l := len(m.w) - 1; l >= 0; l-- {
		in, out := m.sizes[l], m.sizes[l+1]
		if l < len(m.w)-1 {
			for j := range d {
				if acts[l+1][j] <= 0 {
					d[j] = 0
				}
			}
		}
		x := acts[l]
		dx := make([]float64, in)
		for i := 0; i < in; i++ {
			for j := 0; j < out; j++ {
				if grads != nil {
					grads[2*l][i*out+j] += x[i] * d[j]
				}
				dx[i] += d[j] * m.w[l][i*out+j]
			}
		}
		if grads != nil {
			for j := 0; j < out; j++ {
				grads[2*l+1][j] += d[j]
			}
		}
		d = dx
	}
	return d
}

// adam64 is Adam (β = 0.9, 0.999, ε = 1e-8, bias-corrected) as in PyTorch.
type adam64 struct {
	lr   float64
	t    int
	m, v [][]float64
}

func newAdam64(ps [][]float64, lr float64) *adam64 {
	a := &adam64{lr: lr}
	for _, p := range ps {
		a.m = append(a.m, make([]float64, len(p)))
		a.v = append(a.v, make([]float64, len(p)))
	}
	return a
}

func (a *adam64) step(ps, gs [][]float64) {
	a.t++
	c1 := 1 - math.Pow(0.9, float64(a.t))
	c2 := 1 - math.Pow(0.999, float64(a.t))
	for k, p := range ps {
		for j := range p {
			g := gs[k][j]
			a.m[k][j] = 0.9*a.m[k][j] + 0.1*g
			a.v[k][j] = 0.999*a.v[k][j] + 0.001*g*g
			p[j] -= a.lr * (a.m[k][j] / c1) / (math.Sqrt(a.v[k][j]/c2) + 1e-8)
		}
	}
}

// tanhGauss is one tanh-Gaussian action from a policy output row
// [μ (A), raw log σ (A)] and standard-normal ξ: a = tanh(μ + σξ).
type tanhGauss struct {
	a, u, xi, sigma []float64
	pass            []bool // log σ inside [−20, 2] (the clamp passes gradient)
	logp            float64
}

func clampedLogStd(raw float64) (float64, bool) {
	switch {
	case raw < -20:
		return -20, false
	case raw > 2:
		return 2, false
	}
	return raw, true
}

// logSech2 is log(1 − tanh²u) = −2·log cosh u, written stably.
func logSech2(u float64) float64 {
	x := math.Abs(u)
	return -2 * (x + math.Log1p(math.Exp(-2*x)) - math.Ln2)
}

func sampleTG(out []float64, xi []float64) tanhGauss {
	A := len(xi)
	s := tanhGauss{a: make([]float64, A), u: make([]float64, A), xi: xi, sigma: make([]float64, A), pass: make([]bool, A)}
	for j := 0; j < A; j++ {
		ls, pass := clampedLogStd(out[A+j])
		s.sigma[j], s.pass[j] = math.Exp(ls), pass
		s.u[j] = out[j] + s.sigma[j]*xi[j]
		s.a[j] = math.Tanh(s.u[j])
		// log N(u; μ, σ²) − log|da/du|
		s.logp += -0.5*xi[j]*xi[j] - ls - 0.5*math.Log(2*math.Pi) - logSech2(s.u[j])
	}
	return s
}

// grad returns ∂(cLogp·log π(a) + Σ_j dA_j·a_j)/∂out for the
// reparameterized sample (ξ fixed). With u = μ + σξ:
// ∂log π/∂u_j = −∂log(1 − tanh²u)/∂u = 2 tanh u, ∂log π/∂log σ_j = −1 + ∂/∂u·σξ,
// ∂a/∂u = 1 − a².
func (s tanhGauss) grad(cLogp float64, dA []float64) []float64 {
	A := len(s.a)
	d := make([]float64, 2*A)
	for j := 0; j < A; j++ {
		du := cLogp * 2 * s.a[j]
		if dA != nil {
			du += dA[j] * (1 - s.a[j]*s.a[j])
		}
		d[j] = du
		if s.pass[j] {
			d[A+j] = du*s.sigma[j]*s.xi[j] - cLogp
		}
	}
	return d
}

// dataLogProb is log π(a|s) of a given action a ∈ [−1, 1]^A (atanh of a
// clipped to ±(1 − 1e-6)) and its gradient with respect to the output row.
func dataLogProb(out []float64, a []float64) (float64, []float64) {
	A := len(a)
	var lp float64
	d := make([]float64, 2*A)
	for j := 0; j < A; j++ {
		ls, pass := clampedLogStd(out[A+j])
		u := math.Atanh(math.Max(-1+1e-6, math.Min(1-1e-6, a[j])))
		z := (u - out[j]) / math.Exp(ls)
		lp += -0.5*z*z - ls - 0.5*math.Log(2*math.Pi) - logSech2(u)
		d[j] = z / math.Exp(ls)
		if pass {
			d[A+j] = z*z - 1
		}
	}
	return lp, d
}

// scalarAdam64 is Adam on one scalar.
type scalarAdam64 struct {
	t    int
	m, v float64
}

func (s *scalarAdam64) step(x *float64, g, lr float64) {
	s.t++
	s.m = 0.9*s.m + 0.1*g
	s.v = 0.999*s.v + 0.001*g*g
	*x -= lr * (s.m / (1 - math.Pow(0.9, float64(s.t)))) / (math.Sqrt(s.v/(1-math.Pow(0.999, float64(s.t)))) + 1e-8)
}

// refCQL is the reference learner's state.
type refCQL struct {
	cfg           Config
	S, A          int
	mean, std     []float64
	actor         *mlp64
	q, qt         [2]*mlp64
	optActor      *adam64
	optQ          [2]*adam64
	logAlpha      float64
	logAlphaPrime float64
	optAlpha      scalarAdam64
	optAlphaPrime scalarAdam64
	steps         int
	gActor        [][]float64 // gradients of the last update, for comparison
	gQ            [2][][]float64
	stats         Stats        // the last update's summary, in Stats' definitions
	targetMin     [2]int       // rows of the last update whose target minimum came from Q̄_1, Q̄_2
	clipped       [2]int       // ClipDiff: states of the last update inside and outside the clip range
	argmax        map[int]bool // MaxTargetBackup: indices of the backed-up samples in the last update
}

func newRef(l *Learner) *refCQL {
	r := &refCQL{cfg: l.Cfg, S: l.ObsDim, A: l.ActDim, mean: f64(l.Norm.Mean), std: f64(l.Norm.Std),
		actor: toMLP64(l.Actor), logAlpha: l.LogAlpha, logAlphaPrime: l.LogAlphaPrime}
	r.optActor = newAdam64(r.actor.params(), l.Cfg.LRActor)
	for k := 0; k < 2; k++ {
		r.q[k], r.qt[k] = toMLP64(l.Q[k]), toMLP64(l.QT[k])
		r.optQ[k] = newAdam64(r.q[k].params(), l.Cfg.LRCritic)
	}
	return r
}

func (r *refCQL) norm(s []float32) []float64 {
	out := make([]float64, len(s))
	for j, v := range s {
		out[j] = (float64(v) - r.mean[j]) / r.std[j]
	}
	return out
}

func cat(a, b []float64) []float64 { return append(append([]float64(nil), a...), b...) }

// refNoise is the fixed noise of one update (stepNoise's layout).
type refNoise struct{ pi, next, ood, unif, maxNext []float32 }

// step performs one reference update on batch b with shifted states
// obsAug, nextAug [B, S] and noise n.
func (r *refCQL) step(b *dataset.Batch, obsAug, nextAug []float32, n refNoise) {
	cfg := r.cfg
	B, S, A, N := b.B, r.S, r.A, cfg.NumActions
	row := func(x []float32, i, w int) []float32 { return x[i*w : (i+1)*w] }
	s, sn, sa, sna, act := make([][]float64, B), make([][]float64, B), make([][]float64, B), make([][]float64, B), make([][]float64, B)
	for i := 0; i < B; i++ {
		s[i], sn[i] = r.norm(row(b.Obs, i, S)), r.norm(row(b.NextObs, i, S))
		sa[i], sna[i] = r.norm(row(obsAug, i, S)), r.norm(row(nextAug, i, S))
		act[i] = f64(row(b.Act, i, A))
	}
	alpha := math.Exp(r.logAlpha)
	alphaPrime := 1.0
	if cfg.Lagrange {
		alphaPrime = math.Min(math.Max(math.Exp(r.logAlphaPrime), 0), 1e6)
	}

	// Policy at the clean s and s'.
	piS, piN := make([][][]float64, B), make([][]float64, B)
	for i := 0; i < B; i++ {
		piS[i] = r.actor.forward(s[i])
		piN[i] = r.actor.out(sn[i])
	}
	outS := func(i int) []float64 { return piS[i][len(piS[i])-1] }

	// Bellman target with the target critics at s̃', a' ~ π(·|s').
	y := make([]float64, B)
	r.targetMin = [2]int{}
	r.argmax = map[int]bool{}
	for i := 0; i < B; i++ {
		cands := []tanhGauss{sampleTG(piN[i], f64(row(n.next, i, A)))}
		if cfg.MaxTargetBackup {
			cands = nil
			for j := 0; j < N; j++ {
				cands = append(cands, sampleTG(piN[i], f64(row(n.maxNext, i*N+j, A))))
			}
		}
		v, logp, best := math.Inf(-1), 0.0, 0
		for j, nx := range cands {
			x := cat(sna[i], nx.a)
			q0, q1 := r.qt[0].out(x)[0], r.qt[1].out(x)[0]
			if q0 <= q1 {
				r.targetMin[0]++
			} else {
				r.targetMin[1]++
			}
			if m := math.Min(q0, q1); m > v {
				v, logp, best = m, nx.logp, j
			}
		}
		r.argmax[best] = true
		if cfg.BackupEntropy {
			v -= alpha * logp
		}
		rew := float64(b.Rew[i])
		if sc := cfg.RewardScale; sc != 0 {
			rew = sc*rew + cfg.RewardBias
		} else {
			rew += cfg.RewardBias
		}
		y[i] = rew + cfg.Gamma*(1-float64(b.Done[i]))*v
	}

	// Actor-loss sample ã ~ π(·|s) and its Q under the pre-update critics.
	tilde := make([]tanhGauss, B)
	var lpMean float64
	for i := 0; i < B; i++ {
		tilde[i] = sampleTG(outS(i), f64(row(n.pi, i, A)))
		lpMean += tilde[i].logp / float64(B)
	}
	bc := r.steps < cfg.BCSteps
	r.gActor = r.actor.zeros()
	var actorLoss float64
	for i := 0; i < B; i++ {
		var dOut []float64
		if bc {
			lpData, dData := dataLogProb(outS(i), act[i])
			actorLoss += (alpha*tilde[i].logp - lpData) / float64(B)
			dOut = tilde[i].grad(alpha/float64(B), nil)
			for j := range dOut {
				dOut[j] -= dData[j] / float64(B)
			}
		} else {
			x := cat(s[i], tilde[i].a)
			a0, a1 := r.q[0].forward(x), r.q[1].forward(x)
			qmin := a0
			k := 0
			if a1[len(a1)-1][0] < a0[len(a0)-1][0] {
				qmin, k = a1, 1
			}
			actorLoss += (alpha*tilde[i].logp - qmin[len(qmin)-1][0]) / float64(B)
			dx := r.q[k].backward(qmin, []float64{-1 / float64(B)}, nil)
			dOut = tilde[i].grad(alpha/float64(B), dx[S:])
		}
		r.actor.backward(piS[i], dOut, r.gActor)
	}

	// The logsumexp samples: N uniform, N from π(·|s), N from π(·|s'), all
	// evaluated at the clean s_i; log-probabilities carry no gradient.
	type ood struct {
		s, a   []float64
		offset float64 // subtracted from Q: log density of the proposal
	}
	samples := make([][]ood, B)
	logUnif := float64(A) * math.Log(0.5)
	for i := 0; i < B; i++ {
		for j := 0; j < N; j++ {
			samples[i] = append(samples[i], ood{s[i], f64(row(n.unif, i*N+j, A)), logUnif})
		}
		for j := 0; j < N; j++ {
			p := sampleTG(outS(i), f64(row(n.ood, i*N+j, A)))
			samples[i] = append(samples[i], ood{s[i], p.a, p.logp})
		}
		for j := 0; j < N; j++ {
			p := sampleTG(piN[i], f64(row(n.ood, B*N+i*N+j, A)))
			samples[i] = append(samples[i], ood{s[i], p.a, p.logp})
		}
	}

	var gap [2]float64
	var mse, qData, qRand, qPi float64 // sums over both critics
	T, wq := cfg.Temp, cfg.MinQWeight
	r.clipped = [2]int{}
	for k := 0; k < 2; k++ {
		r.gQ[k] = r.q[k].zeros()
		var lse, qd, clippedSum float64
		for i := 0; i < B; i++ {
			// Data term: Bellman error and the CQL push-up, at (s̃_i, a_i);
			// with PushUpClean the push-up at the clean (s_i, a_i).
			acts := r.q[k].forward(cat(sa[i], act[i]))
			q := acts[len(acts)-1][0]
			qData += q / float64(B)
			mse += (q - y[i]) * (q - y[i]) / float64(B)
			up, qUp := acts, q
			if cfg.PushUpClean {
				up = r.q[k].forward(cat(s[i], act[i]))
				qUp = up[len(up)-1][0]
			}
			qd += qUp / float64(B)
			// The state's CQL weight: α'w/B, or 0 where ClipDiff clamps
			// its difference (computed from the same forward passes below,
			// so the push-up gradient is added after the logsumexp).
			r.q[k].backward(acts, []float64{2 * (q - y[i]) / float64(B)}, r.gQ[k])
			// Push-down: T·log Σ_j exp((Q(s_i, a_j) − offset_j)/T).
			var fw [][][]float64
			c := make([]float64, len(samples[i]))
			m := math.Inf(-1)
			for j, o := range samples[i] {
				a := r.q[k].forward(cat(o.s, o.a))
				fw = append(fw, a)
				qj := a[len(a)-1][0]
				switch j / N {
				case 0:
					qRand += qj / float64(B*N)
				case 1:
					qPi += qj / float64(B*N)
				}
				c[j] = (qj - o.offset) / T
				m = math.Max(m, c[j])
			}
			var z float64
			for _, v := range c {
				z += math.Exp(v - m)
			}
			lseI := T * (m + math.Log(z))
			lse += lseI / float64(B)
			weight := alphaPrime * wq / float64(B)
			if cfg.ClipDiff {
				d := lseI - qUp
				clippedSum += math.Min(math.Max(d, cfg.ClipDiffMin), cfg.ClipDiffMax) / float64(B)
				if d < cfg.ClipDiffMin || d > cfg.ClipDiffMax {
					weight = 0
					r.clipped[1]++
				} else {
					r.clipped[0]++
				}
			}
			r.q[k].backward(up, []float64{-weight}, r.gQ[k])
			for j := range samples[i] {
				soft := math.Exp(c[j]-m) / z
				r.q[k].backward(fw[j], []float64{weight * soft}, r.gQ[k])
			}
		}
		gap[k] = lse - qd
		if cfg.ClipDiff {
			gap[k] = clippedSum
		}
	}
	// How far the augmenter moved the states: mean Euclidean distance, raw units.
	dist := func(x, y []float32) float64 {
		sum := 0.0
		for i := 0; i < B; i++ {
			sum += floats.Distance(f64(row(x, i, S)), f64(row(y, i, S)), 2)
		}
		return sum / float64(B)
	}
	r.stats = Stats{QLoss: mse / 2, CQLGap: (gap[0] + gap[1]) / 2, AlphaPrime: alphaPrime, Alpha: alpha,
		ActorLoss: actorLoss, QData: qData / 2, QRandom: qRand / 2, QPolicy: qPi / 2, LogPi: lpMean, BC: bc,
		ShiftL2: dist(obsAug, b.Obs), ShiftNextL2: dist(nextAug, b.NextObs)}

	// Optimizer steps, then the target networks, then α and α'.
	r.optActor.step(r.actor.params(), r.gActor)
	tau := cfg.Tau
	for k := 0; k < 2; k++ {
		r.optQ[k].step(r.q[k].params(), r.gQ[k])
		qp, tp := r.q[k].params(), r.qt[k].params()
		for p := range tp {
			for j := range tp[p] {
				tp[p][j] = (1-tau)*tp[p][j] + tau*qp[p][j]
			}
		}
	}
	if cfg.AutoEntropy {
		r.optAlpha.step(&r.logAlpha, -(lpMean - float64(A)), cfg.LRActor)
	}
	if cfg.Lagrange {
		g := 0.0
		for k := 0; k < 2; k++ {
			g += -0.5 * alphaPrime * (wq*gap[k] - cfg.LagrangeThres)
		}
		r.optAlphaPrime.step(&r.logAlphaPrime, g, cfg.LRAlphaPrime)
	}
	r.steps++
}

// fixedAug hands out precomputed shifted states, one pair per call.
type fixedAug struct {
	obs, next [][]float32
	calls     int
}

func (*fixedAug) Name() string { return "fixed" }

func (f *fixedAug) Augment(b *dataset.Batch, obs, next []float32, _ *rand.Rand, _ QGradient) error {
	copy(obs, f.obs[f.calls])
	copy(next, f.next[f.calls])
	f.calls++
	return nil
}

// refCase is one configuration the reference is compared on.
type refCase struct {
	name string
	cfg  Config
	norm bool // a non-identity state normalizer
}

func referenceCases() []refCase {
	shrink := func(c Config, bc int) Config {
		h := make([]int, len(c.Net.Hidden)) // keep the preset's depth, shrink the width
		for i := range h {
			h[i] = 16
		}
		c.Net.Hidden = h
		for _, q := range []*[]int{&c.Q1Hidden, &c.Q2Hidden} {
			if len(*q) > 0 {
				*q = make([]int, len(*q)) // depth kept, width 16
				for i := range *q {
					(*q)[i] = 16
				}
			}
		}
		c.Batch = 10
		c.BCSteps = bc
		c.Seed = 9
		return c
	}
	paper := DefaultConfig()
	corl := CORLConfig()
	other := DefaultConfig()
	other.Temp, other.NumActions, other.AutoEntropy, other.Normalize, other.LagrangeThres = 0.5, 4, true, true, 2
	antmaze := shrink(CORLAntMazeConfig(), 0)
	// A clip range inside the spread of the small networks' differences
	// (T·LSE − Q lies between 4.3 and 5.4 here), so that both clamps and
	// the pass-through are exercised; −200 would never clamp.
	clipped := antmaze
	clipped.ClipDiffMin, clipped.ClipDiffMax = 4.4, 4.6
	cleanPaper, cleanClipped := paper, clipped
	cleanPaper.PushUpClean, cleanClipped.PushUpClean = true, true
	return []refCase{
		{"paper lagrange push-up clean", shrink(cleanPaper, 0), false},
		{"corl antmaze clipping push-up clean", cleanClipped, true},
		{"corl antmaze", antmaze, false},
		{"corl antmaze clipping", clipped, true},
		{"paper lagrange no-bc", shrink(paper, 0), false},
		{"paper lagrange bc-then-sac", shrink(paper, 2), false},
		{"corl", shrink(corl, corl.BCSteps), true},
		{"corl bc-then-sac", shrink(corl, 2), true},
		{"paper temp0.5 auto-entropy normalized", shrink(other, 1), true},
	}
}

// refFixture builds a learner, the reference from the same weights (the
// target critics perturbed so that Q̄ ≠ Q and Q̄1 ≠ Q̄2), three batches with
// terminal rows, shifted states and noise.
type refFixture struct {
	l         *Learner
	ref       *refCQL
	batches   []*dataset.Batch
	aug       *fixedAug
	noise     []refNoise
	nextNoise int
}

func newRefFixture(t *testing.T, rc refCase, steps int) *refFixture {
	t.Helper()
	const S, A = 3, 2
	rng := rand.New(rand.NewPCG(17, 4))
	var norm *dataset.Normalizer
	if rc.norm {
		norm = &dataset.Normalizer{Mean: []float32{0.3, -0.2, 1}, Std: []float32{0.5, 2, 1.5}}
	}
	cfg := rc.cfg
	l := NewLearner(cfg, S, A, norm, rng)
	for k := 0; k < 2; k++ {
		for _, p := range l.QT[k].Params() {
			for j := range p.Data {
				p.Data[j] += float32(0.05 * rng.NormFloat64())
			}
		}
	}
	if len(cfg.Q1Hidden) > 0 || len(cfg.Q2Hidden) > 0 {
		// Critics of different depths: give the targets the same output
		// bias, so that neither is the smaller one on every row.
		b0 := l.QT[0].Layers[len(l.QT[0].Layers)-1].B.Data
		b1 := l.QT[1].Layers[len(l.QT[1].Layers)-1].B.Data
		copy(b1, b0)
	}
	f := &refFixture{l: l, ref: newRef(l), aug: &fixedAug{}}
	B, N := cfg.Batch, cfg.NumActions
	gauss := func(n int, sd float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(sd * rng.NormFloat64())
		}
		return x
	}
	uni := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(2*rng.Float64() - 1)
		}
		return x
	}
	// The max-target samples' noise comes from its own stream, so the other
	// cases' fixtures are what they were before MaxTargetBackup existed.
	rngMax := rand.New(rand.NewPCG(17, 5))
	gaussMax := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rngMax.NormFloat64())
		}
		return x
	}
	for st := 0; st < steps; st++ {
		b := dataset.NewBatch(B, S, A)
		copy(b.Obs, gauss(B*S, 1))
		copy(b.NextObs, gauss(B*S, 1))
		copy(b.Act, uni(B*A))
		copy(b.Rew, gauss(B, 1))
		for i := 0; i < B; i++ {
			b.Idx[i] = i
			if i%3 == 1 {
				b.Done[i] = 1
			}
		}
		b.Act[0] = 1 // a data action on the bound (BC's clipped atanh)
		f.batches = append(f.batches, b)
		obs, next := gauss(B*S, 0.1), gauss(B*S, 0.1)
		for j := range obs {
			obs[j] += b.Obs[j]
			next[j] += b.NextObs[j]
		}
		f.aug.obs, f.aug.next = append(f.aug.obs, obs), append(f.aug.next, next)
		f.noise = append(f.noise, refNoise{pi: gauss(B*A, 1), next: gauss(B*A, 1), ood: gauss(2*B*N*A, 1), unif: uni(B * N * A), maxNext: gaussMax(B * N * A)})
	}
	l.noiseHook = func(n *stepNoise) {
		fn := f.noise[f.nextNoise]
		f.nextNoise++
		copy(n.pi, fn.pi)
		copy(n.next, fn.next)
		copy(n.ood, fn.ood)
		copy(n.unif, fn.unif)
		copy(n.maxNext, fn.maxNext)
	}
	return f
}

// step runs update st on both and compares the returned Stats with the
// reference's: every field within 1e-4·(1 + |reference|).
func (f *refFixture) step(t *testing.T, st int) {
	t.Helper()
	got, err := f.l.Step(f.batches[st], f.aug, rand.New(rand.NewPCG(1, uint64(st))))
	if err != nil {
		t.Fatal(err)
	}
	f.ref.step(f.batches[st], f.aug.obs[st], f.aug.next[st], f.noise[st])
	want := f.ref.stats
	if got.BC != want.BC {
		t.Errorf("step %d: Stats.BC %v, reference %v", st+1, got.BC, want.BC)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"q_loss", got.QLoss, want.QLoss}, {"cql_gap", got.CQLGap, want.CQLGap}, {"alpha_prime", got.AlphaPrime, want.AlphaPrime},
		{"alpha", got.Alpha, want.Alpha}, {"actor_loss", got.ActorLoss, want.ActorLoss}, {"q_data", got.QData, want.QData},
		{"q_random", got.QRandom, want.QRandom}, {"q_policy", got.QPolicy, want.QPolicy}, {"log_pi", got.LogPi, want.LogPi},
		{"shift_l2", got.ShiftL2, want.ShiftL2}, {"shift_next_l2", got.ShiftNextL2, want.ShiftNextL2}} {
		if math.Abs(c.got-c.want) > 1e-4*(1+math.Abs(c.want)) {
			t.Errorf("step %d: Stats.%s = %.7g, reference %.7g", st+1, c.name, c.got, c.want)
		}
	}
}

// compareTensors checks every tensor of got (values, or gradients with grad)
// against want: parameters to tol absolute, gradients to tol relative to the
// tensor's largest |entry|. It returns the worst error seen.
func compareTensors(t *testing.T, what string, got []*nn.Param, want [][]float64, grad bool, tol float64) (worst float64) {
	t.Helper()
	for k, p := range got {
		g := p.Data
		if grad {
			g = p.Grad
		}
		scale, diff := 0.0, 0.0
		for j, w := range want[k] {
			scale = math.Max(scale, math.Abs(w))
			diff = math.Max(diff, math.Abs(float64(g[j])-w))
		}
		if grad {
			// Gradients: relative to the tensor's largest entry.
			worst = math.Max(worst, diff/math.Max(scale, 1e-6))
			if diff > tol*math.Max(scale, 1e-6) {
				t.Errorf("%s ∂L/∂%s: max |Step − reference| = %.3g, largest |reference| %.3g", what, p.Name, diff, scale)
			}
			continue
		}
		worst = math.Max(worst, diff)
		if diff > tol {
			t.Errorf("%s %s: max |Step − reference| = %.3g", what, p.Name, diff)
		}
	}
	return worst
}

// Tolerances: float32 Step vs the float64 reference. Measured worst cases
// over all cases (go test ./cql -run Reference -v): gradients 2e-5 of the
// tensor's largest entry, parameters 1.2e-7 absolute after three Adam steps.
// A wrong gradient sign moves a weight by about the learning rate (1e-4 to
// 3e-4), ten times refParamTol and more.
const (
	refGradTol  = 1e-3
	refParamTol = 1e-5
)

// Step equals the independent reference update after 1 and after 3 updates:
// every parameter of the actor, both critics and both target critics, every
// gradient of the last update, log α and log α'.
func TestStepMatchesReferenceUpdate(t *testing.T) {
	for _, rc := range referenceCases() {
		t.Run(rc.name, func(t *testing.T) {
			f := newRefFixture(t, rc, 3)
			l, r := f.l, f.ref
			for st := 0; st < 3; st++ {
				f.step(t, st)
				if r.targetMin[0] == 0 || r.targetMin[1] == 0 {
					t.Errorf("step %d: the twin target minimum came from one critic only (%v): min vs max is not exercised", st+1, r.targetMin)
				}
				if rc.cfg.MaxTargetBackup && len(r.argmax) < 2 {
					t.Errorf("step %d: the backed-up sample was always number %v: the max is not exercised", st+1, r.argmax)
				}
				if rc.cfg.ClipDiff && rc.cfg.ClipDiffMin > -200 && (r.clipped[0] == 0 || r.clipped[1] == 0) {
					t.Errorf("step %d: %d states inside the clip range, %d outside: clipping is not exercised", st+1, r.clipped[0], r.clipped[1])
				}
				if st != 0 && st != 2 {
					continue
				}
				what := []string{"after 1 step:", "", "after 3 steps:"}[st]
				ga := compareTensors(t, what, l.Actor.Params(), r.gActor, true, refGradTol)
				pa := compareTensors(t, what, l.Actor.Params(), r.actor.params(), false, refParamTol)
				var gq, pq float64
				for k := 0; k < 2; k++ {
					gq = math.Max(gq, compareTensors(t, what, l.Q[k].Params(), r.gQ[k], true, refGradTol))
					pq = math.Max(pq, compareTensors(t, what, l.Q[k].Params(), r.q[k].params(), false, refParamTol))
					pq = math.Max(pq, compareTensors(t, what+" target", l.QT[k].Params(), r.qt[k].params(), false, refParamTol))
				}
				t.Logf("%s worst relative gradient error: actor %.2g, critics %.2g; worst parameter error: actor %.2g, critics %.2g",
					what, ga, gq, pa, pq)
				if d := math.Abs(l.LogAlpha - r.logAlpha); d > 1e-9 {
					t.Errorf("%s log α %v, reference %v", what, l.LogAlpha, r.logAlpha)
				}
				if d := math.Abs(l.LogAlphaPrime - r.logAlphaPrime); d > 1e-7 {
					t.Errorf("%s log α' %v, reference %v", what, l.LogAlphaPrime, r.logAlphaPrime)
				}
			}
			if rc.cfg.Lagrange && r.logAlphaPrime == 0 {
				t.Error("α' never moved: the Lagrange update is not exercised")
			}
			if rc.cfg.AutoEntropy && r.logAlpha == math.Log(rc.cfg.Alpha) {
				t.Error("α never moved: the entropy update is not exercised")
			}
		})
	}
}
