package koopman

import (
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// OperatorAt forms the latent operator of the bilinear Koopman model for one
// action, K(a) = K0 + Σ_i a_i Ks[i] (paper Eq. Fwdmodel).
//
// k0 and every Ks[i] are [N*N] row-major, a is [m] with m = len(ks). The result
// is written to dst ([N*N]; allocated when nil or too short) and returned.
// K(a) acts on column vectors: g' = K(a) g.
func OperatorAt(dst, k0 []float64, ks [][]float64, a []float64) []float64 {
	if len(a) != len(ks) {
		panic(fmt.Sprintf("koopman: OperatorAt: %d action components for %d generators", len(a), len(ks)))
	}
	if len(dst) < len(k0) {
		dst = make([]float64, len(k0))
	}
	dst = dst[:len(k0)]
	copy(dst, k0)
	for i, ki := range ks {
		if len(ki) != len(k0) {
			panic(fmt.Sprintf("koopman: OperatorAt: Ks[%d] has %d entries, K0 %d", i, len(ki), len(k0)))
		}
		ai := a[i]
		if ai == 0 {
			continue
		}
		for j, v := range ki {
			dst[j] += ai * v
		}
	}
	return dst
}

// SymmetryConfig controls the eigendecomposition behind the KFC / KFC++
// symmetry generators.
type SymmetryConfig struct {
	// MaxCond is the largest accepted 1-norm condition number of the real
	// eigenbasis P (cond₁(P) = ‖P‖₁‖P⁻¹‖₁; cond₂ of the complex eigenvector
	// matrix U agrees with cond₂(P) up to a factor √2, see RealBasis). Above it
	// K(a) is treated as near-defective and the scalar fallback is used, because
	// the individual spectral projectors then have norms of order cond and a
	// KFC++ shift σ(ε) is amplified by that much relative to ε. The paper and
	// the authors' code have no such check (their eig failures silently fall
	// back to U = I, i.e. non-commuting diagonal noise). Default 1e4: the
	// authors' toy models reach cond ≈ 1e3.
	MaxCond float64
}

// DefaultSymmetryConfig returns the defaults documented on SymmetryConfig.
func DefaultSymmetryConfig() SymmetryConfig { return SymmetryConfig{MaxCond: 1e4} }

// RealBasis is the real form of the eigendecomposition K = U Λ U⁻¹ of one real
// N×N operator, which is all KFC++ and KFC need.
//
// Because K is real its eigenvalues are real or come in conjugate pairs
// (λ, λ̄) with eigenvectors (u, ū). P holds the real eigenbasis in LAPACK's
// layout: column j is u_j for a real λ_j; for a pair (j, j+1) column j is Re u_j
// and column j+1 is Im u_j (u_j = P[:,j] + i P[:,j+1], u_{j+1} = ū_j, the
// eigenvalue with positive imaginary part first). Then U = P M with M block
// diagonal (1 for real, [[1,1],[i,−i]] for a pair; M/√2 is unitary on a pair),
// so U⁻¹ = M⁻¹ P⁻¹ needs only the real inverse P⁻¹.
//
// With it, Re(U diag(ε) U⁻¹) = P diag(ε′) P⁻¹ exactly, where ε′ equals ε on real
// eigenvalues and replaces both entries of a conjugate pair by their average
// (ε_j + ε_{j+1})/2 (the imaginary parts of a pair's two rank-one terms cancel,
// the real parts add). This is what the authors' code computes implicitly, at
// O(N²) per shifted vector instead of O(N³) complex work per σ.
//
// A RealBasis holds scratch space: its methods are not safe for concurrent use.
type RealBasis struct {
	// N is the latent dimension.
	N int
	// Values are the eigenvalues λ_j, [N], in LAPACK order.
	Values []complex128
	// P is the real eigenbasis, [N*N] row-major (columns as described above);
	// every complex eigenvector u_j has unit Euclidean norm.
	P []float64
	// PInv is P⁻¹, [N*N] row-major.
	PInv []float64
	// Pair[j] is the column index of j's conjugate partner, or -1 when λ_j is real.
	Pair []int
	// Cond is cond₁(P) = ‖P‖₁‖P⁻¹‖₁ (+Inf when P could not be inverted).
	Cond float64
	// Fallback reports that the decomposition failed or was too ill-conditioned
	// (Cond > MaxCond). The shift methods then use the scalar generator
	// σ(ε) = ε̄·I with ε̄ = Σ_j ε_j / √N (same standard deviation as one ε_j for
	// i.i.d. ε), which commutes with every K exactly; KFC uses G = I/√N.
	Fallback bool
	// Reason says why Fallback is set ("" otherwise).
	Reason string

	eps []float64 // scratch [N]: ε′
	h   []float64 // scratch [N]: P⁻¹ g
}

// NewRealBasis allocates an empty RealBasis for N×N operators, to be filled by
// Decomposer.Decompose.
func NewRealBasis(n int) *RealBasis {
	return &RealBasis{
		N:      n,
		Values: make([]complex128, n),
		P:      make([]float64, n*n),
		PInv:   make([]float64, n*n),
		Pair:   make([]int, n),
		eps:    make([]float64, n),
		h:      make([]float64, n),
	}
}

// Decomposer computes RealBasis values for N×N operators with preallocated
// LAPACK workspaces (gonum's pure-Go Dgeev — the routine behind mat.Eigen — used
// directly so that the real-format eigenvectors need no complex conversion,
// then Dgetrf/Dgetri for P⁻¹). Timing on the reference machine: about 0.25 ms
// for N = 32. A Decomposer is not safe for concurrent use; make one per
// goroutine.
type Decomposer struct {
	N      int
	Config SymmetryConfig

	a, wr, wi, work []float64
	ipiv            []int
	impl            lapackgonum.Implementation
}

// NewDecomposer returns a Decomposer for N×N operators.
func NewDecomposer(n int, cfg SymmetryConfig) *Decomposer {
	d := &Decomposer{N: n, Config: cfg, a: make([]float64, n*n), wr: make([]float64, n), wi: make([]float64, n), ipiv: make([]int, n)}
	q := make([]float64, 1)
	d.impl.Dgeev(lapack.LeftEVNone, lapack.RightEVCompute, n, d.a, max(1, n), d.wr, d.wi, nil, 1, d.a, max(1, n), q, -1)
	lw := int(q[0])
	d.impl.Dgetri(n, d.a, max(1, n), d.ipiv, q, -1)
	lw = max(lw, int(q[0]), 4*n, 1)
	d.work = make([]float64, lw)
	return d
}

// Decompose fills rb with the real eigendecomposition of the N×N row-major
// operator k (not modified). It returns true when the eigenbasis is usable and
// false when rb.Fallback was set (see RealBasis.Fallback and rb.Reason); callers
// count the false returns. P, PInv and Values are filled whenever they could be
// computed, also on fallback, for diagnostics.
func (d *Decomposer) Decompose(rb *RealBasis, k []float64) bool {
	n := d.N
	if len(k) != n*n || rb.N != n {
		panic(fmt.Sprintf("koopman: Decompose: operator has %d entries, basis N=%d, decomposer N=%d", len(k), rb.N, n))
	}
	rb.Fallback, rb.Reason, rb.Cond = false, "", math.Inf(1)
	for _, v := range k {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return rb.fallback("operator has non-finite entries")
		}
	}
	copy(d.a, k)
	first := d.impl.Dgeev(lapack.LeftEVNone, lapack.RightEVCompute, n, d.a, n, d.wr, d.wi, nil, 1, rb.P, n, d.work, len(d.work))
	for j := range n {
		rb.Values[j] = complex(d.wr[j], d.wi[j])
	}
	for j := 0; j < n; j++ {
		rb.Pair[j] = -1
		if d.wi[j] > 0 && j+1 < n {
			rb.Pair[j], rb.Pair[j+1] = j+1, j
			j++
		}
	}
	if first > 0 {
		return rb.fallback(fmt.Sprintf("eigenvalue iteration did not converge (first valid index %d)", first))
	}
	copy(rb.PInv, rb.P)
	if !d.impl.Dgetrf(n, n, rb.PInv, n, d.ipiv) {
		return rb.fallback("eigenvector matrix is singular (defective operator)")
	}
	if !d.impl.Dgetri(n, rb.PInv, n, d.ipiv, d.work, len(d.work)) {
		return rb.fallback("eigenvector matrix is singular (defective operator)")
	}
	rb.Cond = norm1(rb.P, n) * norm1(rb.PInv, n)
	if !(rb.Cond <= d.Config.MaxCond) { // also catches NaN
		return rb.fallback(fmt.Sprintf("eigenvector matrix condition number %.3g exceeds %.3g (near-defective operator)", rb.Cond, d.Config.MaxCond))
	}
	return true
}

