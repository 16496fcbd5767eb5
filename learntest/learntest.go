// Package learntest builds the small offline datasets and pass bars that
// koopq's learning tests (cql, augment) share, so that both test the
// algorithm on data with real terminal states and judge it against measured,
// not guessed, reference returns.
//
// The environment is "cartpole-continuous": reward +1 per step, the episode
// terminates when the pole falls or the cart leaves the track (500-step
// limit). A dataset whose Bellman targets ignore the done mask sees every
// state worth ≈ 1/(1−γ) and cannot tell a falling pole from a balanced one,
// so a learner that drops the mask does not learn the task from it.
//
// The behaviour policy is a linear state-feedback controller (it balances
// the pole for the full 500 steps without noise) acting through heavy
// Gaussian action noise and, with probability Eps, a uniformly random
// action; that makes a "medium" dataset whose episodes mostly end in a
// terminal state.
package learntest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/classic" // registers cartpole-continuous
	"github.com/koopq/koopq/eval"
)

// Env is the registry name of the learning tests' environment.
const Env = "cartpole-continuous"

// Gains of the behaviour controller a = clip(K·[x, ẋ, θ, θ̇], −1, 1) (force
// 10·a newtons): positive force pushes the cart toward +x and tips the pole
// back toward θ = 0 when θ > 0.
var Gains = [4]float64{0.1, 0.2, 3, 0.5}

// Behaviour is the noisy controller policy that generates the datasets.
type Behaviour struct {
	Noise float64 // std of the Gaussian added to the controller's action
	Eps   float64 // probability of a uniformly random action instead
}

// Act draws one behaviour action for obs into act ([1]).
func (b Behaviour) Act(obs []float64, rng *rand.Rand, act []float64) {
	if rng.Float64() < b.Eps {
		act[0] = 2*rng.Float64() - 1
		return
	}
	var u float64
	for i, k := range Gains {
		u += k * obs[i]
	}
	act[0] = math.Max(-1, math.Min(1, u+b.Noise*rng.NormFloat64()))
}

// Collect rolls b out for n transitions in Env; see Rollouts.
func Collect(b Behaviour, n int, seed uint64) (*dataset.Dataset, []float64, error) {
	return Rollouts(Env, b.Act, n, seed)
}

// Rollouts runs the policy act in the registered environment name for n
// transitions (resetting at episode ends, the last row marked as a timeout
// when it does not end an episode) and returns the dataset and the returns
// of its complete episodes. act writes an action for obs into its third
// argument, drawing any noise from rng.
func Rollouts(name string, act func(obs []float64, rng *rand.Rand, out []float64), n int, seed uint64) (*dataset.Dataset, []float64, error) {
	e, err := env.Make(name)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0xb4a1))
	oDim, aDim := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
	d := &dataset.Dataset{ObsDim: oDim, ActDim: aDim, Meta: map[string]string{"env": name, "policy": "learntest"}}
	a := make([]float64, aDim)
	obs := e.Reset(rng)
	var returns []float64
	ret := 0.0
	for i := 0; i < n; i++ {
		act(obs, rng, a)
		next, r, term, trunc, err := e.Step(a)
		if err != nil {
			return nil, nil, err
		}
		ret += r
		d.Append(obs, a, r, next, term, trunc || (i == n-1 && !term))
		obs = next
		if term || trunc {
			returns = append(returns, ret)
			ret = 0
			obs = e.Reset(rng)
		}
	}
	if err := d.Validate(); err != nil {
		return nil, nil, fmt.Errorf("learntest: %w", err)
	}
	return d, returns, nil
}

// RandomReturns evaluates the uniformly random policy for episodes episodes
// in Env with eval.Evaluate's seeding (one worker, so one action stream).
func RandomReturns(episodes int, seed uint64) ([]float64, error) {
	e, err := env.Make(Env)
	if err != nil {
		return nil, err
	}
	p := &eval.RandomPolicy{Space: e.ActionSpace(), Rng: rand.New(rand.NewPCG(seed, 0x7a4d))}
	res, err := eval.Evaluate(Env, func() eval.Policy { return p }, episodes, seed, 1)
	if err != nil {
		return nil, err
	}
	return res.Returns, nil
}

// MeanSE returns the mean of x and its standard error std/√n (sample std).
func MeanSE(x []float64) (mean, se float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	if len(x) > 1 {
		se = math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	}
	return mean, se
}

// Terminals counts the rows of d with a terminal flag.
func Terminals(d *dataset.Dataset) int {
	n := 0
	for _, t := range d.Terminals {
		if t == 1 {
			n++
		}
	}
	return n
}

// ScoreEpisodes is the number of deterministic episodes Score runs.
const ScoreEpisodes = 10

// Score evaluates a trained policy the way the learning tests judge it:
// ScoreEpisodes deterministic episodes of Env from the reset seed
// 100 + seed (the training seed, so that runs of different seeds are
// scored on different starts), on two workers. newPolicy returns a fresh
// copy per worker (a policy's Act is not safe for concurrent use).
func Score(newPolicy func() eval.Policy, seed uint64) (eval.Result, error) {
	return eval.Evaluate(Env, newPolicy, ScoreEpisodes, 100+seed, 2)
}

// Pendulum rolls the real classic Pendulum with uniformly random torques in
// [−2, 2] for n transitions (a reset every 50 steps and at episode ends; no
// row is flagged terminal or timeout), so that the simulator reproduces
// every transition: the data of the Koopman and symmetry-accuracy tests (run,
// symcheck). The same n and seed give the same dataset.
func Pendulum(n int, seed uint64) (*dataset.Dataset, error) {
	rng := rand.New(rand.NewPCG(seed, 2))
	p := classic.NewPendulum()
	d := &dataset.Dataset{ObsDim: 3, ActDim: 1}
	obs := p.Reset(rng)
	for len(d.Rewards) < n {
		a := 4*rng.Float64() - 2
		next, r, term, trunc, err := p.Step([]float64{a})
		if err != nil {
			return nil, err
		}
		for j := range 3 {
			d.Observations = append(d.Observations, float32(obs[j]))
			d.NextObservations = append(d.NextObservations, float32(next[j]))
		}
		d.Actions = append(d.Actions, float32(a))
		d.Rewards = append(d.Rewards, float32(r))
		d.Terminals = append(d.Terminals, 0)
		d.Timeouts = append(d.Timeouts, 0)
		obs = next
		if term || trunc || len(d.Rewards)%50 == 0 {
			obs = p.Reset(rng)
		}
	}
	return d, nil
}

// PendulumT is Pendulum for a test: it fails t when the data cannot be
// made.
func PendulumT(t testing.TB, n int, seed uint64) *dataset.Dataset {
	t.Helper()
	d, err := Pendulum(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
