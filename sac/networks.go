// Package sac implements Soft Actor-Critic (Haarnoja et al. 2018) with twin
// critics, target networks and automatic entropy tuning, for training
// behaviour policies online (dataset collection). It also owns the networks
// that package cql reuses: the tanh-Gaussian actor and the Q network.
package sac

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
)

// NetConfig sets the hidden layers of actor and critics.
type NetConfig struct {
	// Hidden lists hidden-layer widths. Default [256, 256]: the KFC authors'
	// code (2 hidden layers); CORL uses [256, 256, 256].
	Hidden []int `json:"hidden"`
	// Init is "xavier" (authors' code: Xavier-uniform weights, zero bias) or
	// "orthogonal" (CORL: critic hidden gain √2, output gain 1e-2).
	Init string `json:"init"`
}

// DefaultNetConfig is the KFC authors' 2×256 ReLU network.
func DefaultNetConfig() NetConfig { return NetConfig{Hidden: []int{256, 256}, Init: "xavier"} }

// Validate checks the config.
func (c NetConfig) Validate() error {
	if len(c.Hidden) == 0 {
		return fmt.Errorf("network needs at least one hidden layer")
	}
	for _, h := range c.Hidden {
		if h <= 0 {
			return fmt.Errorf("hidden width %d must be positive", h)
		}
	}
	if c.Init != "xavier" && c.Init != "orthogonal" {
		return fmt.Errorf("init %q: want xavier or orthogonal", c.Init)
	}
	return nil
}

func newNet(name string, cfg NetConfig, in, out int, outGain float64, rng *rand.Rand) *nn.MLP {
	sizes := append(append([]int{in}, cfg.Hidden...), out)
	m := nn.NewMLP(name, sizes, nn.ReLU, nn.Identity, rng)
	if cfg.Init == "orthogonal" {
		for i, l := range m.Layers {
			g := math.Sqrt2
			if i == len(m.Layers)-1 {
				g = outGain
			}
			nn.Orthogonal(l.W.Data, l.In, l.Out, g, rng)
		}
	}
	return m
}

// NewActor makes the tanh-Gaussian policy network obs → [μ, log σ]: [rows, 2·actDim].
func NewActor(cfg NetConfig, obsDim, actDim int, rng *rand.Rand) *nn.MLP {
	return newNet("actor", cfg, obsDim, 2*actDim, 1e-2, rng)
}

// NewCritic makes a Q network [s, a] → Q: input [rows, obsDim+actDim], output [rows, 1].
func NewCritic(name string, cfg NetConfig, obsDim, actDim int, rng *rand.Rand) *nn.MLP {
	return newNet(name, cfg, obsDim+actDim, 1, 1e-2, rng)
}

// ConcatSA writes rows [s_i, a_i] into out [rows, sDim+aDim].
func ConcatSA(s []float32, sDim int, a []float32, aDim int, rows int, out []float32) {
	w := sDim + aDim
	for i := 0; i < rows; i++ {
		copy(out[i*w:i*w+sDim], s[i*sDim:(i+1)*sDim])
		copy(out[i*w+sDim:(i+1)*w], a[i*aDim:(i+1)*aDim])
	}
}

// FillNormal fills x with standard-normal draws from rng.
func FillNormal(rng *rand.Rand, x []float32) {
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
}

// ActionScale maps between the policy's [−1, 1] actions and an environment's
// box bounds: env = Low + (a+1)/2·(High−Low).
type ActionScale struct {
	Low  []float32 `json:"low"`
	High []float32 `json:"high"`
}

// ToEnv converts a policy action in [−1, 1] to env units.
func (s ActionScale) ToEnv(a []float32, out []float64) {
	for i := range a {
		out[i] = float64(s.Low[i]) + (float64(a[i])+1)/2*float64(s.High[i]-s.Low[i])
	}
}

// FromEnv converts env actions to [−1, 1] in place, clipping to the bounds.
func (s ActionScale) FromEnv(a []float32) {
	d := len(s.Low)
	for i := range a {
		lo, hi := s.Low[i%d], s.High[i%d]
		v := 2*(a[i]-lo)/(hi-lo) - 1
		a[i] = max(-1, min(1, v))
	}
}

// Policy is a trained actor packaged for acting in an environment: it
// normalizes observations, runs the network and scales actions to env units.
// It is not safe for concurrent use (one per goroutine; see Clone).
type Policy struct {
	Actor  *nn.MLP
	Norm   *dataset.Normalizer
	Scale  ActionScale
	ActDim int

	cache nn.Cache
	obs   []float32
	act   []float32
	noise []float32
	logp  []float32
}

// NewPolicy wraps actor with its normalizer and action scale.
func NewPolicy(actor *nn.MLP, norm *dataset.Normalizer, scale ActionScale) *Policy {
	a := actor.Out() / 2
	return &Policy{Actor: actor, Norm: norm, Scale: scale, ActDim: a,
		obs: make([]float32, actor.In()), act: make([]float32, a), noise: make([]float32, a), logp: make([]float32, 1)}
}

// Clone returns a policy sharing the (read-only) weights with its own buffers.
func (p *Policy) Clone() *Policy { return NewPolicy(p.Actor, p.Norm, p.Scale) }

// Act returns the deterministic action tanh(μ(s)) in env units.
func (p *Policy) Act(obs []float64, out []float64) {
	p.forward(obs)
	nn.TanhGaussianMode(p.cache.Output(), 1, p.ActDim, p.act)
	p.Scale.ToEnv(p.act, out)
}

// Sample draws a stochastic action from π(·|s) in env units.
func (p *Policy) Sample(obs []float64, rng *rand.Rand, out []float64) {
	p.forward(obs)
	FillNormal(rng, p.noise)
	nn.TanhGaussianSample(p.cache.Output(), 1, p.ActDim, p.noise, p.act, p.logp)
	p.Scale.ToEnv(p.act, out)
}

func (p *Policy) forward(obs []float64) {
	for i, v := range obs {
		p.obs[i] = float32(v)
	}
	if p.Norm != nil {
		p.Norm.Apply(p.obs)
	}
	p.Actor.Forward(&p.cache, p.obs, 1)
}

// SampleLogProb is Sample that also returns log π(a|s) of the drawn action
// (of the tanh-squashed action in [−1, 1]; D4RL's infos/action_log_probs).
func (p *Policy) SampleLogProb(obs []float64, rng *rand.Rand, out []float64) float32 {
	p.Sample(obs, rng, out)
	return p.logp[0]
}
