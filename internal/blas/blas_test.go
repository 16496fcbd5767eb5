package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koopq/koopq/internal/allocs"
)

// naive is the reference GEMM: float64 accumulation, Gemm's contract.
func naive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += float64(at(a, transA, i, p, lda)) * float64(at(b, transB, p, j, ldb))
			}
			c[i*ldc+j] = alpha*float32(s) + beta*c[i*ldc+j]
		}
	}
}

// at returns op(X)[i][j] for X stored row-major with stride ld.
func at(x []float32, trans bool, i, j, ld int) float32 {
	if trans {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

// absDot returns Σ_p |op(A)[i][p]|·|op(B)[p][j]|, the scale of rounding errors.
func absDot(transA, transB bool, i, j, k int, a []float32, lda int, b []float32, ldb int) float64 {
	var s float64
	for p := 0; p < k; p++ {
		s += math.Abs(float64(at(a, transA, i, p, lda))) * math.Abs(float64(at(b, transB, p, j, ldb)))
	}
	return s
}

func randSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// use switches to backend/precision for the rest of the test.
func use(t testing.TB, backend string, p Precision) {
	t.Helper()
	oldB, oldP := Backend(), CurrentPrecision()
	if err := Configure(backend, p.String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Configure(oldB, oldP.String()); err != nil {
			t.Fatal(err)
		}
	})
}

// gemmCase is one test problem with padded strides.
type gemmCase struct {
	ta, tb        bool
	m, n, k       int
	lda, ldb, ldc int
	a, b, c       []float32
	alpha, beta   float32
}

func newCase(r *rand.Rand, ta, tb bool, m, n, k, pad int, alpha, beta float32) gemmCase {
	ar, ac := m, k
	if ta {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb {
		br, bc = n, k
	}
	g := gemmCase{ta: ta, tb: tb, m: m, n: n, k: k, lda: ac + pad, ldb: bc + pad/2, ldc: n + pad, alpha: alpha, beta: beta}
	g.a = randSlice(r, max(ar*g.lda, 1))
	g.b = randSlice(r, max(br*g.ldb, 1))
	g.c = randSlice(r, m*g.ldc)
	return g
}

func (g gemmCase) run(c []float32) {
	Gemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, c, g.ldc)
}

func (g gemmCase) String() string {
	return fmt.Sprintf("m=%d n=%d k=%d ta=%v tb=%v lda=%d ldb=%d ldc=%d alpha=%v beta=%v", g.m, g.n, g.k, g.ta, g.tb, g.lda, g.ldb, g.ldc, g.alpha, g.beta)
}

var shapes = []struct{ m, n, k int }{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 1, 40}, {5, 6, 0}, {1, 256, 14}, {257, 31, 129}, {129, 256, 200}}

// TestGemmMatchesNaive checks every backend in this binary, all four
// transposes, padded strides, odd shapes and alpha/beta against the float64
// reference, to f32 accuracy: |err| ≤ 2K·2⁻²⁴·Σ|a||b| + f32 rounding of C.
func TestGemmMatchesNaive(t *testing.T) {
	for _, backend := range Available() {
		t.Run(backend, func(t *testing.T) {
			use(t, backend, F32)
			r := rand.New(rand.NewPCG(1, 2))
			for _, s := range shapes {
				for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.7, 0.3}} {
					for _, ta := range []bool{false, true} {
						for _, tb := range []bool{false, true} {
							g := newCase(r, ta, tb, s.m, s.n, s.k, 3, ab[0], ab[1])
							want := append([]float32(nil), g.c...)
							got := append([]float32(nil), g.c...)
							naive(g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, want, g.ldc)
							g.run(got)
							for i := 0; i < g.m; i++ {
								for j := 0; j < g.n; j++ {
									w, v := float64(want[i*g.ldc+j]), float64(got[i*g.ldc+j])
									tol := 2*float64(g.k+2)*0x1p-24*absDot(g.ta, g.tb, i, j, g.k, g.a, g.lda, g.b, g.ldb) + 0x1p-22*math.Abs(w) + 1e-30
									if math.Abs(v-w) > tol {
										t.Fatalf("%v: c[%d,%d]=%v want %v (tol %g)", g, i, j, v, w, tol)
									}
								}
								// padding between rows of C must be untouched
								for j := g.n; j < g.ldc && i*g.ldc+j < len(got); j++ {
									if got[i*g.ldc+j] != g.c[i*g.ldc+j] {
										t.Fatalf("%v: wrote into C's padding at [%d,%d]", g, i, j)
									}
								}
							}
						}
					}
				}
			}
		})
	}
}

