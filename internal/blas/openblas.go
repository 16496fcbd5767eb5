//go:build cgo && !purego

package blas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import (
	"os"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// openblas calls cblas_sgemm. OpenBLAS is safe to call from several
// goroutines at once; its thread count is process-wide.
type openblas struct{}

func init() {
	register("openblas", openblas{})
	C.openblas_set_num_threads(1)
}

func (openblas) gemm(_ Precision, _ int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
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

// OpenBLAS has no bf16 GEMM in Debian's build (cblas_sbgemm is not exported).
func (openblas) supports(p Precision) bool { return p == F32 }

func (openblas) setThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// isa is OpenBLAS's core type, e.g. "Haswell" (AVX2) or "Cooperlake" (AVX-512).
func (openblas) isa() string { return C.GoString(C.openblas_get_corename()) }

// kernel reports OpenBLAS's core type and whether OPENBLAS_CORETYPE forced it.
func (o openblas) kernel(Precision) string {
	core := o.isa()
	if v, ok := os.LookupEnv("OPENBLAS_CORETYPE"); ok {
		return "OpenBLAS sgemm, core " + core + " (OPENBLAS_CORETYPE=" + v + ")"
	}
	return "OpenBLAS sgemm, core " + core + " (auto-detected)"
}

// warning reports OpenBLAS's fallback to a pre-AVX kernel on a CPU with
// AVX2 (see openblasWarning).
func (o openblas) warning() string {
	_, set := os.LookupEnv("OPENBLAS_CORETYPE")
	return openblasWarning(o.isa(), set, cpu.X86.HasAVX2)
}

// openblas has no fused bias/activation GEMM.
func (openblas) affine(Precision, int, int, int, int, []float32, []float32, []float32, []float32, Act) bool {
	return false
}
