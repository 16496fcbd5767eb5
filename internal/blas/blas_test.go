package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func naive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			c[i*ldc+j] = alpha*float32(s) + beta*c[i*ldc+j]
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func TestGemmMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ m, n, k int }{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 1, 40}, {5, 6, 0}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				ar, ac := tc.m, tc.k
				if ta {
					ar, ac = tc.k, tc.m
				}
				br, bc := tc.k, tc.n
				if tb {
					br, bc = tc.n, tc.k
				}
				lda, ldb, ldc := ac+2, bc+1, tc.n+3
				a := randSlice(r, max(ar*lda, 1))
				b := randSlice(r, max(br*ldb, 1))
				c := randSlice(r, tc.m*ldc)
				want := append([]float32(nil), c...)
				naive(ta, tb, tc.m, tc.n, tc.k, 0.7, a, lda, b, ldb, 0.3, want, ldc)
				Gemm(ta, tb, tc.m, tc.n, tc.k, 0.7, a, lda, b, ldb, 0.3, c, ldc)
				for i := range c {
					if d := math.Abs(float64(c[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("%v ta=%v tb=%v: c[%d]=%v want %v", tc, ta, tb, i, c[i], want[i])
					}
				}
			}
		}
	}
}

func TestGemmPanicsOnShortSlices(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("expected panic for short slice")
		}
	}()
	MatMul(false, false, 4, 4, 4, make([]float32, 15), make([]float32, 16), make([]float32, 16), false)
}

// BenchmarkGemm reports GFLOP/s of the shapes that dominate a CQL step.
func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct {
		name    string
		ta, tb  bool
		m, n, k int
	}{
		{"fwd-7936x256x256", false, false, 7936, 256, 256},
		{"dW-256x256x7936", true, false, 256, 256, 7936},
		{"dX-7936x256x256", false, true, 7936, 256, 256},
		{"fwd-256x256x256", false, false, 256, 256, 256},
	} {
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", s.name, th), func(b *testing.B) {
				SetThreads(th)
				defer SetThreads(1)
				a := randSlice(r, s.m*s.k)
				bb := randSlice(r, s.k*s.n)
				c := make([]float32, s.m*s.n)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					MatMul(s.ta, s.tb, s.m, s.n, s.k, a, bb, c, false)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				b.Logf("backend %s kernel %s", Backend(), Kernel())
			})
		}
	}
}