func (rb *RealBasis) fallback(reason string) bool {
	rb.Fallback, rb.Reason = true, reason
	return false
}

// norm1 is the maximum absolute column sum of an n×n row-major matrix.
func norm1(a []float64, n int) float64 {
	best := 0.0
	for j := range n {
		s := 0.0
		for i := range n {
			s += math.Abs(a[i*n+j])
		}
		if !(s <= best) {
			best = s
		}
	}
	return best
}

// PairAverage writes ε′ into dst ([N]): ε′_j = ε_j for a real eigenvalue and
// ε′_j = ε′_{j+1} = (ε_j + ε_{j+1})/2 for a conjugate pair (j, j+1), so that
// Re(U diag(ε) U⁻¹) = P diag(ε′) P⁻¹. dst may alias eps.
func (rb *RealBasis) PairAverage(dst, eps []float64) {
	for j := 0; j < rb.N; j++ {
		if p := rb.Pair[j]; p > j {
			m := 0.5 * (eps[j] + eps[p])
			dst[j], dst[p] = m, m
			j++
			continue
		}
		dst[j] = eps[j]
	}
}

// fallbackScale is ε̄ = Σ_j ε_j / √N, the scalar of the fallback generator.
func fallbackScale(eps []float64) float64 {
	s := 0.0
	for _, e := range eps {
		s += e
	}
	return s / math.Sqrt(float64(len(eps)))
}

