package koopman

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/koopq/koopq/internal/allocs"
)

func randMat(rng *rand.Rand, n int, scale float64) []float64 {
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.NormFloat64() * scale
	}
	return a
}

func matMul(a, b []float64, n int) []float64 {
	c := make([]float64, n*n)
	for i := range n {
		for k := range n {
			v := a[i*n+k]
			for j := range n {
				c[i*n+j] += v * b[k*n+j]
			}
		}
	}
	return c
}

func matInv(t *testing.T, a []float64, n int) []float64 {
	var inv mat.Dense
	if err := inv.Inverse(mat.NewDense(n, n, append([]float64(nil), a...))); err != nil {
		t.Fatalf("inverse: %v", err)
	}
	return inv.RawMatrix().Data
}

// structuredK returns S B S⁻¹ with B block diagonal holding the given real
// eigenvalues and 2×2 rotation-scaling blocks for the given complex ones
// (positive imaginary parts; their conjugates are implied).
func structuredK(t *testing.T, rng *rand.Rand, real []float64, cplx []complex128) ([]float64, int) {
	n := len(real) + 2*len(cplx)
	b := make([]float64, n*n)
	i := 0
	for _, l := range real {
		b[i*n+i] = l
		i++
	}
	for _, l := range cplx {
		a, c := real64(l), imag(l)
		b[i*n+i], b[i*n+i+1] = a, c
		b[(i+1)*n+i], b[(i+1)*n+i+1] = -c, a
		i += 2
	}
	s := randMat(rng, n, 1)
	for j := range n {
		s[j*n+j] += 3 // keep S well conditioned
	}
	return matMul(matMul(s, b, n), matInv(t, s, n), n), n
}

func real64(c complex128) float64 { return real(c) }

// testOperators returns named operators covering random, structured,
// symmetric and Koopman-like (contractive, mostly complex spectrum) cases.
func testOperators(t *testing.T) map[string][]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	ops := map[string][]float64{}
	ops["random32"] = randMat(rng, 32, 1/math.Sqrt(32))
	ops["random7"] = randMat(rng, 7, 1/math.Sqrt(7))
	k, _ := structuredK(t, rng, []float64{0.9, -0.3, 1}, []complex128{complex(0.8, 0.3), complex(0.1, 0.9), complex(-0.5, 0.2)})
	ops["structured9"] = k
	sym := randMat(rng, 16, 0.3)
	for i := range 16 {
		for j := range i {
			sym[i*16+j] = sym[j*16+i]
		}
	}
	ops["symmetric16"] = sym
	// Koopman-like: near-identity latent step with rotations, K = I + 0.1 A.
	kl := randMat(rng, 32, 0.1/math.Sqrt(32)*3)
	for i := range 32 {
		kl[i*32+i] += 1
	}
	ops["nearIdentity32"] = kl
	return ops
}

func dim(k []float64) int { return int(math.Round(math.Sqrt(float64(len(k))))) }

func TestOperatorAt(t *testing.T) {
	k0 := []float64{1, 2, 3, 4}
	ks := [][]float64{{1, 0, 0, 1}, {0, 1, 1, 0}}
	got := OperatorAt(nil, k0, ks, []float64{2, -1})
	want := []float64{3, 1, 2, 6}
	if !slices.Equal(got, want) {
		t.Fatalf("OperatorAt = %v, want %v", got, want)
	}
}

