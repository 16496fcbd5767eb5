package sac

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/nn"
)

// CollectConfig drives D4RL-recipe dataset collection on one environment.
type CollectConfig struct {
	Env          string  `json:"env"`
	SAC          Config  `json:"sac"`           // online SAC run that produces the behaviour policies
	EvalEvery    int     `json:"eval_every"`    // env steps between policy snapshots
	EvalEpisodes int     `json:"eval_episodes"` // deterministic episodes per snapshot evaluation
	Transitions  int     `json:"transitions"`   // size of the random, medium and expert datasets
	MediumLevel  float64 `json:"medium_level"`  // target normalized level of "medium" (D4RL: about 1/3 of expert)
}

// Snapshot is a behaviour policy captured during SAC training.
type Snapshot struct {
	Step       int     `json:"step"`        // env steps at capture
	Return     float64 `json:"eval_return"` // mean deterministic return
	ReplayLen  int     `json:"replay_len"`  // replay-buffer size at capture
	actorState []*nn.Param
}

// CollectInfo records how the datasets were made.
type CollectInfo struct {
	RandomReturn float64    `json:"random_policy_return"`
	Expert       Snapshot   `json:"expert"`
	Medium       Snapshot   `json:"medium"`
	Snapshots    []Snapshot `json:"snapshots"`
}

// Collect trains SAC online and writes D4RL-style datasets:
//   - random: the untrained (randomly initialized) actor, sampled;
//   - medium: the snapshot whose return is closest to MediumLevel of the way
//     from the random to the expert return, sampled;
//   - expert: the best snapshot, sampled;
//   - medium-replay: the replay buffer up to the medium snapshot;
//   - medium-expert: medium followed by expert.
//
// Policies act stochastically, as D4RL's SAC data was generated. progress,
// if non-nil, sees the stages "random", "sac" (env steps), "medium" and
// "expert" (transitions).
func Collect(ctx context.Context, cfg CollectConfig, progress meter.Staged) (map[string]*dataset.Dataset, *CollectInfo, error) {
	if cfg.Transitions <= 0 || cfg.EvalEvery <= 0 || cfg.EvalEpisodes <= 0 || cfg.SAC.TotalSteps <= 0 {
		return nil, nil, fmt.Errorf("collect: transitions, eval_every, eval_episodes and SAC steps must be positive")
	}
	e, err := env.Make(cfg.Env)
	if err != nil {
		return nil, nil, err
	}
	scale, err := Scale(e)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.SAC.Seed, 0xc011ec7))
	obsDim, actDim := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
	info := &CollectInfo{}
	out := map[string]*dataset.Dataset{}

	// Random: an untrained actor (D4RL's "random" is a randomly initialized policy).
	randomActor := NewActor(cfg.SAC.Net, obsDim, actDim, rand.New(rand.NewPCG(cfg.SAC.Seed, 0xabc)))
	out["random"], err = Rollouts(ctx, e, NewPolicy(randomActor, nil, scale), cfg.Transitions, rng, meter.Stage(progress, "random"))
	if err != nil {
		return nil, nil, err
	}
	info.RandomReturn = MeanEpisodeReturn(out["random"])

	var snaps []Snapshot
	evalRng := rand.New(rand.NewPCG(cfg.SAC.Seed, 0xe7a1))
	_, replay, err := Train(ctx, cfg.SAC, e, cfg.EvalEvery, func(ag *Agent, p TrainStats) bool {
		pol := NewPolicy(ag.Actor, nil, scale)
		ret, err := deterministicReturn(cfg.Env, pol, cfg.EvalEpisodes, evalRng)
		if err != nil {
			return false
		}
		snaps = append(snaps, Snapshot{Step: p.Step, Return: ret, ReplayLen: p.Step, actorState: cloneParams(ag.Actor.Params())})
		if progress != nil {
			progress("sac", p.Step, cfg.SAC.TotalSteps, "")
		}
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	if len(snaps) == 0 {
		return nil, nil, fmt.Errorf("collect: SAC ran %d steps but eval_every is %d: no snapshots", cfg.SAC.TotalSteps, cfg.EvalEvery)
	}
	info.Snapshots = snaps
	best := 0
	for i, s := range snaps {
		if s.Return > snaps[best].Return {
			best = i
		}
	}
	target := info.RandomReturn + cfg.MediumLevel*(snaps[best].Return-info.RandomReturn)
	med := 0
	for i, s := range snaps[:best+1] {
		if math.Abs(s.Return-target) < math.Abs(snaps[med].Return-target) {
			med = i
		}
	}
	info.Expert, info.Medium = snaps[best], snaps[med]
	for _, which := range []struct {
		name string
		s    Snapshot
	}{{"medium", snaps[med]}, {"expert", snaps[best]}} {
		actor := NewActor(cfg.SAC.Net, obsDim, actDim, rand.New(rand.NewPCG(0, 0)))
		nn.CopyParams(actor.Params(), which.s.actorState)
		out[which.name], err = Rollouts(ctx, e, NewPolicy(actor, nil, scale), cfg.Transitions, rng, meter.Stage(progress, which.name))
		if err != nil {
			return nil, nil, err
		}
	}
	out["medium-replay"] = Slice(replay, 0, snaps[med].ReplayLen)
	out["medium-expert"] = Concat(out["medium"], out["expert"])
	for name, d := range out {
		d.Meta = map[string]string{"env": cfg.Env, "dataset": name, "seed": strconv.FormatUint(cfg.SAC.Seed, 10),
			"policy": "sac", "sac_steps": strconv.Itoa(cfg.SAC.TotalSteps)}
		if err := d.Validate(); err != nil {
			return nil, nil, fmt.Errorf("collect %s: %w", name, err)
		}
	}
	return out, info, nil
}

func cloneParams(ps []*nn.Param) []*nn.Param {
	out := make([]*nn.Param, len(ps))
	for i, p := range ps {
		out[i] = &nn.Param{Name: p.Name, Shape: p.Shape, Data: append([]float32(nil), p.Data...)}
	}
	return out
}

func deterministicReturn(name string, p *Policy, episodes int, rng *rand.Rand) (float64, error) {
	e, err := env.Make(name)
	if err != nil {
		return 0, err
	}
	return policyReturn(e, p, episodes, rng, false)
}

// Rollouts samples n transitions from p (stochastic actions) in e, resetting
// at episode ends, and records terminals and time-limit timeouts. The last
// transition is marked as a timeout when it does not end an episode, so the
// dataset never bootstraps across its own end.
func Rollouts(ctx context.Context, e env.Env, p *Policy, n int, rng *rand.Rand, progress meter.Progress) (*dataset.Dataset, error) {
	d := &dataset.Dataset{ObsDim: e.ObservationSpace().Dim(), ActDim: e.ActionSpace().Dim()}
	act := make([]float64, d.ActDim)
	obs := e.Reset(rng)
	for i := 0; i < n; i++ {
		if i%10000 == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if progress != nil {
				progress(i, n, "")
			}
		}
		p.Sample(obs, rng, act)
		next, r, term, trunc, err := e.Step(act)
		if err != nil {
			return nil, err
		}
		appendTransition(d, obs, act, r, next, term, trunc || i == n-1)
		obs = next
		if term || trunc {
			obs = e.Reset(rng)
		}
	}
	return d, nil
}