// TestBF16RoundsInputsAndAccumulatesInF32: onednn's bf16 GEMM must equal the
// float64 GEMM of RoundBF16-rounded inputs to f32 accumulation accuracy
// (so inputs are rounded to nearest even, and nothing else is lost), and
// differ from the f32 GEMM by at most (2u+u²)·Σ|a||b| (u = 2⁻⁸) plus f32
// accumulation, and by more than 1% of that bound somewhere (bf16 really ran).
func TestBF16RoundsInputsAndAccumulatesInF32(t *testing.T) {
	if !registryHas("onednn") || !registry["onednn"].supports(BF16) {
		t.Skip("this binary or CPU has no bf16 GEMM") // purego builds and CPUs without bf16 support
	}
	use(t, "onednn", BF16)
	r := rand.New(rand.NewPCG(3, 4))
	u := float64(BF16UnitRoundoff)
	for _, s := range shapes {
		if s.k == 0 {
			continue
		}
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				g := newCase(r, ta, tb, s.m, s.n, s.k, 2, 1, 1)
				ra, rb := round(g.a), round(g.b)
				rounded := append([]float32(nil), g.c...)
				naive(g.ta, g.tb, g.m, g.n, g.k, 1, ra, g.lda, rb, g.ldb, 1, rounded, g.ldc)
				exact := append([]float32(nil), g.c...)
				naive(g.ta, g.tb, g.m, g.n, g.k, 1, g.a, g.lda, g.b, g.ldb, 1, exact, g.ldc)
				got := append([]float32(nil), g.c...)
				g.run(got)
				var worst float64
				for i := 0; i < g.m; i++ {
					for j := 0; j < g.n; j++ {
						v := float64(got[i*g.ldc+j])
						w := float64(rounded[i*g.ldc+j])
						e := float64(exact[i*g.ldc+j])
						scale := absDot(g.ta, g.tb, i, j, g.k, g.a, g.lda, g.b, g.ldb)
						f32 := 2*float64(g.k+2)*0x1p-24*scale + 0x1p-22*math.Abs(e)
						if math.Abs(v-w) > f32 {
							t.Fatalf("%v: bf16 c[%d,%d]=%v, want GEMM of rounded inputs %v (tol %g)", g, i, j, v, w, f32)
						}
						bound := (2*u+u*u)*scale + f32
						if math.Abs(v-e) > bound {
							t.Fatalf("%v: bf16 c[%d,%d]=%v differs from f32 %v by more than %g", g, i, j, v, e, bound)
						}
						worst = max(worst, math.Abs(v-e)/bound)
					}
				}
				if g.m*g.n*g.k >= 1000 && worst < 0.01 {
					t.Fatalf("%v: bf16 result within %.2g of its bound of f32: inputs were not rounded", g, worst)
				}
			}
		}
	}
}

func registryHas(name string) bool { _, ok := registry[name]; return ok }

func round(x []float32) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = RoundBF16(v)
	}
	return y
}

func TestRoundBF16(t *testing.T) {
	for _, tc := range []struct{ in, want float32 }{
		{1, 1},
		{1 + 0x1p-8, 1},                    // tie, rounds to even (1.0)
		{1 + 3*0x1p-8, 1 + 0x1p-6},         // tie, rounds to even (1+2⁻⁶)
		{1 + 0x1p-8 + 0x1p-20, 1 + 0x1p-7}, // above the tie
		{-3.14159265, -3.140625},
		{float32(math.Inf(1)), float32(math.Inf(1))},
	} {
		if got := RoundBF16(tc.in); got != tc.want {
			t.Errorf("RoundBF16(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if v := RoundBF16(float32(math.NaN())); !math.IsNaN(float64(v)) {
		t.Errorf("RoundBF16(NaN) = %v", v)
	}
}

// TestDeterministic: the same inputs, backend, precision and thread count
// give identical bits, called serially or from two goroutines at once.
func TestDeterministic(t *testing.T) {
	for _, backend := range Available() {
		for _, p := range []Precision{F32, BF16} {
			if !registry[backend].supports(p) {
				continue
			}
			for _, th := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%s/threads=%d", backend, p, th), func(t *testing.T) {
					use(t, backend, p)
					SetThreads(th)
					defer SetThreads(1)
					r := rand.New(rand.NewPCG(5, 6))
					cases := []gemmCase{
						newCase(r, false, false, 1000, 256, 256, 0, 1, 0),
						newCase(r, true, false, 256, 256, 1000, 0, 1, 1),
						newCase(r, false, true, 1000, 14, 256, 0, 1, 0),
					}
					first := make([][]float32, len(cases))
					for i, g := range cases {
						first[i] = append([]float32(nil), g.c...)
						g.run(first[i])
					}
					var wg sync.WaitGroup
					errs := make([]string, 2)
					for w := 0; w < 2; w++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for rep := 0; rep < 3; rep++ {
								for i, g := range cases {
									c := append([]float32(nil), g.c...)
									g.run(c)
									for j := range c {
										if c[j] != first[i][j] {
											errs[w] = fmt.Sprintf("case %d rep %d: c[%d]=%v, first call gave %v", i, rep, j, c[j], first[i][j])
											return
										}
									}
								}
							}
						}()
					}
					wg.Wait()
					if s := strings.Join(errs, ""); s != "" {
						t.Fatal(s)
					}
				})
			}
		}
	}
}

