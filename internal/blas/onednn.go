//go:build cgo && !purego && !nodnnl

package blas

// The oneDNN backend, and why it is shaped this way:
//
//   - oneDNN 2.6's matmul is a primitive: op descriptor → primitive descriptor
//     (JIT-compiles a kernel for one exact shape) → primitive. Creating one
//     costs milliseconds, executing one costs the GEMM, so primitives are
//     cached per (shape, strides, transposes, precision, alpha, beta, threads,
//     fused bias and activation post-ops).
//   - Memory objects hold a data pointer, so they are per caller, not shared.
//     Everything a caller needs (stream, primitives, memory objects, the
//     scratchpad and the bf16 conversion buffers) lives in a slot; a call
//     borrows a free slot, so two goroutines (the twin critics) never share
//     one and never wait for each other. Slots are created on demand: as many
//     as the largest number of concurrent callers, then reused.
//   - cgo pointer rules: the Go slices a, b, c are pinned by cgo for the
//     duration of the one C call that executes the primitive; C stores them in
//     the memory objects only inside that call and clears them before it
//     returns. Scratchpads and bf16 buffers are C memory owned by the slot,
//     grown when a larger primitive is created, never per call.
//   - Threads: Debian's oneDNN uses OpenMP, whose thread count is a per-OS-
//     thread setting, so each C call sets it (omp_set_num_threads) for the OS
//     thread it runs on before creating or executing a primitive.
//   - bf16: oneDNN's matmul needs both inputs in bf16, so a cached reorder
//     primitive converts each f32 input (round to nearest even) into the slot's
//     buffer, keeping its orientation; the matmul accumulates in f32. Callers
//     that reuse an operand (nn's layers) round it once themselves
//     (kq_to_bf16 and its fused ReLU / gradient variants, AVX512_BF16's
//     VCVTNEPS2BF16) and pass the bf16 data (GemmBF16, AffineBF16): the same
//     primitive then runs without the reorders.

