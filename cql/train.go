package cql

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/sac"
)

// Trainer runs offline CQL over a dataset with a given augmenter. All
// randomness (minibatches, policy noise, augmentation) comes from one seeded
// PCG stream that is saved in checkpoints, so a resumed run reproduces an
// uninterrupted one exactly.
type Trainer struct {
	Learner *Learner
	Data    *dataset.Dataset
	Aug     augment.Augmenter
	Scale   sac.ActionScale // env action bounds; dataset actions are mapped to [−1, 1]

	src     *rand.PCG
	rng     *rand.Rand
	sampler *dataset.Sampler
	batch   *dataset.Batch
}

// NewTrainer validates inputs and builds a learner. With cfg.Normalize the
// state normalizer is fitted on data; with cfg.NormalizeReward the trainer
// keeps a copy of data with scaled rewards (data itself is not modified).
func NewTrainer(cfg Config, data *dataset.Dataset, aug augment.Augmenter, scale sac.ActionScale) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := data.Validate(); err != nil {
		return nil, err
	}
	if len(scale.Low) != data.ActDim || len(scale.High) != data.ActDim {
		return nil, fmt.Errorf("cql: action scale has %d dims, dataset actions %d", len(scale.Low), data.ActDim)
	}
	for i := range scale.Low {
		if !(scale.High[i] > scale.Low[i]) {
			return nil, fmt.Errorf("cql: action bound %d is empty: [%v, %v]", i, scale.Low[i], scale.High[i])
		}
	}
	if cfg.NormalizeReward {
		k, err := rewardScale(data, cfg.RewardEpisodeSteps)
		if err != nil {
			return nil, err
		}
		scaled := *data
		scaled.Rewards = make([]float32, len(data.Rewards))
		for i, r := range data.Rewards {
			scaled.Rewards[i] = float32(float64(r) * k)
		}
		data = &scaled
	}
	src := rand.NewPCG(cfg.Seed, 0xc91)
	rng := rand.New(src)
	var norm *dataset.Normalizer
	if cfg.Normalize {
		norm = dataset.FitNormalizer(data, 1e-3)
	}
	l := NewLearner(cfg, data.ObsDim, data.ActDim, norm, rng)
	if aug == nil {
		aug = augment.None{}
	}
	return &Trainer{Learner: l, Data: data, Aug: aug, Scale: scale, src: src, rng: rng,
		sampler: dataset.NewSampler(data, rng), batch: dataset.NewBatch(cfg.Batch, data.ObsDim, data.ActDim)}, nil
}

// rewardScale is CORL's modify_reward factor for Gym-MuJoCo,
// steps/(max − min episode return), over the dataset's complete episodes (an
// episode ends at a terminal, a timeout or after steps rows; steps 0 means
// 1000; a trailing incomplete episode is left out, as in CORL).
func rewardScale(d *dataset.Dataset, steps int) (float64, error) {
	if steps == 0 {
		steps = 1000
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	ret, n, episodes := 0.0, 0, 0
	for i, r := range d.Rewards {
		ret += float64(r)
		n++
		if d.Terminals[i] != 0 || (i < len(d.Timeouts) && d.Timeouts[i] != 0) || n == steps {
			lo, hi = math.Min(lo, ret), math.Max(hi, ret)
			episodes++
			ret, n = 0, 0
		}
	}
	if episodes < 2 || !(hi > lo) || math.IsInf(hi-lo, 0) {
		return 0, fmt.Errorf("cql: normalize_reward needs two complete episodes with different returns; the dataset has %d (returns %v to %v)", episodes, lo, hi)
	}
	return float64(steps) / (hi - lo), nil
}

// StepOnce samples a batch and performs one update.
func (t *Trainer) StepOnce() (Stats, error) {
	t.sampler.Sample(t.batch)
	t.Scale.FromEnv(t.batch.Act)
	st, err := t.Learner.Step(t.batch, t.Aug, t.rng)
	if err != nil {
		return st, err
	}
	if math.IsNaN(st.QLoss) || math.IsInf(st.QLoss, 0) || math.IsNaN(st.ActorLoss) {
		return st, fmt.Errorf("cql: training diverged at step %d (q loss %v, actor loss %v)", t.Learner.Steps, st.QLoss, st.ActorLoss)
	}
	return st, nil
}

// Run trains until the learner has done cfg.Steps updates, calling hook
// (if non-nil) after every update; a hook error stops training.
func (t *Trainer) Run(ctx context.Context, hook func(step int, st Stats) error) error {
	for t.Learner.Steps < t.Learner.Cfg.Steps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		st, err := t.StepOnce()
		if err != nil {
			return err
		}
		if hook != nil {
			if err := hook(t.Learner.Steps, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// Save writes a resumable checkpoint (see Learner.SaveCheckpoint).
func (t *Trainer) Save(path string, meta map[string]string) error {
	return t.Learner.SaveCheckpoint(path, t.src, meta)
}

// Resume restores a checkpoint written by Save.
func (t *Trainer) Resume(path string) (map[string]string, error) {
	return t.Learner.LoadCheckpoint(path, t.src)
}

// Policy returns the current actor packaged for evaluation in env units.
func (t *Trainer) Policy() *sac.Policy {
	return sac.NewPolicy(t.Learner.Actor, t.Learner.Norm, t.Scale)
}