// Shift writes the KFC++ latent shift Δg = σ(ε) g = Re(U diag(ε) U⁻¹) g into
// dst ([N]) in O(N²) without forming σ. g is [N], eps is ε ∈ R^N (one draw per
// eigen-direction, in LAPACK eigenvalue order). dst must not alias g. The
// shifted latent of the paper's Eq. symoptions is g + Δg. On Fallback,
// Δg = ε̄ g (see RealBasis.Fallback).
func (rb *RealBasis) Shift(dst, g, eps []float64) {
	n := rb.N
	if len(dst) != n || len(g) != n || len(eps) != n {
		panic(fmt.Sprintf("koopman: Shift: dst %d, g %d, eps %d, N %d", len(dst), len(g), len(eps), n))
	}
	rb.prepareShift(eps)
	rb.applyPrepared(dst, g, eps)
}

// prepareShift stores ε′ for a run of applyPrepared calls with the same ε.
func (rb *RealBasis) prepareShift(eps []float64) {
	if !rb.Fallback {
		rb.PairAverage(rb.eps, eps)
	}
}

// applyPrepared writes Δg = σ(ε) g into dst using the ε′ of prepareShift
// (eps is only read on Fallback).
func (rb *RealBasis) applyPrepared(dst, g, eps []float64) {
	if rb.Fallback {
		s := fallbackScale(eps)
		for i, v := range g {
			dst[i] = s * v
		}
		return
	}
	rb.applyDiag(dst, g, rb.eps)
}

