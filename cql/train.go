package cql

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/sac"
)

// Trainer runs offline CQL over a dataset with a given augmenter. Its
// randomness comes from PCG streams derived from cfg.Seed and laid out as
// cfg.RNGStreams says: in the paired layout network initialisation,
// minibatch indices, the update's policy samples and the augmenter each
// have a stream of their own, so runs that differ only in the augmenter are
// paired; in the legacy layout one stream feeds all four. The streams are
// saved in checkpoints, so a resumed run reproduces an uninterrupted one
// exactly. (Evaluation is seeded by the caller, apart from all of these.)
type Trainer struct {
	Learner *Learner
	Data    *dataset.Dataset
	Aug     StateShift
	Scale   sac.ActionScale // env action bounds; dataset actions are mapped to [−1, 1]

	streams   rngStreams
	sampler   *dataset.Sampler
	batch     *dataset.Batch
	policyRNG *rand.Rand // the Step's policy samples
	augRNG    *rand.Rand // the augmenter's draws
	rewardK   float64    // NormalizeReward's factor (1 when off), for Diagnose
}

// Stream increments of the paired layout: rand.NewPCG(cfg.Seed, c) for
// each. Changing one changes every paired run's numbers.
const (
	streamInit    = 0x6b6f6f70_696e6974 // "koopinit"
	streamBatch   = 0x6b6f6f70_62617463 // "koopbatc"
	streamPolicy  = 0x6b6f6f70_706f6c69 // "kooppoli"
	streamAugment = 0x6b6f6f70_61756720 // "koopaug "
)

// rngStreams are a trainer's random sources. In the legacy layout all four
// are the one PCG (seed, 0xc91).
type rngStreams struct {
	init, batch, policy, augment *rand.PCG
}

func newStreams(cfg Config) rngStreams {
	if cfg.RNGStreams == RNGLegacy {
		src := rand.NewPCG(cfg.Seed, 0xc91)
		return rngStreams{src, src, src, src}
	}
	return rngStreams{init: rand.NewPCG(cfg.Seed, streamInit), batch: rand.NewPCG(cfg.Seed, streamBatch),
		policy: rand.NewPCG(cfg.Seed, streamPolicy), augment: rand.NewPCG(cfg.Seed, streamAugment)}
}

// named lists the paired layout's streams by their checkpoint names.
func (s rngStreams) named() map[string]*rand.PCG {
	return map[string]*rand.PCG{"init": s.init, "batch": s.batch, "policy": s.policy, "augment": s.augment}
}

// NewTrainer validates inputs and builds a learner. With cfg.Normalize the
// state normalizer is fitted on data; with cfg.NormalizeReward the trainer
// keeps a copy of data with scaled rewards (data itself is not modified).
func NewTrainer(cfg Config, data *dataset.Dataset, aug StateShift, scale sac.ActionScale) (*Trainer, error) {
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
	rewardK := 1.0
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
		rewardK = k
	}
	s := newStreams(cfg)
	var norm *dataset.Normalizer
	if cfg.Normalize {
		norm = dataset.FitNormalizer(data, 1e-3)
	}
	l := NewLearner(cfg, data.ObsDim, data.ActDim, norm, rand.New(s.init))
	if aug == nil {
		aug = NoShift{}
	}
	return &Trainer{Learner: l, Data: data, Aug: aug, Scale: scale, streams: s,
		sampler: dataset.NewSampler(data, rand.New(s.batch)), batch: dataset.NewBatch(cfg.Batch, data.ObsDim, data.ActDim),
		policyRNG: rand.New(s.policy), augRNG: rand.New(s.augment), rewardK: rewardK}, nil
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
	returns := dataset.CompleteReturns(d.EpisodesBy(dataset.EpisodeRule{MaxLen: steps}))
	for _, ret := range returns {
		lo, hi = math.Min(lo, ret), math.Max(hi, ret)
	}
	episodes := len(returns)
	if episodes < 2 || !(hi > lo) || math.IsInf(hi-lo, 0) {
		return 0, fmt.Errorf("cql: normalize_reward needs two complete episodes with different returns; the dataset has %d (returns %v to %v)", episodes, lo, hi)
	}
	return float64(steps) / (hi - lo), nil
}

// StepOnce samples a batch and performs one update.
func (t *Trainer) StepOnce() (Stats, error) {
	t.sampler.Sample(t.batch)
	t.Scale.FromEnv(t.batch.Act)
	st, err := t.Learner.StepStreams(t.batch, t.Aug, t.augRNG, t.policyRNG)
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

// Save writes a resumable checkpoint (see Learner.SaveCheckpoint) with the
// random streams: the legacy layout's one stream under the metadata key
// "rng", the paired layout's under "rng_streams" (a JSON object of base64
// PCG states by stream name).
func (t *Trainer) Save(path string, meta map[string]string) error {
	if t.Learner.Cfg.RNGStreams == RNGLegacy {
		return t.Learner.SaveCheckpoint(path, t.streams.init, meta)
	}
	states := map[string]string{}
	for name, src := range t.streams.named() {
		b, err := src.MarshalBinary()
		if err != nil {
			return err
		}
		states[name] = base64.StdEncoding.EncodeToString(b)
	}
	sj, err := json.Marshal(states)
	if err != nil {
		return err
	}
	m := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	m["rng_streams"] = string(sj)
	return t.Learner.SaveCheckpoint(path, nil, m)
}

// Resume restores a checkpoint written by Save. The checkpoint's stream
// layout must be the trainer's (cfg.RNGStreams).
func (t *Trainer) Resume(path string) (map[string]string, error) {
	if t.Learner.Cfg.RNGStreams == RNGLegacy {
		return t.Learner.LoadCheckpoint(path, t.streams.init)
	}
	meta, err := t.Learner.LoadCheckpoint(path, nil)
	if err != nil {
		return nil, err
	}
	sj, ok := meta["rng_streams"]
	if !ok {
		return nil, fmt.Errorf("checkpoint %s has the legacy single random stream, the config asks for rng_streams %q: resume it with the run's own config (no rng_streams)", path, t.Learner.Cfg.RNGStreams)
	}
	var states map[string]string
	if err := json.Unmarshal([]byte(sj), &states); err != nil {
		return nil, fmt.Errorf("checkpoint %s: bad rng_streams: %w", path, err)
	}
	for name, src := range t.streams.named() {
		b, err := base64.StdEncoding.DecodeString(states[name])
		if err != nil || src.UnmarshalBinary(b) != nil {
			return nil, fmt.Errorf("checkpoint %s: missing or bad state of random stream %q", path, name)
		}
	}
	return meta, nil
}

// Policy returns the current actor packaged for evaluation in env units.
func (t *Trainer) Policy() *sac.Policy {
	return sac.NewPolicy(t.Learner.Actor, t.Learner.Norm, t.Scale)
}