func TestDecomposeEigenResidual(t *testing.T) {
	for name, k := range testOperators(t) {
		n := dim(k)
		rb := NewRealBasis(n)
		if !NewDecomposer(n, DefaultSymmetryConfig()).Decompose(rb, k) {
			t.Fatalf("%s: unexpected fallback: %s", name, rb.Reason)
		}
		ce := rb.Complex()
		if r := ce.EigenResidual(k); r > 1e-12 {
			t.Errorf("%s: ‖KU−UΛ‖/‖K‖ = %.3g", name, r)
		}
		if r := ce.InverseResidual(); r > 1e-10 {
			t.Errorf("%s: max|UU⁻¹−I| = %.3g", name, r)
		}
		// Eigenvalues agree with gonum's mat.Eigen.
		var eig mat.Eigen
		if !eig.Factorize(mat.NewDense(n, n, append([]float64(nil), k...)), mat.EigenNone) {
			t.Fatalf("%s: mat.Eigen failed", name)
		}
		want := eig.Values(nil)
		got := append([]complex128(nil), rb.Values...)
		less := func(a, b complex128) int {
			if real(a) != real(b) {
				if real(a) < real(b) {
					return -1
				}
				return 1
			}
			if imag(a) < imag(b) {
				return -1
			}
			return 1
		}
		slices.SortFunc(want, less)
		slices.SortFunc(got, less)
		for j := range want {
			if cmplx.Abs(want[j]-got[j]) > 1e-10 {
				t.Errorf("%s: eigenvalue %d: got %v want %v", name, j, got[j], want[j])
			}
		}
	}
}

func TestKFCppCommutesAndMatchesComplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for name, k := range testOperators(t) {
		n := dim(k)
		rb := NewRealBasis(n)
		NewDecomposer(n, DefaultSymmetryConfig()).Decompose(rb, k)
		ce := rb.Complex()
		for trial := range 5 {
			eps := make([]float64, n)
			for j := range eps {
				eps[j] = rng.NormFloat64()
			}
			sigma := rb.Sigma(nil, eps)
			if r := CommutatorResidual(sigma, k, n); r > 1e-6 {
				t.Errorf("%s/%d: KFC++ commutator residual %.3g", name, trial, r)
			}
			ref, imagAvg := ce.ReSigma(eps)
			if !(imagAvg <= 1e-12) { // NaN fails too
				t.Errorf("%s/%d: pair-averaged U diag(ε′) U⁻¹ has imaginary part %.3g", name, trial, imagAvg)
			}
			scale := frobenius(ref)
			for i := range sigma {
				if d := math.Abs(sigma[i] - ref[i]); d > 1e-10*math.Max(1, scale) {
					t.Fatalf("%s/%d: real form differs from Re(U diag(ε) U⁻¹) by %.3g at %d", name, trial, d, i)
				}
			}
			// Fast O(N²) shift equals σ g.
			g := make([]float64, n)
			for i := range g {
				g[i] = rng.NormFloat64()
			}
			dg := make([]float64, n)
			rb.Shift(dg, g, eps)
			for i := range n {
				want := 0.0
				for j := range n {
					want += ref[i*n+j] * g[j]
				}
				if d := math.Abs(dg[i] - want); d > 1e-10*math.Max(1, scale) {
					t.Fatalf("%s/%d: Shift differs from Re(U diag(ε) U⁻¹) g by %.3g", name, trial, d)
				}
			}
		}
	}
}

func TestConjugatePairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	k, n := structuredK(t, rng, []float64{0.5}, []complex128{complex(0.3, 0.4), complex(-0.2, 0.7)})
	rb := NewRealBasis(n)
	NewDecomposer(n, DefaultSymmetryConfig()).Decompose(rb, k)
	pairs := 0
	for j, p := range rb.Pair {
		if p < 0 {
			if imag(rb.Values[j]) != 0 {
				t.Errorf("eigenvalue %d = %v marked real", j, rb.Values[j])
			}
			continue
		}
		if rb.Pair[p] != j || cmplx.Abs(rb.Values[p]-cmplx.Conj(rb.Values[j])) > 1e-12 {
			t.Errorf("pair %d↔%d: values %v, %v", j, p, rb.Values[j], rb.Values[p])
		}
		pairs++
	}
	if pairs != 4 {
		t.Fatalf("found %d paired indices, want 4", pairs)
	}
	// Independent ε on a pair: the real part equals the pair-averaged σ, and
	// differs from taking only one member's ε.
	eps := []float64{0, 0, 0, 0, 0}
	for j, p := range rb.Pair {
		if p > j {
			eps[j], eps[p] = 1, -0.4
			break
		}
	}
	ref, _ := rb.Complex().ReSigma(eps)
	avg := make([]float64, n)
	rb.PairAverage(avg, eps)
	got := rb.Sigma(nil, avg)
	for i := range ref {
		if math.Abs(ref[i]-got[i]) > 1e-12 {
			t.Fatalf("Re(U diag(ε) U⁻¹) ≠ σ(ε′) at %d: %g vs %g", i, ref[i], got[i])
		}
	}
	if r := CommutatorResidual(ref, k, n); r > 1e-12 {
		t.Errorf("pair σ commutator residual %.3g", r)
	}
}

