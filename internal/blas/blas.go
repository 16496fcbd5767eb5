// Package blas is koopq's single entry point for float32 matrix multiplication.
//
// Every GEMM in the networks goes through Gemm (or MatMul), which hands it to
// one of several backends chosen once per process:
//
//   - "onednn": oneDNN's matmul primitive through cgo (Debian libdnnl-dev).
//     Primitives are created once per shape, transposes, precision and thread
//     count and cached; it is the only backend that runs bf16 GEMMs.
//   - "openblas": OpenBLAS's cblas_sgemm through cgo (libopenblas-dev).
//     OpenBLAS picks its kernel when the library loads, from the environment
//     variable OPENBLAS_CORETYPE; Kernel reports which one is in use.
//   - "gonum": gonum's pure-Go blas32, the only backend when building with
//     -tags purego or CGO_ENABLED=0 (7-13x slower, needs no C library).
//
// The default is the fastest backend present, in the order of DefaultOrder
// (measured; see docs/performance.md). SetBackend / SetPrecision (or Configure,
// which also reads KOOPQ_BACKEND and KOOPQ_PRECISION) change it; the choice
// is process-wide and should be made before training starts.
//
// Precision BF16 means mixed precision: both GEMM inputs are rounded to
// bfloat16 (8-bit significand, round to nearest even), products are
// accumulated and written in float32. Everything outside the GEMM (master
// weights, gradients, optimizer moments, losses) stays float32. Gemm rounds
// its inputs on every call; a caller that feeds one operand to several GEMMs
// rounds it once (ToBF16, ReLUToBF16, GradToBF16) and calls GemmBF16 or
// AffineBF16, with identical results.
package blas

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Precision is the arithmetic of the GEMM inputs.
type Precision int

const (
	// F32: inputs, products and accumulation in float32.
	F32 Precision = iota
	// BF16: inputs rounded to bfloat16, accumulation and output in float32.
	BF16
)