// applyDiag computes dst = P diag(d) P⁻¹ g.
func (rb *RealBasis) applyDiag(dst, g, d []float64) {
	n := rb.N
	h := rb.h
	for k := range n {
		row := rb.PInv[k*n : (k+1)*n]
		s := 0.0
		for j, v := range row {
			s += v * g[j]
		}
		h[k] = s * d[k]
	}
	for i := range n {
		row := rb.P[i*n : (i+1)*n]
		s := 0.0
		for k, v := range row {
			s += v * h[k]
		}
		dst[i] = s
	}
}

// Sigma forms σ(ε) = Re(U diag(ε) U⁻¹) = P diag(ε′) P⁻¹ explicitly into dst
// ([N*N] row-major; allocated when nil) and returns it. O(N³). On Fallback it
// returns ε̄·I.
func (rb *RealBasis) Sigma(dst, eps []float64) []float64 {
	n := rb.N
	if len(eps) != n {
		panic(fmt.Sprintf("koopman: Sigma: eps has %d entries, N %d", len(eps), n))
	}
	if len(dst) < n*n {
		dst = make([]float64, n*n)
	}
	dst = dst[:n*n]
	clear(dst)
	if rb.Fallback {
		s := fallbackScale(eps)
		for i := range n {
			dst[i*n+i] = s
		}
		return dst
	}
	rb.PairAverage(rb.eps, eps)
	for i := range n {
		out := dst[i*n : (i+1)*n]
		for k := range n {
			c := rb.P[i*n+k] * rb.eps[k]
			if c == 0 {
				continue
			}
			for j, v := range rb.PInv[k*n : (k+1)*n] {
				out[j] += c * v
			}
		}
	}
	return dst
}

// KFCCoefficients writes the spectral coefficients of the KFC generator into c
// ([N]): c_j = |λ_j| − mean_k |λ_k|.
//
// Why this choice: the paper obtains the KFC generator from a Sylvester solve,
// and the authors' code solves K X − X K = I, which has no solution (tr of a
// commutator is 0); what comes back is a commuting matrix U diag(c) U⁻¹ whose c
// is set by round-off, rescaled by the mean of its entries (heavy-tailed
// norms). We instead construct a commuting generator explicitly with c a fixed,
// ordering-invariant function of the spectrum: |λ| is equal on a conjugate
// pair (so U diag(c) U⁻¹ is already real), smooth in K for a simple spectrum,
// bounded, and centring removes the trivial identity direction (pure latent
// scaling). The generator then moves slowly decaying and quickly decaying
// Koopman modes in opposite directions.
func (rb *RealBasis) KFCCoefficients(c []float64) {
	n := rb.N
	mean := 0.0
	for j := range n {
		c[j] = cmplx.Abs(rb.Values[j])
		mean += c[j]
	}
	mean /= float64(n)
	for j := range n {
		c[j] -= mean
	}
}

// KFCGenerator forms the KFC generator G = U diag(c) U⁻¹ / ‖·‖_F with c from
// KFCCoefficients, normalized to unit Frobenius norm, into dst ([N*N]
// row-major; allocated when nil) and returns it with ok = true. The KFC shift
// is then g + ε G g with one scalar ε per sample (paper Eq. symoptions, KFC),
// whereas the authors' code uses 1e-5·X/mean(X). When rb.Fallback is set, or
// all |λ_j| are equal (c = 0, e.g. an orthogonal K), it returns I/√N (which
// commutes with everything) and ok = false.
func (rb *RealBasis) KFCGenerator(dst []float64) (g []float64, ok bool) {
	n := rb.N
	if len(dst) < n*n {
		dst = make([]float64, n*n)
	}
	dst = dst[:n*n]
	if !rb.Fallback {
		c := rb.h // scratch; Sigma only uses rb.eps
		rb.KFCCoefficients(c)
		dst = rb.Sigma(dst, c)
		if f := frobenius(dst); f > 1e-12*float64(n) && !math.IsInf(f, 0) {
			for i := range dst {
				dst[i] /= f
			}
			return dst, true
		}
	}
	clear(dst)
	s := 1 / math.Sqrt(float64(n))
	for i := range n {
		dst[i*n+i] = s
	}
	return dst, false
}

