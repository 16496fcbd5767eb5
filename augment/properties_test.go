package augment_test

// Property tests of every registered augmenter against its definition (the
// paper's, or the ablation's as documented on augment.Koopman), on a Koopman
// model small enough to work out by hand:
//
//	E(s) = s,  D(g) = w ⊙ g + c,  K(a) = diag(k0 + a·k1)
//
// with w = (2, 0.5), c = (0.1, −0.2), k0 = (0.9, 0.5), k1 = (0.1, −0.1).
// K(a) is diagonal with distinct real eigenvalues for a ∈ [−1, 1], so its
// eigenvectors are the unit axes and the KFC++ generator σ_a(ε) =
// Re(U diag(ε) U⁻¹) is diag(ε); the KFC generator (unit-Frobenius
// U diag(|λ| − mean|λ|) U⁻¹) is diag(1/√2, −1/√2). D∘E is not the identity
// (w ≠ 1, c ≠ 0), so direct and residual decoding differ by the model error
// D(E(s)) − s = (w − 1)s + c, and re-encoding a decoded state (the paper's
// kfc++-prediction) differs from advancing the shifted latent
// (kfc++-latent-prediction). Every reference value below is computed in
// float64 from these numbers, never from the augmenter's own code.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
)

var (
	propW  = [2]float64{2, 0.5}
	propC  = [2]float64{0.1, -0.2}
	propK0 = [2]float64{0.9, 0.5}
	propK1 = [2]float64{0.1, -0.1}
)

// propModel builds the hand-checkable model above (S = N = 2, m = 1).
func propModel(t *testing.T) *koopman.Model {
	t.Helper()
	m, err := koopman.NewModel(koopman.ModelConfig{ObsDim: 2, ActDim: 1, Latent: 2,
		EncoderHidden: "tanh", EncoderOutput: "identity", DecoderHidden: "tanh"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Enc.Layers) != 1 || len(m.Dec.Layers) != 1 {
		t.Fatalf("want single-layer E and D, got %d and %d layers", len(m.Enc.Layers), len(m.Dec.Layers))
	}
	// nn.Linear: y = x W + b, W [In, Out] row-major.
	e, d := m.Enc.Layers[0], m.Dec.Layers[0]
	copy(e.W.Data, []float32{1, 0, 0, 1})
	clear(e.B.Data)
	copy(d.W.Data, []float32{float32(propW[0]), 0, 0, float32(propW[1])})
	copy(d.B.Data, []float32{float32(propC[0]), float32(propC[1])})
	copy(m.K.Data, []float32{float32(propK0[0]), 0, 0, float32(propK0[1]), float32(propK1[0]), 0, 0, float32(propK1[1])})
	return m
}

// propData has n transitions with |s_j|, |s'_j| ∈ [0.5, 1.5] and random
// signs (so dimension 1 changes sign in about half the rows) and actions in
// [−1, 1].
func propData(n int, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 72))
	d := &dataset.Dataset{ObsDim: 2, ActDim: 1, Rewards: make([]float32, n),
		Terminals: make([]float32, n), Timeouts: make([]float32, n)}
	v := func() float32 {
		x := 0.5 + rng.Float64()
		if rng.IntN(2) == 0 {
			x = -x
		}
		return float32(x)
	}
	for range n {
		d.Observations = append(d.Observations, v(), v())
		d.NextObservations = append(d.NextObservations, v(), v())
		d.Actions = append(d.Actions, float32(2*rng.Float64()-1))
	}
	return d
}

// rowsBatch is the batch of dataset rows lo..hi−1.
func rowsBatch(d *dataset.Dataset, lo, hi int) *dataset.Batch {
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	return batchOf(d, idx)
}

func propOpts(d *dataset.Dataset, m *koopman.Model) augment.Options {
	o := augment.DefaultOptions()
	o.Dataset, o.Model, o.KoopmanProb, o.ContactDims = d, m, 1, []int{}
	return o
}

func runAug(t *testing.T, a augment.Augmenter, b *dataset.Batch, seed uint64, q augment.QGradient) (obs, next []float32) {
	t.Helper()
	obs, next = make([]float32, len(b.Obs)), make([]float32, len(b.NextObs))
	if err := a.Augment(b, obs, next, rand.New(rand.NewPCG(seed, 9)), q); err != nil {
		t.Fatal(err)
	}
	return obs, next
}

