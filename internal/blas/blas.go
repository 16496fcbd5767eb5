// Package blas is koopq's single entry point for float32 matrix multiplication.
//
// Every GEMM in the networks goes through Gemm. The default build calls
// OpenBLAS's cblas_sgemm through cgo (Debian package libopenblas-dev); building
// with -tags purego (or with CGO_ENABLED=0) uses gonum's pure-Go blas32 instead,
// which is 7-13x slower but needs no C library.
//
// OpenBLAS picks its kernel when the library loads, from the environment
// variable OPENBLAS_CORETYPE; Kernel reports which one is in use so benchmarks
// can say what they measured.
package blas

import "fmt"

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32 matrices,
// where op(X) is X or Xᵀ (transA, transB). op(A) is [m, k], op(B) is [k, n],
// C is [m, n]; lda, ldb, ldc are the row strides of A, B and C as stored.
// It panics on slices too short for the given shapes (a programming error).
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if lda < max(ac, 1) || ldb < max(bc, 1) || ldc < max(n, 1) {
		panic(fmt.Sprintf("blas: bad leading dimensions lda=%d ldb=%d ldc=%d for m=%d n=%d k=%d", lda, ldb, ldc, m, n, k))
	}
	if (ar > 0 && len(a) < (ar-1)*lda+ac) || (br > 0 && len(b) < (br-1)*ldb+bc) || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("blas: slice too short: len(a)=%d len(b)=%d len(c)=%d for m=%d n=%d k=%d", len(a), len(b), len(c), m, n, k))
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] *= beta
			}
		}
		return
	}
	gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// MatMul is Gemm with alpha = 1 and tight strides: C = op(A)·op(B) (+ C if accumulate).
func MatMul(transA, transB bool, m, n, k int, a, b, c []float32, accumulate bool) {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	beta := float32(0)
	if accumulate {
		beta = 1
	}
	Gemm(transA, transB, m, n, k, 1, a, lda, b, ldb, beta, c, n)
}
