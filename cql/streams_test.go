package cql

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// learnerState is every weight of the actor, critics and target critics
// followed by log α and log α'.
func learnerState(l *Learner) []float32 {
	var out []float32
	for _, p := range l.checkpointParams() {
		out = append(out, p.Data...)
	}
	return append(out, float32(l.LogAlpha), float32(l.LogAlphaPrime))
}

func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d vs %d values", what, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s differs at %d: %v vs %v", what, i, a[i], b[i])
		}
	}
}

// pairedConfig is smallConfig with 12 steps across the BC warm-up and CQL,
// α and α' both tuned, so every random draw of an update is exercised.
func pairedConfig() Config {
	cfg := smallConfig(12)
	cfg.BCSteps = 4
	cfg.Batch = 16
	cfg.Net.Hidden = []int{8}
	cfg.AutoEntropy, cfg.Lagrange = true, true
	cfg.RNGStreams = RNGPaired
	return cfg
}

// countingAug shifts nothing but draws a different number of values from
// its stream on every call, as a stochastic augmenter would.
type countingAug struct{ calls int }

func (*countingAug) Name() string { return "counting" }
func (c *countingAug) Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, _ QGradient) error {
	c.calls++
	for i := 0; i < 1+c.calls%7; i++ {
		rng.Uint64()
	}
	copy(obs, b.Obs)
	copy(next, b.NextObs)
	return nil
}

// Issue 67, paired comparisons: with one seed, S4RL-N of σ = 0 is plain
// CQL bit for bit (its noise draws come from the augmentation stream only).
func TestPairedGaussianZeroIsNone(t *testing.T) {
	d := dataset.Synthetic(3, 1, 300, rand.New(rand.NewPCG(1, 1)))
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	run := func(aug StateShift) ([]float32, []Stats) {
		tr, err := NewTrainer(pairedConfig(), d, aug, scale)
		if err != nil {
			t.Fatal(err)
		}
		var stats []Stats
		if err := tr.Run(context.Background(), func(_ int, st Stats) error { stats = append(stats, st); return nil }); err != nil {
			t.Fatal(err)
		}
		return learnerState(tr.Learner), stats
	}
	wn, sn := run(augment.None{})
	wg, sg := run(augment.Gaussian{Sigma: 0})
	sameBits(t, "weights after 12 steps (none vs gaussian σ=0)", wn, wg)
	if !slices.Equal(sn, sg) {
		t.Fatalf("stats differ:\nnone     %+v\ngaussian %+v", sn, sg)
	}
}