func TestZeroEpsIsIdentity(t *testing.T) {
	k := testOperators(t)["random32"]
	n := 32
	rb := NewRealBasis(n)
	NewDecomposer(n, DefaultSymmetryConfig()).Decompose(rb, k)
	eps := make([]float64, n)
	for _, v := range rb.Sigma(nil, eps) {
		if v != 0 {
			t.Fatalf("σ(0) has entry %g", v)
		}
	}
	g := make([]float64, n)
	for i := range g {
		g[i] = float64(i) - 3
	}
	dg := make([]float64, n)
	rb.Shift(dg, g, eps)
	for _, v := range dg {
		if v != 0 {
			t.Fatalf("σ(0) g has entry %g", v)
		}
	}
}

func TestKFCGenerator(t *testing.T) {
	for name, k := range testOperators(t) {
		n := dim(k)
		rb := NewRealBasis(n)
		NewDecomposer(n, DefaultSymmetryConfig()).Decompose(rb, k)
		g, ok := rb.KFCGenerator(nil)
		if !ok {
			t.Fatalf("%s: KFC generator fell back", name)
		}
		if f := frobenius(g); math.Abs(f-1) > 1e-12 {
			t.Errorf("%s: ‖G‖_F = %g", name, f)
		}
		if r := CommutatorResidual(g, k, n); r > 1e-6 {
			t.Errorf("%s: KFC commutator residual %.3g", name, r)
		}
		// Not a multiple of the identity: off-diagonal mass present.
		off := 0.0
		for i := range n {
			for j := range n {
				if i != j {
					off += g[i*n+j] * g[i*n+j]
				}
			}
		}
		if off < 1e-6 && name != "symmetric16" {
			t.Errorf("%s: KFC generator is (nearly) diagonal, off-diagonal mass %g", name, off)
		}
	}
}

// jordanK embeds the defective Jordan block [[1,1],[0,1]] into a 6×6 operator.
func jordanK() []float64 {
	n := 6
	k := make([]float64, n*n)
	k[0], k[1], k[n+1] = 1, 1, 1
	for i := 2; i < n; i++ {
		k[i*n+i] = 0.2 * float64(i)
	}
	k[2*n+3] = 0.3
	return k
}

func TestFallbackOnDefective(t *testing.T) {
	k := jordanK()
	n := 6
	rb := NewRealBasis(n)
	if NewDecomposer(n, DefaultSymmetryConfig()).Decompose(rb, k) {
		t.Fatalf("Jordan block decomposed without fallback, cond %.3g", rb.Cond)
	}
	if !rb.Fallback || rb.Reason == "" {
		t.Fatalf("fallback not reported: %+v", rb)
	}
	t.Logf("fallback reason: %s", rb.Reason)
	eps := []float64{0.1, -0.2, 0.3, 0, 0.5, 0.05}
	sigma := rb.Sigma(nil, eps)
	if r := CommutatorResidual(sigma, k, n); r != 0 {
		t.Errorf("fallback σ does not commute: %.3g", r)
	}
	want := fallbackScale(eps)
	g := []float64{1, 2, 3, 4, 5, 6}
	dg := make([]float64, n)
	rb.Shift(dg, g, eps)
	for i := range g {
		if math.Abs(dg[i]-want*g[i]) > 1e-15 {
			t.Fatalf("fallback shift %v, want %g·g", dg, want)
		}
	}
	gen, ok := rb.KFCGenerator(nil)
	if ok || math.Abs(gen[0]-1/math.Sqrt(6)) > 1e-15 {
		t.Errorf("KFC fallback: ok=%v G[0]=%g", ok, gen[0])
	}
	// The same operator with a tiny perturbation that splits the eigenvalue is
	// diagonalizable but badly conditioned: still a fallback at the default
	// threshold, accepted with a lax one.
	k[n] = 1e-10
	rb2 := NewRealBasis(n)
	if NewDecomposer(n, DefaultSymmetryConfig()).Decompose(rb2, k) {
		t.Errorf("near-defective operator accepted, cond %.3g", rb2.Cond)
	}
	if !NewDecomposer(n, SymmetryConfig{MaxCond: 1e12}).Decompose(rb2, k) {
		t.Errorf("near-defective operator rejected with MaxCond 1e12: %s", rb2.Reason)
	}
	if r := CommutatorResidual(rb2.Sigma(nil, eps), k, n); r > 1e-3 {
		t.Logf("near-defective KFC++ commutator residual %.3g (cond %.3g)", r, rb2.Cond)
	}
}

