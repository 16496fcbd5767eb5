// Package eval runs policies in simulators: deterministic rollouts, mean ±
// std returns over episodes (in parallel across cores, with results that do
// not depend on the number of workers), and D4RL-normalized scores.
package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/memcheck"
	"github.com/koopq/koopq/rundir"
)

// Policy maps an observation to an action in env units. Implementations need
// not be safe for concurrent use: Evaluate asks for one per worker.
type Policy interface {
	Act(obs []float64, act []float64)
}

// Result summarizes an evaluation. It is results.json's final_eval record,
// so its type, with its JSON keys, is rundir's (rundir.Eval).
type Result = rundir.Eval

// CheckEpisodes refuses an episode count whose per-episode results
// (Returns, Lengths: 16 bytes each) cannot fit in memory
// (--episodes 9223372036854775807 was a makeslice panic).
func CheckEpisodes(episodes int) error {
	return memcheck.Check(fmt.Sprintf("--episodes %d", episodes), 16*float64(episodes))
}

// Evaluate runs episodes episodes of the policy made by newPolicy in fresh
// environments made by name, on workers goroutines. Episode k resets from
// its own RNG stream (seed, k), so results are identical for any worker count.
// For an env with a success test (env.Successer) the result also holds each
// episode's success at any step (Successes) and their fraction
// (SuccessRate); for other envs Successes is nil.
func Evaluate(name string, newPolicy func() Policy, episodes int, seed uint64, workers int) (Result, error) {
	return EvaluateDiscounted(name, newPolicy, episodes, seed, workers, 0)
}

// EvaluateDiscounted is Evaluate that also records each episode's
// discounted return Σₜ γᵗ rₜ (Result.DiscountedReturns, DiscountedMean)
// when gamma is in (0, 1); gamma 0 records none. The undiscounted results
// are the same as Evaluate's.
func EvaluateDiscounted(name string, newPolicy func() Policy, episodes int, seed uint64, workers int, gamma float64) (Result, error) {
	if !(gamma >= 0 && gamma < 1) {
		return Result{}, fmt.Errorf("eval: discount %v must be in (0, 1) (0: none)", gamma)
	}
	if episodes <= 0 {
		return Result{}, fmt.Errorf("eval: episodes must be positive, got %d", episodes)
	}
	if err := CheckEpisodes(episodes); err != nil {
		return Result{}, fmt.Errorf("eval: %w", err)
	}
	workers = max(1, min(workers, episodes))
	res := Result{Env: name, Episodes: episodes, Seed: seed, Returns: make([]float64, episodes), Lengths: make([]int, episodes)}
	disc := make([]float64, episodes)
	succ := make([]bool, episodes)
	hasSuccess := false
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			e, err := env.Make(name)
			if err != nil {
				errs[w] = err
				return
			}
			if w == 0 {
				_, hasSuccess = e.(env.Successer)
			}
			p := newPolicy()
			for k := w; k < episodes; k += workers {
				ro, err := rollout(e, p, rand.New(rand.NewPCG(seed, uint64(k))), gamma)
				if err != nil {
					errs[w] = fmt.Errorf("eval %s episode %d: %w", name, k, err)
					return
				}
				res.Returns[k], res.Lengths[k], disc[k], succ[k] = ro.ret, ro.n, ro.disc, ro.success
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	res.Mean, res.Std = MeanStd(res.Returns)
	if gamma > 0 {
		res.Gamma, res.DiscountedReturns = gamma, disc
		res.DiscountedMean, _ = MeanStd(disc)
	}
	res.Min, res.Max = res.Returns[0], res.Returns[0]
	for _, r := range res.Returns {
		res.Min, res.Max = math.Min(res.Min, r), math.Max(res.Max, r)
	}
	res.Normalized, res.NormalizedStd, res.SuccessRate = Score(math.NaN()), Score(math.NaN()), Score(math.NaN())
	if hasSuccess {
		res.Successes = succ
		res.SuccessRate = Score(SuccessFraction(succ))
	}
	if _, ref, ok := ReferenceFor(name); ok {
		res.Normalized = Score(ref.Normalize(res.Mean))
		res.NormalizedStd = Score(100 * res.Std / (ref.Expert - ref.Random))
		if ref.GoalReaching && !hasSuccess {
			n := 0
			for _, r := range res.Returns {
				if r >= 1 {
					n++
				}
			}
			res.SuccessRate = Score(float64(n) / float64(episodes))
		}
	}
	return res, nil
}

// SuccessFraction is the fraction of episodes whose entry is true (NaN for
// none): the success rate of per-episode success flags.
func SuccessFraction(successes []bool) float64 {
	if len(successes) == 0 {
		return math.NaN()
	}
	n := 0
	for _, s := range successes {
		if s {
			n++
		}
	}
	return float64(n) / float64(len(successes))
}

// Rollout runs one episode of p in e from a reset drawn with rng and returns
// its undiscounted return and length.
func Rollout(e env.Env, p Policy, rng *rand.Rand) (float64, int, error) {
	ro, err := rollout(e, p, rng, 0)
	return ro.ret, ro.n, err
}

// episode is one rollout's record.
type episode struct {
	ret, disc float64 // undiscounted and discounted return
	n         int     // steps
	success   bool    // an env.Successer's test held after some step
}

// rollout is Rollout that also returns the discounted return Σₜ γᵗ rₜ
// (rewards in the same order as the undiscounted sum, γ⁰ = 1 for the first)
// and, for an env.Successer, whether its success test held at any step.
func rollout(e env.Env, p Policy, rng *rand.Rand, gamma float64) (episode, error) {
	var ep episode
	s, _ := e.(env.Successer)
	obs := e.Reset(rng)
	act := make([]float64, e.ActionSpace().Dim())
	w := 1.0
	for ep.n = 1; ; ep.n++ {
		p.Act(obs, act)
		next, r, term, trunc, err := e.Step(act)
		if err != nil {
			return ep, err
		}
		ep.ret += r
		ep.disc += w * r
		w *= gamma
		ep.success = ep.success || (s != nil && s.Success())
		obs = next
		if term || trunc {
			return ep, nil
		}
	}
}

// MeanStd returns the mean and population standard deviation of x.
func MeanStd(x []float64) (float64, float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)))
}

// RandomPolicy acts uniformly at random within the action space; each
// instance has its own seeded stream.
type RandomPolicy struct {
	Space env.Space
	Rng   *rand.Rand
}

// Act draws a uniform action (a uniform index for discrete spaces).
func (p *RandomPolicy) Act(_ []float64, act []float64) {
	if p.Space.Discrete > 0 {
		act[0] = float64(p.Rng.IntN(p.Space.Discrete))
		return
	}
	for i := range act {
		act[i] = p.Space.Low[i] + p.Rng.Float64()*(p.Space.High[i]-p.Space.Low[i])
	}
}
