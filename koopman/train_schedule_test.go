package koopman

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// linearSystemData simulates the controlled linear system s' = A s + B a
// (a damped rotation with a drift, S = 3, m = 1) from random states and
// actions: n transitions, obs and next [n, 3], act [n, 1] in [−1, 1].
func linearSystemData(n int, seed uint64) (obs, act, next []float32) {
	A := [3][3]float64{{0.95, -0.2, 0}, {0.2, 0.95, 0}, {0, 0.1, 0.9}}
	B := [3]float64{0, 0.1, 0.3}
	rng := rand.New(rand.NewPCG(seed, 5))
	for range n {
		var s [3]float64
		for j := range s {
			s[j] = 2*rng.Float64() - 1
		}
		a := 2*rng.Float64() - 1
		for i := range 3 {
			v := B[i] * a
			for j := range 3 {
				v += A[i][j] * s[j]
			}
			obs = append(obs, float32(s[i]))
			next = append(next, float32(v))
		}
		act = append(act, float32(a))
	}
	return obs, act, next
}

// scheduleTraining is a small training on the linear system whose
// validation loss plateaus at once in the sense of the rule: a 50 %
// relative improvement (MinDelta) is needed to count, so the learning rate
// halves every LRPatience = 2 epochs until MinLR = LR/8, and training then
// stops with StopMinLR (epoch 9 when no epoch after the first counts).
func scheduleTraining() (ModelConfig, TrainConfig, [3][]float32) {
	obs, act, next := linearSystemData(400, 1)
	mc := DefaultModelConfig(3, 1)
	mc.Hidden, mc.Latent, mc.Seed = []int{16, 16}, 4, 3
	tc := DefaultTrainConfig()
	tc.MaxEpochs, tc.Batch, tc.LR, tc.Seed = 20, 32, 1e-3, 5
	tc.Patience, tc.MinDelta = 0, 0.5
	tc.LRPatience, tc.LRFactor, tc.MinLR = 2, 0.5, 1e-3/8
	return mc, tc, [3][]float32{obs, act, next}
}

// replaySchedule applies the documented plateau rule to the recorded
// validation losses: the learning rate each epoch should have had, and why
// training should have stopped ("" if it should not have).
func replaySchedule(cfg TrainConfig, epochs []EpochStats) (lrs []float64, stopped string) {
	lr, best, since, sinceLR := cfg.LR, math.Inf(1), 0, 0
	for _, es := range epochs {
		lrs = append(lrs, lr)
		if stopped != "" {
			continue // epochs after a stop are a bug; the lengths then differ
		}
		if math.IsInf(best, 1) || es.ValTotal < best*(1-cfg.MinDelta) {
			since, sinceLR = 0, 0
		} else {
			since++
			sinceLR++
		}
		best = math.Min(best, es.ValTotal)
		switch {
		case cfg.Patience > 0 && since >= cfg.Patience:
			stopped = StopEarly
		case cfg.LRPatience > 0 && sinceLR >= cfg.LRPatience:
			if lr <= cfg.MinLR {
				stopped = StopMinLR
			} else {
				lr, sinceLR = math.Max(lr*cfg.LRFactor, cfg.MinLR), 0
			}
		}
	}
	return lrs, stopped
}

