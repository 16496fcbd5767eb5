package sac

import (
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/dataset"
)

func BenchmarkSACStepNew(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := dataset.Synthetic(11, 3, 10000, rng)
	cfg := DefaultConfig(1)
	ag := NewAgent(cfg, 11, 3, rng)
	batch := dataset.NewBatch(cfg.Batch, 11, 3)
	s := dataset.NewSampler(d, rng)
	for i := 0; i < 3; i++ {
		s.Sample(batch)
		ag.Update(batch, rng)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Sample(batch)
		ag.Update(batch, rng)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}
