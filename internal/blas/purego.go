//go:build !cgo || purego

package blas

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

func gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
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

var threads = 1

// SetThreads records the requested thread count; the pure-Go backend uses
// GOMAXPROCS internally and ignores it.
func SetThreads(n int) { threads = max(n, 1) }

// Threads returns the value last passed to SetThreads.
func Threads() int { return threads }

// Backend names the GEMM implementation in use.
func Backend() string { return "gonum (pure Go)" }

// Kernel describes the kernel family: gonum's SSE-assembly kernels.
func Kernel() string { return "gonum blas32" }
