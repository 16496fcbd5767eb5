package augment

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
)

// KFC++ and KFC shift E(s_t) and E(s_{t+1}) with one and the same σ, the
// one of the transition's own action a_t: for every row, the latent shifts
// are σ E(s_t) and σ E(s_{t+1}) with σ = Re(U diag(ε) U⁻¹) from an
// independent eigendecomposition (gonum) of K(a_t) and the row's ε (KFC++),
// or σ = ε G with G commuting with K(a_t) (KFC); on the cached and on the
// per-batch path.
func TestSameSigmaShiftsBothStates(t *testing.T) {
	const S, A, N, B = 3, 2, 6, 10
	rng := rand.New(rand.NewPCG(12, 1))
	d := dataset.Synthetic(S, A, 40, rng)
	mc := koopman.DefaultModelConfig(S, A)
	mc.Hidden, mc.Latent, mc.Seed = []int{16}, N, 7
	m, err := koopman.NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	k0, ks := m.Operators()
	b := dataset.NewBatch(B, S, A)
	for i := 0; i < B; i++ {
		j := 3*i + 1
		b.Idx[i] = j
		copy(b.Obs[i*S:(i+1)*S], d.Observations[j*S:(j+1)*S])
		copy(b.NextObs[i*S:(i+1)*S], d.NextObservations[j*S:(j+1)*S])
		copy(b.Act[i*A:(i+1)*A], d.Actions[j*A:(j+1)*A])
	}
	for _, name := range []string{"kfc++", "kfc"} {
		for _, cache := range []int64{GiB, 0} {
			o := DefaultOptions()
			o.Dataset, o.Model, o.KoopmanProb, o.ShiftSigma, o.CacheGiB = d, m, 1, 30, float64(cache)/float64(GiB)
			k, err := NewKoopman(name, o)
			if err != nil {
				t.Fatal(err)
			}
			obs, next := make([]float32, B*S), make([]float32, B*S)
			if err := k.Augment(b, obs, next, rand.New(rand.NewPCG(3, 3)), nil); err != nil {
				t.Fatal(err)
			}
			if k.Stats().Fallbacks != 0 {
				t.Fatalf("%s: %d fallback rows; the test needs decomposable K(a)", name, k.Stats().Fallbacks)
			}
			for i := 0; i < B; i++ {
				a := make([]float64, A)
				for c := range a {
					a[c] = float64(d.Actions[b.Idx[i]*A+c])
				}
				K := mat.NewDense(N, N, koopman.OperatorAt(nil, k0, ks, a))
				var sigma *mat.Dense
				if name == "kfc++" {
					sigma = reSigma(t, K, k.eps[i*N:(i+1)*N])
				} else {
					sigma = kfcSigma(t, K, k.eps[i])
				}
				for v, what := range []string{"s_t", "s_{t+1}"} {
					row := v*B + i
					g := make([]float64, N)
					for c := range g {
						g[c] = float64(k.g[row*N+c])
					}
					want := mat.NewVecDense(N, nil)
					want.MulVec(sigma, mat.NewVecDense(N, g))
					scale, diff := 0.0, 0.0
					for c := 0; c < N; c++ {
						got := float64(k.lat[row*N+c]) - g[c]
						scale = math.Max(scale, math.Abs(want.AtVec(c)))
						diff = math.Max(diff, math.Abs(got-want.AtVec(c)))
					}
					if !(scale > 1e-4) || diff > 1e-5+1e-3*scale {
						t.Errorf("%s cache %d row %d: shift of E(%s) differs from σ_{a_t}E(%s) by %.3g (size %.3g)", name, cache, i, what, what, diff, scale)
					}
				}
			}
		}
	}
}

// reSigma is Re(U diag(ε) U⁻¹) for K = U Λ U⁻¹.
func reSigma(t *testing.T, K *mat.Dense, eps []float64) *mat.Dense {
	t.Helper()
	var eig mat.Eigen
	if !eig.Factorize(K, mat.EigenRight) {
		t.Fatal("eigendecomposition failed")
	}
	n, _ := K.Dims()
	var U mat.CDense
	eig.VectorsTo(&U)
	// U⁻¹ by solving U X = I in complex arithmetic (Gauss–Jordan, partial pivoting).
	inv := complexInverse(t, &U, n)
	s := mat.NewDense(n, n, nil)
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			var v complex128
			for j := 0; j < n; j++ {
				v += U.At(r, j) * complex(eps[j], 0) * inv[j][c]
			}
			s.Set(r, c, real(v))
		}
	}
	return s
}

func complexInverse(t *testing.T, U *mat.CDense, n int) [][]complex128 {
	t.Helper()
	a := make([][]complex128, n)
	for r := range a {
		a[r] = make([]complex128, 2*n)
		for c := 0; c < n; c++ {
			a[r][c] = U.At(r, c)
		}
		a[r][n+r] = 1
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if cmplx.Abs(a[r][c]) > cmplx.Abs(a[p][c]) {
				p = r
			}
		}
		if cmplx.Abs(a[p][c]) < 1e-12 {
			t.Fatal("singular eigenvector matrix")
		}
		a[c], a[p] = a[p], a[c]
		piv := a[c][c]
		for j := range a[c] {
			a[c][j] /= piv
		}
		for r := 0; r < n; r++ {
			if r == c {
				continue
			}
			f := a[r][c]
			for j := range a[r] {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	inv := make([][]complex128, n)
	for r := range inv {
		inv[r] = a[r][n:]
	}
	return inv
}

// kfcSigma is ε·G with G the KFC generator of K, checked to commute with K.
func kfcSigma(t *testing.T, K *mat.Dense, eps float64) *mat.Dense {
	t.Helper()
	n, _ := K.Dims()
	rb := koopman.NewRealBasis(n)
	if !koopman.NewDecomposer(n, koopman.DefaultSymmetryConfig()).Decompose(rb, K.RawMatrix().Data) {
		t.Fatal("decomposition fell back")
	}
	G, _ := rb.KFCGenerator(nil)
	g := mat.NewDense(n, n, G)
	var gk, kg mat.Dense
	gk.Mul(g, K)
	kg.Mul(K, g)
	kg.Sub(&gk, &kg)
	if c := mat.Norm(&kg, 2) / (mat.Norm(g, 2) * mat.Norm(K, 2)); c > 1e-8 {
		t.Fatalf("KFC generator does not commute with K(a_t): ‖[G, K]‖ relative %.3g", c)
	}
	g.Scale(eps, g)
	return g
}
