package cql

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/allocs"
	"github.com/koopq/koopq/sac"
)

// A checkpoint restores the learner's state normalizer: a learner built
// with another normalizer reads back the saved mean and std.
func TestCheckpointRestoresNormalizer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 1, 200, rng)
	norm := dataset.FitNormalizer(d, 1e-3)
	cfg := smallConfig(1)
	a := NewLearner(cfg, 3, 1, norm, rand.New(rand.NewPCG(1, 2)))
	path := filepath.Join(t.TempDir(), "ck.safetensors")
	if err := a.SaveCheckpoint(path, rand.NewPCG(3, 3), nil); err != nil {
		t.Fatal(err)
	}
	b := NewLearner(cfg, 3, 1, nil, rand.New(rand.NewPCG(1, 2)))
	if _, err := b.LoadCheckpoint(path, rand.NewPCG(3, 3)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Norm.Mean, norm.Mean) || !slices.Equal(b.Norm.Std, norm.Std) {
		t.Fatalf("restored normalizer %+v, want %+v", b.Norm, norm)
	}
}

// Run does exactly Cfg.Steps updates and calls the hook after each with the
// step count; a hook error stops training at once and is returned, and a
// cancelled context stops it before the next update.
func TestRunStepsHookAndCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 1, 100, rng)
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	cfg := smallConfig(7)
	cfg.BCSteps = 2
	tr, err := NewTrainer(cfg, d, nil, scale)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	if err := tr.Run(context.Background(), func(step int, _ Stats) error { seen = append(seen, step); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []int{1, 2, 3, 4, 5, 6, 7}) || tr.Learner.Steps != 7 {
		t.Fatalf("hook saw steps %v, learner at %d; want 1…7 and 7", seen, tr.Learner.Steps)
	}
	tr, _ = NewTrainer(cfg, d, nil, scale)
	stop := errors.New("stop")
	if err := tr.Run(context.Background(), func(step int, _ Stats) error {
		if step == 3 {
			return stop
		}
		return nil
	}); err != stop || tr.Learner.Steps != 3 {
		t.Fatalf("hook error at step 3: Run returned %v at step %d", err, tr.Learner.Steps)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr, _ = NewTrainer(cfg, d, nil, scale)
	if err := tr.Run(ctx, nil); !errors.Is(err, context.Canceled) || tr.Learner.Steps != 0 {
		t.Fatalf("cancelled context: Run returned %v after %d steps", err, tr.Learner.Steps)
	}
}

// NewTrainer rejects an action bound with High ≤ Low, naming the dimension.
func TestTrainerRejectsEmptyActionBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 2, 50, rng)
	for _, hi := range []float32{1, 0.5} {
		scale := sac.ActionScale{Low: []float32{-1, 1}, High: []float32{1, hi}}
		if _, err := NewTrainer(smallConfig(1), d, nil, scale); err == nil || !strings.Contains(err.Error(), "action bound 1") {
			t.Errorf("bound [1, %v]: error %v, want one naming action bound 1", hi, err)
		}
	}
	if _, err := NewTrainer(smallConfig(1), d, nil, sac.ActionScale{Low: []float32{-1, 0}, High: []float32{1, 1e-3}}); err != nil {
		t.Errorf("narrow but valid bound rejected: %v", err)
	}
}

// The trainer hands every batch to the augmenter it was given (nil means
// none): a trainer must not silently train plain CQL.
func TestTrainerUsesItsAugmenter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 1, 100, rng)
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	rec := &recordingAug{inner: augment.Gaussian{Sigma: 0.01}}
	tr, err := NewTrainer(smallConfig(3), d, rec, scale)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(rec.obs) != 3 || !rec.gotQ {
		t.Fatalf("augmenter saw %d batches (QGradient %v), want 3 with a QGradient", len(rec.obs), rec.gotQ)
	}
	if tr, _ = NewTrainer(smallConfig(1), d, nil, scale); tr.Aug.Name() != "cql" {
		t.Fatalf("nil augmenter became %q, want cql (plain CQL)", tr.Aug.Name())
	}
}

