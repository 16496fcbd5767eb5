package cql

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/gradcheck"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// The scalar Adam (α, α′) adds ε = 1e-8 to √v̂ as PyTorch's Adam does: a
// gradient far below ε moves the parameter by lr·g/(|g| + ε), a small
// step in the gradient's descent direction (a sign slip in ε flips it).
func TestScalarAdamEpsilon(t *testing.T) {
	var s sac.ScalarAdam
	x := 0.0
	s.Step(&x, 1e-10, 1)
	want := -1e-10 / (1e-10 + 1e-8)
	if math.Abs(x-want) > 1e-12 {
		t.Fatalf("x after one step with g = 1e-10: %v, want %v", x, want)
	}
}

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

// Validate rejects each bad field with an error naming it and accepts the
// edge values that are allowed (γ = 0, τ = 1, zero steps, BC and reward
// episode steps, every actor_init spelling).
func TestConfigValidateEdges(t *testing.T) {
	ok := []func(*Config){
		func(c *Config) { c.Gamma = 0 },
		func(c *Config) { c.Tau = 1 },
		func(c *Config) { c.Steps, c.BCSteps, c.RewardEpisodeSteps = 0, 0, 0 },
		func(c *Config) { c.Batch, c.NumActions = 1, 1 },
		func(c *Config) { c.ActorInit = "" },
		func(c *Config) { c.ActorInit = "net" },
		func(c *Config) { c.ActorInit = "torch" },
		func(c *Config) { c.LogStdOffset = -1 },
	}
	for i, f := range ok {
		c := smallConfig(1)
		f(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("valid config %d rejected: %v", i, err)
		}
	}
	bad := []struct {
		want string
		f    func(*Config)
	}{
		{"batch", func(c *Config) { c.Batch = 0 }},
		{"num_actions", func(c *Config) { c.NumActions = 0 }},
		{"gamma", func(c *Config) { c.Gamma = -0.01 }},
		{"gamma", func(c *Config) { c.Gamma = 1 }},
		{"tau", func(c *Config) { c.Tau = 0 }},
		{"tau", func(c *Config) { c.Tau = 1.01 }},
		{"learning rates", func(c *Config) { c.LRActor = 0 }},
		{"learning rates", func(c *Config) { c.LRCritic = 0 }},
		{"learning rates", func(c *Config) { c.LRAlphaPrime = 0 }},
		{"temp", func(c *Config) { c.Temp = 0 }},
		{"alpha", func(c *Config) { c.Alpha = 0 }},
		{"steps", func(c *Config) { c.Steps = -1 }},
		{"steps", func(c *Config) { c.BCSteps = -1 }},
		{"actor_init", func(c *Config) { c.ActorInit = "xavier" }},
		{"log_std_offset", func(c *Config) { c.LogStdOffset = math.NaN() }},
		{"log_std_offset", func(c *Config) { c.LogStdOffset = math.Inf(-1) }},
		{"reward_episode_steps", func(c *Config) { c.RewardEpisodeSteps = -1 }},
		{"hidden", func(c *Config) { c.Net.Hidden = nil }},
	}
	for _, b := range bad {
		c := smallConfig(1)
		b.f(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("config with bad %s: error %v", b.want, err)
		}
	}
}

// The logsumexp's uniform actions are drawn from U[−1, 1]^A (the reference
// test replaces the noise, so it cannot see how it is drawn): after a step
// every one lies in [−1, 1], with mean ≈ 0 and variance ≈ 1/3.
func TestUniformActionsCoverBox(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 2, 300, rng)
	scale := sac.ActionScale{Low: []float32{-1, -1}, High: []float32{1, 1}}
	tr, err := NewTrainer(smallConfig(1), d, nil, scale)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.StepOnce(); err != nil {
		t.Fatal(err)
	}
	u := tr.Learner.ws.noise.unif
	if len(u) != 128*10*2 {
		t.Fatalf("%d uniform samples, want B·N·A = %d", len(u), 128*10*2)
	}
	var m, v float64
	for _, x := range u {
		if x < -1 || x > 1 {
			t.Fatalf("uniform action %v outside [−1, 1]", x)
		}
		m += float64(x)
		v += float64(x) * float64(x)
	}
	m /= float64(len(u))
	v = v/float64(len(u)) - m*m
	// SE of the mean is √(1/3/2560) ≈ 0.011, of the variance ≈ 0.0053.
	if math.Abs(m) > 0.05 || math.Abs(v-1.0/3) > 0.03 {
		t.Fatalf("uniform actions: mean %v, variance %v; want 0 and 1/3", m, v)
	}
}