/*
#cgo CFLAGS: -fopenmp
#cgo LDFLAGS: -ldnnl -lgomp
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdint.h>
#include <omp.h>
#include <immintrin.h>
#include <oneapi/dnnl/dnnl.h>

typedef struct {
	dnnl_primitive_t mm, ra, rb;
	dnnl_memory_t src, wei, dst, smm, a32, b32, sra, srb, bia;
	size_t scratch, abytes, bbytes;
	int bf16;
	char impl[64];
	char err[160];
} kq_mm;

static dnnl_engine_t kq_engine;

static int kq_init(void) { return (int)dnnl_engine_create(&kq_engine, dnnl_cpu, 0); }

static int kq_stream(dnnl_stream_t *s) { return (int)dnnl_stream_create(s, kq_engine, dnnl_stream_default_flags); }

// kq_md describes a logical [rows, cols] matrix stored row-major with row
// stride ld, or (trans) stored as its transpose [cols, rows] with row stride ld.
static void kq_md(dnnl_memory_desc_t *md, int64_t rows, int64_t cols, int trans, int64_t ld, dnnl_data_type_t dt) {
	dnnl_dims_t dims = {rows, cols};
	dnnl_dims_t strides = {ld, 1};
	if (trans) { strides[0] = 1; strides[1] = ld; }
	dnnl_memory_desc_init_by_strides(md, 2, dims, dt, strides);
}

static size_t kq_scratch(dnnl_primitive_desc_t pd, dnnl_memory_t *mem, int *st) {
	const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	size_t sz = smd ? dnnl_memory_desc_get_size(smd) : 0;
	*mem = NULL;
	if (sz > 0 && *st == 0) *st = (int)dnnl_memory_create(mem, smd, kq_engine, DNNL_MEMORY_NONE);
	return sz;
}

static int kq_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to, dnnl_primitive_t *p, dnnl_memory_t *sm, size_t *scratch) {
	dnnl_primitive_attr_t attr;
	dnnl_primitive_desc_t pd;
	int st = (int)dnnl_primitive_attr_create(&attr);
	if (st) return st;
	dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
	st = (int)dnnl_reorder_primitive_desc_create(&pd, from, kq_engine, to, kq_engine, attr);
	dnnl_primitive_attr_destroy(attr);
	if (st) return st;
	size_t sz = kq_scratch(pd, sm, &st);
	if (sz > *scratch) *scratch = sz;
	if (!st) st = (int)dnnl_primitive_create(p, pd);
	dnnl_primitive_desc_destroy(pd);
	return st;
}

static void kq_destroy(kq_mm *e) {
	dnnl_primitive_t ps[3] = {e->mm, e->ra, e->rb};
	for (int i = 0; i < 3; i++) if (ps[i]) dnnl_primitive_destroy(ps[i]);
	dnnl_memory_t ms[9] = {e->src, e->wei, e->dst, e->smm, e->a32, e->b32, e->sra, e->srb, e->bia};
	for (int i = 0; i < 9; i++) if (ms[i]) dnnl_memory_destroy(ms[i]);
	memset(e, 0, sizeof *e);
}

// kq_create builds the primitives and (handle-less) memory objects for
// C[m,n] = act(alpha·op(A)[m,k]·op(B)[k,n] (+ bias[n] if bias) (+ C if sum))
// with act 0 = none, 1 = ReLU, 2 = tanh. Returns a dnnl status.
static int kq_create(kq_mm *e, int bf16, int ta, int tb, int64_t m, int64_t n, int64_t k,
		int64_t lda, int64_t ldb, int64_t ldc, float alpha, int sum, int bias, int act, int nthr) {
	omp_set_num_threads(nthr);
	memset(e, 0, sizeof *e);
	e->bf16 = bf16;
	dnnl_memory_desc_t a32, b32, c32, a16, b16;
	kq_md(&a32, m, k, ta, lda, dnnl_f32);
	kq_md(&b32, k, n, tb, ldb, dnnl_f32);
	kq_md(&c32, m, n, 0, ldc, dnnl_f32);
	const dnnl_memory_desc_t *src = &a32, *wei = &b32;
	if (bf16) {
		kq_md(&a16, m, k, ta, ta ? m : k, dnnl_bf16);
		kq_md(&b16, k, n, tb, tb ? k : n, dnnl_bf16);
		src = &a16;
		wei = &b16;
		e->abytes = dnnl_memory_desc_get_size(&a16);
		e->bbytes = dnnl_memory_desc_get_size(&b16);
	}
	dnnl_primitive_attr_t attr;
	int st = (int)dnnl_primitive_attr_create(&attr);
	if (st) return st;
	dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
	if (alpha != 1.0f) st = (int)dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha);
	if (!st && (sum || act)) {
		dnnl_post_ops_t po;
		st = (int)dnnl_post_ops_create(&po);
		if (!st && sum) st = (int)dnnl_post_ops_append_sum(po, 1.0f);
		if (!st && act) st = (int)dnnl_post_ops_append_eltwise(po, 1.0f, act == 1 ? dnnl_eltwise_relu : dnnl_eltwise_tanh, 0.0f, 0.0f);
		if (!st) st = (int)dnnl_primitive_attr_set_post_ops(attr, po);
		dnnl_post_ops_destroy(po);
	}
	dnnl_memory_desc_t bi32;
	kq_md(&bi32, 1, n, 0, n, dnnl_f32);
	dnnl_matmul_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	if (!st) st = (int)dnnl_matmul_desc_init(&d, src, wei, bias ? &bi32 : NULL, &c32);
	if (!st) st = (int)dnnl_primitive_desc_create(&pd, &d, attr, kq_engine, NULL);
	dnnl_primitive_attr_destroy(attr);
	if (st) { snprintf(e->err, sizeof e->err, "matmul primitive descriptor"); return st; }
	const char *impl = NULL;
	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
		snprintf(e->impl, sizeof e->impl, "%s", impl);
	e->scratch = kq_scratch(pd, &e->smm, &st);
	if (!st) st = (int)dnnl_primitive_create(&e->mm, pd);
	dnnl_primitive_desc_destroy(pd);
	if (!st) st = (int)dnnl_memory_create(&e->src, src, kq_engine, DNNL_MEMORY_NONE);
	if (!st) st = (int)dnnl_memory_create(&e->wei, wei, kq_engine, DNNL_MEMORY_NONE);
	if (!st) st = (int)dnnl_memory_create(&e->dst, &c32, kq_engine, DNNL_MEMORY_NONE);
	if (!st && bias) st = (int)dnnl_memory_create(&e->bia, &bi32, kq_engine, DNNL_MEMORY_NONE);
	if (!st && bf16) {
		st = kq_reorder(&a32, &a16, &e->ra, &e->sra, &e->scratch);
		if (!st) st = kq_reorder(&b32, &b16, &e->rb, &e->srb, &e->scratch);
		if (!st) st = (int)dnnl_memory_create(&e->a32, &a32, kq_engine, DNNL_MEMORY_NONE);
		if (!st) st = (int)dnnl_memory_create(&e->b32, &b32, kq_engine, DNNL_MEMORY_NONE);
		if (st) snprintf(e->err, sizeof e->err, "f32->bf16 reorder");
	}
	if (st) kq_destroy(e);
	return st;
}

static int kq_run(dnnl_primitive_t p, dnnl_stream_t s, dnnl_memory_t from, int fromArg, dnnl_memory_t to, int toArg,
		dnnl_memory_t w, dnnl_memory_t bia, dnnl_memory_t sm, void *scr) {
	dnnl_exec_arg_t args[5];
	int n = 0;
	args[n].arg = fromArg; args[n].memory = from; n++;
	args[n].arg = toArg; args[n].memory = to; n++;
	if (w) { args[n].arg = DNNL_ARG_WEIGHTS; args[n].memory = w; n++; }
	if (bia) { args[n].arg = DNNL_ARG_BIAS; args[n].memory = bia; n++; }
	if (sm) { dnnl_memory_set_data_handle(sm, scr); args[n].arg = DNNL_ARG_SCRATCHPAD; args[n].memory = sm; n++; }
	return (int)dnnl_primitive_execute(p, s, n, args);
}

// MXCSR's flush-to-zero (bit 15: subnormal results become 0) and
// denormals-are-zero (bit 6: subnormal inputs read as 0) bits. On Intel
// CPUs an AVX-512 FMA that meets a subnormal takes a microcode assist of
// ~100 cycles: CQL's logsumexp weights underflow to subnormals once Q at
// random actions sits ~90 below the rest, and 1% of subnormal entries in
// an output gradient made a 256×256×7936 GEMM 22× slower (docs/performance.md).
#define KQ_FTZ_DAZ 0x8040u

// kq_csr_enter sets (ftz) or clears the two bits for this call on the
// calling thread, and with nthr > 1 on every thread of its OpenMP team
// (the team's threads run only oneDNN code, so their setting is simply
// left for the next call to renew). It returns the caller's MXCSR, which
// the caller restores before returning to Go.
static unsigned int kq_csr_enter(int ftz, int nthr) {
	unsigned int old = _mm_getcsr();
	unsigned int want = ftz ? (old | KQ_FTZ_DAZ) : (old & ~KQ_FTZ_DAZ);
	_mm_setcsr(want);
	if (nthr > 1) {
		#pragma omp parallel num_threads(nthr)
		_mm_setcsr((_mm_getcsr() & ~KQ_FTZ_DAZ) | (want & KQ_FTZ_DAZ));
		_mm_setcsr(want);
	}
	return old;
}

// kq_exec runs one cached GEMM on Go memory a, b, c (pinned by cgo for this
// call) with the slot's C buffers; every Go pointer is cleared before return.
//
// With a16 and b16 (bf16 primitives only) the inputs are already rounded to
// bf16 (kq_to_bf16, tight strides): they are used directly and the f32
// reorders are skipped.
static int kq_exec(kq_mm *e, dnnl_stream_t s, void *scr, void *abuf, void *bbuf,
		const float *a, const float *b, const void *a16, const void *b16, const float *bias, float *c, int nthr, int ftz) {
	omp_set_num_threads(nthr);
	unsigned int csr = kq_csr_enter(ftz, nthr);
	int st = 0;
	if (e->bf16 && a16) {
		dnnl_memory_set_data_handle(e->src, (void *)a16);
		dnnl_memory_set_data_handle(e->wei, (void *)b16);
	} else if (e->bf16) {
		dnnl_memory_set_data_handle(e->a32, (void *)a);
		dnnl_memory_set_data_handle(e->src, abuf);
		st = kq_run(e->ra, s, e->a32, DNNL_ARG_FROM, e->src, DNNL_ARG_TO, NULL, NULL, e->sra, scr);
		dnnl_memory_set_data_handle(e->b32, (void *)b);
		dnnl_memory_set_data_handle(e->wei, bbuf);
		if (!st) st = kq_run(e->rb, s, e->b32, DNNL_ARG_FROM, e->wei, DNNL_ARG_TO, NULL, NULL, e->srb, scr);
	} else {
		dnnl_memory_set_data_handle(e->src, (void *)a);
		dnnl_memory_set_data_handle(e->wei, (void *)b);
	}
	dnnl_memory_set_data_handle(e->dst, c);
	if (e->bia) dnnl_memory_set_data_handle(e->bia, (void *)bias);
	if (!st) st = kq_run(e->mm, s, e->src, DNNL_ARG_SRC, e->dst, DNNL_ARG_DST, e->wei, e->bia, e->smm, scr);
	if (!st) st = (int)dnnl_stream_wait(s);
	dnnl_memory_t ms[6] = {e->src, e->wei, e->dst, e->a32, e->b32, e->bia};
	for (int i = 0; i < 6; i++) if (ms[i]) dnnl_memory_set_data_handle(ms[i], DNNL_MEMORY_NONE);
	_mm_setcsr(csr);
	return st;
}

// kq_to_bf16 rounds n floats to bf16 bits (round to nearest even; NaN stays
// NaN, made quiet, as VCVTNEPS2BF16 and oneDNN's reorder do), with the
// AVX512_BF16 instruction where the CPU has it. That instruction flushes
// subnormal inputs to zero, which changes no GEMM: VDPBF16PS, the bf16 dot
// product of oneDNN's kernels, treats subnormal inputs as zero too.
__attribute__((target("avx512f,avx512bw,avx512bf16,avx512vl")))
static void kq_to_bf16_avx512(uint16_t *dst, const float *src, int64_t n) {
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m256bh h = _mm512_cvtneps_pbh(_mm512_loadu_ps(src + i));
		_mm256_storeu_si256((__m256i *)(dst + i), (__m256i)h);
	}
	if (i < n) {
		__mmask16 m = (__mmask16)((1u << (n - i)) - 1);
		__m256bh h = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, src + i));
		_mm256_mask_storeu_epi16(dst + i, m, (__m256i)h);
	}
}


// kq_relu_to_bf16: y = max(0, y) in place, keeping NaN and −0 (VMAXPS
// returns its second operand, y, when either is NaN or both are zero), and
// h = bf16(y): nn's ReLU and the next layer's input rounding in one pass.
__attribute__((target("avx512f,avx512bw,avx512bf16,avx512vl")))
static void kq_relu_to_bf16_avx512(float *y, uint16_t *h, int64_t n) {
	const __m512 z = _mm512_setzero_ps();
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 v = _mm512_max_ps(z, _mm512_loadu_ps(y + i));
		_mm512_storeu_ps(y + i, v);
		_mm256_storeu_si256((__m256i *)(h + i), (__m256i)_mm512_cvtneps_pbh(v));
	}
	if (i < n) {
		__mmask16 m = (__mmask16)((1u << (n - i)) - 1);
		__m512 v = _mm512_max_ps(z, _mm512_maskz_loadu_ps(m, y + i));
		_mm512_mask_storeu_ps(y + i, m, v);
		_mm256_mask_storeu_epi16(h + i, m, (__m256i)_mm512_cvtneps_pbh(v));
	}
}

// kq_grad_to_bf16: for each row of d [rows, cols]: with relu, g = 0 where
// y ≤ 0 or NaN, else d (nn's ReLU backward); with bias, bias += g (row by
// row, the order of nn's column sums); h = bf16(g). d is only read: the
// backward GEMMs take h, so writing g back would be a wasted pass. Full
// 16-wide chunks use plain loads and stores (masked stores are slow on some
// AVX-512 CPUs); the last cols % 16 columns of each row are done one by one.
static uint16_t kq_bf16_scalar(float x);

__attribute__((target("avx512f,avx512bw,avx512bf16,avx512vl")))
static void kq_grad_to_bf16_avx512(const float *y, const float *d, uint16_t *h, float *bias, int64_t rows, int64_t cols, int relu) {
	const __m512 z = _mm512_setzero_ps();
	const int64_t full = cols & ~(int64_t)15;
	for (int64_t r = 0; r < rows; r++) {
		const float *yr = relu ? y + r * cols : NULL;
		const float *dr = d + r * cols;
		uint16_t *hr = h + r * cols;
		for (int64_t j = 0; j < full; j += 16) {
			__m512 v = _mm512_loadu_ps(dr + j);
			if (relu) v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_loadu_ps(yr + j), z, _CMP_GT_OQ), v);
			if (bias) _mm512_storeu_ps(bias + j, _mm512_add_ps(_mm512_loadu_ps(bias + j), v));
			_mm256_storeu_si256((__m256i *)(hr + j), (__m256i)_mm512_cvtneps_pbh(v));
		}
		for (int64_t j = full; j < cols; j++) {
			float g = dr[j];
			if (relu && !(yr[j] > 0)) g = 0;
			if (bias) bias[j] += g;
			hr[j] = kq_bf16_scalar(g);
		}
	}
}

static uint16_t kq_bf16_scalar(float x) {
	uint32_t b;
	memcpy(&b, &x, 4);
	if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((b >> 16) | 0x40);
	return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

static void kq_relu_to_bf16_scalar(float *y, uint16_t *h, int64_t n) {
	for (int64_t i = 0; i < n; i++) {
		if (y[i] < 0) y[i] = 0;
		h[i] = kq_bf16_scalar(y[i]);
	}
}

static void kq_grad_to_bf16_scalar(const float *y, const float *d, uint16_t *h, float *bias, int64_t rows, int64_t cols, int relu) {
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t j = 0; j < cols; j++) {
			int64_t i = r * cols + j;
			float g = d[i];
			if (relu && !(y[i] > 0)) g = 0;
			if (bias) bias[j] += g;
			h[i] = kq_bf16_scalar(g);
		}
	}
}

static void kq_to_bf16_scalar(uint16_t *dst, const float *src, int64_t n) {
	for (int64_t i = 0; i < n; i++) dst[i] = kq_bf16_scalar(src[i]);
}

static int kq_has_bf16_insn;

static void kq_relu_to_bf16(float *y, uint16_t *h, int64_t n) {
	if (kq_has_bf16_insn) kq_relu_to_bf16_avx512(y, h, n);
	else kq_relu_to_bf16_scalar(y, h, n);
}

static void kq_grad_to_bf16(const float *y, const float *d, uint16_t *h, float *bias, int64_t rows, int64_t cols, int relu) {
	if (kq_has_bf16_insn) kq_grad_to_bf16_avx512(y, d, h, bias, rows, cols, relu);
	else kq_grad_to_bf16_scalar(y, d, h, bias, rows, cols, relu);
}

static void kq_cpu_init(void) { kq_has_bf16_insn = __builtin_cpu_supports("avx512bf16"); }

// kq_use_bf16_insn switches the AVX512_BF16 kernels off (tests of the
// scalar fallbacks) or back on where the CPU has them; returns the setting.
static int kq_use_bf16_insn(int on) {
	kq_has_bf16_insn = on && __builtin_cpu_supports("avx512bf16");
	return kq_has_bf16_insn;
}

static void kq_to_bf16(uint16_t *dst, const float *src, int64_t n) {
	if (kq_has_bf16_insn) kq_to_bf16_avx512(dst, src, n);
	else kq_to_bf16_scalar(dst, src, n);
}

static void *kq_alloc(size_t n) { return aligned_alloc(64, (n + 63) / 64 * 64); }

static const char *kq_isa_name(void) {
	switch (dnnl_get_effective_cpu_isa()) {
	case dnnl_cpu_isa_sse41: return "sse41";
	case dnnl_cpu_isa_avx: return "avx";
	case dnnl_cpu_isa_avx2: return "avx2";
	case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
	case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
	case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
	case dnnl_cpu_isa_avx512_core: return "avx512_core";
	case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
	case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
	case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
	default: return "unknown";
	}
}

static void kq_version(int *v) {
	const dnnl_version_t *d = dnnl_version();
	v[0] = d->major; v[1] = d->minor; v[2] = d->patch;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// maxEntries bounds one slot's primitive cache. koopq's networks use a few
// dozen shapes; a caller that sweeps row counts would otherwise grow the
// cache without bound, so a full cache is emptied and rebuilt on demand.
const maxEntries = 512

type dnnlKey struct {
	bf16, ta, tb, sum bool
	m, n, k           int
	lda, ldb, ldc     int
	alpha             float32
	threads           int
	bias              bool
	act               Act
}

// slot is everything one concurrent caller needs; see the file comment.
type slot struct {
	stream           C.dnnl_stream_t
	entries          map[dnnlKey]*C.kq_mm
	scr, abuf, bbuf  unsafe.Pointer // C memory
	nscr, nabf, nbbf C.size_t
}

type onednn struct {
	mu    sync.Mutex
	free  []*slot
	impls [2]map[string]bool // implementation names seen, per precision
	probe [2]bool            // whether a probe GEMM ran for kernel()
	bf16  bool               // bf16 matmul available on this CPU
	err   string             // why bf16 is not available
}

func init() {
	if C.kq_init() != 0 {
		return // no CPU engine: leave the backend unregistered
	}
	C.kq_cpu_init()
	o := &onednn{impls: [2]map[string]bool{{}, {}}}
	// bf16 support: try to build a small bf16 primitive.
	var e C.kq_mm
	if st := C.kq_create(&e, 1, 0, 0, 16, 16, 16, 16, 16, 16, 1, 0, 0, 0, 1); st == 0 {
		o.bf16 = true
		C.kq_destroy(&e)
	} else {
		o.err = fmt.Sprintf("dnnl status %d", int(st))
	}
	register("onednn", o)
}

func (o *onednn) supports(p Precision) bool { return p == F32 || (p == BF16 && o.bf16) }

// oneDNN takes the thread count per call (see kq_exec).
func (o *onednn) setThreads(int) {}

func (o *onednn) isa() string { return C.GoString(C.kq_isa_name()) }

// kernel reports the library version and the matmul implementations used
// for precision p (e.g. "brg:avx512_core_bf16"); when no GEMM has run yet it
// runs one 256×256×256 probe so the report names what training will use.
func (o *onednn) kernel(p Precision) string {
	o.mu.Lock()
	probed := o.probe[p] || len(o.impls[p]) > 0
	o.probe[p] = true
	o.mu.Unlock()
	if !probed {
		x := make([]float32, 256*256)
		o.gemm(p, Threads(), false, false, 256, 256, 256, 1, x, 256, x, 256, 0, make([]float32, 256*256), 256)
	}
	var v [3]C.int
	C.kq_version(&v[0])
	o.mu.Lock()
	names := strings.Join(sortedKeys(o.impls[p]), ", ")
	o.mu.Unlock()
	return fmt.Sprintf("oneDNN %d.%d.%d matmul %s (max ISA %s)", v[0], v[1], v[2], names, o.isa())
}

func (o *onednn) getSlot() *slot {
	o.mu.Lock()
	if n := len(o.free); n > 0 {
		s := o.free[n-1]
		o.free = o.free[:n-1]
		o.mu.Unlock()
		return s
	}
	o.mu.Unlock()
	s := &slot{entries: map[dnnlKey]*C.kq_mm{}}
	if st := C.kq_stream(&s.stream); st != 0 {
		panic(fmt.Sprintf("blas: oneDNN stream creation failed (dnnl status %d)", int(st)))
	}
	return s
}

func (o *onednn) putSlot(s *slot) {
	o.mu.Lock()
	o.free = append(o.free, s)
	o.mu.Unlock()
}

// grow makes the C buffer *p hold at least n bytes.
func grow(p *unsafe.Pointer, have *C.size_t, n C.size_t) {
	if n <= *have {
		return
	}
	C.free(*p)
	*p = C.kq_alloc(n)
	if *p == nil {
		panic(fmt.Sprintf("blas: oneDNN workspace of %d bytes: out of memory", n))
	}
	*have = n
}

func (o *onednn) entry(s *slot, key dnnlKey) *C.kq_mm {
	if e, ok := s.entries[key]; ok {
		return e
	}
	if len(s.entries) >= maxEntries {
		for k, e := range s.entries {
			C.kq_destroy(e)
			C.free(unsafe.Pointer(e))
			delete(s.entries, k)
		}
	}
	e := (*C.kq_mm)(C.calloc(1, C.size_t(unsafe.Sizeof(C.kq_mm{}))))
	st := C.kq_create(e, cbool(key.bf16), cbool(key.ta), cbool(key.tb), C.int64_t(key.m), C.int64_t(key.n), C.int64_t(key.k),
		C.int64_t(key.lda), C.int64_t(key.ldb), C.int64_t(key.ldc), C.float(key.alpha), cbool(key.sum), cbool(key.bias), C.int(key.act), C.int(key.threads))
	if st != 0 {
		msg := C.GoString(&e.err[0])
		C.free(unsafe.Pointer(e))
		panic(fmt.Sprintf("blas: oneDNN cannot build %s (dnnl status %d) for %+v", msg, int(st), key))
	}
	grow(&s.scr, &s.nscr, e.scratch)
	grow(&s.abuf, &s.nabf, e.abytes)
	grow(&s.bbuf, &s.nbbf, e.bbytes)
	s.entries[key] = e
	p := F32
	if key.bf16 {
		p = BF16
	}
	o.mu.Lock()
	o.impls[p][C.GoString(&e.impl[0])] = true
	o.mu.Unlock()
	return e
}

// flushes: kq_exec sets FTZ/DAZ on the calling thread and its OpenMP team.
func (o *onednn) flushes() bool { return true }

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

func (o *onednn) gemm(p Precision, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if beta != 0 && beta != 1 {
		// The matmul adds C with a sum post-op of scale 1; other betas
		// scale C first (no koopq caller does this).
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] *= beta
			}
		}
		beta = 1
	}
	o.exec(dnnlKey{bf16: p == BF16, ta: transA, tb: transB, sum: beta == 1, m: m, n: n, k: k,
		lda: lda, ldb: ldb, ldc: ldc, alpha: alpha, threads: threads}, a, b, nil, nil, nil, c)
}

func (o *onednn) affine(p Precision, threads int, rows, in, out int, x, w, bias, y []float32, act Act) bool {
	o.exec(dnnlKey{bf16: p == BF16, m: rows, n: out, k: in, lda: in, ldb: out, ldc: out, alpha: 1,
		threads: threads, bias: bias != nil, act: act}, x, w, nil, nil, bias, y)
	return true
}

// gemmH and affineH run the bf16 primitives of gemm and affine on inputs
// already rounded (tight strides), skipping the f32 → bf16 reorders.
func (o *onednn) gemmH(threads int, transA, transB bool, m, n, k int, alpha float32, a, b []uint16, beta float32, c []float32, ldc int) {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	o.exec(dnnlKey{bf16: true, ta: transA, tb: transB, sum: beta == 1, m: m, n: n, k: k,
		lda: lda, ldb: ldb, ldc: ldc, alpha: alpha, threads: threads}, nil, nil, a, b, nil, c)
}

func (o *onednn) affineH(threads int, rows, in, out int, x, w []uint16, bias, y []float32, act Act) {
	o.exec(dnnlKey{bf16: true, m: rows, n: out, k: in, lda: in, ldb: out, ldc: out, alpha: 1,
		threads: threads, bias: bias != nil, act: act}, nil, nil, x, w, bias, y)
}

// toBF16 rounds src into dst with the CPU's VCVTNEPS2BF16 where present
// (kq_to_bf16): one pass, no oneDNN primitive.
func (o *onednn) toBF16(dst []uint16, src []float32) {
	if len(src) == 0 {
		return
	}
	C.kq_to_bf16((*C.uint16_t)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.int64_t(len(src)))
}

func (o *onednn) reluToBF16(y []float32, h []uint16) {
	if len(y) == 0 {
		return
	}
	C.kq_relu_to_bf16((*C.float)(unsafe.Pointer(&y[0])), (*C.uint16_t)(unsafe.Pointer(&h[0])), C.int64_t(len(y)))
}

func (o *onednn) gradToBF16(y, d []float32, h []uint16, rows, cols int, relu bool, bias []float32) {
	if rows == 0 || cols == 0 {
		return
	}
	var yp, bp *C.float
	if relu {
		yp = (*C.float)(unsafe.Pointer(&y[0]))
	}
	if bias != nil {
		bp = (*C.float)(unsafe.Pointer(&bias[0]))
	}
	C.kq_grad_to_bf16(yp, (*C.float)(unsafe.Pointer(&d[0])), (*C.uint16_t)(unsafe.Pointer(&h[0])), bp, C.int64_t(rows), C.int64_t(cols), cbool(relu))
}

// useBF16Insn turns the AVX512_BF16 rounding kernels off (on: back on
// where the CPU has them) and reports whether they are in use; for tests of
// the scalar C fallbacks.
func useBF16Insn(on bool) bool { return C.kq_use_bf16_insn(cbool(on)) != 0 }

// exec runs the cached primitive for key on f32 inputs a, b, or (bf16
// keys only) on pre-rounded inputs a16, b16 when those are non-nil.
func (o *onednn) exec(key dnnlKey, a, b []float32, a16, b16 []uint16, bias, c []float32) {
	var bp *C.float
	if bias != nil {
		bp = (*C.float)(unsafe.Pointer(&bias[0]))
	}
	var ap, bq *C.float
	var ah, bh unsafe.Pointer
	if a16 != nil {
		ah, bh = unsafe.Pointer(&a16[0]), unsafe.Pointer(&b16[0])
	} else {
		ap, bq = (*C.float)(unsafe.Pointer(&a[0])), (*C.float)(unsafe.Pointer(&b[0]))
	}
	s := o.getSlot()
	e := o.entry(s, key)
	st := C.kq_exec(e, s.stream, s.scr, s.abuf, s.bbuf, ap, bq, ah, bh, bp, (*C.float)(unsafe.Pointer(&c[0])), C.int(key.threads), cbool(flushSubnormals.Load()))
	o.putSlot(s)
	if st != 0 {
		panic(fmt.Sprintf("blas: oneDNN matmul failed (dnnl status %d) for %+v", int(st), key))
	}
}
