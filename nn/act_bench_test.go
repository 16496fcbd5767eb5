package nn

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkActivation times the elementwise passes of a 7936×256 hidden
// layer (one CQL critic batch): forward, backward mask and bias gradient.
func BenchmarkActivation(b *testing.B) {
	const rows, cols = 7936, 256
	rng := rand.New(rand.NewPCG(1, 1))
	y := randVec(rng, rows*cols, 1)
	d := randVec(rng, rows*cols, 1)
	bias := make([]float32, cols)
	b.Run("relu-forward", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ReLU.apply(y)
		}
		b.ReportMetric(float64(rows*cols*b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
	b.Run("relu-backward", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ReLU.backward(y, d)
		}
		b.ReportMetric(float64(rows*cols*b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
	b.Run("bias-grad", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			colSumAdd(d, rows, cols, bias)
		}
		b.ReportMetric(float64(rows*cols*b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
}

// BenchmarkBackwardBiasGrad compares the ReLU backward mask plus bias
// gradient over the critic's big batch (7936×256) as two passes (backward,
// then colSumAdd) and as one row-by-row pass (backwardBiasGrad), alternating
// within each iteration; "fused/separate" is the median per-iteration time
// ratio (robust to load from other processes).
func BenchmarkBackwardBiasGrad(b *testing.B) {
	const rows, cols = 7936, 256
	rng := rand.New(rand.NewPCG(1, 2))
	y, d0 := randVec(rng, rows*cols, 1), randVec(rng, rows*cols, 1)
	d, bias := make([]float32, rows*cols), make([]float32, cols)
	ratios := make([]float64, 0, b.N)
	for i := 0; i < b.N; i++ {
		copy(d, d0)
		t0 := time.Now()
		ReLU.backwardBiasGrad(y, d, rows, cols, bias)
		t1 := time.Now()
		copy(d, d0)
		t2 := time.Now()
		ReLU.backward(y, d)
		colSumAdd(d, rows, cols, bias)
		ratios = append(ratios, t1.Sub(t0).Seconds()/time.Since(t2).Seconds())
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "fused/separate")
}