// stateGradient (S4RL-Adv's ∂ min(Q1,Q2)(s, a)/∂s in raw state units)
// matches central finite differences of Σ_rows min_k Q_k(norm(s), a)
// through a normalizer with non-zero mean and non-unit std, with rows where
// each twin is the minimum.
func TestStateGradientMatchesFiniteDifferences(t *testing.T) {
	const S, A, rows = 3, 2, 6
	norm := &dataset.Normalizer{Mean: []float32{0.3, -0.2, 0.1}, Std: []float32{0.25, 0.5, 2}}
	l := NewLearner(smallConfig(1), S, A, norm, rand.New(rand.NewPCG(4, 4)))
	rng := rand.New(rand.NewPCG(5, 5))
	s, a := make([]float32, rows*S), make([]float32, rows*A)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	for i := range a {
		a[i] = float32(2*rng.Float64() - 1)
	}
	minQ := func() (float64, []bool) {
		x := make([]float32, rows*(S+A))
		sn := append([]float32(nil), s...)
		norm.Apply(sn)
		sac.ConcatSA(sn, S, a, A, rows, x)
		var c0, c1 nn.Cache
		q0 := append([]float32(nil), l.Q[0].Forward(&c0, x, rows)...)
		q1 := l.Q[1].Forward(&c1, x, rows)
		var sum float64
		first := make([]bool, rows)
		for i := range q0 {
			sum += float64(min(q0[i], q1[i]))
			first[i] = q0[i] <= q1[i]
		}
		return sum, first
	}
	_, first := minQ()
	if !slices.Contains(first, true) || !slices.Contains(first, false) {
		t.Fatalf("fixture: twin 0 is the minimum on rows %v; want both twins represented", first)
	}
	grad := make([]float32, rows*S)
	l.stateGradient(s, a, rows, grad)
	gradcheck.Check(t, "∂minQ/∂s", s, grad, func() float64 { v, _ := minQ(); return v },
		rand.New(rand.NewPCG(6, 6)), gradcheck.Options{Probes: rows * S, Step: 1e-3, RelTol: 2e-2, Floor: 0.05, SkipKinks: true})
}

// The α and α′ gradients handed to their Adam steps are the formulas'
// (checked through Adam's first moment after one step, m = 0.1·g, since a
// single Adam step moves by lr·sign(g) whatever g's size, which the
// parameter comparison in reference_test.go cannot see):
//
//	∂L_α/∂log α   = −(mean log π(ã|s) − |A|)          (target entropy −|A|)
//	∂L_α′/∂log α′ = −½ α′ Σ_k (w·gap_k − τ)
func TestDualGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	d := dataset.Synthetic(3, 2, 300, rng)
	scale := sac.ActionScale{Low: []float32{-1, -1}, High: []float32{1, 1}}
	cfg := smallConfig(1)
	cfg.Lagrange, cfg.MinQWeight, cfg.LagrangeThres, cfg.AutoEntropy = true, 10, 3, true
	tr, err := NewTrainer(cfg, d, nil, scale)
	if err != nil {
		t.Fatal(err)
	}
	tr.Learner.LogAlphaPrime = math.Log(0.7)
	st, err := tr.StepOnce()
	if err != nil {
		t.Fatal(err)
	}
	l := tr.Learner
	if math.Abs(st.AlphaPrime-0.7) > 1e-12 {
		t.Fatalf("α′ used %v, want 0.7", st.AlphaPrime)
	}
	gsum := 0.0
	for k := range l.ws.crit {
		gsum += cfg.MinQWeight*l.ws.crit[k].gap - cfg.LagrangeThres
	}
	for _, c := range []struct {
		name    string
		got, wa float64
	}{
		{"α", l.scalar[0].M, 0.1 * -(st.LogPi - 2)},
		{"α′", l.scalar[1].M, 0.1 * -0.5 * 0.7 * gsum},
	} {
		if math.Abs(c.got-c.wa) > 1e-9*math.Max(1, math.Abs(c.wa)) || c.wa == 0 {
			t.Errorf("%s: Adam first moment %v, want 0.1·g = %v", c.name, c.got, c.wa)
		}
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
			if n := testing.AllocsPerRun(10, func() { l.Step(b, aug, rng) }); n != 0 {
				t.Errorf("%s, BC steps %d: Step allocates %.1f times per call, want 0", aug.Name(), bc, n)
			}
		}
	}
}
