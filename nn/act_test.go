package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The vectorized elementwise kernels must agree bit-for-bit with the scalar
// code, including tails (lengths not a multiple of 8), NaN, ±0 and negatives.
func TestElementwiseKernelsMatchScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, -1e-30, 1e-30, float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 100, 257} {
		x := randVec(rng, n, 1)
		for i := 0; i < n && i < len(special); i++ {
			x[(i*5)%n] = special[i]
		}
		d := randVec(rng, n, 1)
		run := func(avx bool) (y, dd, sum []float32) {
			saved := useAVX2
			useAVX2 = avx && saved
			defer func() { useAVX2 = saved }()
			y = append([]float32(nil), x...)
			ReLU.apply(y)
			dd = append([]float32(nil), d...)
			ReLU.backward(y, dd)
			sum = make([]float32, max(n, 1))
			if n > 0 {
				colSumAdd(append(append([]float32(nil), x...), d...), 2, n, sum)
			}
			return
		}
		y0, d0, s0 := run(false)
		y1, d1, s1 := run(true)
		for i := 0; i < n; i++ {
			if math.Float32bits(y0[i]) != math.Float32bits(y1[i]) || math.Float32bits(d0[i]) != math.Float32bits(d1[i]) ||
				math.Float32bits(s0[i]) != math.Float32bits(s1[i]) {
				t.Fatalf("n=%d i=%d x=%v: relu %v/%v mask %v/%v sum %v/%v", n, i, x[i], y0[i], y1[i], d0[i], d1[i], s0[i], s1[i])
			}
			// Semantics: max(0,x) keeping NaN; gradient only where y > 0.
			want := x[i]
			if x[i] < 0 {
				want = 0
			}
			if math.Float32bits(want) != math.Float32bits(y0[i]) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(y0[i]))) {
				t.Fatalf("relu(%v) = %v", x[i], y0[i])
			}
			if !(y0[i] > 0) && d0[i] != 0 {
				t.Fatalf("gradient leaked through y=%v", y0[i])
			}
		}
	}
}
