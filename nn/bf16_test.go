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