func TestShifterMatchesSerialAndWorkers(t *testing.T) {
	const n, m, b, v = 12, 3, 37, 2
	rng := rand.New(rand.NewPCG(7, 8))
	k0 := randMat(rng, n, 1/math.Sqrt(n))
	ks := [][]float64{randMat(rng, n, 0.1), randMat(rng, n, 0.1), randMat(rng, n, 0.1)}
	actions := make([]float64, b*m)
	for i := range actions {
		actions[i] = 2*rng.Float64() - 1
	}
	latents := make([]float64, b*v*n)
	for i := range latents {
		latents[i] = rng.NormFloat64()
	}
	eps := make([]float64, b*n)
	for i := range eps {
		eps[i] = 1e-3 * rng.NormFloat64()
	}
	eps1 := eps[:b]
	var outs [][]float64
	var outs1 [][]float64
	for _, workers := range []int{1, 2, 3} {
		s := NewShifter(k0, ks, n, DefaultSymmetryConfig(), workers)
		out := make([]float64, len(latents))
		st := s.ShiftKFCpp(out, latents, actions, eps)
		if st.Fallbacks != 0 {
			t.Fatalf("unexpected fallbacks: %+v", st)
		}
		outs = append(outs, out)
		out1 := make([]float64, len(latents))
		s.ShiftKFC(out1, latents, actions, eps1)
		outs1 = append(outs1, out1)
	}
	for w := 1; w < len(outs); w++ {
		if !slices.Equal(outs[0], outs[w]) || !slices.Equal(outs1[0], outs1[w]) {
			t.Fatalf("results depend on the number of workers")
		}
	}
	// Serial reference with explicit σ, and the shifted pair stays a transition
	// of the linear model: K(ĝ_t) − ĝ_{t+1} = (1+σ)(K g_t − g_{t+1}).
	dec, rb := NewDecomposer(n, DefaultSymmetryConfig()), NewRealBasis(n)
	for i := range b {
		k := OperatorAt(nil, k0, ks, actions[i*m:(i+1)*m])
		dec.Decompose(rb, k)
		sigma := rb.Sigma(nil, eps[i*n:(i+1)*n])
		gen, _ := rb.KFCGenerator(nil)
		for j := range v {
			off := (i*v + j) * n
			for r := range n {
				want, want1 := latents[off+r], latents[off+r]
				for c := range n {
					want += sigma[r*n+c] * latents[off+c]
					want1 += eps1[i] * gen[r*n+c] * latents[off+c]
				}
				if math.Abs(outs[0][off+r]-want) > 1e-12 || math.Abs(outs1[0][off+r]-want1) > 1e-12 {
					t.Fatalf("item %d vec %d row %d: KFC++ %g vs %g, KFC %g vs %g", i, j, r, outs[0][off+r], want, outs1[0][off+r], want1)
				}
			}
		}
	}
}