// TestNoAllocationPerCall: a cached GEMM allocates nothing on the Go heap.
func TestNoAllocationPerCall(t *testing.T) {
	for _, backend := range Available() {
		if backend == "gonum" {
			continue // gonum's blas32 allocates its own work splitting
		}
		for _, p := range []Precision{F32, BF16} {
			if !registry[backend].supports(p) {
				continue
			}
			use(t, backend, p)
			r := rand.New(rand.NewPCG(7, 8))
			a, b, c := randSlice(r, 64*32), randSlice(r, 32*48), make([]float32, 64*48)
			MatMul(false, false, 64, 48, 32, a, b, c, false)
			if n := allocs.Min(20, func() { MatMul(false, false, 64, 48, 32, a, b, c, true) }); n != 0 {
				t.Errorf("%s %s: %v allocations per GEMM", backend, p, n)
			}
		}
	}
}

func TestConfigureRejectsBadInput(t *testing.T) {
	before := Describe()
	for _, tc := range []struct{ backend, precision, want string }{
		{"mkl", "", "--backend"},
		{"", "fp8", "--precision"},
		{"gonum", "bf16", "backend gonum has no bf16 GEMM (bf16 needs"},
	} {
		err := Configure(tc.backend, tc.precision)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Configure(%q, %q) = %v, want error containing %q", tc.backend, tc.precision, err, tc.want)
		}
	}
	t.Setenv(EnvBackend, "nope")
	if err := Configure("", ""); err == nil || !strings.Contains(err.Error(), EnvBackend) {
		t.Errorf("bad %s: got %v", EnvBackend, err)
	}
	if after := Describe(); after != before {
		t.Errorf("failed Configure changed the state: %v -> %v", before, after)
	}
}

func TestDefaultIsFastestPresent(t *testing.T) {
	t.Setenv(EnvBackend, "")
	t.Setenv(EnvPrecision, "")
	old := Describe()
	defer func() { _ = Configure(old.Backend, old.Precision) }()
	if err := Configure("", ""); err != nil {
		t.Fatal(err)
	}
	want := Available()[0]
	if want == "onednn" && !strings.HasPrefix(ISA(), "avx512") {
		want = Available()[1]
	}
	if got := Backend(); got != want {
		t.Errorf("default backend %s, want %s (first of %v on ISA %s)", got, want, Available(), ISA())
	}
	if CurrentPrecision() != F32 {
		t.Errorf("default precision %v, want f32", CurrentPrecision())
	}
}

// configs lists every backend × precision this binary can run, fastest
// backends first, as "backend/precision".
func configs() [][2]string {
	var out [][2]string
	for _, b := range Available() {
		for _, p := range []Precision{F32, BF16} {
			if registry[b].supports(p) {
				out = append(out, [2]string{b, p.String()})
			}
		}
	}
	return out
}

