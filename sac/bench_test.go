package sac

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/nn"
)

// gemmOnly runs just the GEMMs of n SAC updates (Update's shapes and its
// two-goroutine split, one BLAS thread each): the time an update would
// take if everything but matrix multiplication were free.
func gemmOnly(net NetConfig, S, A, B, n int) time.Duration {
	qs := append(append([]int{S + A}, net.Hidden...), 1)
	as := append(append([]int{S}, net.Hidden...), 2*A)
	widest := max(S+A, 2*A)
	for _, h := range net.Hidden {
		widest = max(widest, h)
	}
	type bufs struct{ x, y, w, g []float32 }
	mk := func() bufs {
		f := func(n int) []float32 { return make([]float32, n) }
		return bufs{f(B * widest), f(B * widest), f(widest * widest), f(widest * widest)}
	}
	// pass: forward over rows; then weight gradients (dW) and input
	// gradients (dX; layer 0 only with dX0).
	pass := func(sz []int, rows int, bb bufs, fwd, dW, dX, dX0 bool) {
		if fwd {
			for i := 0; i+1 < len(sz); i++ {
				blas.MatMul(false, false, rows, sz[i+1], sz[i], bb.x, bb.w, bb.y, false)
			}
		}
		for i := len(sz) - 2; i >= 0; i-- {
			if dW {
				blas.MatMul(true, false, sz[i], sz[i+1], rows, bb.x, bb.y, bb.g, true)
			}
			if dX && (i > 0 || dX0) {
				blas.MatMul(false, true, rows, sz[i], sz[i+1], bb.y, bb.w, bb.x, false)
			}
		}
	}
	b := [2]bufs{mk(), mk()}
	h := [2]int{B / 2, B - B/2}
	t0 := time.Now()
	for it := 0; it < n; it++ {
		nn.Both(func(i int) { // actor at s' and s, half the rows each
			pass(as, h[i], b[i], true, false, false, false)
			pass(as, h[i], b[i], true, false, false, false)
		})
		nn.Both(func(i int) { // target and actor-loss Q
			pass(qs, B, b[i], true, false, false, false)
			pass(qs, B, b[i], true, false, false, false)
		})
		nn.Both(func(i int) { // ∂Q/∂ã, Bellman forward and backward
			pass(qs, B, b[i], false, false, true, true)
			pass(qs, B, b[i], true, true, true, false)
		})
		nn.Both(func(i int) { // actor backward
			pass(as, h[i], b[i], false, true, true, false)
		})
	}
	return time.Since(t0)
}

// BenchmarkSACStep times one SAC update (Agent.Update) with D4RL's
// networks (2×256) and batch 256 on Hopper-sized data (obs 11, act 3), and
// reports updates/s, GFLOP/s (UpdateFLOPs) and the ratio to the GEMM-only
// ceiling measured right after in the same benchmark (gemm_ratio; 1 means
// everything but the GEMMs is free).
func BenchmarkSACStep(b *testing.B) {
	for _, tc := range []struct {
		name string
		S, A int
	}{{"hopper", 11, 3}, {"walker2d", 17, 6}} {
		b.Run(tc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			d := dataset.Synthetic(tc.S, tc.A, 10000, rng)
			cfg := DefaultConfig(1)
			ag := NewAgent(cfg, tc.S, tc.A, rng)
			batch := dataset.NewBatch(cfg.Batch, tc.S, tc.A)
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
			b.StopTimer()
			sec := b.Elapsed().Seconds()
			gemm := gemmOnly(cfg.Net, tc.S, tc.A, cfg.Batch, b.N).Seconds()
			f := UpdateFLOPs(cfg.Net, tc.S, tc.A, cfg.Batch)
			b.ReportMetric(float64(b.N)/sec, "updates/s")
			b.ReportMetric(f*float64(b.N)/sec/1e9, "GFLOP/s")
			b.ReportMetric(float64(b.N)/gemm, "gemm_limit_updates/s")
			b.ReportMetric(gemm/sec, "gemm_ratio")
			b.Logf("%.3f GFLOP/update; blas %s, kernel %s", f/1e9, blas.Backend(), blas.Kernel())
		})
	}
}

// BenchmarkRunHopper times the resumable run end to end on hopper with
// D4RL's networks: env steps, one update per step, a snapshot (5
// deterministic + 5 stochastic evaluation episodes, policy file) and a
// checkpoint (networks, Adam, replay rows) every 1000 steps. The 256
// uniform warm-up steps (no updates) count in both time and steps, so
// env_steps/s slightly overstates a long run's update-bound rate.
func BenchmarkRunHopper(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c := DefaultRunConfig("hopper", 1e9)
		c.SAC.TotalSteps, c.SAC.StartSteps = 3000, 256
		c.SnapshotEvery, c.CheckpointEvery = 1000, 1000
		dir := b.TempDir()
		t0 := time.Now()
		if _, err := StartRun(context.Background(), c, dir, nil); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(c.SAC.TotalSteps)/time.Since(t0).Seconds(), "env_steps/s")
	}
}