func TestDiagnose(t *testing.T) {
	k := testOperators(t)["nearIdentity32"]
	rb := NewRealBasis(32)
	NewDecomposer(32, DefaultSymmetryConfig()).Decompose(rb, k)
	eps := make([]float64, 32)
	eps[3] = 1
	d := Diagnose(rb, k, eps)
	if d.Fallback || d.EigenResidual > 1e-12 || d.InverseResidual > 1e-10 || d.CommKFCpp > 1e-8 || d.CommKFC > 1e-8 {
		t.Fatalf("diagnostics out of range: %+v", d)
	}
	t.Logf("%+v", d)
}

func benchOperators(n, m int) ([]float64, [][]float64) {
	rng := rand.New(rand.NewPCG(11, 12))
	k0 := randMat(rng, n, 0.3/math.Sqrt(float64(n)))
	for i := range n {
		k0[i*n+i] += 0.9
	}
	ks := make([][]float64, m)
	for i := range ks {
		ks[i] = randMat(rng, n, 0.1/math.Sqrt(float64(n)))
	}
	return k0, ks
}

func BenchmarkDecompose32(b *testing.B) {
	k0, ks := benchOperators(32, 3)
	k := OperatorAt(nil, k0, ks, []float64{0.3, -0.5, 0.9})
	dec, rb := NewDecomposer(32, DefaultSymmetryConfig()), NewRealBasis(32)
	for b.Loop() {
		dec.Decompose(rb, k)
	}
}

func benchShift(b *testing.B, kfc bool, workers int) {
	const n, m, bs = 32, 3, 256
	k0, ks := benchOperators(n, m)
	rng := rand.New(rand.NewPCG(13, 14))
	actions := make([]float64, bs*m)
	for i := range actions {
		actions[i] = 2*rng.Float64() - 1
	}
	latents := make([]float64, bs*2*n)
	for i := range latents {
		latents[i] = 2*rng.Float64() - 1
	}
	eps := make([]float64, bs*n)
	for i := range eps {
		eps[i] = 3e-3 * rng.NormFloat64()
	}
	out := make([]float64, len(latents))
	s := NewShifter(k0, ks, n, DefaultSymmetryConfig(), workers)
	fb := 0
	for b.Loop() {
		if kfc {
			fb += s.ShiftKFC(out, latents, actions, eps[:bs]).Fallbacks
		} else {
			fb += s.ShiftKFCpp(out, latents, actions, eps).Fallbacks
		}
	}
	if fb > 0 {
		b.Logf("%d fallbacks", fb)
	}
}

// BenchmarkShiftBatch256 times one KFC++ batch (B = 256, N = 32, m = 3,
// shifting E(s_t) and E(s_{t+1})) on GOMAXPROCS workers.
func BenchmarkShiftBatch256(b *testing.B) { benchShift(b, false, 0) }

// BenchmarkShiftBatch256OneWorker is BenchmarkShiftBatch256 on one goroutine.
func BenchmarkShiftBatch256OneWorker(b *testing.B) { benchShift(b, false, 1) }

// BenchmarkShiftBatch256KFC times the KFC (single generator) variant.
func BenchmarkShiftBatch256KFC(b *testing.B) { benchShift(b, true, 0) }

// TestNorm1: the largest absolute column sum, on a non-symmetric matrix
// whose row sums differ from its column sums.
func TestNorm1(t *testing.T) {
	a := []float64{
		1, -7, 0,
		2, 0.5, -1,
		-3, 0, 4,
	}
	// column sums 6, 7.5, 5; row sums 8, 3.5, 7
	if got := norm1(a, 3); got != 7.5 {
		t.Errorf("norm1 = %v, want 7.5", got)
	}
}

// TestDecomposeCondAtTheLimit: a diagonal operator's eigenbasis is the
// identity up to signs, condition number exactly 1, which MaxCond = 1
// accepts (the limit is inclusive).
func TestDecomposeCondAtTheLimit(t *testing.T) {
	k := []float64{0.5, 0, 0, 0, -0.25, 0, 0, 0, 0.9}
	rb := NewRealBasis(3)
	if !NewDecomposer(3, SymmetryConfig{MaxCond: 1}).Decompose(rb, k) || rb.Cond != 1 {
		t.Fatalf("diagonal operator at MaxCond 1: fallback %v (%s), cond %v", rb.Fallback, rb.Reason, rb.Cond)
	}
}