// dec and kOf are the model's D (one component) and K(a)'s diagonal.
func dec(j int, g float64) float64 { return propW[j]*g + propC[j] }
func kOf(j int, a float64) float64 { return propK0[j] + a*propK1[j] }

// moments is the mean and standard deviation of x.
func moments(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)-1))
}

// corr is the sample correlation of x and y.
func corr(x, y []float64) float64 {
	mx, sx := moments(x)
	my, sy := moments(y)
	c := 0.0
	for i := range x {
		c += (x[i] - mx) * (y[i] - my)
	}
	return c / float64(len(x)-1) / (sx * sy)
}

// checkNormal asserts that x looks like n draws of N(0, sigma²): the mean
// within 5 standard errors of 0 and the standard deviation within 8 % of
// sigma (about 5 standard errors at n ≈ 2000; a σ wrong by a factor √2, the
// KFC/KFC++ unit confusion, or a drawn-twice shift fails it).
func checkNormal(t *testing.T, what string, x []float64, sigma float64) {
	t.Helper()
	if len(x) < 500 {
		t.Fatalf("%s: only %d samples", what, len(x))
	}
	m, s := moments(x)
	if se := sigma / math.Sqrt(float64(len(x))); !(math.Abs(m) <= 5*se) {
		t.Errorf("%s: mean %.4g, want 0 ± %.3g", what, m, 5*se)
	}
	if !(math.Abs(s/sigma-1) <= 0.08) {
		t.Errorf("%s: standard deviation %.4g, want %.4g ± 8%%", what, s, sigma)
	}
}

// checkIndependent asserts |corr(x, y)| < 0.12 (≈ 5 standard errors at
// n ≈ 2000; one shared draw gives ±1).
func checkIndependent(t *testing.T, what string, x, y []float64) {
	t.Helper()
	if c := corr(x, y); !(math.Abs(c) < 0.12) {
		t.Errorf("%s: correlation %.3f, want independent draws (|corr| < 0.12)", what, c)
	}
}

func near(got float32, want, tol float64) bool {
	return math.Abs(float64(got)-want) <= tol*(1+math.Abs(want))
}

const propTol = 2e-5 // float32 arithmetic on O(1) values

// epsUnit is the documented unit of ShiftSigma (augment.Options): the
// authors' code draws the KFC++ ε_j ~ N(0, (shift_sigma·3e-3)²).
const epsUnit = 3e-3

// shiftCase is one run of a Koopman augmenter's model branch on the whole
// property dataset, direct and residual decoding from the same seed (the
// same ε draws; Decompose relies on this).
type shiftCase struct {
	d                    *dataset.Dataset
	b                    *dataset.Batch
	obs, next, rObs, rNx []float32 // direct, residual
}

func runBoth(t *testing.T, name string, set func(*augment.Options)) shiftCase {
	t.Helper()
	d, m := propData(2000, 1), propModel(t)
	c := shiftCase{d: d, b: rowsBatch(d, 0, d.Len())}
	for _, residual := range []bool{false, true} {
		o := propOpts(d, m)
		o.Residual = residual
		if set != nil {
			set(&o)
		}
		a, err := augment.New(name, o)
		if err != nil {
			t.Fatal(err)
		}
		obs, next := runAug(t, a, c.b, 5, nil)
		if residual {
			c.rObs, c.rNx = obs, next
		} else {
			c.obs, c.next = obs, next
		}
	}
	return c
}

