package sac

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/internal/blasbench"
	"github.com/koopq/koopq/nn"
)

// gemmOnly runs just the GEMMs of n SAC updates (gemmReplay) and returns
// their time.
func gemmOnly(net NetConfig, S, A, B, n int) time.Duration {
	replay := gemmReplay(net, S, A, B)
	t0 := time.Now()
	for it := 0; it < n; it++ {
		replay()
	}
	return time.Since(t0)
}

// gemmReplay returns a function that runs just the GEMMs of one SAC update
// (Update's shapes and its two-goroutine split, one BLAS thread each): the
// time an update would take if everything but matrix multiplication were
// free. Under bf16 the GEMMs take inputs already rounded (blas.GemmBF16),
// so the ceiling counts no f32 → bf16 conversion.
func gemmReplay(net NetConfig, S, A, B int) func() {
	qs := append(append([]int{S + A}, net.Hidden...), 1)
	as := append(append([]int{S}, net.Hidden...), 2*A)
	widest := max(S+A, 2*A)
	for _, h := range net.Hidden {
		widest = max(widest, h)
	}
	type bufs struct {
		x, y, w, g []float32
		xh, yh, wh []uint16
	}
	mk := func() bufs {
		f := func(n int) []float32 { return make([]float32, n) }
		h := func(n int) []uint16 { return make([]uint16, n) }
		return bufs{f(B * widest), f(B * widest), f(widest * widest), f(widest * widest), h(B * widest), h(B * widest), h(widest * widest)}
	}
	mm := func(ta, tb bool, m, n, k int, a []float32, ah []uint16, b []float32, bh []uint16, c []float32, acc bool) {
		if blas.CurrentPrecision() != blas.BF16 {
			blas.MatMul(ta, tb, m, n, k, a, b, c, acc)
			return
		}
		beta := float32(0)
		if acc {
			beta = 1
		}
		blas.GemmBF16(ta, tb, m, n, k, 1, ah, bh, beta, c, n)
	}
	// pass: forward over rows; then weight gradients (dW) and input
	// gradients (dX; layer 0 only with dX0).
	pass := func(sz []int, rows int, bb bufs, fwd, dW, dX, dX0 bool) {
		if fwd {
			for i := 0; i+1 < len(sz); i++ {
				mm(false, false, rows, sz[i+1], sz[i], bb.x, bb.xh, bb.w, bb.wh, bb.y, false)
			}
		}
		for i := len(sz) - 2; i >= 0; i-- {
			if dW {
				mm(true, false, sz[i], sz[i+1], rows, bb.x, bb.xh, bb.y, bb.yh, bb.g, true)
			}
			if dX && (i > 0 || dX0) {
				mm(false, true, rows, sz[i], sz[i+1], bb.y, bb.yh, bb.w, bb.wh, bb.x, false)
			}
		}
	}
	b := [2]bufs{mk(), mk()}
	h := [2]int{B / 2, B - B/2}
	return func() {
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

// BenchmarkSACSideBySide is BenchmarkSACStep for every GEMM backend ×
// precision in one run: the arms (one Agent each, same seed, Hopper-sized
// data, D4RL's 2×256 networks, batch 256) take turns, one update and one
// GEMM-only replay of it (gemmReplay) each per iteration. Figures are
// medians over iterations of per-iteration values, so load from other
// processes shifts all arms alike: updates/s, the ceiling ratio (GEMM-only
// time / update time) and × the OpenBLAS f32 update. ns/op means nothing.
func BenchmarkSACSideBySide(b *testing.B) {
	old := blas.Describe()
	b.Cleanup(func() { _ = blas.Configure(old.Backend, old.Precision) })
	const S, A = 11, 3
	type arm struct {
		name      string
		ag        *Agent
		s         *dataset.Sampler
		batch     *dataset.Batch
		rng       *rand.Rand
		replay    func()
		step, gem []float64
	}
	var arms []*arm
	base := -1
	for _, be := range blasbench.Configs() {
		blasbench.Use(b, be)
		rng := rand.New(rand.NewPCG(1, 2))
		cfg := DefaultConfig(1)
		a := &arm{name: be, ag: NewAgent(cfg, S, A, rng), s: dataset.NewSampler(dataset.Synthetic(S, A, 10000, rng), rng),
			batch: dataset.NewBatch(cfg.Batch, S, A), rng: rng, replay: gemmReplay(cfg.Net, S, A, cfg.Batch)}
		if be == "openblas-f32" {
			base = len(arms)
		}
		arms = append(arms, a)
		b.Logf("%s: %v", be, blas.Describe())
	}
	run := func(a *arm) (step, gem float64) {
		blasbench.Use(b, a.name)
		t0 := time.Now()
		a.s.Sample(a.batch)
		a.ag.Update(a.batch, a.rng)
		t1 := time.Now()
		a.replay()
		return t1.Sub(t0).Seconds(), time.Since(t1).Seconds()
	}
	for i := 0; i < 5; i++ { // warm-up: workspaces, primitive caches
		for _, a := range arms {
			run(a)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, a := range arms {
			s, g := run(a)
			a.step = append(a.step, s)
			a.gem = append(a.gem, g)
		}
	}
	b.StopTimer()
	for _, a := range arms {
		b.ReportMetric(1/blasbench.Median(a.step, nil), a.name+"-updates/s")
		b.ReportMetric(blasbench.Median(a.gem, a.step), a.name+"-ceiling-ratio")
		if base >= 0 {
			b.ReportMetric(blasbench.Median(arms[base].step, a.step), a.name+"-x-openblas")
		}
	}
}