// TestSigmaAndKFCGeneratorGrowShortDst: a dst shorter than N² (and with
// less capacity) is replaced, and the result equals the freshly allocated
// one.
func TestSigmaAndKFCGeneratorGrowShortDst(t *testing.T) {
	k := []float64{0.9, 0.2, 0, -0.1, 0.5, 0.3, 0, 0.1, -0.4}
	rb := NewRealBasis(3)
	if !NewDecomposer(3, SymmetryConfig{MaxCond: 1e8}).Decompose(rb, k) {
		t.Fatal(rb.Reason)
	}
	eps := []float64{0.1, -0.2, 0.3}
	want := rb.Sigma(nil, eps)
	if got := rb.Sigma(make([]float64, 2), eps); len(got) != 9 || !slices.Equal(got, want) {
		t.Errorf("Sigma into a short dst: %v, want %v", got, want)
	}
	wantG, _ := rb.KFCGenerator(nil)
	if got, _ := rb.KFCGenerator(make([]float64, 2)); len(got) != 9 || !slices.Equal(got, wantG) {
		t.Errorf("KFCGenerator into a short dst: %v, want %v", got, wantG)
	}
}

// TestKFCGeneratorFallsBackToScaledIdentity: on a fallback basis, and when
// the |λ_j| are equal to within 1e-12·N (c ≈ 0), the KFC generator is I/√N
// (unit Frobenius norm) with ok = false; just above that it is the
// normalized U diag(c) U⁻¹.
func TestKFCGeneratorFallsBackToScaledIdentity(t *testing.T) {
	isScaledIdentity := func(g []float64) bool {
		for i := range 3 {
			for j := range 3 {
				want := 0.0
				if i == j {
					want = 1 / math.Sqrt(3)
				}
				if math.Abs(g[i*3+j]-want) > 1e-15 {
					return false
				}
			}
		}
		return true
	}
	dec := NewDecomposer(3, SymmetryConfig{MaxCond: 1e8})
	rb := NewRealBasis(3)
	if dec.Decompose(rb, []float64{math.NaN(), 0, 0, 0, 1, 0, 0, 0, 1}) {
		t.Fatal("a NaN operator decomposed")
	}
	if g, ok := rb.KFCGenerator(nil); ok || !isScaledIdentity(g) {
		t.Errorf("fallback basis: ok %v, generator %v, want I/√3", ok, g)
	}
	// c = (0, +a, −a): ‖G‖_F before normalization is a√2. At 1e-12 it is
	// below the 3e-12 floor (treated as c = 0); at 1e-9 it is a generator.
	for _, c := range []struct {
		f  float64
		ok bool
	}{{1e-12, false}, {1e-9, true}} {
		a := c.f / math.Sqrt2
		if !dec.Decompose(rb, []float64{0.5, 0, 0, 0, 0.5 + a, 0, 0, 0, 0.5 - a}) {
			t.Fatal(rb.Reason)
		}
		g, ok := rb.KFCGenerator(nil)
		if ok != c.ok || (!ok && !isScaledIdentity(g)) || math.Abs(frobenius(g)-1) > 1e-12 {
			t.Errorf("‖U diag(c) U⁻¹‖_F = %g: ok %v, generator %v; want ok %v and unit norm", c.f, ok, g, c.ok)
		}
	}
}

// TestFallbackShiftIsScaledLatent: on a fallback basis σ(ε) = ε̄·I with
// ε̄ = Σ_j ε_j / √N, both formed (Sigma) and applied (Shift).
func TestFallbackShiftIsScaledLatent(t *testing.T) {
	rb := NewRealBasis(4)
	if NewDecomposer(4, SymmetryConfig{MaxCond: 1e8}).Decompose(rb, []float64{math.Inf(1), 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}) {
		t.Fatal("an infinite operator decomposed")
	}
	eps := []float64{0.1, 0.3, -0.2, 0.6}
	bar := 0.8 / 2 // Σε / √4
	s := rb.Sigma(nil, eps)
	for i := range 4 {
		for j := range 4 {
			want := 0.0
			if i == j {
				want = bar
			}
			if math.Abs(s[i*4+j]-want) > 1e-15 {
				t.Fatalf("σ[%d,%d] = %v, want %v", i, j, s[i*4+j], want)
			}
		}
	}
	g, dg := []float64{1, -2, 0.5, 3}, make([]float64, 4)
	rb.Shift(dg, g, eps)
	for i := range g {
		if math.Abs(dg[i]-bar*g[i]) > 1e-15 {
			t.Fatalf("Δg = %v, want ε̄·g = %v·%v", dg, bar, g)
		}
	}
}