// BenchmarkGemm reports GFLOP/s of the shapes that dominate a CQL step, per
// backend × precision × threads inside one call.
func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, cf := range configs() {
		if cf[0] == "gonum" {
			continue
		}
		for _, s := range []struct {
			name    string
			ta, tb  bool
			m, n, k int
		}{
			{"fwd-7936x256x256", false, false, 7936, 256, 256},
			{"dW-256x256x7936", true, false, 256, 256, 7936},
			{"dX-7936x256x256", false, true, 7936, 256, 256},
			{"fwd-7936x256x14", false, false, 7936, 256, 14},
			{"fwd-256x256x256", false, false, 256, 256, 256},
		} {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/%s/threads=%d", cf[0], cf[1], s.name, th), func(b *testing.B) {
					p, _ := ParsePrecision(cf[1])
					use(b, cf[0], p)
					SetThreads(th)
					defer SetThreads(1)
					a := randSlice(r, s.m*s.k)
					bb := randSlice(r, s.k*s.n)
					c := make([]float32, s.m*s.n)
					MatMul(s.ta, s.tb, s.m, s.n, s.k, a, bb, c, false)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						MatMul(s.ta, s.tb, s.m, s.n, s.k, a, bb, c, false)
					}
					b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkTwinCallers compares the two ways to use both cores for the twin
// critics' dominant GEMM (7936×256×256, one per critic): two goroutines
// with one thread per call ("2callers×1") against the two GEMMs one after
// the other with two threads per call ("1caller×2").
func BenchmarkTwinCallers(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const m, n, k = 7936, 256, 256
	for _, cf := range configs() {
		if cf[0] == "gonum" {
			continue
		}
		for _, mode := range []string{"2callers×1", "1caller×2"} {
			b.Run(cf[0]+"/"+cf[1]+"/"+mode, func(b *testing.B) {
				p, _ := ParsePrecision(cf[1])
				use(b, cf[0], p)
				var x, w, y [2][]float32
				for i := range x {
					x[i], w[i], y[i] = randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
				}
				step := func(i int) { MatMul(false, false, m, n, k, x[i], w[i], y[i], false) }
				run := func() {
					if mode == "1caller×2" {
						step(0)
						step(1)
						return
					}
					var wg sync.WaitGroup
					wg.Add(1)
					go func() { defer wg.Done(); step(1) }()
					step(0)
					wg.Wait()
				}
				if mode == "1caller×2" {
					SetThreads(2)
					defer SetThreads(1)
				}
				run()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					run()
				}
				b.ReportMetric(2*2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
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

// TestAffine checks the fused y = act(x·W + b) against the float64 reference
// (of bf16-rounded inputs for bf16), with and without bias, every activation,
// odd shapes; and that backends without a fused path leave y untouched.
func TestAffine(t *testing.T) {
	for _, cf := range configs() {
		t.Run(cf[0]+"/"+cf[1], func(t *testing.T) {
			p, _ := ParsePrecision(cf[1])
			use(t, cf[0], p)
			r := rand.New(rand.NewPCG(9, 10))
			for _, s := range [][3]int{{1, 14, 256}, {37, 5, 3}, {300, 64, 33}} {
				rows, in, out := s[0], s[1], s[2]
				for _, act := range []Act{ActNone, ActReLU, ActTanh} {
					for _, withBias := range []bool{false, true} {
						x, w := randSlice(r, rows*in), randSlice(r, in*out)
						var bias []float32
						if withBias {
							bias = randSlice(r, out)
						}
						y := randSlice(r, rows*out)
						y0 := append([]float32(nil), y...)
						if !Affine(rows, in, out, x, w, bias, y, act) {
							if cf[0] == "onednn" {
								t.Fatal("onednn did not fuse")
							}
							for i := range y {
								if y[i] != y0[i] {
									t.Fatal("unfused Affine wrote y")
								}
							}
							continue
						}
						xr, wr := x, w
						if p == BF16 {
							xr, wr = round(x), round(w)
						}
						for i := 0; i < rows; i++ {
							for j := 0; j < out; j++ {
								var v, scale float64
								for q := 0; q < in; q++ {
									v += float64(xr[i*in+q]) * float64(wr[q*out+j])
									scale += math.Abs(float64(xr[i*in+q]) * float64(wr[q*out+j]))
								}
								if withBias {
									v += float64(bias[j])
									scale += math.Abs(float64(bias[j]))
								}
								switch act {
								case ActReLU:
									v = max(v, 0)
								case ActTanh:
									v = math.Tanh(v)
								}
								tol := 2*float64(in+2)*0x1p-24*scale + 4e-6*math.Abs(v) + 1e-6
								if got := float64(y[i*out+j]); math.Abs(got-v) > tol {
									t.Fatalf("%dx%d→%d act=%d bias=%v: y[%d,%d]=%v want %v", rows, in, out, act, withBias, i, j, got, v)
								}
							}
						}
					}
				}
			}
		})
	}
}

// BenchmarkAffine compares three ways to run one hidden layer of the
// critic's big batch (7936×256→256, bias, ReLU): everything fused into the
// GEMM ("fused"), the bias fused and ReLU as a separate pass ("bias-fused",
// what nn does, as oneDNN's ReLU maps NaN to 0), and the separate path
// (bias broadcast, GEMM accumulating, ReLU pass). The three alternate within
// each iteration; the metrics are median per-iteration time ratios to the
// separate path.
func BenchmarkAffine(b *testing.B) {
	const rows, in, out = 7936, 256, 256
	r := rand.New(rand.NewPCG(1, 2))
	x, w, bias, y := randSlice(r, rows*in), randSlice(r, in*out), randSlice(r, out), make([]float32, rows*out)
	relu := func() {
		for i, v := range y {
			y[i] = max(v, 0)
		}
	}
	for _, cf := range configs() {
		if cf[0] != "onednn" {
			continue
		}
		b.Run(cf[0]+"/"+cf[1], func(b *testing.B) {
			p, _ := ParsePrecision(cf[1])
			use(b, cf[0], p)
			fused := func() {
				if !Affine(rows, in, out, x, w, bias, y, ActReLU) {
					b.Fatal("not fused")
				}
			}
			biasFused := func() {
				if !Affine(rows, in, out, x, w, bias, y, ActNone) {
					b.Fatal("not fused")
				}
				relu()
			}
			separate := func() {
				for i := 0; i < rows; i++ {
					copy(y[i*out:(i+1)*out], bias)
				}
				MatMul(false, false, rows, out, in, x, w, y, true)
				relu()
			}
			timed := func(f func()) float64 { t := time.Now(); f(); return time.Since(t).Seconds() }
			fused()
			biasFused()
			separate()
			var rf, rb []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tf, tb, ts := timed(fused), timed(biasFused), timed(separate)
				rf, rb = append(rf, tf/ts), append(rb, tb/ts)
			}
			slices.Sort(rf)
			slices.Sort(rb)
			b.ReportMetric(rf[len(rf)/2], "fused/separate")
			b.ReportMetric(rb[len(rb)/2], "bias-fused/separate")
		})
	}
}

// The bf16 helpers (ToBF16, ReLUToBF16, GradToBF16) against a plain
// reference, on every backend compiled in (onednn's AVX512_BF16 kernels or
// scalar C, the Go fallback elsewhere): ToBF16 rounds as RoundBF16;
// ReLUToBF16 keeps NaN and −0 and zeroes negatives; GradToBF16 masks where
// y is not > 0 (NaN and −0 included), sums columns row by row exactly like
// a sequential float32 loop, rounds as RoundBF16 and leaves d as it was.
// Widths that are not multiples of 16 exercise the tails.
func TestBF16Helpers(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	bits := func(x float32) uint32 { return math.Float32bits(x) }
	for _, be := range Available() {
		if be != "onednn" && be != "gonum" {
			continue
		}
		use(t, be, F32)
		for _, cols := range []int{1, 3, 16, 40, 256} {
			rows := 7
			n := rows * cols
			y := randSlice(r, n)
			y[0], y[n/2] = float32(math.NaN()), float32(math.Copysign(0, -1))
			// ToBF16.
			h := make([]uint16, n)
			ToBF16(h, y)
			for i, v := range y {
				if got := FromBF16(h[i]); math.IsNaN(float64(v)) != math.IsNaN(float64(got)) || (!math.IsNaN(float64(v)) && bits(got) != bits(RoundBF16(v))) {
					t.Fatalf("%s: ToBF16(%v) = %v, want %v", be, v, got, RoundBF16(v))
				}
			}
			// ReLUToBF16.
			got := append([]float32(nil), y...)
			ReLUToBF16(got, h)
			for i, v := range y {
				want := v
				if v < 0 {
					want = 0
				}
				if math.IsNaN(float64(v)) {
					if !math.IsNaN(float64(got[i])) || !math.IsNaN(float64(FromBF16(h[i]))) {
						t.Fatalf("%s cols %d: ReLU(NaN) = %v / bf16 %#x", be, cols, got[i], h[i])
					}
					continue
				}
				if bits(got[i]) != bits(want) || bits(FromBF16(h[i])) != bits(RoundBF16(want)) {
					t.Fatalf("%s cols %d: ReLU(%v) = %v, bf16 %v; want %v, %v", be, cols, v, got[i], FromBF16(h[i]), want, RoundBF16(want))
				}
			}
			// GradToBF16, with and without ReLU mask and bias.
			for _, relu := range []bool{true, false} {
				for _, withBias := range []bool{true, false} {
					d0 := randSlice(r, n)
					d := append([]float32(nil), d0...)
					var bias, wantBias []float32
					if withBias {
						bias = randSlice(r, cols)
						wantBias = append([]float32(nil), bias...)
					}
					GradToBF16(y, d, h, rows, cols, relu, bias)
					for row := 0; row < rows; row++ {
						for j := 0; j < cols; j++ {
							i := row*cols + j
							want := d0[i]
							if relu && !(y[i] > 0) {
								want = 0
							}
							if withBias {
								wantBias[j] += want
							}
							if bits(d[i]) != bits(d0[i]) || bits(FromBF16(h[i])) != bits(RoundBF16(want)) {
								t.Fatalf("%s cols %d relu %v: d[%d] = %v (was %v), bf16 %v, want %v", be, cols, relu, i, d[i], d0[i], FromBF16(h[i]), RoundBF16(want))
							}
						}
					}
					for j := range bias {
						if bits(bias[j]) != bits(wantBias[j]) {
							t.Fatalf("%s cols %d relu %v: bias[%d] = %v, want %v", be, cols, relu, j, bias[j], wantBias[j])
						}
					}
				}
			}
		}
	}
}

// OpenBLAS's pre-AVX fallback on an AVX2 CPU is worth a warning, unless
// OPENBLAS_CORETYPE chose it; its AVX2/AVX-512 kernels and pre-AVX CPUs are not.
func TestOpenBLASWarning(t *testing.T) {
	for _, c := range []struct {
		core        string
		set, avx2   bool
		wantWarning bool
	}{
		{"Prescott", false, true, true},
		{"Nehalem", false, true, true},
		{"Prescott", true, true, false},
		{"Prescott", false, false, false},
		{"Haswell", false, true, false},
		{"Zen", false, true, false},
		{"SkylakeX", false, true, false},
		{"Cooperlake", false, true, false},
	} {
		w := openblasWarning(c.core, c.set, c.avx2)
		if (w != "") != c.wantWarning {
			t.Errorf("openblasWarning(%q, set %v, avx2 %v) = %q", c.core, c.set, c.avx2, w)
		}
		if w != "" && (!strings.Contains(w, c.core) || !strings.Contains(w, "OPENBLAS_CORETYPE=Haswell")) {
			t.Errorf("warning %q names neither the kernel nor the fix", w)
		}
	}
	// The running backend's own warning agrees with its kernel report.
	if w := Warning(); w != "" && !strings.Contains(Kernel(), "auto-detected") {
		t.Errorf("Warning() = %q with kernel %s", w, Kernel())
	}
}

// The refusal of a bf16 GEMM says what would run one: it named onednn even
// to the onednn backend of a CPU without AVX-512 ("backend onednn has no
// bf16 GEMM (bf16 needs onednn)").
func TestNoBF16SaysWhatWouldRunIt(t *testing.T) {
	cases := []struct {
		backend             string
		haveOneDNN, oneBF16 bool
		want, notWant       string
	}{
		{"openblas", false, false, "which this binary lacks", "AVX-512"},
		{"openblas", true, true, "needs --backend onednn", "AVX-512"},
		{"onednn", true, false, "instruction set avx2: it needs AVX-512", "needs --backend onednn"},
		{"gonum", true, false, "needs --backend onednn on a CPU with AVX-512; this one's instruction set is avx2", "lacks"},
	}
	for _, c := range cases {
		got := noBF16(c.backend, c.haveOneDNN, c.oneBF16, "avx2")
		if !strings.Contains(got, c.want) || strings.Contains(got, c.notWant) {
			t.Errorf("noBF16(%s, onednn %v, bf16 %v) = %q, want %q and not %q", c.backend, c.haveOneDNN, c.oneBF16, got, c.want, c.notWant)
		}
	}
	// This machine's own refusal (gonum never has bf16) is one of them.
	defer func(b string, p Precision) {
		if err := Configure(b, p.String()); err != nil {
			t.Fatal(err)
		}
	}(Backend(), CurrentPrecision())
	err := Configure("gonum", "bf16")
	if err == nil || !strings.Contains(err.Error(), "backend gonum has no bf16 GEMM (bf16 needs") {
		t.Errorf("Configure(gonum, bf16): %v", err)
	}
}
