package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/internal/blas"
)

// TestMLPGradientsBF16 checks the bf16 mixed-precision path against f32 (the
// f32 path itself is checked by finite differences in gradcheck_test.go):
// same network, input and loss Σ w·y, gradients of every parameter and of
// the input computed once with f32 GEMMs and once with bf16 GEMM inputs.
//
// Tolerance, derived from bf16's 8-bit significand (unit roundoff
// u = 2⁻⁸): rounding both inputs of a GEMM perturbs each product by a
// relative ≤ 2u; with random-sign data the perturbations of a length-K sum
// grow like √K, as the sum itself does, so each GEMM's output has normwise
// relative error ≈ 2u. The input gradient passes through 2L GEMMs (L forward,
// L backward; here L = 3) and the errors add, so ‖g_bf16 − g_f32‖/‖g_f32‖ ≤
// 2L·2u. ReLU adds mask flips: a pre-activation z (O(1) at Xavier init)
// perturbed by ≈ 2u·|z| changes sign for a fraction ≈ 2·2u·φ(0) of units per
// ReLU layer (φ(0) = 0.4, the standard normal density at 0), and each flip
// changes a whole gradient entry, so the flips add a relative error of
// √((L−1)·4u·φ(0)). Checked with a safety factor of 2. Every tensor that a
// GEMM touches must also differ by more than u/16: less means bf16 did not
// run (the output bias gradient, Σ w, involves no GEMM and is exact).
func TestMLPGradientsBF16(t *testing.T) {
	old := blas.Describe()
	defer func() { _ = blas.Configure(old.Backend, old.Precision) }()
	if blas.Configure("onednn", "bf16") != nil {
		t.Skip("no bf16 GEMM in this build or on this CPU") // purego build
	}

	rng := rand.New(rand.NewPCG(11, 12))
	for _, act := range []Activation{ReLU, Tanh} {
		m := NewMLP("q", []int{17, 64, 64, 5}, act, Identity, rng)
		for _, l := range m.Layers {
			copy(l.B.Data, randVec(rng, l.Out, 0.1))
		}
		const rows = 96
		x := randVec(rng, rows*m.In(), 1)
		w := randVec(rng, rows*m.Out(), 1)
		grads := func(prec string) [][]float32 {
			if err := blas.Configure("onednn", prec); err != nil {
				t.Fatal(err)
			}
			ZeroGrad(m.Params())
			var c Cache
			m.Forward(&c, x, rows)
			dx := make([]float32, len(x))
			m.Backward(&c, w, dx, true)
			out := [][]float32{dx}
			for _, p := range m.Params() {
				out = append(out, append([]float32(nil), p.Grad...))
			}
			return out
		}
		want, got := grads("f32"), grads("bf16") // the last entry is the output bias
		u := blas.BF16UnitRoundoff
		L := float64(len(m.Layers))
		tol := 2 * 2 * L * u
		if act == ReLU {
			tol += math.Sqrt((L - 1) * 4 * u * 0.4)
		}
		tol *= 2
		names := []string{"input"}
		for _, p := range m.Params() {
			names = append(names, p.Name)
		}
		for i := range want {
			var d, n float64
			for j := range want[i] {
				d += sq(float64(got[i][j] - want[i][j]))
				n += sq(float64(want[i][j]))
			}
			rel := math.Sqrt(d / n)
			t.Logf("%v %s: relative difference %.2g (tolerance %.2g)", act, names[i], rel, tol)
			if !(rel <= tol) {
				t.Errorf("%v %s: bf16 gradient differs from f32 by %.3g relative, want ≤ %.3g", act, names[i], rel, tol)
			}
			if rel < u/16 && i != len(want)-1 {
				t.Errorf("%v %s: bf16 gradient equals f32 to %.2g: bf16 did not run", act, names[i], rel)
			}
		}
	}
}

func sq(x float64) float64 { return x * x }

// A NaN input must reach the output of a ReLU network (a diverged network
// stays visible in its loss). oneDNN's fused ReLU post-op maps NaN to 0, so
// the fused forward pass must not use it.
func TestMLPForwardPropagatesNaN(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	m := NewMLP("q", []int{4, 8, 8, 1}, ReLU, Identity, rng)
	x := randVec(rng, 3*4, 1)
	x[4] = float32(math.NaN()) // row 1
	var c Cache
	out := m.Forward(&c, x, 3)
	if !math.IsNaN(float64(out[1])) {
		t.Errorf("row with a NaN input gave %v, want NaN (backend %s)", out[1], blas.Backend())
	}
	if math.IsNaN(float64(out[0])) || math.IsNaN(float64(out[2])) {
		t.Errorf("NaN leaked into other rows: %v", out)
	}
}

