package nn

import (
	"math/rand/v2"
	"testing"
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