// checkResidual checks the residual form s̃ = s + D(g̃) − D(g) term by term
// for the rows and states listed: D(g̃) is the direct run's output from
// the same draws, D(g) = D(E(s)) = w ⊙ s + c is computed here.
func checkResidual(t *testing.T, c shiftCase, rows []int, states string) {
	t.Helper()
	S := 2
	for _, i := range rows {
		for j := 0; j < S; j++ {
			k := i*S + j
			if states != "next" {
				s := float64(c.b.Obs[k])
				if want := s + float64(c.obs[k]) - dec(j, s); !near(c.rObs[k], want, propTol) {
					t.Fatalf("row %d dim %d: residual s̃_t = %v, want s + D(g̃) − D(g) = %v + %v − %v = %v",
						i, j, c.rObs[k], s, c.obs[k], dec(j, s), want)
				}
			}
			if states != "obs" {
				s := float64(c.b.NextObs[k])
				if want := s + float64(c.next[k]) - dec(j, s); !near(c.rNx[k], want, propTol) {
					t.Fatalf("row %d dim %d: residual s̃_{t+1} = %v, want s' + D(g̃') − D(g') = %v + %v − %v = %v",
						i, j, c.rNx[k], s, c.next[k], dec(j, s), want)
				}
			}
		}
	}
}