// Two different augmenters with one seed start from the same weights, draw
// the same minibatches and the same policy noise at every step.
func TestPairedStreamsShareInitBatchesAndPolicyNoise(t *testing.T) {
	d := dataset.Synthetic(3, 1, 300, rand.New(rand.NewPCG(1, 1)))
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	type trace struct {
		init  []float32
		idx   [][]int
		noise [][]float32
	}
	run := func(aug StateShift) trace {
		tr, err := NewTrainer(pairedConfig(), d, aug, scale)
		if err != nil {
			t.Fatal(err)
		}
		var tc trace
		tc.init = learnerState(tr.Learner)
		tr.Learner.noiseHook = func(nz *stepNoise) {
			tc.noise = append(tc.noise, slices.Concat(nz.pi, nz.next, nz.ood, nz.unif))
		}
		err = tr.Run(context.Background(), func(int, Stats) error {
			tc.idx = append(tc.idx, slices.Clone(tr.batch.Idx))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return tc
	}
	a, b := run(augment.Gaussian{Sigma: 0.05}), run(&countingAug{})
	sameBits(t, "initial weights", a.init, b.init)
	for s := range a.idx {
		if !slices.Equal(a.idx[s], b.idx[s]) {
			t.Fatalf("step %d: minibatch indices differ:\n%v\n%v", s+1, a.idx[s], b.idx[s])
		}
		sameBits(t, "policy noise", a.noise[s], b.noise[s])
	}
	if len(a.idx) != 12 || len(a.noise) != 12 {
		t.Fatalf("traced %d batches, %d noise draws; want 12", len(a.idx), len(a.noise))
	}
}

// legacyRun is the single-stream trainer as it was before the paired
// layout: one PCG (seed, 0xc91) for the initialisation, the minibatches,
// the augmenter and the policy samples, and its state under "rng" in the
// checkpoint (written at step split > 0 and resumed from, through the
// learner's own checkpoint functions).
func legacyRun(t *testing.T, cfg Config, d *dataset.Dataset, scale sac.ActionScale, aug StateShift, split int) []float32 {
	t.Helper()
	src := rand.NewPCG(cfg.Seed, 0xc91)
	rng := rand.New(src)
	l := NewLearner(cfg, d.ObsDim, d.ActDim, nil, rng)
	sampler := dataset.NewSampler(d, rng)
	b := dataset.NewBatch(cfg.Batch, d.ObsDim, d.ActDim)
	for l.Steps < cfg.Steps {
		if l.Steps == split {
			path := filepath.Join(t.TempDir(), "old.safetensors")
			if err := l.SaveCheckpoint(path, src, nil); err != nil {
				t.Fatal(err)
			}
			src = rand.NewPCG(0, 0)
			rng = rand.New(src)
			l = NewLearner(cfg, d.ObsDim, d.ActDim, nil, rand.New(rand.NewPCG(7, 7)))
			if _, err := l.LoadCheckpoint(path, src); err != nil {
				t.Fatal(err)
			}
			sampler = dataset.NewSampler(d, rng)
		}
		sampler.Sample(b)
		scale.FromEnv(b.Act)
		if _, err := l.Step(b, aug, rng); err != nil {
			t.Fatal(err)
		}
	}
	return learnerState(l)
}

// A config without rng_streams (every config written before the field
// existed) keeps the single stream: the trainer reproduces the old
// single-stream loop bit for bit, resumes a checkpoint written by it (key
// "rng") bit-identically, and writes its checkpoints the old way.
func TestLegacyStreamResumesAsBefore(t *testing.T) {
	d := dataset.Synthetic(3, 1, 300, rand.New(rand.NewPCG(1, 1)))
	scale := sac.ActionScale{Low: []float32{-2}, High: []float32{2}}
	cfg := pairedConfig()
	cfg.RNGStreams = RNGLegacy
	aug := augment.Gaussian{Sigma: 0.01}
	want := legacyRun(t, cfg, d, scale, aug, -1)
	sameBits(t, "old loop resumed at step 5", want, legacyRun(t, cfg, d, scale, aug, 5))

	tr, err := NewTrainer(cfg, d, aug, scale)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "legacy trainer vs old loop", want, learnerState(tr.Learner))

	// A checkpoint of the old loop at step 5, resumed by the trainer.
	src := rand.NewPCG(cfg.Seed, 0xc91)
	rng := rand.New(src)
	l := NewLearner(cfg, d.ObsDim, d.ActDim, nil, rng)
	sampler, b := dataset.NewSampler(d, rng), dataset.NewBatch(cfg.Batch, d.ObsDim, d.ActDim)
	for l.Steps < 5 {
		sampler.Sample(b)
		scale.FromEnv(b.Act)
		if _, err := l.Step(b, aug, rng); err != nil {
			t.Fatal(err)
		}
	}
	old := filepath.Join(t.TempDir(), "old.safetensors")
	if err := l.SaveCheckpoint(old, src, map[string]string{"seed": "5"}); err != nil {
		t.Fatal(err)
	}
	tr, _ = NewTrainer(cfg, d, aug, scale)
	if _, err := tr.Resume(old); err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "trainer resumed from the old loop's checkpoint", want, learnerState(tr.Learner))

	// The legacy trainer's own checkpoints keep the old layout.
	path := filepath.Join(t.TempDir(), "new.safetensors")
	if err := tr.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	_, meta, err := nn.LoadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := meta["rng_streams"]; ok || meta["rng"] == "" {
		t.Fatalf("legacy checkpoint metadata: rng %q, rng_streams present %v", meta["rng"], ok)
	}

	// Layouts do not mix: each refuses the other's checkpoint.
	paired := pairedConfig()
	tp, _ := NewTrainer(paired, d, aug, scale)
	if _, err := tp.Resume(old); err == nil || !strings.Contains(err.Error(), "legacy single random stream") {
		t.Fatalf("paired trainer resumed a legacy checkpoint: %v", err)
	}
	pp := filepath.Join(t.TempDir(), "paired.safetensors")
	if err := tp.Save(pp, nil); err != nil {
		t.Fatal(err)
	}
	tl, _ := NewTrainer(cfg, d, aug, scale)
	if _, err := tl.Resume(pp); err == nil || !strings.Contains(err.Error(), "paired random streams") {
		t.Fatalf("legacy trainer resumed a paired checkpoint: %v", err)
	}
}

// In the paired layout a run checkpointed and resumed in a fresh trainer
// ends bit-identical to an uninterrupted one: every stream (the
// augmenter's too) is in the checkpoint.
func TestPairedResumeIsBitIdentical(t *testing.T) {
	d := dataset.Synthetic(3, 1, 300, rand.New(rand.NewPCG(1, 1)))
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	cfg := pairedConfig()
	aug := augment.Gaussian{Sigma: 0.01}
	run := func(split int) []float32 {
		tr, err := NewTrainer(cfg, d, aug, scale)
		if err != nil {
			t.Fatal(err)
		}
		if split > 0 {
			tr.Learner.Cfg.Steps = split
			if err := tr.Run(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "ck.safetensors")
			if err := tr.Save(path, nil); err != nil {
				t.Fatal(err)
			}
			_, meta, err := nn.LoadSafetensors(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := meta["rng"]; ok || !strings.Contains(meta["rng_streams"], `"augment"`) {
				t.Fatalf("paired checkpoint metadata: rng present %v, rng_streams %q", ok, meta["rng_streams"])
			}
			if tr, err = NewTrainer(cfg, d, aug, scale); err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Resume(path); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return learnerState(tr.Learner)
	}
	want := run(0)
	for _, split := range []int{3, 7} {
		sameBits(t, "resumed paired run", want, run(split))
	}
}

func TestRNGStreamsValidated(t *testing.T) {
	if DefaultConfig().RNGStreams != RNGPaired || CORLConfig().RNGStreams != RNGPaired {
		t.Fatal("new configs must use the paired streams")
	}
	cfg := DefaultConfig()
	cfg.RNGStreams = "single"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "rng_streams") {
		t.Fatalf("rng_streams %q accepted: %v", cfg.RNGStreams, err)
	}
}
