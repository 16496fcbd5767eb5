package cql

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
)

// StepFLOPs is the FLOP count of one CQL update for the given config and
// dimensions, counting GEMMs only (2 FLOPs per multiply-add): each critic
// runs forward over B(1+3N) rows and backward (weight gradients for every
// layer, input gradients for all but the first), plus target and actor-loss
// passes over B rows, plus the actor.
func StepFLOPs(cfg Config, obsDim, actDim int) float64 {
	B, N := float64(cfg.Batch), float64(cfg.NumActions)
	layerFLOPs := func(sizes []int) (total, first float64) {
		for i := 0; i+1 < len(sizes); i++ {
			f := 2 * float64(sizes[i]*sizes[i+1])
			total += f
			if i == 0 {
				first = f
			}
		}
		return
	}
	h := cfg.Net.Hidden
	qF, qFirst := layerFLOPs(append(append([]int{obsDim + actDim}, h...), 1))
	aF, aFirst := layerFLOPs(append(append([]int{obsDim}, h...), 2*actDim))
	R := B * (1 + 3*N)
	critic := R*qF + R*qF + R*(qF-qFirst) // forward, dW, dX
	critic += B * qF                      // target
	critic += B*qF + B*qF                 // actor-loss forward + input gradient
	actor := 2*B*aF + B*aF + B*(aF-aFirst)
	return 2*critic + actor
}

// BenchmarkCQLStep times one full CQL update on Hopper-sized data
// (obs 11, act 3) in the paper's 2×256 and CORL's 3×256 configurations,
// after the behaviour-cloning warm-up (the more expensive actor path).
func BenchmarkCQLStep(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
		aug  augment.Augmenter
	}{
		{"hopper-paper", DefaultConfig(), augment.None{}},
		{"hopper-corl", CORLConfig(), augment.None{}},
		{"hopper-paper-s4rl-n", DefaultConfig(), augment.Gaussian{Sigma: 3e-3}},
		{"hopper-paper-kfc++", DefaultConfig(), &lazyKFCpp{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			d := dataset.Synthetic(11, 3, 10000, rng)
			cfg := tc.cfg
			cfg.BCSteps = 0
			l := NewLearner(cfg, 11, 3, nil, rng)
			batch := dataset.NewBatch(cfg.Batch, 11, 3)
			s := dataset.NewSampler(d, rng)
			for i := 0; i < 3; i++ { // warm workspaces
				s.Sample(batch)
				if _, err := l.Step(batch, tc.aug, rng); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Sample(batch)
				if _, err := l.Step(batch, tc.aug, rng); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds()
			f := StepFLOPs(cfg, 11, 3)
			b.ReportMetric(float64(b.N)/sec, "steps/s")
			b.ReportMetric(f*float64(b.N)/sec/1e9, "GFLOP/s")
			b.ReportMetric(f/1e9, "GFLOP/step")
			b.Logf("%s: blas %s, kernel %s", tc.name, blas.Backend(), blas.Kernel())
		})
	}
}

// lazyKFCpp is KFC++ (p_K = 0.8) with a randomly initialized paper-sized
// Koopman model (N = 32, 512×512) on the benchmark's data. It is built, and
// its per-transition cache precomputed, on the first Augment call, which
// BenchmarkCQLStep makes in its untimed warm-up.
type lazyKFCpp struct{ a augment.Augmenter }

func (*lazyKFCpp) Name() string { return "kfc++" }

func (l *lazyKFCpp) Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, q augment.QGradient) error {
	if l.a == nil {
		m, err := koopman.NewModel(koopman.DefaultModelConfig(11, 3))
		if err != nil {
			return err
		}
		o := augment.DefaultOptions()
		o.Dataset = dataset.Synthetic(11, 3, 10000, rand.New(rand.NewPCG(1, 2))) // the benchmark's data, same rows
		o.Model = m
		if l.a, err = augment.New("kfc++", o); err != nil {
			return err
		}
	}
	return l.a.Augment(b, obs, next, rng, q)
}

func ExampleStepFLOPs() {
	fmt.Printf("paper %.2f GFLOP, corl %.2f GFLOP\n", StepFLOPs(DefaultConfig(), 11, 3)/1e9, StepFLOPs(CORLConfig(), 11, 3)/1e9)
	// Output: paper 6.85 GFLOP, corl 13.42 GFLOP
}

// BenchmarkCQLGEMMLimit runs only the GEMMs of one CQL update (same shapes,
// same two-goroutine split of the twin critics, one BLAS thread each), i.e.
// the time a step would take if everything but matrix multiplication were
// free. steps/s here is the machine's ceiling for BenchmarkCQLStep.
func BenchmarkCQLGEMMLimit(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"hopper-paper", DefaultConfig()}, {"hopper-corl", CORLConfig()}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := tc.cfg
			S, A, B, N := 11, 3, cfg.Batch, cfg.NumActions
			R := B * (1 + 3*N)
			qs := append(append([]int{S + A}, cfg.Net.Hidden...), 1)
			as := append(append([]int{S}, cfg.Net.Hidden...), 2*A)
			widest := 2 * A
			for _, h := range cfg.Net.Hidden {
				widest = max(widest, h)
			}
			widest = max(widest, S+A)
			type bufs struct{ x, y, w, g []float32 }
			mk := func(rows int) bufs {
				return bufs{make([]float32, rows*widest), make([]float32, rows*widest), make([]float32, widest*widest), make([]float32, widest*widest)}
			}
			// One layer stack: forward over rows, then (optionally) dW and dX.
			pass := func(sz []int, rows int, bb bufs, dW, dX bool) {
				for i := 0; i+1 < len(sz); i++ {
					blas.MatMul(false, false, rows, sz[i+1], sz[i], bb.x, bb.w, bb.y, false)
				}
				for i := len(sz) - 2; i >= 0; i-- {
					if dW {
						blas.MatMul(true, false, sz[i], sz[i+1], rows, bb.x, bb.y, bb.g, true)
					}
					if dX && (i > 0 || !dW) {
						blas.MatMul(false, true, rows, sz[i], sz[i+1], bb.y, bb.w, bb.x, false)
					}
				}
			}
			cb := [2]bufs{mk(R), mk(R)}
			ab := mk(2 * B)
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				pass(as, 2*B, ab, false, false) // actor on s and s'
				nn.Both(func(i int) {
					pass(qs, B, cb[i], false, false) // target
					pass(qs, B, cb[i], false, false) // Q(s, a_π)
				})
				nn.Both(func(i int) {
					pass(qs, R, cb[i], true, true)  // big batch: forward, dW, dX (not layer 0)
					pass(qs, B, cb[i], false, true) // ∂Q/∂a for the actor
				})
				pass(as, B, ab, true, true) // actor backward (forward replayed: counted in FLOPs below)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/sec, "steps/s")
			b.ReportMetric(StepFLOPs(cfg, S, A)*float64(b.N)/sec/1e9, "GFLOP/s")
			b.Logf("blas %s, kernel %s", blas.Backend(), blas.Kernel())
		})
	}
}