// The learning rate halves after every LRPatience epochs of plateau (the
// recorded per-epoch rates follow the rule exactly), the halved rate is
// the one Adam uses (the losses part from a constant-rate training's at the
// first halving), and training ends with StopMinLR once a plateau finds the
// rate at MinLR.
func TestTrainHalvesLRonPlateau(t *testing.T) {
	mc, tc, d := scheduleTraining()
	res, err := Train(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	lrs, stopped := replaySchedule(tc, res.Epochs)
	var got []float64
	for _, es := range res.Epochs {
		got = append(got, es.LR)
	}
	t.Logf("learning rates %v, stopped %s (%s) after %d epochs", got, res.Stopped, res.StopDetail, len(res.Epochs))
	for i := range lrs {
		if got[i] != lrs[i] {
			t.Fatalf("epoch %d: lr %v, the rule gives %v (all: %v, want %v)", i+1, got[i], lrs[i], got, lrs)
		}
	}
	if res.Stopped != StopMinLR || stopped != StopMinLR {
		t.Fatalf("stopped %q after %d epochs (rule: %q), want %q", res.Stopped, len(res.Epochs), stopped, StopMinLR)
	}
	if halvings := math.Log2(tc.LR / lrs[len(lrs)-1]); halvings != 3 || res.FinalLR != tc.MinLR {
		t.Fatalf("final lr %v (%v halvings), want min_lr %v after 3", res.FinalLR, halvings, tc.MinLR)
	}
	if res.Undertrained || res.StopDetail == "" {
		t.Fatalf("undertrained %v, detail %q", res.Undertrained, res.StopDetail)
	}

	// The same training at a constant rate agrees up to the first halving
	// and differs after it.
	first := 0
	for i, lr := range lrs {
		if lr != tc.LR {
			first = i
			break
		}
	}
	flat := tc
	flat.LRPatience, flat.MaxEpochs = 0, first+1
	ref, err := Train(context.Background(), newModel(t, mc), d[0], d[1], d[2], flat, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if ref.Epochs[i].ValTotal != res.Epochs[i].ValTotal {
			t.Fatalf("epoch %d before any halving differs: %v vs %v", i+1, ref.Epochs[i].ValTotal, res.Epochs[i].ValTotal)
		}
	}
	if ref.Epochs[first].ValTotal == res.Epochs[first].ValTotal {
		t.Fatalf("epoch %d (lr %v) has the constant-rate training's loss: the halved rate is not used", first+1, lrs[first])
	}
}

// Early stopping still ends a training whose learning rate is scheduled,
// with the machine-readable reason.
func TestTrainEarlyStoppingReason(t *testing.T) {
	mc, tc, d := scheduleTraining()
	tc.Patience, tc.LRPatience = 3, 0
	res, err := Train(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, stopped := replaySchedule(tc, res.Epochs)
	if res.Stopped != StopEarly || stopped != StopEarly || len(res.Epochs) >= tc.MaxEpochs {
		t.Fatalf("stopped %q after %d epochs (rule: %q), want %q", res.Stopped, len(res.Epochs), stopped, StopEarly)
	}
	// It stops at the first epoch where the rule says so, not later.
	if _, before := replaySchedule(tc, res.Epochs[:len(res.Epochs)-1]); before != "" {
		t.Fatalf("the rule already stopped before epoch %d (%q)", len(res.Epochs), before)
	}
	if res.Undertrained || !strings.Contains(res.StopDetail, "3 epochs") {
		t.Fatalf("undertrained %v, detail %q", res.Undertrained, res.StopDetail)
	}
	// Every epoch's speed is its training rows over its seconds.
	for _, e := range res.Epochs {
		if got := e.SamplesPerSec * e.Seconds; !(e.Seconds > 0) || math.Abs(got-float64(res.NTrain)) > 1e-6*float64(res.NTrain) {
			t.Fatalf("epoch %d: %v samples/s over %v s = %v samples, want the %d training rows", e.Epoch, e.SamplesPerSec, e.Seconds, got, res.NTrain)
		}
	}
}

// A training stopped mid-way through the learning-rate schedule (before,
// at and after halvings) and resumed from its checkpoint ends bit for bit
// like the uninterrupted one: weights, per-epoch losses and rates, stop
// reason.
func TestTrainResumeKeepsLRSchedule(t *testing.T) {
	mc, tc, d := scheduleTraining()
	ref := newModel(t, mc)
	want, err := Train(context.Background(), ref, d[0], d[1], d[2], tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAfter := range []int{3, 4, 7} {
		ck := filepath.Join(t.TempDir(), "c")
		ctx, cancel := context.WithCancel(context.Background())
		_, err := TrainWith(ctx, newModel(t, mc), d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck,
			OnEpoch: func(es EpochStats) {
				if es.Epoch == stopAfter {
					cancel()
				}
			}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stop after %d: %v", stopAfter, err)
		}
		m := newModel(t, mc)
		got, err := TrainWith(context.Background(), m, d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck})
		if err != nil {
			t.Fatal(err)
		}
		equalWeights(t, ref, m)
		if got.Stopped != want.Stopped || got.FinalLR != want.FinalLR || len(got.Epochs) != len(want.Epochs) {
			t.Fatalf("stop after %d: %s at lr %v after %d epochs, want %s at %v after %d", stopAfter,
				got.Stopped, got.FinalLR, len(got.Epochs), want.Stopped, want.FinalLR, len(want.Epochs))
		}
		for i := range want.Epochs {
			a, b := want.Epochs[i], got.Epochs[i]
			a.Seconds, a.SamplesPerSec, b.Seconds, b.SamplesPerSec = 0, 0, 0, 0
			if a != b {
				t.Fatalf("stop after %d: epoch %d %+v, want %+v", stopAfter, i+1, b, a)
			}
		}
	}
}

// A training that reaches max_epochs while the validation loss still
// improves is flagged undertrained, with a warning; one that reaches it on
// a plateau is not.
func TestTrainFlagsUndertrainedAtCap(t *testing.T) {
	mc, tc, d := scheduleTraining()
	tc.MaxEpochs, tc.MinDelta, tc.LRPatience = 3, 0, 0 // three epochs from scratch: still improving
	res, err := Train(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != StopMaxEpochs || !res.Undertrained || !strings.Contains(res.Warning, "undertrained") {
		t.Fatalf("stopped %q, undertrained %v, warning %q; want max_epochs, flagged", res.Stopped, res.Undertrained, res.Warning)
	}
	mc, tc, d = scheduleTraining()
	tc.MaxEpochs, tc.LRPatience = 8, 0 // MinDelta 0.5: only epoch 1 counts as an improvement
	res, err = Train(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != StopMaxEpochs || res.Undertrained || res.Warning != "" {
		t.Fatalf("plateau at the cap: stopped %q, undertrained %v, warning %q", res.Stopped, res.Undertrained, res.Warning)
	}
	// The window's edge: the last counted improvement (epoch 1)
	// UndertrainedWindow − 1 epochs before the cap is flagged, exactly
	// UndertrainedWindow epochs before is not.
	for _, c := range []struct {
		epochs  int
		flagged bool
	}{{UndertrainedWindow, true}, {UndertrainedWindow + 1, false}} {
		mc, tc, d = scheduleTraining()
		tc.MaxEpochs, tc.LRPatience = c.epochs, 0
		if res, err = Train(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, nil); err != nil {
			t.Fatal(err)
		}
		if res.Undertrained != c.flagged {
			t.Errorf("max_epochs %d, last improvement at epoch 1: undertrained %v, want %v", c.epochs, res.Undertrained, c.flagged)
		}
	}
}

// Invalid schedule settings are refused; LRPatience 0 needs none of them.
func TestTrainConfigValidatesSchedule(t *testing.T) {
	for name, mut := range map[string]func(*TrainConfig){
		"negative patience": func(c *TrainConfig) { c.LRPatience = -1 },
		"factor 1":          func(c *TrainConfig) { c.LRFactor = 1 },
		"factor 0":          func(c *TrainConfig) { c.LRFactor = 0 },
		"min above lr":      func(c *TrainConfig) { c.MinLR = 1 },
		"nan min":           func(c *TrainConfig) { c.MinLR = math.NaN() },
	} {
		c := DefaultTrainConfig()
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := DefaultTrainConfig()
	c.LRPatience, c.LRFactor, c.MinLR = 0, 0, 0
	if err := c.Validate(); err != nil {
		t.Errorf("schedule off: %v", err)
	}
}

// TestTrainStopsOnDivergence: a linear model (identity activations) with
// a learning rate far too large overflows, and training stops with an
// error naming the epoch instead of saving non-finite weights.
func TestTrainStopsOnDivergence(t *testing.T) {
	mc, tc, d := scheduleTraining()
	mc.EncoderHidden, mc.EncoderOutput, mc.DecoderHidden = "identity", "identity", "identity"
	tc.LR, tc.MaxEpochs = 1e12, 5
	_, err := Train(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, nil)
	if err == nil || !(strings.Contains(err.Error(), "diverged at epoch") || strings.Contains(err.Error(), "is NaN at epoch")) {
		t.Fatalf("lr 1e12: %v, want a divergence error", err)
	}
	t.Log(err)
}
