package koopman_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/koopq/koopq/env/classic"
	"github.com/koopq/koopq/koopman"
)

// expertArg is the paper's policy argument without z:
// 0.015x + 0.066ẋ + 1.8θ + 0.32θ̇ (Eq. cartpolicy).
func expertArg(s [4]float64) float64 {
	return 0.015*s[0] + 0.066*s[1] + 1.8*s[2] + 0.32*s[3]
}

// TestCartPoleExpertActionCoefficients: each coefficient of the paper's
// policy, read off at the sign change of Θ(2c·1 + z) around z = −2c, and
// Θ(0) = 0 (action −1).
func TestCartPoleExpertActionCoefficients(t *testing.T) {
	for i, c := range []float64{0.015, 0.066, 1.8, 0.32} {
		var s [4]float64
		s[i] = 2
		if a := koopman.CartPoleExpertAction(s, -2*c+1e-9); a != 1 {
			t.Errorf("coordinate %d: Θ(2·%g + z) just above 0 gave %v, want +1", i, c, a)
		}
		if a := koopman.CartPoleExpertAction(s, -2*c-1e-9); a != -1 {
			t.Errorf("coordinate %d: Θ(2·%g + z) just below 0 gave %v, want −1", i, c, a)
		}
	}
	if a := koopman.CartPoleExpertAction([4]float64{}, 0); a != -1 {
		t.Errorf("Θ(0) gave %v, want −1 (the step is 1 only for a positive argument)", a)
	}
}

// TestCollectCartPoleFollowsTheExpert checks the collected data against
// their definition: every transition is one physics step under the
// expert's force; episodes chain; each episode starts in the reset box
// (spread over it) and acts with one offset z whose feasible interval (from
// its actions) meets [−ZHalfWidth, ZHalfWidth]; the narrow intervals
// spread over that range; z = 0 when ZHalfWidth is 0.
func TestCollectCartPoleFollowsTheExpert(t *testing.T) {
	cfg := koopman.CartPoleDataConfig{Episodes: 300, Steps: 30, ZHalfWidth: 0.2, ResetBound: 0.05, ForceMag: 10, Seed: 3}
	d, err := koopman.CollectCartPole(classic.CartPoleDynamics, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.S) != cfg.Episodes*cfg.Steps || len(d.Next) != len(d.S) || len(d.A) != len(d.S) {
		t.Fatalf("%d/%d/%d transitions, want %d", len(d.S), len(d.Next), len(d.A), cfg.Episodes*cfg.Steps)
	}
	lo0, hi0 := [4]float64{}, [4]float64{}
	var narrow []float64
	for ep := range cfg.Episodes {
		base := ep * cfg.Steps
		s0 := d.S[base]
		for i, v := range s0 {
			if !(math.Abs(v) <= cfg.ResetBound) {
				t.Fatalf("episode %d starts at %v, outside ±%g", ep, s0, cfg.ResetBound)
			}
			lo0[i], hi0[i] = min(lo0[i], v), max(hi0[i], v)
		}
		zLo, zHi := math.Inf(-1), math.Inf(1) // z > zLo and z ≤ zHi
		for k := range cfg.Steps {
			i := base + k
			if k > 0 && d.S[i] != d.Next[i-1] {
				t.Fatalf("transition %d does not start where %d ended", i, i-1)
			}
			if d.A[i] != 1 && d.A[i] != -1 {
				t.Fatalf("transition %d: action %v", i, d.A[i])
			}
			if want := classic.CartPoleDynamics(d.S[i], d.A[i]*cfg.ForceMag); d.Next[i] != want {
				t.Fatalf("transition %d: next %v, one physics step gives %v", i, d.Next[i], want)
			}
			if f := expertArg(d.S[i]); d.A[i] > 0 {
				zLo = max(zLo, -f)
			} else {
				zHi = min(zHi, -f)
			}
		}
		if !(zLo < zHi) || zLo >= cfg.ZHalfWidth || zHi < -cfg.ZHalfWidth {
			t.Fatalf("episode %d: its actions need z in (%g, %g], not one offset in ±%g", ep, zLo, zHi, cfg.ZHalfWidth)
		}
		if zHi-zLo < 0.02 {
			narrow = append(narrow, (zLo+zHi)/2)
		}
	}
	for i := range 4 {
		if lo0[i] > -0.8*cfg.ResetBound || hi0[i] < 0.8*cfg.ResetBound {
			t.Errorf("coordinate %d of the initial states spans [%g, %g], not the reset box ±%g", i, lo0[i], hi0[i], cfg.ResetBound)
		}
	}
	if len(narrow) < 50 {
		t.Fatalf("only %d episodes pin z to 0.02; the check needs more", len(narrow))
	}
	zmin, zmax := math.Inf(1), math.Inf(-1)
	for _, z := range narrow {
		zmin, zmax = min(zmin, z), max(zmax, z)
	}
	if zmin > -0.7*cfg.ZHalfWidth || zmax < 0.7*cfg.ZHalfWidth {
		t.Errorf("the pinned offsets span [%g, %g], not U(±%g)", zmin, zmax, cfg.ZHalfWidth)
	}

	cfg.ZHalfWidth, cfg.Episodes = 0, 20
	d, err = koopman.CollectCartPole(classic.CartPoleDynamics, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range d.S {
		if want := koopman.CartPoleExpertAction(s, 0); d.A[i] != want {
			t.Fatalf("z ≡ 0: transition %d acts %v, the expert with z = 0 %v", i, d.A[i], want)
		}
	}

	for _, bad := range []koopman.CartPoleDataConfig{{Episodes: 0, Steps: 5}, {Episodes: 5, Steps: 0}, {Episodes: -1, Steps: 5}} {
		if _, err := koopman.CollectCartPole(classic.CartPoleDynamics, bad); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("%+v: %v, want a refusal", bad, err)
		}
	}
	if d, err := koopman.CollectCartPole(classic.CartPoleDynamics, koopman.CartPoleDataConfig{Episodes: 1, Steps: 1, ForceMag: 10}); err != nil || len(d.S) != 1 {
		t.Errorf("one episode of one step: %v", err)
	}
}