// TestShifterAllocationsDoNotGrowWithBatch: once warm, a batch costs the
// workers' goroutines plus what gonum's eigensolver allocates inside
// (Dlahqr, per decomposition), whatever its size: koopq allocates nothing
// per transition, for KFC++ and KFC alike.
func TestShifterAllocationsDoNotGrowWithBatch(t *testing.T) {
	const n, m = 4, 1
	rng := rand.New(rand.NewPCG(3, 3))
	k0, k1 := make([]float64, n*n), make([]float64, n*n)
	for i := range k0 {
		k0[i], k1[i] = 0.3*rng.NormFloat64(), 0.1*rng.NormFloat64()
	}
	sh := NewShifter(k0, [][]float64{k1}, n, DefaultSymmetryConfig(), 1)
	if sh.Workers != 1 || len(sh.ws) != 1 {
		t.Fatalf("asked for 1 worker, got %d (%d workspaces)", sh.Workers, len(sh.ws))
	}
	if d := NewShifter(k0, [][]float64{k1}, n, DefaultSymmetryConfig(), 0); d.Workers != runtime.GOMAXPROCS(0) {
		t.Fatalf("workers 0 gave %d, want GOMAXPROCS %d", d.Workers, runtime.GOMAXPROCS(0))
	}
	dec, rb, k := NewDecomposer(n, DefaultSymmetryConfig()), NewRealBasis(n), make([]float64, n*n)
	// own is the allocations of a batch of b beyond its b decompositions.
	own := func(b int, kfc bool) float64 {
		act, lat, dst := make([]float64, b*m), make([]float64, 2*b*n), make([]float64, 2*b*n)
		for i := range act {
			act[i] = rng.Float64()
		}
		for i := range lat {
			lat[i] = rng.NormFloat64()
		}
		epsPP, eps := make([]float64, b*n), make([]float64, b)
		shift := allocs.Min(5, func() {
			if kfc {
				sh.ShiftKFC(dst, lat, act, eps)
			} else {
				sh.ShiftKFCpp(dst, lat, act, epsPP)
			}
		})
		decompose := allocs.Min(5, func() {
			for i := range b {
				OperatorAt(k, k0, [][]float64{k1}, act[i*m:(i+1)*m])
				dec.Decompose(rb, k)
			}
		})
		return shift - decompose
	}
	for _, kfc := range []bool{false, true} {
		if small, large := own(4, kfc), own(64, kfc); large > small {
			t.Errorf("KFC %v: %v own allocations for a batch of 4, %v for 64: something is allocated per transition", kfc, small, large)
		}
	}
}