// Under bf16, MLP rounds each layer's input, weights and output gradient
// once and reuses the copies (SetRoundOnce); that must give bit for bit what
// rounding inside every GEMM gives (the same values are rounded, the same
// primitives run), for outputs, parameter gradients and input gradients,
// with fusion on and off. The two paths must really differ in what they
// call: the copies exist only on the round-once path.
func TestMLPRoundOnceIsExact(t *testing.T) {
	old := blas.Describe()
	defer func() { _ = blas.Configure(old.Backend, old.Precision); SetRoundOnce(true); blas.SetFusion(true) }()
	if blas.Configure("onednn", "bf16") != nil {
		t.Skip("no bf16 GEMM in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, act := range []Activation{ReLU, Tanh} {
		m := NewMLP("q", []int{13, 48, 40, 3}, act, Identity, rng)
		for _, l := range m.Layers {
			copy(l.B.Data, randVec(rng, l.Out, 0.1))
		}
		const rows = 70
		x := randVec(rng, rows*m.In(), 1)
		w := randVec(rng, rows*m.Out(), 1)
		run := func(once, fused bool) [][]float32 {
			SetRoundOnce(once)
			blas.SetFusion(fused)
			ZeroGrad(m.Params())
			var c Cache
			y := append([]float32(nil), m.Forward(&c, x, rows)...)
			if c.half != once || (len(c.xh) > 0) != once {
				t.Fatalf("round-once %v: cache half=%v with %d rounded inputs", once, c.half, len(c.xh))
			}
			dx := make([]float32, len(x))
			m.Backward(&c, w, dx, true)
			out := [][]float32{y, dx}
			for _, p := range m.Params() {
				out = append(out, append([]float32(nil), p.Grad...))
			}
			return out
		}
		for _, fused := range []bool{true, false} {
			want, got := run(false, fused), run(true, fused)
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%v fused=%v tensor %d[%d]: round-once %v, per-GEMM rounding %v", act, fused, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}

// ToBF16 must round to nearest even like RoundBF16 on every finite value
// and ±Inf (subnormals may become zero of their sign: the AVX512_BF16
// instruction flushes them, and bf16 dot products treat them as zero
// anyway), and keep NaN a NaN, on whichever code the backend runs (the
// AVX512_BF16 instruction or the scalar loop), including lengths that leave
// a partial vector.
func TestToBF16MatchesRoundBF16(t *testing.T) {
	old := blas.Describe()
	defer func() { _ = blas.Configure(old.Backend, old.Precision) }()
	rng := rand.New(rand.NewPCG(23, 24))
	src := make([]float32, 1000)
	for i := range src {
		src[i] = math.Float32frombits(rng.Uint32())
	}
	// Ties and near-ties in both directions, signed zeros, infinities.
	src = append(src, 1+1.0/256, 1+3.0/256, 1+1.0/256+1.0/(1<<20), -(1 + 3.0/256), 0, float32(math.Copysign(0, -1)),
		float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xffffffff))
	for _, be := range []string{"onednn", "gonum"} {
		if blas.Configure(be, "") != nil {
			continue
		}
		for _, n := range []int{len(src), 37, 16, 5} {
			dst := make([]uint16, n)
			blas.ToBF16(dst, src[len(src)-n:])
			for i, v := range src[len(src)-n:] {
				got := blas.FromBF16(dst[i])
				if math.IsNaN(float64(v)) {
					if !math.IsNaN(float64(got)) {
						t.Errorf("%s: ToBF16(NaN %#x) = %#x, not a NaN", be, math.Float32bits(v), dst[i])
					}
					continue
				}
				if math.Abs(float64(v)) < 0x1p-126 && got == 0 && math.Signbit(float64(got)) == math.Signbit(float64(v)) {
					continue // VCVTNEPS2BF16 flushes subnormal inputs to zero, as VDPBF16PS reads them anyway
				}
				if want := blas.RoundBF16(v); math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%s: ToBF16(%g) = %g, RoundBF16 gives %g", be, v, got, want)
				}
			}
		}
	}
}

// The bf16 forward pass keeps NaN visible as the f32 one does.
func TestMLPForwardPropagatesNaNBF16(t *testing.T) {
	old := blas.Describe()
	defer func() { _ = blas.Configure(old.Backend, old.Precision) }()
	if blas.Configure("onednn", "bf16") != nil {
		t.Skip("no bf16 GEMM in this build or on this CPU")
	}
	TestMLPForwardPropagatesNaN(t)
}