func frobenius(a []float64) float64 {
	s := 0.0
	for _, v := range a {
		s += v * v
	}
	return math.Sqrt(s)
}

// ComplexEigen is the complex eigendecomposition K = U diag(Values) U⁻¹ in the
// paper's notation, for diagnostics and reference computations (the hot paths
// use RealBasis). U and UInv are [N*N] row-major; column j of U is the unit-norm
// right eigenvector of Values[j].
type ComplexEigen struct {
	N      int
	Values []complex128
	U      []complex128
	UInv   []complex128
}

// Complex converts the real basis into U and U⁻¹: U = P M and U⁻¹ = M⁻¹ P⁻¹
// with M as documented on RealBasis (for a pair, rows j and j+1 of U⁻¹ are
// (P⁻¹[j,:] ∓ i P⁻¹[j+1,:])/2). No complex inverse is needed. Only valid when
// the decomposition succeeded far enough to fill P and PInv.
func (rb *RealBasis) Complex() *ComplexEigen {
	n := rb.N
	ce := &ComplexEigen{N: n, Values: append([]complex128(nil), rb.Values...), U: make([]complex128, n*n), UInv: make([]complex128, n*n)}
	for j := 0; j < n; j++ {
		p := rb.Pair[j]
		if p < j { // real eigenvalue (p == -1); pairs are handled at their first index
			for i := range n {
				ce.U[i*n+j] = complex(rb.P[i*n+j], 0)
				ce.UInv[j*n+i] = complex(rb.PInv[j*n+i], 0)
			}
			continue
		}
		for i := range n {
			re, im := rb.P[i*n+j], rb.P[i*n+p]
			ce.U[i*n+j] = complex(re, im)
			ce.U[i*n+p] = complex(re, -im)
			a, b := rb.PInv[j*n+i], rb.PInv[p*n+i]
			ce.UInv[j*n+i] = complex(0.5*a, -0.5*b)
			ce.UInv[p*n+i] = complex(0.5*a, 0.5*b)
		}
		j++
	}
	return ce
}

// ReSigma computes σ(ε) = Re(U diag(ε) U⁻¹) by the literal complex product of
// the paper (O(N³) complex work; reference for tests and diagnostics) and
// returns it ([N*N] row-major) together with max |Im(U diag(ε′) U⁻¹)| for the
// pair-averaged ε′, which is zero up to round-off because that product is real.
func (ce *ComplexEigen) ReSigma(eps []float64) (sigma []float64, imagPairAveraged float64) {
	n := ce.N
	sigma = make([]float64, n*n)
	for i := range n {
		for j := range n {
			var s complex128
			for k := range n {
				s += ce.U[i*n+k] * complex(eps[k], 0) * ce.UInv[k*n+j]
			}
			sigma[i*n+j] = real(s)
		}
	}
	// Pair-averaged product: ε′ from the conjugate structure of Values.
	ep := append([]float64(nil), eps...)
	for j := 0; j < n; j++ {
		if imag(ce.Values[j]) > 0 && j+1 < n {
			m := 0.5 * (ep[j] + ep[j+1])
			ep[j], ep[j+1] = m, m
			j++
		}
	}
	for i := range n {
		for j := range n {
			var s complex128
			for k := range n {
				s += ce.U[i*n+k] * complex(ep[k], 0) * ce.UInv[k*n+j]
			}
			imagPairAveraged = math.Max(imagPairAveraged, math.Abs(imag(s)))
		}
	}
	return sigma, imagPairAveraged
}