// randMat4 is a 4×4 row-major matrix with entries U(−1, 1).
func randMat4(rng *rand.Rand) []float64 {
	k := make([]float64, 16)
	for i := range k {
		k[i] = 2*rng.Float64() - 1
	}
	return k
}

func mul4(k []float64, s [4]float64) (out [4]float64) {
	for i := range 4 {
		for j := range 4 {
			out[i] += k[i*4+j] * s[j]
		}
	}
	return out
}

// TestFitCartPoleKoopmanIsLeastSquares: on noise-free data s' = K(a)s the
// fit recovers each K(a), from exactly 8 transitions of one action (7 are
// refused); on noisy data its residual is orthogonal to the regressors (the
// normal equations) and RMS is the residual's root mean square per
// coordinate; K0 and K1 are the half-sum and half-difference.
func TestFitCartPoleKoopmanIsLeastSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	kTrue := [2][]float64{randMat4(rng), randMat4(rng)} // K(−1), K(+1)
	make8 := func(nMinus, nPlus int, noise float64) *koopman.CartPoleData {
		d := &koopman.CartPoleData{}
		for i := range nMinus + nPlus {
			a, ai := -1.0, 0
			if i%2 == 1 && i/2 < nPlus || i/2 >= nMinus {
				a, ai = 1, 1
			}
			var s [4]float64
			for j := range s {
				s[j] = rng.NormFloat64()
			}
			n := mul4(kTrue[ai], s)
			for j := range n {
				n[j] += noise * rng.NormFloat64()
			}
			d.S, d.A, d.Next = append(d.S, s), append(d.A, a), append(d.Next, n)
		}
		return d
	}

	d := make8(8, 12, 0)
	fit, err := koopman.FitCartPoleKoopman(d)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Actions != [2]float64{-1, 1} || fit.Count != [2]int{8, 12} {
		t.Fatalf("actions %v, counts %v, want [−1 1] and [8 12]", fit.Actions, fit.Count)
	}
	for ai := range 2 {
		for i, v := range fit.K[ai] {
			if !(math.Abs(v-kTrue[ai][i]) <= 1e-10) {
				t.Fatalf("K(%+g)[%d] = %v, true %v", fit.Actions[ai], i, v, kTrue[ai][i])
			}
		}
	}
	if _, err := koopman.FitCartPoleKoopman(make8(7, 12, 0)); err == nil || !strings.Contains(err.Error(), "only 7 transitions with action -1") {
		t.Errorf("7 transitions of one action: %v, want a refusal naming them", err)
	}

	d = make8(40, 60, 0.1)
	fit, err = koopman.FitCartPoleKoopman(d)
	if err != nil {
		t.Fatal(err)
	}
	for ai, a := range fit.Actions {
		var x, r []float64
		var ss [4]float64
		n := 0
		for t2, at := range d.A {
			if at != a {
				continue
			}
			p := mul4(fit.K[ai], d.S[t2])
			for i := range 4 {
				x = append(x, d.S[t2][i])
				r = append(r, d.Next[t2][i]-p[i])
				ss[i] += (d.Next[t2][i] - p[i]) * (d.Next[t2][i] - p[i])
			}
			n++
		}
		// Normal equations: Xᵀ R = 0 (4×4), relative to ‖X‖·‖R‖.
		xm, rm := mat.NewDense(n, 4, x), mat.NewDense(n, 4, r)
		var g mat.Dense
		g.Mul(xm.T(), rm)
		if v := mat.Norm(&g, math.Inf(1)) / (mat.Norm(xm, 2) * mat.Norm(rm, 2)); v > 1e-12 {
			t.Errorf("a=%+g: residual not orthogonal to the states (%g): not the least-squares fit", a, v)
		}
		for i := range 4 {
			if want := math.Sqrt(ss[i] / float64(n)); math.Abs(fit.RMS[ai][i]-want) > 1e-12*want {
				t.Errorf("a=%+g: RMS[%d] = %v, want %v", a, i, fit.RMS[ai][i], want)
			}
		}
	}
	for i := range 16 {
		if fit.K0[i] != 0.5*(fit.K[1][i]+fit.K[0][i]) || fit.K1[i] != 0.5*(fit.K[1][i]-fit.K[0][i]) {
			t.Fatalf("entry %d: K0 %v K1 %v from K(−1) %v K(+1) %v", i, fit.K0[i], fit.K1[i], fit.K[0][i], fit.K[1][i])
		}
	}
	if &fit.KAt(1)[0] != &fit.K[1][0] || &fit.KAt(-1)[0] != &fit.K[0][0] {
		t.Error("KAt does not return K(+1) for +1 and K(−1) for −1")
	}
}

