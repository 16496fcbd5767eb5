package sac

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/nn"
)

// Config holds online SAC's hyperparameters. Defaults follow Haarnoja et al.
// (2018) as used by the SAC implementations listed in the reference notes.
type Config struct {
	Net           NetConfig `json:"net"`
	Gamma         float64   `json:"gamma"`            // discount γ, 0.99
	Tau           float64   `json:"tau"`              // Polyak rate τ, 5e-3
	LRActor       float64   `json:"lr_actor"`         // 3e-4
	LRCritic      float64   `json:"lr_critic"`        // 3e-4
	LRAlpha       float64   `json:"lr_alpha"`         // 3e-4
	Batch         int       `json:"batch"`            // 256
	StartSteps    int       `json:"start_steps"`      // uniform-random actions before learning, 1000
	TotalSteps    int       `json:"total_steps"`      // environment steps
	InitAlpha     float64   `json:"init_alpha"`       // initial entropy weight α, 1
	TargetEntropy float64   `json:"target_entropy"`   // 0 means −|A|
	UpdatesPerEnv int       `json:"updates_per_step"` // gradient updates per env step, 1
	Seed          uint64    `json:"seed"`
}

// DefaultConfig returns SAC defaults for a run of total environment steps.
func DefaultConfig(total int) Config {
	return Config{Net: DefaultNetConfig(), Gamma: 0.99, Tau: 5e-3, LRActor: 3e-4, LRCritic: 3e-4, LRAlpha: 3e-4,
		Batch: 256, StartSteps: 1000, TotalSteps: total, InitAlpha: 1, UpdatesPerEnv: 1}
}

// Agent holds SAC's networks and optimizers.
type Agent struct {
	Cfg            Config
	ObsDim, ActDim int
	Actor          *nn.MLP
	Q1, Q2         *nn.MLP
	Q1T, Q2T       *nn.MLP
	LogAlpha       float64

	optA, optQ1, optQ2 *nn.Adam
	alphaM, alphaV     float64 // Adam state for log α

	// workspaces
	cA, cA2, cQ1, cQ2, cT1, cT2, cP1, cP2                 nn.Cache
	noise, act, logp, sa, y, dq, dq2, dA, dA2, dAct, dOut []float32
}

// NewAgent builds networks for obsDim/actDim from cfg.
func NewAgent(cfg Config, obsDim, actDim int, rng *rand.Rand) *Agent {
	a := &Agent{Cfg: cfg, ObsDim: obsDim, ActDim: actDim, LogAlpha: math.Log(cfg.InitAlpha)}
	a.Actor = NewActor(cfg.Net, obsDim, actDim, rng)
	a.Q1 = NewCritic("q1", cfg.Net, obsDim, actDim, rng)
	a.Q2 = NewCritic("q2", cfg.Net, obsDim, actDim, rng)
	a.Q1T = NewCritic("q1", cfg.Net, obsDim, actDim, rng)
	a.Q2T = NewCritic("q2", cfg.Net, obsDim, actDim, rng)
	nn.CopyParams(a.Q1T.Params(), a.Q1.Params())
	nn.CopyParams(a.Q2T.Params(), a.Q2.Params())
	a.optA = nn.NewAdam(a.Actor.Params(), cfg.LRActor)
	a.optQ1 = nn.NewAdam(a.Q1.Params(), cfg.LRCritic)
	a.optQ2 = nn.NewAdam(a.Q2.Params(), cfg.LRCritic)
	return a
}

func (a *Agent) targetEntropy() float64 {
	if a.Cfg.TargetEntropy != 0 {
		return a.Cfg.TargetEntropy
	}
	return -float64(a.ActDim)
}

// Stats are the losses of one update.
type Stats struct {
	QLoss, ActorLoss, Alpha, QMean float64
}