// TestResidualsHandComputed: the diagnostics' residuals on 2×2 cases
// worked out by hand, where they are far from zero.
func TestResidualsHandComputed(t *testing.T) {
	// σ = [[0,1],[0,0]], K = diag(1, 2): σK − Kσ = [[0,1],[0,0]], so the
	// residual is 1/(1·√5); a zero σ gives 0, not NaN.
	sigma, k := []float64{0, 1, 0, 0}, []float64{1, 0, 0, 2}
	if r := CommutatorResidual(sigma, k, 2); !(math.Abs(r-1/math.Sqrt(5)) <= 1e-15) {
		t.Errorf("commutator residual %v, want 1/√5", r)
	}
	if r := CommutatorResidual(make([]float64, 4), k, 2); r != 0 {
		t.Errorf("zero σ: residual %v, want 0", r)
	}
	if r := CommutatorResidual(sigma, make([]float64, 4), 2); r != 0 {
		t.Errorf("zero K: residual %v, want 0", r)
	}
	// U = I with eigenvalues (1, 3) for K = diag(1, 2): KU − UΛ = diag(0, −1).
	ce := &ComplexEigen{N: 2, Values: []complex128{1, 3}, U: []complex128{1, 0, 0, 1}, UInv: []complex128{1, 0.5i, 0, 1}}
	if r := ce.EigenResidual(k); !(math.Abs(r-1/math.Sqrt(5)) <= 1e-15) {
		t.Errorf("eigen residual %v, want 1/√5", r)
	}
	if r := ce.EigenResidual(make([]float64, 4)); !(math.Abs(r-math.Sqrt(10)) <= 1e-15) {
		t.Errorf("eigen residual of K = 0: %v, want ‖UΛ‖_F = √10 (no division by ‖K‖ = 0)", r)
	}
	// A complex case: K a quarter turn, U = I with Λ = diag(i, −i):
	// KU − UΛ = [[−i, −1], [1, i]], ‖·‖_F = 2, ‖K‖_F = √2.
	rot := &ComplexEigen{N: 2, Values: []complex128{1i, -1i}, U: []complex128{1, 0, 0, 1}}
	if r := rot.EigenResidual([]float64{0, -1, 1, 0}); !(math.Abs(r-math.Sqrt2) <= 1e-15) {
		t.Errorf("quarter turn: eigen residual %v, want √2", r)
	}
	// U U⁻¹ − I = [[0, 0.5i], [0, 0]].
	if r := ce.InverseResidual(); !(math.Abs(r-0.5) <= 1e-15) {
		t.Errorf("inverse residual %v, want 0.5", r)
	}
}

// TestShifterBatchStats: a batch's fallback count and largest condition
// number equal those of deciding each transition alone, for 1, 2 and 3
// workers (each transition counted once). K(a) = K0 + a·K1 is a defective
// Jordan block at a = 0 (fallback) and has distinct eigenvalues otherwise.
func TestShifterBatchStats(t *testing.T) {
	const n = 2
	k0, k1 := []float64{1, 1, 0, 1}, []float64{0.5, 0, 0, -0.5}
	acts := []float64{0, 0.3, 0, -0.7, 0.9, 0, 0.2, 0.5}
	dec, rb, k := NewDecomposer(n, DefaultSymmetryConfig()), NewRealBasis(n), make([]float64, n*n)
	wantFallbacks, wantMax := 0, 0.0
	for _, a := range acts {
		OperatorAt(k, k0, [][]float64{k1}, []float64{a})
		if !dec.Decompose(rb, k) {
			wantFallbacks++
		}
		if !(rb.Cond <= wantMax) {
			wantMax = rb.Cond
		}
	}
	if wantFallbacks != 3 {
		t.Fatalf("the test's operators: %d fallbacks, want the 3 at a = 0", wantFallbacks)
	}
	lat := make([]float64, 2*len(acts)*n)
	for i := range lat {
		lat[i] = float64(i%5) - 2
	}
	for workers := 1; workers <= 3; workers++ {
		sh := NewShifter(k0, [][]float64{k1}, n, DefaultSymmetryConfig(), workers)
		st := sh.ShiftKFCpp(make([]float64, len(lat)), lat, acts, make([]float64, len(acts)*n))
		if st.Fallbacks != wantFallbacks || st.MaxCond != wantMax {
			t.Errorf("%d workers: %d fallbacks, max cond %v; one by one %d, %v", workers, st.Fallbacks, st.MaxCond, wantFallbacks, wantMax)
		}
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "koopman: Shifter") {
				t.Errorf("latents of the wrong length: recovered %v, want the Shifter's shape panic", r)
			}
		}()
		sh := NewShifter(k0, [][]float64{k1}, n, DefaultSymmetryConfig(), 1)
		// 36 values: a multiple of B/N = 4 but not of B·N = 16.
		sh.ShiftKFCpp(make([]float64, 36), make([]float64, 36), acts, make([]float64, len(acts)*n))
	}()
}