// TestTranslationGeneratorPositionAnywhere: with the position moved to
// coordinate 2 (K permuted), the generator is the permuted paper generator,
// −1 at (2, 2).
func TestTranslationGeneratorPositionAnywhere(t *testing.T) {
	perm := []int{2, 0, 3, 1} // new index of old coordinate i
	k := koopman.PaperCartPoleK(1)
	kp := make([]float64, 16)
	for i := range 4 {
		for j := range 4 {
			kp[perm[i]*4+perm[j]] = k[i*4+j]
		}
	}
	sigma, lambda, align, err := koopman.TranslationGenerator(k, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	sp, lp, ap, err := koopman.TranslationGenerator(kp, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if lp != lambda || math.Abs(ap-align) > 1e-12 {
		t.Errorf("permuted: λ %v alignment %v, unpermuted %v %v", lp, ap, lambda, align)
	}
	if sp[2*4+2] != -1 {
		t.Errorf("σ0[2,2] = %v, want −1", sp[2*4+2])
	}
	for i := range 4 {
		for j := range 4 {
			if !(math.Abs(sp[perm[i]*4+perm[j]]-sigma[i*4+j]) <= 1e-9*(1+math.Abs(sigma[i*4+j]))) {
				t.Fatalf("σ0 of the permuted K at (%d,%d) = %v, permuted σ0 %v", perm[i], perm[j], sp[perm[i]*4+perm[j]], sigma[i*4+j])
			}
		}
	}
}

// TestTranslationGeneratorNeedsARealEigenvalue: a rotation has none and is
// refused; with a rotation block beside a real eigenvalue, the generator
// comes from the real one, and a position in the rotation's plane, which
// no real mode moves, is refused.
func TestTranslationGeneratorNeedsARealEigenvalue(t *testing.T) {
	c, s := math.Cos(0.3), math.Sin(0.3)
	if _, _, _, err := koopman.TranslationGenerator([]float64{c, -s, s, c}, 2, 0); err == nil || !strings.Contains(err.Error(), "no real eigenvalue") {
		t.Errorf("rotation: %v, want a refusal", err)
	}
	k := []float64{
		c, -s, 0,
		s, c, 0,
		0, 0, 0.9,
	}
	for pos := range 3 {
		sigma, lambda, _, err := koopman.TranslationGenerator(k, 3, pos)
		if pos < 2 {
			// The only real mode is e₂, which leaves the position unmoved:
			// no σ0 with σ0[pos,pos] = −1 exists (it used to come back as
			// NaN and −Inf without an error).
			if err == nil || !strings.Contains(err.Error(), "moves coordinate") {
				t.Errorf("pos %d: σ %v λ %v err %v, want a refusal", pos, sigma, lambda, err)
			}
			continue
		}
		if err != nil || lambda != complex(0.9, 0) || sigma[8] != -1 {
			t.Errorf("pos 2: λ %v σ %v err %v, want λ 0.9 and σ0[2,2] = −1", lambda, sigma, err)
		}
	}
}

// TestTruncateSmallKeepsTheThreshold: entries of magnitude exactly tol are
// kept (the paper's matrices keep 0.001 at tol 1e-3); the input is not
// modified.
func TestTruncateSmallKeepsTheThreshold(t *testing.T) {
	k := []float64{0.001, -0.001, 0.000999, -0.0009, 2, 0}
	got := koopman.TruncateSmall(k, 1e-3)
	want := []float64{0.001, -0.001, 0, 0, 2, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("TruncateSmall = %v, want %v", got, want)
		}
	}
	if k[2] != 0.000999 {
		t.Error("TruncateSmall modified its input")
	}
}

// TestCheckCartPoleSymmetryHandComputed recomputes every field of the
// report from its documented definition on linear "physics"
// M(s, f) = A s + f b, a hand-made fit and generators with off-row
// entries, every second transition.
func TestCheckCartPoleSymmetryHandComputed(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	A := randMat4(rng)
	b := [4]float64{0.1, -0.2, 0.3, 0.05}
	step := func(s [4]float64, f float64) [4]float64 {
		o := mul4(A, s)
		for i := range o {
			o[i] += f * b[i]
		}
		return o
	}
	d := &koopman.CartPoleData{}
	for i := range 5 {
		var s [4]float64
		for j := range s {
			s[j] = rng.NormFloat64()
		}
		a := float64(1 - 2*(i%2))
		d.S, d.A, d.Next = append(d.S, s), append(d.A, a), append(d.Next, step(s, 7*a))
	}
	fit := &koopman.CartPoleFit{Actions: [2]float64{-1, 1}, K: [2][]float64{randMat4(rng), randMat4(rng)}}
	sigmas := [2][]float64{randMat4(rng), randMat4(rng)}
	const eps, forceMag, seed = 0.1, 7.0, 21

	norm := func(v [4]float64, from int) float64 {
		s := 0.0
		for i := from; i < 4; i++ {
			s += v[i] * v[i]
		}
		return math.Sqrt(s)
	}
	sub := func(a, b [4]float64) (o [4]float64) {
		for i := range o {
			o[i] = a[i] - b[i]
		}
		return o
	}
	add := func(a, b [4]float64) (o [4]float64) {
		for i := range o {
			o[i] = a[i] + b[i]
		}
		return o
	}
	scale := func(c float64, a [4]float64) (o [4]float64) {
		for i := range o {
			o[i] = c * a[i]
		}
		return o
	}
	var want koopman.CartPoleSymmetryReport
	want.Epsilon, want.MaxExcess = eps, math.Inf(-1)
	for _, sg := range sigmas {
		row, off := 0.0, 0.0
		for i := range 16 {
			if i < 4 {
				row = max(row, math.Abs(sg[i]))
			} else {
				off = max(off, math.Abs(sg[i]))
			}
		}
		want.OffRowMax = max(want.OffRowMax, off/row)
	}
	ref := rand.New(rand.NewPCG(seed, seed))
	for ti := 0; ti < len(d.S); ti += 2 {
		ai := 0
		if d.A[ti] > 0 {
			ai = 1
		}
		sg, k, f := sigmas[ai], fit.K[ai], d.A[ti]*forceMag
		st, sn := d.S[ti], d.Next[ti]
		delta := scale(eps, mul4(sg, st))
		ts, tn := add(st, delta), add(sn, scale(eps, mul4(sg, sn)))
		shift := norm(delta, 0)
		errSym := norm(sub(step(ts, f), tn), 0)
		r := sub(sn, mul4(k, st))
		bound := norm(scale(eps, mul4(sg, r)), 0) + norm(sub(sub(step(ts, f), step(st, f)), delta), 0) +
			norm(sub(delta, mul4(k, delta)), 0)
		var dir [4]float64
		for i := range dir {
			dir[i] = ref.NormFloat64()
		}
		u := scale(shift/norm(dir, 0), dir)
		rs, rn := add(st, u), add(sn, u)
		want.Transitions++
		want.MeanShift += shift / 3
		want.MeanErrSym += errSym / 3
		want.MeanErrRand += norm(sub(step(rs, f), rn), 0) / 3
		want.MeanErrSymRest += norm(sub(step(ts, f), tn), 1) / 3
		want.MeanErrRandRest += norm(sub(step(rs, f), rn), 1) / 3
		want.MeanErrBound += bound / 3
		want.MaxExcess = max(want.MaxExcess, errSym-bound-1e-9*(1+shift))
	}
	got := koopman.CheckCartPoleSymmetry(step, forceMag, d, sigmas, fit, eps, 2, rand.New(rand.NewPCG(seed, seed)))
	if got.Transitions != 3 {
		t.Fatalf("%d transitions checked, want 3 (0, 2, 4)", got.Transitions)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"Epsilon", got.Epsilon, want.Epsilon}, {"MeanShift", got.MeanShift, want.MeanShift},
		{"MeanErrSym", got.MeanErrSym, want.MeanErrSym}, {"MeanErrRand", got.MeanErrRand, want.MeanErrRand},
		{"MeanErrSymRest", got.MeanErrSymRest, want.MeanErrSymRest}, {"MeanErrRandRest", got.MeanErrRandRest, want.MeanErrRandRest},
		{"MeanErrBound", got.MeanErrBound, want.MeanErrBound}, {"MaxExcess", got.MaxExcess, want.MaxExcess},
		{"OffRowMax", got.OffRowMax, want.OffRowMax},
	} {
		if !(math.Abs(c.got-c.want) <= 1e-12*(1+math.Abs(c.want))) { // NaN fails too
			t.Errorf("%s = %v, recomputed %v", c.name, c.got, c.want)
		}
	}

	// Stride 0 counts as 1; no data gives an empty report, not NaN.
	if r := koopman.CheckCartPoleSymmetry(step, forceMag, d, sigmas, fit, eps, 0, rand.New(rand.NewPCG(1, 1))); r.Transitions != 5 {
		t.Errorf("stride 0: %d transitions, want all 5", r.Transitions)
	}
	empty := koopman.CheckCartPoleSymmetry(step, forceMag, &koopman.CartPoleData{}, sigmas, fit, eps, 1, rand.New(rand.NewPCG(1, 1)))
	if empty.Transitions != 0 || empty.MeanShift != 0 || empty.MeanErrSym != 0 || empty.MeanErrBound != 0 {
		t.Errorf("no data: %+v", empty)
	}
}

