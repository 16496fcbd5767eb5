//go:build cgo && !purego

package blas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
#include <stdlib.h>
*/
import "C"

import (
	"os"
	"unsafe"
)

func gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// SetThreads sets the number of threads OpenBLAS uses inside one GEMM call.
// koopq defaults to 1 and parallelizes independent networks in Go instead.
func SetThreads(n int) {
	if n < 1 {
		n = 1
	}
	C.openblas_set_num_threads(C.int(n))
}

// Threads returns OpenBLAS's current thread count.
func Threads() int { return int(C.openblas_get_num_threads()) }

// Backend names the GEMM implementation in use.
func Backend() string { return "openblas" }

// Kernel reports OpenBLAS's core type (the kernel family it dispatches to),
// e.g. "Haswell" or "Cooperlake", and whether OPENBLAS_CORETYPE forced it.
func Kernel() string {
	core := C.GoString(C.openblas_get_corename())
	if v, ok := os.LookupEnv("OPENBLAS_CORETYPE"); ok {
		return core + " (OPENBLAS_CORETYPE=" + v + ")"
	}
	return core + " (auto-detected)"
}

func init() { SetThreads(1) }