// Update performs one SAC gradient step on batch b (actions in [−1, 1]).
func (a *Agent) Update(b *dataset.Batch, rng *rand.Rand) Stats {
	B, S, A := b.B, a.ObsDim, a.ActDim
	a.noise = growF(a.noise, B*A)
	a.act = growF(a.act, B*A)
	a.logp = growF(a.logp, B)
	a.sa = growF(a.sa, B*(S+A))
	a.y = growF(a.y, B)
	a.dq = growF(a.dq, B)
	a.dq2 = growF(a.dq2, B)
	a.dA = growF(a.dA, B*(S+A))
	a.dA2 = growF(a.dA2, B*(S+A))
	a.dOut = growF(a.dOut, B*2*A)
	alpha := math.Exp(a.LogAlpha)
	g := float32(a.Cfg.Gamma)

	// Critic target y = r + γ(1−d)(min Q'(s', a') − α log π(a'|s')).
	out := a.Actor.Forward(&a.cA, b.NextObs, B)
	FillNormal(rng, a.noise)
	nn.TanhGaussianSample(out, B, A, a.noise, a.act, a.logp)
	ConcatSA(b.NextObs, S, a.act, A, B, a.sa)
	t1 := a.Q1T.Forward(&a.cT1, a.sa, B)
	t2 := a.Q2T.Forward(&a.cT2, a.sa, B)
	for i := 0; i < B; i++ {
		v := min(t1[i], t2[i]) - float32(alpha)*a.logp[i]
		a.y[i] = b.Rew[i] + g*(1-b.Done[i])*v
	}
	// Critic step.
	ConcatSA(b.Obs, S, b.Act, A, B, a.sa)
	q1 := a.Q1.Forward(&a.cQ1, a.sa, B)
	q2 := a.Q2.Forward(&a.cQ2, a.sa, B)
	l1 := nn.MSE(q1, a.y, a.dq, 1)
	l2 := nn.MSE(q2, a.y, a.dq2, 1)
	var qmean float64
	for i := 0; i < B; i++ {
		qmean += float64(q1[i]) / float64(B)
	}
	nn.ZeroGrad(a.Q1.Params())
	nn.ZeroGrad(a.Q2.Params())
	a.Q1.Backward(&a.cQ1, a.dq, nil, true)
	a.Q2.Backward(&a.cQ2, a.dq2, nil, true)
	a.optQ1.Step()
	a.optQ2.Step()

	// Actor step: minimize α log π(ã|s) − min Q(s, ã).
	out = a.Actor.Forward(&a.cA2, b.Obs, B)
	FillNormal(rng, a.noise)
	nn.TanhGaussianSample(out, B, A, a.noise, a.act, a.logp)
	ConcatSA(b.Obs, S, a.act, A, B, a.sa)
	p1 := a.Q1.Forward(&a.cP1, a.sa, B)
	p2 := a.Q2.Forward(&a.cP2, a.sa, B)
	var aloss, lpMean float64
	for i := 0; i < B; i++ {
		m := min(p1[i], p2[i])
		aloss += (alpha*float64(a.logp[i]) - float64(m)) / float64(B)
		lpMean += float64(a.logp[i]) / float64(B)
		if p1[i] <= p2[i] {
			a.dq[i], a.dq2[i] = -1/float32(B), 0
		} else {
			a.dq[i], a.dq2[i] = 0, -1/float32(B)
		}
	}
	a.Q1.Backward(&a.cP1, a.dq, a.dA, false)
	a.Q2.Backward(&a.cP2, a.dq2, a.dA2, false)
	a.dAct = growF(a.dAct, B*A)
	for i := 0; i < B; i++ {
		for j := 0; j < A; j++ {
			a.dAct[i*A+j] = a.dA[i*(S+A)+S+j] + a.dA2[i*(S+A)+S+j]
		}
	}
	for i := range a.dq {
		a.dq[i] = float32(alpha) / float32(B)
	}
	nn.TanhGaussianSampleBackward(out, B, A, a.noise, a.act, a.dAct, a.dq, a.dOut)
	nn.ZeroGrad(a.Actor.Params())
	a.Actor.Backward(&a.cA2, a.dOut, nil, true)
	a.optA.Step()

	// Entropy temperature: minimize −log α·(log π + H̄).
	gradLogAlpha := -(lpMean + a.targetEntropy())
	a.alphaStep(gradLogAlpha)

	tau := float32(a.Cfg.Tau)
	nn.Polyak(a.Q1T.Params(), a.Q1.Params(), tau)
	nn.Polyak(a.Q2T.Params(), a.Q2.Params(), tau)
	return Stats{QLoss: float64(l1+l2) / 2, ActorLoss: aloss, Alpha: alpha, QMean: qmean}
}

// alphaStep is Adam on the scalar log α.
func (a *Agent) alphaStep(g float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	t := float64(a.optA.T) // one α step per actor step
	a.alphaM = b1*a.alphaM + (1-b1)*g
	a.alphaV = b2*a.alphaV + (1-b2)*g*g
	mh := a.alphaM / (1 - math.Pow(b1, t))
	vh := a.alphaV / (1 - math.Pow(b2, t))
	a.LogAlpha -= a.Cfg.LRAlpha * mh / (math.Sqrt(vh) + eps)
}

