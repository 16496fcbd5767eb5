package augment_test

import (
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
)

// BenchmarkKFCppAugment times one KFC++ Augment call (p_K = 1, batch 256)
// with a paper-sized random model (S = 11, m = 3, N = 32, 512×512) from the
// cache, from a cache holding 92.5% of the rows and from the per-batch
// Shifter path, and reports the precompute.
func BenchmarkKFCppAugment(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := dataset.Synthetic(11, 3, 20000, rng)
	m, err := koopman.NewModel(koopman.DefaultModelConfig(11, 3))
	if err != nil {
		b.Fatal(err)
	}
	perRow := int64(4641) // KFC++ cache bytes per transition at N = 32 (PrecomputeInfo.BytesPerTransition)
	for _, tc := range []struct {
		name  string
		cache int64
	}{
		{"cached", augment.GiB},
		// 92.5% of the rows cached: hopper-medium's 1M transitions under the
		// default 4 GiB budget.
		{"partial", perRow * 18500},
		{"shifter", 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := augment.DefaultOptions()
			o.Dataset, o.Model, o.KoopmanProb, o.CacheGiB = d, m, 1, gib(tc.cache)
			a, err := augment.NewKoopman("kfc++", o)
			if err != nil {
				b.Fatal(err)
			}
			p := a.Precompute()
			b.Logf("precompute: %d transitions in %.2fs on %d workers (%.0f µs/transition), %d B/transition, %.1f MiB",
				p.Cached, p.Seconds, p.Workers, 1e6*p.Seconds/float64(max(p.Cached, 1)), p.BytesPerTransition, float64(p.Bytes)/(1<<20))
			batch := dataset.NewBatch(256, 11, 3)
			s := dataset.NewSampler(d, rng)
			obs, next := make([]float32, 256*11), make([]float32, 256*11)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Sample(batch)
				if err := a.Augment(batch, obs, next, rng, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
