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

// tanh32 must match float64 math.Tanh to a few float32 ulps everywhere.
func TestTanh32Accuracy(t *testing.T) {
	worst := 0.0
	for i := -200000; i <= 200000; i++ {
		x := float32(i) * 1e-4 // [-20, 20]
		got := float64(tanh32(x))
		want := math.Tanh(float64(x))
		if err := math.Abs(got - want); err > worst {
			worst = err
		}
	}
	if worst > 5e-7 {
		t.Fatalf("max |tanh32 − tanh| = %g", worst)
	}
	if !math.IsNaN(float64(tanh32(float32(math.NaN())))) {
		t.Fatal("NaN did not propagate")
	}
	if tanh32(float32(math.Inf(1))) != 1 && math.Abs(float64(tanh32(float32(math.Inf(1))))-1) > 1e-7 {
		t.Fatalf("tanh(+Inf) = %v", tanh32(float32(math.Inf(1))))
	}
}

func BenchmarkTanh(b *testing.B) {
	x := randVec(rand.New(rand.NewPCG(1, 1)), 1<<16, 2)
	y := make([]float32, len(x))
	b.Run("tanh32", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			copy(y, x)
			Tanh.apply(y)
		}
		b.ReportMetric(float64(len(x)*b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
	b.Run("math.Tanh", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for j, v := range x {
				y[j] = float32(math.Tanh(float64(v)))
			}
		}
		b.ReportMetric(float64(len(x)*b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
}

// The AVX2 Adam and Polyak kernels must give bit for bit the scalar loops'
// results (same operations in the same order), over several steps, for
// lengths with tails, with wide-ranging gradients (tiny, huge, zero) and
// the first steps' large bias corrections; and the update must move every
// parameter with a nonzero gradient (an untouched parameter would mean a
// kernel skipped it).
func TestAdamPolyakKernelsMatchScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 kernels on this CPU")
	}
	for _, n := range []int{1, 7, 8, 9, 33, 257} {
		run := func(avx bool) []*Param {
			saved := useAVX2
			useAVX2 = avx
			defer func() { useAVX2 = saved }()
			r := rand.New(rand.NewPCG(uint64(n), 1))
			ps := []*Param{NewParam("a", n), NewParam("b", n+3)}
			tgt := []*Param{NewParam("a", n), NewParam("b", n+3)}
			for _, p := range ps {
				copy(p.Data, randVec(r, len(p.Data), 1))
			}
			opt := NewAdam(ps, 3e-4)
			for step := 0; step < 5; step++ {
				for _, p := range ps {
					for j := range p.Grad {
						p.Grad[j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(16)-8)))
					}
					p.Grad[0] = 0
				}
				before := append([]float32(nil), ps[1].Data...)
				opt.Step()
				for j := 1; j < len(before); j++ {
					if ps[1].Data[j] == before[j] {
						t.Fatalf("n=%d avx=%v: parameter %d did not move", n, avx, j)
					}
				}
				Polyak(tgt, ps, 0.005)
			}
			return append(ps, tgt...)
		}
		want, got := run(false), run(true)
		for i := range want {
			for j := range want[i].Data {
				if math.Float32bits(want[i].Data[j]) != math.Float32bits(got[i].Data[j]) {
					t.Fatalf("n=%d param %d[%d]: AVX2 %v, scalar %v", n, i, j, got[i].Data[j], want[i].Data[j])
				}
			}
		}
	}
}

// The AVX2 tanh kernels must give tanh32's and the scalar derivative's
// results bit for bit: on a sweep over every 61st float32 bit pattern (all
// signs and exponents: ±0, subnormals, the tiny-|x| and clamp boundaries,
// ±Inf, NaN), on the boundaries themselves, and for lengths with tails.
func TestTanhKernelsMatchScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 kernels on this CPU")
	}
	const clamp, tiny = float32(7.90531110763549805), float32(4e-4)
	var xs []float32
	for _, b := range []float32{clamp, tiny, 1, 0} {
		for _, v := range []float32{b, math.Nextafter32(b, 0), math.Nextafter32(b, 10)} {
			xs = append(xs, v, -v)
		}
	}
	for u := uint64(0); u < 1<<32; u += 61 {
		xs = append(xs, math.Float32frombits(uint32(u)))
	}
	same := func(a, b float32) bool {
		if a != a || b != b {
			return a != a && b != b
		}
		return math.Float32bits(a) == math.Float32bits(b)
	}
	scalar := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = tanh32(v)
		}
		return y
	}
	check := func(x []float32) {
		want := scalar(x)
		got := append([]float32(nil), x...)
		Tanh.apply(got) // AVX2 for the multiple of 8, tanh32 for the tail
		n := tanhAVX2(append([]float32(nil), x...))
		if n != len(x)/8*8 {
			t.Fatalf("tanhAVX2 processed %d of %d", n, len(x))
		}
		for i := range x {
			if !same(got[i], want[i]) {
				t.Fatalf("tanh(%g) (bits %#08x, index %d of %d): AVX2 %g (%#08x), tanh32 %g (%#08x)", x[i], math.Float32bits(x[i]),
					i, len(x), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
		// Backward from the outputs, with incoming gradients of all sizes.
		d := make([]float32, len(x))
		for i := range d {
			d[i] = math.Float32frombits(uint32(i) * 2654435761) // spread over all bit patterns
		}
		wantD := append([]float32(nil), d...)
		for i, v := range want {
			wantD[i] *= 1 - float32(v*v)
		}
		Tanh.backward(want, d)
		for i := range d {
			if !same(d[i], wantD[i]) {
				t.Fatalf("tanh backward at y=%g, index %d: AVX2 %g, scalar %g", want[i], i, d[i], wantD[i])
			}
		}
	}
	check(xs)
	for _, n := range []int{1, 7, 8, 9, 15, 17} {
		check(xs[:n])
	}
	if tanh32(float32(math.NaN())) == tanh32(float32(math.NaN())) {
		t.Fatal("tanh32(NaN) is not NaN")
	}
}
