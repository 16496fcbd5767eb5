//go:build cgo && !purego

package blas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
#include <immintrin.h>

#include <pthread.h>

// OpenBLAS's own (exported) thread-pool shutdown; its next multi-threaded
// call starts the pool again from the calling thread.
extern void blas_thread_shutdown_(void);

// kq_sgemm is cblas_sgemm with MXCSR's flush-to-zero and denormals-are-zero
// bits set (ftz) or cleared for the call on the calling thread, restored
// before returning to Go (see onednn.go's KQ_FTZ_DAZ). OpenBLAS's worker
// threads cannot be reached per call: a new thread inherits its creator's
// MXCSR, so when GEMMs run on more than one thread and the pool was made
// under the other setting, the pool is shut down (under the write lock, no
// GEMM running) and OpenBLAS remakes it from inside this call's setting.
static pthread_rwlock_t kq_pool_lock = PTHREAD_RWLOCK_INITIALIZER;
static int kq_pool_ftz = -1; // the setting the current pool was made under; -1: unknown (made at load)

static void kq_sgemm(int ftz, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
		const float *b, int ldb, float beta, float *c, int ldc) {
	unsigned int old = _mm_getcsr();
	_mm_setcsr(ftz ? (old | 0x8040u) : (old & ~0x8040u));
	pthread_rwlock_rdlock(&kq_pool_lock);
	if (openblas_get_num_threads() > 1 && __atomic_load_n(&kq_pool_ftz, __ATOMIC_ACQUIRE) != ftz) {
		// Swap the read lock for the write lock; the GEMM below, the
		// first after the shutdown, remakes the pool while it is held, so
		// no other caller restarts it first.
		pthread_rwlock_unlock(&kq_pool_lock);
		pthread_rwlock_wrlock(&kq_pool_lock);
		if (kq_pool_ftz != ftz) {
			blas_thread_shutdown_();
			__atomic_store_n(&kq_pool_ftz, ftz, __ATOMIC_RELEASE);
		}
	}
	cblas_sgemm(CblasRowMajor, (enum CBLAS_TRANSPOSE)ta, (enum CBLAS_TRANSPOSE)tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
	pthread_rwlock_unlock(&kq_pool_lock);
	_mm_setcsr(old);
}

// kq_set_threads is openblas_set_num_threads. A larger count makes new pool
// threads from this (Go) thread, under Go's MXCSR, so the pool's setting is
// unknown again and the next multi-threaded GEMM remakes it.
static void kq_set_threads(int n) {
	pthread_rwlock_wrlock(&kq_pool_lock);
	openblas_set_num_threads(n);
	__atomic_store_n(&kq_pool_ftz, -1, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&kq_pool_lock);
}
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
	C.kq_set_threads(1)
}

func (openblas) gemm(_ Precision, _ int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := uint32(C.CblasNoTrans), uint32(C.CblasNoTrans)
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	ftz := C.int(0)
	if flushSubnormals.Load() {
		ftz = 1
	}
	C.kq_sgemm(ftz, C.int(ta), C.int(tb), C.int(m), C.int(n), C.int(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}

// flushes: kq_sgemm sets FTZ/DAZ on the calling thread and its pool.
func (openblas) flushes() bool { return true }

// OpenBLAS has no bf16 GEMM in Debian's build (cblas_sbgemm is not exported).
func (openblas) supports(p Precision) bool { return p == F32 }

func (openblas) setThreads(n int) { C.kq_set_threads(C.int(n)) }

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