// TestTranslationGeneratorNormalizesAnyProjector: on a generic operator
// (eigenprojector with Π[pos,pos] ≠ 1) σ0 = −Π/Π[pos,pos]: −1 at (pos,
// pos), rank one, commuting with K. Π for K's eigenvalue λ2 of a 2×2 K is
// (K − λ1 I)/(λ2 − λ1).
func TestTranslationGeneratorNormalizesAnyProjector(t *testing.T) {
	k := []float64{0.9, 0.4, 0.2, 0.5} // eigenvalues 0.7 ± √0.12
	l1, l2 := 0.7-math.Sqrt(0.12), 0.7+math.Sqrt(0.12)
	for pos := range 2 {
		sigma, lambda, _, err := koopman.TranslationGenerator(k, 2, pos)
		if err != nil {
			t.Fatal(err)
		}
		la, lb := l1, l2 // Π of λ: (K − other·I)/(λ − other)
		if math.Abs(real(lambda)-l1) < 1e-9 {
			la, lb = l2, l1
		}
		var pi [4]float64
		for i := range 4 {
			pi[i] = k[i] / (lb - la)
			if i == 0 || i == 3 {
				pi[i] -= la / (lb - la)
			}
		}
		d := pi[pos*2+pos]
		if math.Abs(d-1) < 0.1 {
			t.Fatalf("pos %d: Π[pos,pos] = %v, the case needs it away from 1", pos, d)
		}
		for i := range 4 {
			if !(math.Abs(sigma[i]+pi[i]/d) <= 1e-9) {
				t.Fatalf("pos %d: σ0 = %v, want −Π/Π[pos,pos] = −%v/%v", pos, sigma, pi, d)
			}
		}
	}
}

