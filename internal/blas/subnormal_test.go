package blas

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A GEMM whose inputs are subnormal (1e-39) or whose products are
// (1e-20 · 1e-20): with subnormals flushed, the cgo backends read such
// inputs as 0 and write such results as 0; kept, they give the IEEE values.
// gonum (pure Go) always keeps them. Also with 2 threads per GEMM (oneDNN's
// OpenMP team must flush too: every row of the output comes out 0), and Go
// arithmetic on the same OS thread right after the GEMM still makes
// subnormals (the MXCSR bits do not leak back into Go).
func TestSubnormalsFlushedInGEMM(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer SetFlushSubnormals(FlushSubnormals())
	defer SetThreads(Threads())
	const m, n, k = 512, 512, 64 // large enough for both backends to split it over 2 threads
	for _, be := range Available() {
		for _, threads := range []int{1, 2} {
			for _, flush := range []bool{true, false} {
				use(t, be, F32)
				SetThreads(threads)
				SetFlushSubnormals(flush)
				wantZero := flush && be != "gonum"
				if got := Describe().Subnormals; got != map[bool]string{true: "flushed", false: "kept"}[wantZero] {
					t.Errorf("%s flush=%v: Describe().Subnormals = %q", be, flush, got)
				}
				// Subnormal input: A = 1e-39 everywhere, B = 1e30: IEEE gives 64e-9.
				a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
				for i := range a {
					a[i] = 1e-39
				}
				for i := range b {
					b[i] = 1e30
				}
				MatMul(false, false, m, n, k, a, b, c, false)
				// Subnormal products: 1e-20 · 1e-20 = 1e-40 per term, 64 terms.
				for i := range a {
					a[i], b[i] = 1e-20, 1e-20
				}
				c2 := make([]float32, m*n)
				MatMul(false, false, m, n, k, a, b, c2, false)
				for i := range c {
					if wantZero && (c[i] != 0 || c2[i] != 0) {
						t.Fatalf("%s, %d threads, flushed: C[%d] = %g (subnormal input), %g (subnormal products), want 0", be, threads, i, c[i], c2[i])
					}
					if !wantZero && (c[i] < 6e-8 || c[i] > 7e-8 || c2[i] == 0) {
						t.Fatalf("%s, %d threads, kept: C[%d] = %g (want ≈ 6.4e-8), %g (want ≈ 6.4e-39)", be, threads, i, c[i], c2[i])
					}
				}
				if y := b[0] * b[1]; y == 0 { // 1e-40, made by Go code
					t.Fatalf("%s, %d threads, flush=%v: Go arithmetic flushed a subnormal after the GEMM (MXCSR leaked)", be, threads, flush)
				}
			}
		}
	}
}

// Growing the thread count after a flushed GEMM (OpenBLAS then starts new
// pool threads from a Go thread, under Go's MXCSR) must still flush on
// every thread.
func TestSubnormalsFlushedAfterMoreThreads(t *testing.T) {
	defer SetFlushSubnormals(FlushSubnormals())
	defer SetThreads(Threads())
	const m, n, k = 512, 512, 64
	// OpenBLAS first: growing its pool while another backend is in use
	// would already be undone by the remake its first flushed GEMM makes.
	for _, be := range []string{"openblas", "onednn"} {
		if !slices.Contains(Available(), be) {
			continue
		}
		use(t, be, F32)
		SetFlushSubnormals(true)
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = 1e-39
		}
		for i := range b {
			b[i] = 1e30
		}
		for _, threads := range []int{2, 12} { // 12: more than any pool so far (no other test uses it)
			SetThreads(threads)
			c := make([]float32, m*n)
			MatMul(false, false, m, n, k, a, b, c, false)
			for i, v := range c {
				if v != 0 {
					t.Fatalf("%s, %d threads (after %s): C[%d] = %g, want 0 (subnormal input flushed)", be, threads,
						map[int]string{2: "1", 12: "a flushed GEMM on 2"}[threads], i, v)
				}
			}
		}
	}
}

// BenchmarkGemmSubnormal is the weight-gradient GEMM of a CQL critic
// (Aᵀ·B, 256×256×7936, one thread) with a fraction of B's entries (the
// output gradient) subnormal, as CQL's logsumexp weights make them, per
// cgo backend, with subnormals flushed and kept. Metric: GFLOP/s.
func BenchmarkGemmSubnormal(b *testing.B) {
	defer SetFlushSubnormals(FlushSubnormals())
	defer SetThreads(Threads())
	SetThreads(1)
	const m, n, k = 256, 256, 7936
	rng := rand.New(rand.NewPCG(1, 2))
	x := randSlice(rng, k*m)
	for _, be := range Available() {
		if be == "gonum" {
			continue
		}
		for _, frac := range []float64{0, 0.01} {
			for _, flush := range []bool{true, false} {
				name := fmt.Sprintf("%s/subnormal-%g%%/%s", be, 100*frac, map[bool]string{true: "flushed", false: "kept"}[flush])
				b.Run(name, func(b *testing.B) {
					use(b, be, F32)
					SetFlushSubnormals(flush)
					d := make([]float32, k*n)
					for i := range d {
						d[i] = float32(rng.NormFloat64()) * 1e-3
						if rng.Float64() < frac {
							d[i] = 1e-40
						}
					}
					c := make([]float32, m*n)
					MatMul(true, false, m, n, k, x, d, c, false)
					b.ResetTimer()
					for range b.N {
						MatMul(true, false, m, n, k, x, d, c, false)
					}
					b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// KOOPQ_SUBNORMALS: flush (or unset) and keep set the mode at Configure;
// anything else is an error that names the variable and changes nothing.
func TestSubnormalsEnv(t *testing.T) {
	be, p := Backend(), CurrentPrecision()
	defer func() { _ = Configure(be, p.String()) }()
	for _, tc := range []struct {
		v    string
		want bool
	}{{"", true}, {"flush", true}, {"keep", false}} {
		t.Setenv(EnvSubnormals, tc.v)
		if err := Configure(be, p.String()); err != nil {
			t.Fatalf("%s=%q: %v", EnvSubnormals, tc.v, err)
		}
		if FlushSubnormals() != tc.want {
			t.Errorf("%s=%q: FlushSubnormals() = %v, want %v", EnvSubnormals, tc.v, FlushSubnormals(), tc.want)
		}
	}
	t.Setenv(EnvSubnormals, "flsh")
	err := Configure(be, p.String())
	if err == nil || !strings.Contains(err.Error(), EnvSubnormals) {
		t.Fatalf("%s=flsh: got %v, want an error naming the variable", EnvSubnormals, err)
	}
	if FlushSubnormals() {
		t.Error("a rejected Configure changed the setting (it was keep)")
	}
}
