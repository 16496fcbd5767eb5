package blas

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// gonum is the pure-Go backend (gonum's blas32). It is always compiled in,
// as the fallback of last resort and as an independent reference in tests.
type gonum struct{}

func init() { register("gonum", gonum{}) }

func (gonum) gemm(_ Precision, _ int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac, br, bc := m, k, k, n
	if transA {
		ta, ar, ac = blas.Trans, k, m
	}
	if transB {
		tb, br, bc = blas.Trans, n, k
	}
	blas32.Gemm(ta, tb, alpha,
		blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta, blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

func (gonum) supports(p Precision) bool { return p == F32 }

// gonum parallelizes over GOMAXPROCS internally and ignores the thread count.
func (gonum) setThreads(int) {}

func (gonum) isa() string { return "Go (gonum SSE kernels)" }

func (gonum) kernel(Precision) string { return "gonum blas32 (pure Go)" }

// gonum runs in Go, whose MXCSR koopq leaves alone: subnormals are kept.
func (gonum) flushes() bool { return false }

// gonum has no fused bias/activation GEMM.
func (gonum) affine(Precision, int, int, int, int, []float32, []float32, []float32, []float32, Act) bool {
	return false
}