// MeanEpisodeReturn is the mean return of the complete episodes in d (those
// ending in a terminal or timeout); NaN when there is none.
func MeanEpisodeReturn(d *dataset.Dataset) float64 {
	m, _ := EpisodeReturns(d)
	return m
}

// EpisodeReturns is the mean return over d's complete episodes (those ending
// in a terminal or timeout) and their count; NaN and 0 when there is none.
func EpisodeReturns(d *dataset.Dataset) (mean float64, episodes int) {
	var sum float64
	for _, ret := range dataset.CompleteReturns(d.Episodes()) {
		sum += ret
		episodes++
	}
	if episodes == 0 {
		return math.NaN(), 0
	}
	return sum / float64(episodes), episodes
}

// Slice returns transitions [from, to) of d as a new dataset; the last one is
// marked as a timeout if it does not end an episode.
func Slice(d *dataset.Dataset, from, to int) *dataset.Dataset {
	o, a := d.ObsDim, d.ActDim
	s := &dataset.Dataset{ObsDim: o, ActDim: a,
		Observations:     append([]float32(nil), d.Observations[from*o:to*o]...),
		Actions:          append([]float32(nil), d.Actions[from*a:to*a]...),
		Rewards:          append([]float32(nil), d.Rewards[from:to]...),
		NextObservations: append([]float32(nil), d.NextObservations[from*o:to*o]...),
		Terminals:        append([]float32(nil), d.Terminals[from:to]...),
		Timeouts:         append([]float32(nil), d.Timeouts[from:to]...),
	}
	if to > from && s.Terminals[to-from-1] == 0 {
		s.Timeouts[to-from-1] = 1
	}
	return s
}

// Concat joins datasets of equal dimensions.
func Concat(ds ...*dataset.Dataset) *dataset.Dataset {
	out := &dataset.Dataset{ObsDim: ds[0].ObsDim, ActDim: ds[0].ActDim}
	for _, d := range ds {
		out.Observations = append(out.Observations, d.Observations...)
		out.Actions = append(out.Actions, d.Actions...)
		out.Rewards = append(out.Rewards, d.Rewards...)
		out.NextObservations = append(out.NextObservations, d.NextObservations...)
		out.Terminals = append(out.Terminals, d.Terminals...)
		out.Timeouts = append(out.Timeouts, d.Timeouts...)
	}
	return out
}