// NormalizeReward refuses a dataset whose complete episodes all have the
// same return (the scale 1000/(max − min) would be infinite).
func TestNormalizeRewardEqualReturns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(2, 1, 8, rng)
	for i := range d.Rewards {
		d.Rewards[i] = 1
	}
	d.Terminals[3], d.Terminals[7] = 1, 1 // two episodes of return 4
	cfg := smallConfig(1)
	cfg.NormalizeReward = true
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	if _, err := NewTrainer(cfg, d, nil, scale); err == nil || !strings.Contains(err.Error(), "normalize_reward") {
		t.Fatalf("equal episode returns: error %v, want one naming normalize_reward", err)
	}
}

// failingAug is an augmenter that always fails.
type failingAug struct{}

func (failingAug) Name() string { return "failing" }
func (failingAug) Augment(*dataset.Batch, []float32, []float32, *rand.Rand, QGradient) error {
	return errors.New("augmenter failed")
}

// An augmenter's error stops training: StepOnce and Run return it and no
// update is counted.
func TestStepOnceReturnsAugmenterError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 1, 100, rng)
	scale := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	tr, err := NewTrainer(smallConfig(3), d, failingAug{}, scale)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.StepOnce(); err == nil || !strings.Contains(err.Error(), "augmenter failed") {
		t.Fatalf("StepOnce: error %v, want the augmenter's", err)
	}
	if err := tr.Run(context.Background(), nil); err == nil || tr.Learner.Steps != 0 {
		t.Fatalf("Run: error %v after %d steps, want the augmenter's error and 0 steps", err, tr.Learner.Steps)
	}
}

// Once warm, a whole Step (no augmentation, S4RL-N, S4RL-Adv) allocates less
// than one batch of states: every buffer, S4RL-Adv's state gradient's
// included, lives in the learner. With S4RL-Adv it allocated 297 KB per step
// before stateGradient kept its buffers; the twin-critic split's goroutines
// (~1.3 KB) went when it moved to an nn.Pair (TestStepDoesNotAllocate).
func TestStepReusesItsBuffers(t *testing.T) {
	const S, A = 11, 3
	d := dataset.Synthetic(S, A, 2000, rand.New(rand.NewPCG(1, 1)))
	cfg := smallConfig(10)
	cfg.BCSteps = 0
	for _, aug := range []StateShift{augment.None{}, augment.Gaussian{Sigma: 3e-3}, &augment.Adversarial{Eps: 1e-4, Mode: "l2"}} {
		l := NewLearner(cfg, S, A, dataset.Identity(S), rand.New(rand.NewPCG(4, 4)))
		b := dataset.NewBatch(cfg.Batch, S, A)
		dataset.NewSampler(d, rand.New(rand.NewPCG(1, 2))).Sample(b)
		rng := rand.New(rand.NewPCG(3, 3))
		if _, err := l.Step(b, aug, rng); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const steps = 10
		for range steps {
			if _, err := l.Step(b, aug, rng); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		perStep := float64(after.TotalAlloc-before.TotalAlloc) / steps
		if limit := float64(cfg.Batch * S * 4); perStep >= limit {
			t.Errorf("%s: Step allocated %.0f bytes per warm step; want < %.0f (one batch of states)", aug.Name(), perStep, limit)
		}
	}
}

// Once warm, Step allocates nothing at all (issue 68, as sac's
// TestUpdateDoesNotAllocate): the two-goroutine phases run on the
// learner's nn.Pair as method values made once, and the actor's parameter
// list and the state-gradient callback are made once too.
func TestStepDoesNotAllocate(t *testing.T) {
	const S, A = 11, 3
	d := dataset.Synthetic(S, A, 2000, rand.New(rand.NewPCG(1, 1)))
	for _, bc := range []int{0, 1000} {
		cfg := smallConfig(10)
		cfg.BCSteps = bc
		cfg.Batch = 64
		for _, aug := range []StateShift{augment.None{}, &augment.Adversarial{Eps: 1e-4, Mode: "l2"}} {
			l := NewLearner(cfg, S, A, dataset.Identity(S), rand.New(rand.NewPCG(4, 4)))
			b := dataset.NewBatch(cfg.Batch, S, A)
			dataset.NewSampler(d, rand.New(rand.NewPCG(1, 2))).Sample(b)
			rng := rand.New(rand.NewPCG(3, 3))
			if _, err := l.Step(b, aug, rng); err != nil {
				t.Fatal(err)
			}
			if n := allocs.Min(10, func() { l.Step(b, aug, rng) }); n != 0 {
				t.Errorf("%s, BC steps %d: Step allocates %.1f times per call, want 0", aug.Name(), bc, n)
			}
		}
	}
}