// TestTranslationGeneratorRefusesAFaintMode: the refusal threshold is
// relative to Π's largest entry. K = V diag(0.9, 0.5, 0.3) V⁻¹ with V's
// columns u = (1, δ, 0), (1, −εδ/(1−ε), ±1) and left eigenvector
// w = (ε, (1−ε)/δ, 0) of 0.9: the mode best aligned with coordinate 0 is
// u, whose projector u wᵀ has Π[0,0] = ε = 1e-11 against entries up to
// (1−ε)/δ = 100. Relative to them the mode leaves the position unmoved
// (1e-11 < 1e-12·100), so there is no σ0 to normalize; the threshold
// 1e-12/100 would accept it and divide by ~1e-11.
func TestTranslationGeneratorRefusesAFaintMode(t *testing.T) {
	const delta, eps = 1e-2, 1e-11
	y := -eps * delta / (1 - eps)
	v := mat.NewDense(3, 3, []float64{
		1, 1, 1,
		delta, y, y,
		0, 1, -1,
	})
	var vi mat.Dense
	if err := vi.Inverse(v); err != nil {
		t.Fatal(err)
	}
	var k mat.Dense
	k.Product(v, mat.NewDiagDense(3, []float64{0.9, 0.5, 0.3}), &vi)
	if pi00 := v.At(0, 0) * vi.At(0, 0); !(math.Abs(pi00-eps) <= 1e-13) {
		t.Fatalf("construction: Π[0,0] = %g, want ε = %g", pi00, eps)
	}
	sigma, lambda, align, err := koopman.TranslationGenerator(k.RawMatrix().Data, 3, 0)
	if err == nil || !strings.Contains(err.Error(), "moves coordinate 0") {
		t.Fatalf("σ0 %v for λ %v (alignment %v), err %v; want the refusal", sigma, lambda, align, err)
	}
}