func growF(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Scale returns the action scale of e's (box) action space.
func Scale(e env.Env) (ActionScale, error) {
	sp := e.ActionSpace()
	if sp.Discrete > 0 {
		return ActionScale{}, fmt.Errorf("env %s has a discrete action space; SAC/CQL need continuous actions", e.Name())
	}
	s := ActionScale{Low: make([]float32, len(sp.Low)), High: make([]float32, len(sp.High))}
	for i := range sp.Low {
		if math.IsInf(sp.Low[i], 0) || math.IsInf(sp.High[i], 0) {
			return ActionScale{}, fmt.Errorf("env %s action dimension %d is unbounded", e.Name(), i)
		}
		s.Low[i], s.High[i] = float32(sp.Low[i]), float32(sp.High[i])
	}
	return s, nil
}

// Progress is reported to the callback of Train every EvalEvery env steps.
type Progress struct {
	Step       int     // environment steps taken
	Episodes   int     // finished episodes
	LastReturn float64 // return of the last finished episode
	Stats      Stats
}

// Train runs online SAC on e for cfg.TotalSteps environment steps, storing
// every transition in the returned replay buffer (env-unit actions). cb, if
// non-nil, is called every every steps with the agent and progress; it may
// copy the policy (e.g. to snapshot a "medium" policy) and may stop training
// by returning false.
func Train(ctx context.Context, cfg Config, e env.Env, every int, cb func(*Agent, Progress) bool) (*Agent, *dataset.Dataset, error) {
	scale, err := Scale(e)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5ac))
	obsDim, actDim := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
	ag := NewAgent(cfg, obsDim, actDim, rng)
	buf := &dataset.Dataset{ObsDim: obsDim, ActDim: actDim, Meta: map[string]string{"env": e.Name(), "policy": "sac-replay"}}
	pol := NewPolicy(ag.Actor, nil, scale)
	batch := dataset.NewBatch(cfg.Batch, obsDim, actDim)
	envAct := make([]float64, actDim)
	obs := e.Reset(rng)
	var ret, lastRet float64
	episodes := 0
	var st Stats
	for step := 1; step <= cfg.TotalSteps; step++ {
		if step%1000 == 0 && ctx.Err() != nil {
			return ag, buf, ctx.Err()
		}
		if step <= cfg.StartSteps {
			sp := e.ActionSpace()
			for i := range envAct {
				envAct[i] = sp.Low[i] + rng.Float64()*(sp.High[i]-sp.Low[i])
			}
		} else {
			pol.Sample(obs, rng, envAct)
		}
		next, r, term, trunc, err := e.Step(envAct)
		if err != nil {
			return ag, buf, fmt.Errorf("sac: env step %d: %w", step, err)
		}
		appendTransition(buf, obs, envAct, r, next, term, trunc)
		ret += r
		obs = next
		if term || trunc {
			episodes++
			lastRet, ret = ret, 0
			obs = e.Reset(rng)
		}
		if step > cfg.StartSteps && buf.Len() >= cfg.Batch {
			for u := 0; u < max(cfg.UpdatesPerEnv, 1); u++ {
				sampleScaled(buf, batch, rng, scale)
				st = ag.Update(batch, rng)
			}
		}
		if cb != nil && every > 0 && step%every == 0 {
			if !cb(ag, Progress{Step: step, Episodes: episodes, LastReturn: lastRet, Stats: st}) {
				break
			}
		}
	}
	return ag, buf, nil
}

// sampleScaled samples uniformly from buf and maps actions to [−1, 1].
func sampleScaled(d *dataset.Dataset, b *dataset.Batch, rng *rand.Rand, s ActionScale) {
	dataset.NewSampler(d, rng).Sample(b)
	s.FromEnv(b.Act)
}

func appendTransition(d *dataset.Dataset, s []float64, a []float64, r float64, s2 []float64, term, trunc bool) {
	for _, v := range s {
		d.Observations = append(d.Observations, float32(v))
	}
	for _, v := range a {
		d.Actions = append(d.Actions, float32(v))
	}
	for _, v := range s2 {
		d.NextObservations = append(d.NextObservations, float32(v))
	}
	d.Rewards = append(d.Rewards, float32(r))
	d.Terminals = append(d.Terminals, b2f(term))
	d.Timeouts = append(d.Timeouts, b2f(trunc && !term))
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
