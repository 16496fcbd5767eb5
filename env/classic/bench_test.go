package classic

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkEnvStep measures Step throughput (with a Reset whenever an episode
// ends) and reports it as steps/s.
func BenchmarkEnvStep(b *testing.B) {
	for _, name := range allNames {
		b.Run(name, func(b *testing.B) {
			e := mustMake(b, name)
			rng := rand.New(rand.NewPCG(1, 2))
			actions := make([][]float64, 1024)
			for i := range actions {
				actions[i] = randomAction(rng, e.ActionSpace())
			}
			e.Reset(rng)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, _, term, trunc, err := e.Step(actions[i&1023])
				if err != nil {
					b.Fatal(err)
				}
				if term || trunc {
					e.Reset(rng)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