func allRows(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// kfcppEps recovers ε_j of row i from the directly decoded s̃_t:
// s̃_j = D((1 + ε_j) s_j) = w_j (1 + ε_j) s_j + c_j.
func kfcppEps(c shiftCase, i, j int) float64 {
	s := float64(c.b.Obs[i*2+j])
	return (float64(c.obs[i*2+j])-propC[j])/(propW[j]*s) - 1
}

// checkKFCppRows checks the KFC++ definition on the listed rows: s̃_{t+1}
// is D((1 + σ(ε)) E(s_{t+1})) with the ε recovered from s̃_t (one draw for
// both states), and returns the recovered ε per dimension.
func checkKFCppRows(t *testing.T, c shiftCase, rows []int, checkNext bool) (eps [2][]float64) {
	t.Helper()
	for _, i := range rows {
		for j := 0; j < 2; j++ {
			e := kfcppEps(c, i, j)
			eps[j] = append(eps[j], e)
			if !checkNext {
				continue
			}
			s2 := float64(c.b.NextObs[i*2+j])
			if want := dec(j, (1+e)*s2); !near(c.next[i*2+j], want, propTol) {
				t.Fatalf("row %d dim %d: s̃_{t+1} = %v, want D((1+ε)s') = %v with the ε = %.4g of s̃_t (one draw for s and s')",
					i, j, c.next[i*2+j], want, e)
			}
		}
	}
	return eps
}

// kfc++ (paper Eq. symshift, KFC++): s̃ = D((1 + σ_{a_t}(ε)) E(s)) for s_t and
// s_{t+1} with one ε ∈ R^N per transition, ε_j ~ N(0, (ShiftSigma·3e-3)²)
// independent across eigen-directions; here σ = diag(ε).
func checkKFCpp(t *testing.T, name string) {
	const shiftSigma = 10
	for _, cache := range []int64{augment.GiB, 0} { // cached and per-batch paths
		c := runBoth(t, name, func(o *augment.Options) { o.ShiftSigma, o.CacheGiB = shiftSigma, gib(cache) })
		eps := checkKFCppRows(t, c, allRows(c.b.B), true)
		std := shiftSigma * epsUnit
		checkNormal(t, name+" ε_0", eps[0], std)
		checkNormal(t, name+" ε_1", eps[1], std)
		checkIndependent(t, name+" ε_0 vs ε_1", eps[0], eps[1])
		checkResidual(t, c, allRows(c.b.B), "both")
	}
}

// kfc (paper Eq. symoptions, KFC): s̃ = D((1 + εG) E(s)) for s_t and s_{t+1},
// one scalar ε ~ N(0, (ShiftSigma·3e-3·√N)²) per transition, G =
// diag(1/√2, −1/√2) here: the slow mode (|λ| ≈ 0.9) and the fast one
// (|λ| ≈ 0.5) move in opposite directions by the same relative amount.
func checkKFC(t *testing.T, name string) {
	const shiftSigma = 10
	for _, cache := range []int64{augment.GiB, 0} {
		c := runBoth(t, name, func(o *augment.Options) { o.ShiftSigma, o.CacheGiB = shiftSigma, gib(cache) })
		var eps []float64
		for i := 0; i < c.b.B; i++ {
			e := kfcppEps(c, i, 0) * math.Sqrt2 // ε/√2 on dimension 0
			eps = append(eps, e)
			for j, gj := range []float64{1 / math.Sqrt2, -1 / math.Sqrt2} {
				s, s2 := float64(c.b.Obs[i*2+j]), float64(c.b.NextObs[i*2+j])
				if want := dec(j, (1+e*gj)*s); !near(c.obs[i*2+j], want, propTol) {
					t.Fatalf("row %d dim %d: s̃_t = %v, want D((1+εG)s) = %v (ε = %.4g from dim 0)", i, j, c.obs[i*2+j], want, e)
				}
				if want := dec(j, (1+e*gj)*s2); !near(c.next[i*2+j], want, propTol) {
					t.Fatalf("row %d dim %d: s̃_{t+1} = %v, want D((1+εG)s') = %v (same ε as s_t)", i, j, c.next[i*2+j], want)
				}
			}
		}
		checkNormal(t, name+" ε", eps, shiftSigma*epsUnit*math.Sqrt2)
		checkResidual(t, c, allRows(c.b.B), "both")
	}
}

// kfc++-contact (paper appendix "Training on non contact events"): a row is
// a contact when a velocity dimension (ContactDims, here [1]) strictly
// changes sign between s_t and s_{t+1}; contact rows get S4RL-N noise,
// independent N(0, GaussianSigma²) draws on s_t and s_{t+1}, the others the
// kfc++ shift.
func checkContact(t *testing.T, name string) {
	const shiftSigma, noise = 10, 0.05
	c := runBoth(t, name, func(o *augment.Options) {
		o.ShiftSigma, o.GaussianSigma, o.ContactDims = shiftSigma, noise, []int{1}
	})
	// Hand-checkable contact rule: dimension 1 only, strict sign change.
	var contact, free []int
	for i := 0; i < c.b.B; i++ {
		if float64(c.b.Obs[i*2+1])*float64(c.b.NextObs[i*2+1]) < 0 {
			contact = append(contact, i)
		} else {
			free = append(free, i)
		}
	}
	if len(contact) < 600 || len(free) < 600 {
		t.Fatalf("fixture: %d contact and %d free rows", len(contact), len(free))
	}
	eps := checkKFCppRows(t, c, free, true)
	std := shiftSigma * epsUnit
	checkNormal(t, name+" free-row ε_0", eps[0], std)
	checkNormal(t, name+" free-row ε_1", eps[1], std)
	checkResidual(t, c, free, "both")
	for _, out := range [][2][]float32{{c.obs, c.next}, {c.rObs, c.rNx}} { // decoding does not touch contact rows
		var zt, zn []float64
		for _, i := range contact {
			for j := 0; j < 2; j++ {
				zt = append(zt, float64(out[0][i*2+j]-c.b.Obs[i*2+j]))
				zn = append(zn, float64(out[1][i*2+j]-c.b.NextObs[i*2+j]))
			}
		}
		checkNormal(t, name+" contact-row noise on s_t", zt, noise)
		checkNormal(t, name+" contact-row noise on s_{t+1}", zn, noise)
		checkIndependent(t, name+" contact-row noise s_t vs s_{t+1}", zt, zn)
	}
	// An exact zero velocity is no contact: with ContactDims [0, 1] on rows
	// whose velocities are 0 → −1, nothing counts.
	d, m := propData(4, 2), propModel(t)
	for i := range 4 {
		d.Observations[i*2], d.Observations[i*2+1] = 0, 0
	}
	o := propOpts(d, m)
	o.ContactDims, o.ShiftSigma, o.GaussianSigma = []int{0, 1}, 0, 1
	a, err := augment.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	b := rowsBatch(d, 0, 4)
	obs, _ := runAug(t, a, b, 1, nil)
	for i := range 4 {
		for j := 0; j < 2; j++ {
			if want := dec(j, 0); !near(obs[i*2+j], want, propTol) { // D(E(0)) = c, no noise
				t.Fatalf("zero-velocity row %d counted as contact: s̃_t = %v", i, obs[i*2:i*2+2])
			}
		}
	}
	if n := a.(*augment.Koopman).Stats().ContactRows; n != 0 {
		t.Fatalf("ContactRows = %d for zero velocities", n)
	}
}

// vae-noise (paper ablation): s̃ = D(E(s) + δ), δ ~ N(0, LatentSigma²·I),
// one δ for s_t and s_{t+1}.
func checkVAENoise(t *testing.T, name string) {
	const sigma = 0.03
	c := runBoth(t, name, func(o *augment.Options) { o.LatentSigma, o.ShiftSigma = sigma, 0 })
	var delta [2][]float64
	for i := 0; i < c.b.B; i++ {
		for j := 0; j < 2; j++ {
			s, s2 := float64(c.b.Obs[i*2+j]), float64(c.b.NextObs[i*2+j])
			dl := (float64(c.obs[i*2+j])-propC[j])/propW[j] - s
			delta[j] = append(delta[j], dl)
			if want := dec(j, s2+dl); !near(c.next[i*2+j], want, propTol) {
				t.Fatalf("row %d dim %d: s̃_{t+1} = %v, want D(E(s') + δ) = %v with the δ = %.4g of s_t", i, j, c.next[i*2+j], want, dl)
			}
		}
	}
	checkNormal(t, name+" δ_0", delta[0], sigma)
	checkNormal(t, name+" δ_1", delta[1], sigma)
	checkIndependent(t, name+" δ_0 vs δ_1", delta[0], delta[1])
	checkResidual(t, c, allRows(c.b.B), "both")
}

// kfc++-prediction (paper ablation, "forward prediction of our VAE-forward
// model"): s̃_t as kfc++, s̃_{t+1} = D(K(a_t) E(s̃_t)), the decoded shifted
// state encoded again; with residual decoding s̃_{t+1} = s_{t+1} +
// D(K E(s̃_t)) − D(K E(s_t)).
func checkPrediction(t *testing.T, name string) {
	const shiftSigma = 10
	c := runBoth(t, name, func(o *augment.Options) { o.ShiftSigma = shiftSigma })
	eps := checkKFCppRows(t, c, allRows(c.b.B), false)
	checkNormal(t, name+" ε_0", eps[0], shiftSigma*epsUnit)
	checkResidual(t, c, allRows(c.b.B), "obs")
	for i := 0; i < c.b.B; i++ {
		a := float64(c.b.Act[i])
		for j := 0; j < 2; j++ {
			k := i*2 + j
			if want := dec(j, kOf(j, a)*float64(c.obs[k])); !near(c.next[k], want, propTol) {
				t.Fatalf("row %d dim %d: s̃_{t+1} = %v, want D(K(a)E(s̃_t)) = %v", i, j, c.next[k], want)
			}
			s, s2 := float64(c.b.Obs[k]), float64(c.b.NextObs[k])
			want := s2 + dec(j, kOf(j, a)*float64(c.rObs[k])) - dec(j, kOf(j, a)*s)
			if !near(c.rNx[k], want, propTol) {
				t.Fatalf("row %d dim %d: residual s̃_{t+1} = %v, want s' + D(K E(s̃_t)) − D(K E(s_t)) = %v", i, j, c.rNx[k], want)
			}
		}
	}
}

// kfc++-latent-prediction: s̃_t as kfc++, s̃_{t+1} = D(K(a_t)(1 + σ) E(s_t)),
// the shifted latent advanced without decoding and encoding again; with
// residual decoding s̃_{t+1} = s_{t+1} + D(K g̃_t) − D(K g_t).
func checkLatentPrediction(t *testing.T, name string) {
	const shiftSigma = 10
	c := runBoth(t, name, func(o *augment.Options) { o.ShiftSigma = shiftSigma })
	eps := checkKFCppRows(t, c, allRows(c.b.B), false)
	checkNormal(t, name+" ε_0", eps[0], shiftSigma*epsUnit)
	checkResidual(t, c, allRows(c.b.B), "obs")
	for i := 0; i < c.b.B; i++ {
		a := float64(c.b.Act[i])
		for j := 0; j < 2; j++ {
			k := i*2 + j
			s, s2 := float64(c.b.Obs[k]), float64(c.b.NextObs[k])
			gt := (1 + eps[j][i]) * s
			if want := dec(j, kOf(j, a)*gt); !near(c.next[k], want, propTol) {
				t.Fatalf("row %d dim %d: s̃_{t+1} = %v, want D(K(a)(1+σ)E(s_t)) = %v", i, j, c.next[k], want)
			}
			if want := s2 + dec(j, kOf(j, a)*gt) - dec(j, kOf(j, a)*s); !near(c.rNx[k], want, propTol) {
				t.Fatalf("row %d dim %d: residual s̃_{t+1} = %v, want s' + D(K g̃_t) − D(K g_t) = %v", i, j, c.rNx[k], want)
			}
		}
	}
}

// fwd-prediction (paper ablation): s̃_t = s_t + N(0, FwdSigma²) (no
// decoding), s̃_{t+1} = D(K(a_t) E(s̃_t)); residual: s_{t+1} + D(K E(s̃_t)) −
// D(K E(s_t)).
func checkFwdPrediction(t *testing.T, name string) {
	const sigma = 0.02
	c := runBoth(t, name, func(o *augment.Options) { o.FwdSigma, o.ShiftSigma = sigma, 0 })
	var z []float64
	for i := 0; i < c.b.B; i++ {
		a := float64(c.b.Act[i])
		for j := 0; j < 2; j++ {
			k := i*2 + j
			s, s2 := float64(c.b.Obs[k]), float64(c.b.NextObs[k])
			z = append(z, float64(c.obs[k])-s)
			if c.rObs[k] != c.obs[k] {
				t.Fatalf("row %d dim %d: s̃_t %v (residual) vs %v (direct); the state noise is not decoded", i, j, c.rObs[k], c.obs[k])
			}
			if want := dec(j, kOf(j, a)*float64(c.obs[k])); !near(c.next[k], want, propTol) {
				t.Fatalf("row %d dim %d: s̃_{t+1} = %v, want D(K(a)E(s̃_t)) = %v", i, j, c.next[k], want)
			}
			if want := s2 + dec(j, kOf(j, a)*float64(c.obs[k])) - dec(j, kOf(j, a)*s); !near(c.rNx[k], want, propTol) {
				t.Fatalf("row %d dim %d: residual s̃_{t+1} = %v, want %v", i, j, c.rNx[k], want)
			}
		}
	}
	checkNormal(t, name+" state noise", z, sigma)
}

// none is plain CQL: s̃ = s exactly.
func checkNone(t *testing.T, name string) {
	d := propData(50, 3)
	a, err := augment.New(name, propOpts(d, nil))
	if err != nil {
		t.Fatal(err)
	}
	b := rowsBatch(d, 0, 50)
	obs, next := runAug(t, a, b, 1, nil)
	if !slices.Equal(obs, b.Obs) || !slices.Equal(next, b.NextObs) {
		t.Fatal("none moved the states")
	}
}

// gaussian is S4RL-N: independent N(0, σ²) on s_t and on s_{t+1}, every
// batch, every row.
func checkGaussian(t *testing.T, name string) {
	const sigma = 0.05
	d := propData(1000, 4)
	o := propOpts(d, nil)
	o.GaussianSigma = sigma
	a, err := augment.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	var zt, zn []float64
	for lo := 0; lo < 1000; lo += 10 { // 100 batches: no batch is skipped
		b := rowsBatch(d, lo, lo+10)
		obs, next := runAug(t, a, b, uint64(lo), nil)
		for k := range obs {
			if obs[k] == b.Obs[k] || next[k] == b.NextObs[k] {
				t.Fatalf("batch %d value %d not shifted", lo/10, k)
			}
			zt = append(zt, float64(obs[k]-b.Obs[k]))
			zn = append(zn, float64(next[k]-b.NextObs[k]))
		}
	}
	checkNormal(t, name+" noise on s_t", zt, sigma)
	checkNormal(t, name+" noise on s_{t+1}", zn, sigma)
	checkIndependent(t, name+" noise s_t vs s_{t+1}", zt, zn)
}

// s4rl-adv (S4RL-Adv, l2 mode): s̃_t = s_t + ε ∇_s Q/‖∇_s Q‖₂ at the dataset
// action, s̃_{t+1} = s_{t+1}.
func checkAdversarial(t *testing.T, name string) {
	d := propData(2, 5)
	o := propOpts(d, nil)
	o.AdvEps = 0.5
	a, err := augment.New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	b := rowsBatch(d, 0, 2)
	q := func(_, _ []float32, _ int, g []float32) { copy(g, []float32{3, 4, 0, -2}) }
	obs, next := runAug(t, a, b, 1, q)
	want := []float64{float64(b.Obs[0]) + 0.3, float64(b.Obs[1]) + 0.4, float64(b.Obs[2]), float64(b.Obs[3]) - 0.5}
	for k, w := range want {
		if !near(obs[k], w, 1e-6) {
			t.Fatalf("s̃_t = %v, want %v", obs, want)
		}
	}
	if !slices.Equal(next, b.NextObs) {
		t.Fatalf("s̃_{t+1} = %v, want s_{t+1} = %v", next, b.NextObs)
	}
}

// propRows lists every registered augmenter with the check of its
// definition. A name registered without a row fails TestEveryAugmenterHasProperties.
var propRows = map[string]struct {
	koopman bool
	check   func(*testing.T, string)
}{
	"cql":                     {false, checkNone}, // plain CQL; "none" is its accepted alias (TestCQLAliasNone)
	"gaussian":                {false, checkGaussian},
	"s4rl-adv":                {false, checkAdversarial},
	"kfc":                     {true, checkKFC},
	"kfc++":                   {true, checkKFCpp},
	"kfc++-contact":           {true, checkContact},
	"vae-noise":               {true, checkVAENoise},
	"kfc++-prediction":        {true, checkPrediction},
	"kfc++-latent-prediction": {true, checkLatentPrediction},
	"fwd-prediction":          {true, checkFwdPrediction},
}

// Every registered augmenter has a row; each is built by New under its
// name, reports that Name(), needs a Koopman model exactly when its row says
// so, and behaves as its definition (the row's check) says: the name maps
// to the documented behaviour, not to a neighbour's.
func TestEveryAugmenterHasProperties(t *testing.T) {
	names := augment.Names()
	for _, n := range names {
		if _, ok := propRows[n]; !ok {
			t.Errorf("augmenter %q is registered but has no property row in properties_test.go", n)
		}
	}
	for n := range propRows {
		if !slices.Contains(names, n) {
			t.Errorf("property row %q names no registered augmenter", n)
		}
	}
	d, m := propData(10, 1), propModel(t)
	for _, n := range names {
		row, ok := propRows[n]
		if !ok {
			continue
		}
		t.Run(n, func(t *testing.T) {
			if augment.NeedsKoopman(n) != row.koopman {
				t.Fatalf("NeedsKoopman(%q) = %v, want %v", n, augment.NeedsKoopman(n), row.koopman)
			}
			a, err := augment.New(n, propOpts(d, m))
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != n {
				t.Fatalf("New(%q).Name() = %q", n, a.Name())
			}
			if mt := augment.NewMeter(a); mt.Name() != n {
				t.Fatalf("NewMeter(New(%q)).Name() = %q", n, mt.Name())
			}
			row.check(t, n)
		})
	}
}

// The Meter wrapper draws nothing and changes nothing: for every augmenter
// a metered run gives the same states as a bare one from the same seed, and
// it counts one ‖s̃ − s‖ per row.
func TestMeterChangesNoAugmenter(t *testing.T) {
	d, m := propData(64, 6), propModel(t)
	b := rowsBatch(d, 0, 64)
	q := func(_, _ []float32, _ int, g []float32) {
		for i := range g {
			g[i] = float32(i%3) - 1
		}
	}
	for _, n := range augment.Names() {
		o := propOpts(d, m)
		o.KoopmanProb, o.ContactDims = 0.5, []int{1}
		bare, err := augment.New(n, o)
		if err != nil {
			t.Fatal(err)
		}
		wrapped, err := augment.New(n, o)
		if err != nil {
			t.Fatal(err)
		}
		mt := augment.NewMeter(wrapped)
		for seed := uint64(1); seed <= 4; seed++ {
			o1, n1 := runAug(t, bare, b, seed, q)
			o2, n2 := runAug(t, mt, b, seed, q)
			if !slices.Equal(o1, o2) || !slices.Equal(n1, n2) {
				t.Fatalf("%s seed %d: the metered augmenter's states differ from the bare one's", n, seed)
			}
		}
		if mt.Obs.N() != 4*64 || mt.Next.N() != 4*64 {
			t.Fatalf("%s: meter counted %d / %d rows, want %d", n, mt.Obs.N(), mt.Next.N(), 4*64)
		}
	}
}

// p_K (paper: "Symmetry shifts are employed with probability p_K = 0.8;
// otherwise a normally distributed state shift is used"): per batch, the
// whole batch takes the model branch with probability p_K, else S4RL-N
// noise with GaussianSigma on s_t and s_{t+1} independently. The branch is
// read off the states (noise σ = 1 against model shifts below 0.1) and must
// agree with LastBatchModel and the counters; the model-branch share must
// be within 4.5 binomial standard errors of p_K (a rule that picks the
// model with probability 1 − p_K, 0.7 here, fails by ~28 of them); p_K 0
// and 1 are exact.
func TestKoopmanBranchProbability(t *testing.T) {
	d, m := propData(400, 7), propModel(t)
	for _, n := range augment.Names() {
		if !augment.NeedsKoopman(n) {
			continue
		}
		for _, c := range []struct {
			p       float64
			batches int
		}{{0.3, 3000}, {0, 200}, {1, 200}} {
			o := propOpts(d, m)
			o.KoopmanProb, o.GaussianSigma, o.Residual = c.p, 1, true
			o.ShiftSigma, o.LatentSigma, o.FwdSigma = 1, 3e-3, 6e-3
			a, err := augment.New(n, o)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(11, 12))
			model := 0
			var zt, zn []float64
			for bi := 0; bi < c.batches; bi++ {
				lo := (bi * 2) % 400
				b := rowsBatch(d, lo, lo+2)
				obs, next := make([]float32, 4), make([]float32, 4)
				for k := range obs { // NaN where a branch writes nothing
					obs[k], next[k] = float32(math.NaN()), float32(math.NaN())
				}
				if err := a.Augment(b, obs, next, rng, nil); err != nil {
					t.Fatal(err)
				}
				shift := 0.0
				for k := range obs {
					shift = math.Max(shift, math.Abs(float64(obs[k]-b.Obs[k])))
				}
				isModel := shift < 0.1
				if isModel != a.(augment.Brancher).LastBatchModel() {
					t.Fatalf("%s p_K %v batch %d: max |s̃ − s| %.3g but LastBatchModel %v", n, c.p, bi, shift, !isModel)
				}
				if isModel {
					model++
					continue
				}
				for k := range obs {
					zt = append(zt, float64(obs[k]-b.Obs[k]))
					zn = append(zn, float64(next[k]-b.NextObs[k]))
				}
			}
			st := a.(*augment.Koopman).Stats()
			if st.KoopmanBatches != model || st.GaussianBatches != c.batches-model || st.Batches != c.batches {
				t.Fatalf("%s p_K %v: stats %+v, counted %d model batches of %d", n, c.p, st, model, c.batches)
			}
			switch c.p {
			case 0, 1:
				if want := int(c.p) * c.batches; model != want {
					t.Fatalf("%s p_K %v: %d model batches of %d, want %d", n, c.p, model, c.batches, want)
				}
			default:
				frac := float64(model) / float64(c.batches)
				se := math.Sqrt(c.p * (1 - c.p) / float64(c.batches))
				if !(math.Abs(frac-c.p) <= 4.5*se) {
					t.Errorf("%s: model branch on %.3f of %d batches, want p_K = %v ± %.3f", n, frac, c.batches, c.p, 4.5*se)
				}
				checkNormal(t, n+" noise branch on s_t", zt, 1)
				checkNormal(t, n+" noise branch on s_{t+1}", zn, 1)
				checkIndependent(t, n+" noise branch s_t vs s_{t+1}", zt, zn)
			}
		}
	}
}

// The legacy name "none" builds plain CQL's (identity) augmenter and is
// labelled cql, so old configs and specs keep working.
func TestCQLAliasNone(t *testing.T) {
	if augment.Label("none") != "cql" || !augment.Known("none") {
		t.Fatalf("Label(none) = %q, Known(none) = %v", augment.Label("none"), augment.Known("none"))
	}
	checkNone(t, "none")
}