// String returns "f32" or "bf16".
func (p Precision) String() string {
	switch p {
	case F32:
		return "f32"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// ParsePrecision parses "f32" or "bf16" (case-insensitive).
func ParsePrecision(s string) (Precision, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "f32", "fp32", "float32":
		return F32, nil
	case "bf16", "bfloat16":
		return BF16, nil
	}
	return F32, fmt.Errorf("unknown precision %q (want f32 or bf16)", s)
}

// Environment variables read by Configure (and by the first GEMM of a
// process that never called Configure, SetBackend or SetPrecision).
const (
	EnvBackend   = "KOOPQ_BACKEND"
	EnvPrecision = "KOOPQ_PRECISION"
)

// DefaultOrder lists backends fastest first, as measured on this project's
// AVX-512 machines (docs/performance.md: oneDNN f32 beats OpenBLAS on every CQL
// shape); the default backend is the first one compiled in (onednn only
// where its ISA is AVX-512, the measured case).
var DefaultOrder = []string{"onednn", "openblas", "gonum"}

// impl is one GEMM backend. Implementations must allow concurrent calls.
type impl interface {
	// gemm has Gemm's contract, with arguments already validated, k > 0,
	// and the precision and thread count to use.
	gemm(p Precision, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	supports(p Precision) bool
	// kernel describes the code that runs for precision p, e.g. the CPU ISA.
	kernel(p Precision) string
	// isa names the instruction set the backend dispatches to.
	isa() string
	// setThreads is called when the thread count changes.
	setThreads(n int)
	// affine is Affine's fused path; false when the backend has none.
	affine(p Precision, threads int, rows, in, out int, x, w, bias, y []float32, act Act) bool
	// flushes reports whether the backend honours SetFlushSubnormals.
	flushes() bool
}

// EnvSubnormals names the environment variable that Configure reads for
// the subnormal setting: "flush" (the default) or "keep".
const EnvSubnormals = "KOOPQ_SUBNORMALS"

// flushSubnormals: GEMMs run with MXCSR's FTZ and DAZ bits set (see
// SetFlushSubnormals). On by default; Configure applies KOOPQ_SUBNORMALS
// (every GEMM goes through current(), which configures first).
var flushSubnormals atomic.Bool

func init() { flushSubnormals.Store(true) }

// SetFlushSubnormals chooses whether the cgo backends (oneDNN, OpenBLAS)
// run each GEMM with subnormal float32 inputs read as zero and subnormal
// results written as zero (x86 MXCSR DAZ and FTZ, set for the call and
// restored before it returns to Go, so no Go code runs with them). On by
// default: on Intel CPUs an FMA that meets a subnormal takes a microcode
// assist, and CQL's gradients carry them (logsumexp weights below 1.2e-38),
// which made training steps up to 3× slower (docs/performance.md). A subnormal
// is below 1.2e-38 in magnitude, so a GEMM changes only where a product or
// a result is that small. KOOPQ_SUBNORMALS=keep turns it off (Configure).
func SetFlushSubnormals(on bool) { flushSubnormals.Store(on) }

// FlushSubnormals reports SetFlushSubnormals' setting.
func FlushSubnormals() bool { return flushSubnormals.Load() }

// Subnormals names what the current backend does with subnormal GEMM
// operands: "flushed" (FTZ/DAZ) or "kept" (IEEE; gonum always keeps them).
func Subnormals() string {
	if flushSubnormals.Load() && current().impl.flushes() {
		return "flushed"
	}
	return "kept"
}

var (
	registry = map[string]impl{}
	state    atomic.Pointer[config]
	initOnce sync.Once
	threads  atomic.Int32
)

type config struct {
	name string
	impl impl
	prec Precision
}

// register adds a backend; called from the build-tagged files' init.
func register(name string, b impl) { registry[name] = b }

// Available lists the backends compiled into this binary, fastest first.
func Available() []string {
	var out []string
	for _, n := range DefaultOrder {
		if _, ok := registry[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// defaultName is the first of Available, except that onednn is passed over
// on CPUs without AVX-512, where its speed against OpenBLAS was not measured.
func defaultName() string {
	for _, n := range Available() {
		if n == "onednn" && !strings.HasPrefix(registry[n].isa(), "avx512") {
			continue
		}
		return n
	}
	return "gonum"
}

// Configure selects the backend and precision: an empty argument falls back
// to the environment (KOOPQ_BACKEND, KOOPQ_PRECISION), then to the default
// (fastest backend present, f32). It also applies KOOPQ_SUBNORMALS. It
// returns an error naming the flag or variable at fault, and changes
// nothing on error.
func Configure(backend, precision string) error {
	flush := true
	switch v := os.Getenv(EnvSubnormals); v {
	case "", "flush":
	case "keep":
		flush = false
	default:
		return fmt.Errorf("%s=%q: want flush (the default) or keep", EnvSubnormals, v)
	}
	src := "--backend"
	if backend == "" {
		backend, src = os.Getenv(EnvBackend), EnvBackend
	}
	if backend == "" || backend == "auto" {
		backend = defaultName()
	}
	psrc := "--precision"
	if precision == "" {
		precision, psrc = os.Getenv(EnvPrecision), EnvPrecision
	}
	p := F32
	if precision != "" {
		var err error
		if p, err = ParsePrecision(precision); err != nil {
			return fmt.Errorf("%s: %w", psrc, err)
		}
	}
	if _, ok := registry[backend]; !ok {
		return fmt.Errorf("%s: unknown or unavailable GEMM backend %q (this binary has %s)", src, backend, strings.Join(Available(), ", "))
	}
	if !registry[backend].supports(p) {
		o, ok := registry["onednn"]
		return fmt.Errorf("%s %s: backend %s has no %s GEMM (%s)", psrc, p, backend, p, noBF16(backend, ok, ok && o.supports(BF16), isaOf(o, ok)))
	}
	state.Store(&config{name: backend, impl: registry[backend], prec: p})
	flushSubnormals.Store(flush)
	return nil
}

// noBF16 says why backend cannot run bf16 GEMMs and what can: only onednn
// has them, and only on CPUs whose instruction set oneDNN has bf16 matmul
// kernels for (AVX-512); haveOneDNN, oneDNNBF16 and isa describe this
// binary's onednn backend and the instruction set it dispatches to.
func noBF16(backend string, haveOneDNN, oneDNNBF16 bool, isa string) string {
	switch {
	case !haveOneDNN:
		return "bf16 needs the onednn backend, which this binary lacks"
	case oneDNNBF16:
		return "bf16 needs --backend onednn"
	case backend == "onednn":
		return fmt.Sprintf("oneDNN has no bf16 matmul for this CPU's instruction set %s: it needs AVX-512", isa)
	default:
		return fmt.Sprintf("bf16 needs --backend onednn on a CPU with AVX-512; this one's instruction set is %s", isa)
	}
}

// isaOf is impl's instruction set, "" when ok is false.
func isaOf(i impl, ok bool) string {
	if !ok {
		return ""
	}
	return i.isa()
}

// SetBackend switches to the named backend, keeping the current precision.
func SetBackend(name string) error { return Configure(name, CurrentPrecision().String()) }

// SetPrecision switches the current backend to precision p.
func SetPrecision(p Precision) error { return Configure(Backend(), p.String()) }

func current() *config {
	if c := state.Load(); c != nil {
		return c
	}
	initOnce.Do(func() {
		if state.Load() != nil {
			return
		}
		if err := Configure("", ""); err != nil {
			// Only reachable by programs that skipped Configure; the CLI
			// validates these variables before doing anything.
			panic("blas: " + err.Error())
		}
	})
	return state.Load()
}

// Backend names the GEMM backend in use: "onednn", "openblas" or "gonum".
func Backend() string { return current().name }

// CurrentPrecision returns the precision of the GEMM inputs.
func CurrentPrecision() Precision { return current().prec }

// Kernel describes the code the current backend runs (library, kernel family
// or implementation, and why it was chosen), for provenance.
func Kernel() string { c := current(); return c.impl.kernel(c.prec) }

// warner is implemented by backends that can run far below what the CPU
// offers and can tell.
type warner interface{ warning() string }

// Warning is a one-line note when the current backend runs a kernel well
// below what this CPU offers (OpenBLAS's SSE3 fallback on a CPU its build
// does not know), with the setting that fixes it; "" otherwise. The CLI
// prints it on stderr, since such a kernel is slower and rounds differently.
func Warning() string {
	if w, ok := current().impl.(warner); ok {
		return w.warning()
	}
	return ""
}

// preAVXCores are OpenBLAS core types without AVX. Given an x86-64 CPU that
// its build does not know, OpenBLAS falls back to one of them (Debian's
// 0.3.21 serves Intel's AMX CPUs with Prescott, SSE3).
var preAVXCores = map[string]bool{
	"Prescott": true, "Core2": true, "Penryn": true, "Dunnington": true, "Nehalem": true, "Atom": true,
	"Katmai": true, "Coppermine": true, "Northwood": true, "Banias": true, "Opteron": true, "Barcelona": true,
	"Bobcat": true, "Athlon": true,
}

// openblasWarning is OpenBLAS's Warning for its core type, whether
// OPENBLAS_CORETYPE chose it, and whether the CPU has AVX2.
func openblasWarning(core string, coretypeSet, hasAVX2 bool) string {
	if coretypeSet || !hasAVX2 || !preAVXCores[core] {
		return ""
	}
	return "OpenBLAS does not recognise this CPU and runs its " + core + " kernel (no AVX): slower, and it rounds " +
		"differently from the AVX2 kernels; set OPENBLAS_CORETYPE=Haswell (or use --backend onednn)"
}

// ISA names the CPU instruction set the current backend dispatches to.
func ISA() string { return current().impl.isa() }

// Info is the provenance of the GEMM layer: what produced the numbers.
type Info struct {
	Backend   string `json:"backend"`   // "onednn", "openblas" or "gonum"
	Precision string `json:"precision"` // "f32" or "bf16" (GEMM inputs)
	ISA       string `json:"isa"`       // instruction set dispatched to
	Kernel    string `json:"kernel"`    // implementation detail, see Kernel
	Threads   int    `json:"threads"`   // threads inside one GEMM call
	// Subnormals is "flushed" (GEMMs under FTZ/DAZ) or "kept" (IEEE).
	Subnormals string `json:"subnormals"`
}

// Describe returns the current backend, precision, ISA, kernel and threads.
func Describe() Info {
	c := current()
	return Info{Backend: c.name, Precision: c.prec.String(), ISA: c.impl.isa(), Kernel: c.impl.kernel(c.prec), Threads: Threads(),
		Subnormals: Subnormals()}
}

// String formats Info on one line, e.g. for --version.
func (i Info) String() string {
	return fmt.Sprintf("%s %s, ISA %s, %d thread(s) per GEMM, subnormals %s; %s", i.Backend, i.Precision, i.ISA, i.Threads, i.Subnormals, i.Kernel)
}

// SetThreads sets the number of threads used inside one GEMM call (n < 1
// means 1). koopq defaults to 1 and runs independent networks on separate
// goroutines instead.
func SetThreads(n int) {
	n = max(n, 1)
	threads.Store(int32(n))
	for _, b := range registry {
		b.setThreads(n)
	}
}

// Threads returns the thread count used inside one GEMM call.
func Threads() int { return max(int(threads.Load()), 1) }

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
	cf := current()
	cf.impl.gemm(cf.prec, Threads(), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
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

// Act is an elementwise function that Affine applies to a GEMM's output.
type Act int

const (
	// ActNone is the identity.
	ActNone Act = iota
	// ActReLU is max(v, 0); oneDNN's post-op maps NaN to 0.
	ActReLU
	// ActTanh is tanh(v).
	ActTanh
)

var fusion atomic.Bool

func init() { fusion.Store(true) }

// SetFusion turns Affine's fused path on (the default) or off, for A/B
// measurements; off, Affine always returns false.
func SetFusion(on bool) { fusion.Store(on) }

// Affine computes y = act(x·W + b) in one fused GEMM (bias and activation as
// post-ops) when the backend offers it (onednn), and returns true. x: [rows,
// in], W: [in, out], b: [out] or nil, y: [rows, out], all tight row-major.
// It returns false and leaves y untouched when the backend has no fused path
// (openblas, gonum) or fusion is off: the caller then copies the bias, calls
// MatMul and applies the activation itself. GEMM inputs follow the current
// precision; the bias and the activation are applied in f32.
func Affine(rows, in, out int, x, w, b, y []float32, act Act) bool {
	if !fusion.Load() || rows == 0 || out == 0 || in == 0 {
		return false
	}
	if len(x) < rows*in || len(w) < in*out || len(y) < rows*out || (b != nil && len(b) < out) || act < ActNone || act > ActTanh {
		panic(fmt.Sprintf("blas: Affine %d×%d→%d with len(x)=%d len(w)=%d len(b)=%d len(y)=%d act=%d", rows, in, out, len(x), len(w), len(b), len(y), act))
	}
	c := current()
	return c.impl.affine(c.prec, Threads(), rows, in, out, x, w, b, y, act)
}

// sortedKeys is a small helper for stable descriptions of sets.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RoundBF16 rounds x to the nearest bfloat16 value (ties to even) and
// returns it as a float32: what BF16 precision does to every GEMM input.
// NaN and ±Inf pass through.
func RoundBF16(x float32) float32 {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0x7f800000 {
		return x
	}
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

// BF16UnitRoundoff is u = 2⁻⁸, the largest relative error of RoundBF16
// (bfloat16 keeps 8 significant bits). A product of two rounded inputs has
// relative error at most 2u + u².
const BF16UnitRoundoff = 1.0 / 256

// halfImpl is implemented by backends whose bf16 GEMMs can take inputs
// already rounded to bfloat16 (onednn). A network that feeds one rounded
// activation to several GEMMs (forward, then the weight gradient) rounds it
// once with ToBF16 and calls GemmBF16 / AffineBF16, instead of letting every
// Gemm call round its f32 inputs again.
type halfImpl interface {
	gemmH(threads int, transA, transB bool, m, n, k int, alpha float32, a, b []uint16, beta float32, c []float32, ldc int)
	affineH(threads int, rows, in, out int, x, w []uint16, bias, y []float32, act Act)
	toBF16(dst []uint16, src []float32)
	reluToBF16(y []float32, h []uint16)
	gradToBF16(y, d []float32, h []uint16, rows, cols int, relu bool, bias []float32)
}

// ToBF16 rounds src to bfloat16 into dst: dst[i] holds the top 16 bits of
// RoundBF16(src[i]) (NaN stays NaN, made quiet). The onednn backend uses
// the CPU's VCVTNEPS2BF16 where present, which also flushes subnormal
// inputs to zero (as bf16 GEMM kernels read them anyway); len(dst) must be
// ≥ len(src).
func ToBF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("blas: ToBF16 into %d values from %d", len(dst), len(src)))
	}
	if h, ok := current().impl.(halfImpl); ok {
		h.toBF16(dst, src)
		return
	}
	for i, v := range src {
		dst[i] = bf16Bits(v)
	}
}

// bf16Bits is ToBF16 of one value (the fallback's arithmetic).
func bf16Bits(v float32) uint16 {
	if b := math.Float32bits(v); b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16(math.Float32bits(RoundBF16(v)) >> 16)
}

// ReLUToBF16 applies ReLU to y in place, max(y, 0) keeping NaN (a diverged
// network stays visible) and −0, as nn's ReLU does, and writes the result
// rounded as ToBF16 into h: a forward pass's activation and the next
// layer's input rounding in one pass over y. len(h) ≥ len(y).
func ReLUToBF16(y []float32, h []uint16) {
	if len(h) < len(y) {
		panic(fmt.Sprintf("blas: ReLUToBF16 into %d values from %d", len(h), len(y)))
	}
	if hi, ok := current().impl.(halfImpl); ok {
		hi.reluToBF16(y, h)
		return
	}
	for i, v := range y {
		if v < 0 {
			y[i] = 0
		}
	}
	ToBF16(h, y)
}

// GradToBF16 prepares a layer's output gradient d [rows, cols] for the
// bf16 GEMMs of its backward pass in one pass over d: g = d, or with relu
// g = 0 where the layer's ReLU output y [rows, cols] is not > 0 (nn's ReLU
// backward; y is unused otherwise); with bias non-nil, the column sums of g
// are added into bias [cols], row after row (nn's order, so the sums are
// bit for bit nn's); and g is rounded as ToBF16 into h [rows, cols]. d is
// not modified.
func GradToBF16(y, d []float32, h []uint16, rows, cols int, relu bool, bias []float32) {
	n := rows * cols
	if len(d) < n || len(h) < n || (relu && len(y) < n) || (bias != nil && len(bias) < cols) {
		panic(fmt.Sprintf("blas: GradToBF16 %d×%d with len(y)=%d len(d)=%d len(h)=%d len(bias)=%d", rows, cols, len(y), len(d), len(h), len(bias)))
	}
	if hi, ok := current().impl.(halfImpl); ok {
		hi.gradToBF16(y, d, h, rows, cols, relu, bias)
		return
	}
	for r := 0; r < rows; r++ {
		for j := 0; j < cols; j++ {
			i := r*cols + j
			g := d[i]
			if relu && !(y[i] > 0) {
				g = 0
			}
			if bias != nil {
				bias[j] += g
			}
			h[i] = bf16Bits(g)
		}
	}
}

// FromBF16 widens bfloat16 bits to float32 (exact).
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// half returns the current backend's bf16 entry points, or panics when the
// current precision is not BF16 (GemmBF16 and AffineBF16 are only called on
// that precision's path).
func half() (halfImpl, int) {
	c := current()
	h, ok := c.impl.(halfImpl)
	if c.prec != BF16 || !ok {
		panic(fmt.Sprintf("blas: bf16 GEMM on pre-rounded inputs needs precision bf16 (have %s %s)", c.name, c.prec))
	}
	return h, Threads()
}

// GemmBF16 is Gemm under BF16 precision for inputs already rounded with
// ToBF16: C = alpha·op(A)·op(B) + beta·C with op(A) [m, k] and op(B) [k, n]
// stored tight (A as [m, k], or [k, m] when transA; likewise B), C [m, n]
// with row stride ldc, accumulated in float32. The product is exactly what
// Gemm computes on the unrounded f32 values; only the rounding is not
// repeated. It panics unless the current precision is BF16.
func GemmBF16(transA, transB bool, m, n, k int, alpha float32, a, b []uint16, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if len(a) < m*k || len(b) < k*n || ldc < n || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("blas: GemmBF16 m=%d n=%d k=%d ldc=%d with len(a)=%d len(b)=%d len(c)=%d", m, n, k, ldc, len(a), len(b), len(c)))
	}
	h, thr := half()
	if beta != 0 && beta != 1 || k == 0 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] *= beta
			}
		}
		if k == 0 {
			return
		}
		beta = 1
	}
	h.gemmH(thr, transA, transB, m, n, k, alpha, a, b, beta, c, ldc)
}

// AffineBF16 is Affine under BF16 precision for x [rows, in] and W [in,
// out] already rounded with ToBF16. Like Affine it returns false (and does
// nothing) when fusion is off; the caller then copies the bias and calls
// GemmBF16 with beta 1. It panics unless the current precision is BF16.
func AffineBF16(rows, in, out int, x, w []uint16, b, y []float32, act Act) bool {
	if !fusion.Load() || rows == 0 || out == 0 || in == 0 {
		return false
	}
	if len(x) < rows*in || len(w) < in*out || len(y) < rows*out || (b != nil && len(b) < out) || act < ActNone || act > ActTanh {
		panic(fmt.Sprintf("blas: AffineBF16 %d×%d→%d with len(x)=%d len(w)=%d len(b)=%d len(y)=%d act=%d", rows, in, out, len(x), len(w), len(b), len(y), act))
	}
	h, thr := half()
	h.affineH(thr, rows, in, out, x, w, b, y, act)
	return true
}
