package cql

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/koopman"
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

func benchData(obsDim, actDim, n int, rng *rand.Rand) *dataset.Dataset {
	d := &dataset.Dataset{ObsDim: obsDim, ActDim: actDim}
	for i := 0; i < n; i++ {
		for j := 0; j < obsDim; j++ {
			d.Observations = append(d.Observations, float32(rng.NormFloat64()))
			d.NextObservations = append(d.NextObservations, float32(rng.NormFloat64()))
		}
		for j := 0; j < actDim; j++ {
			d.Actions = append(d.Actions, float32(2*rng.Float64()-1))
		}
		d.Rewards = append(d.Rewards, float32(rng.NormFloat64()))
		d.Terminals = append(d.Terminals, 0)
		d.Timeouts = append(d.Timeouts, 0)
	}
	return d
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
			d := benchData(11, 3, 10000, rng)
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
		o.Dataset = benchData(11, 3, 10000, rand.New(rand.NewPCG(1, 2))) // the benchmark's data, same rows
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
