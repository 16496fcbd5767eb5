package sac

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

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

// Agent holds SAC's networks and optimizers: the actor, the twin critics
// (Twin, shared with cql.Learner) and the entropy temperature log α.
//
// Update splits its work across two goroutines (two cores, an nn.Pair),
// as cql does: each critic (and its target) belongs to one goroutine, and the actor's
// rows are cut in two halves, one per goroutine, whose parameter gradients
// are summed before the actor's Adam step. All workspaces are allocated on
// the first Update for a batch size; later Updates do not allocate.
type Agent struct {
	Cfg            Config
	ObsDim, ActDim int
	Actor          *nn.MLP
	Twin           // critics Q[0], Q[1] ("q1", "q2"), targets QT, optimizers Opt
	LogAlpha       float64

	optA  *nn.Adam
	alpha ScalarAdam // Adam for log α; alpha.T == optA.T (one α step per actor step)

	actorTwin *nn.MLP // shares Actor's weights; holds the second half's gradients
	ws        workspace
	pool      *nn.Pair
	// Parameter lists, made once (MLP.Params allocates): actor, twin.
	pActor, pTwin []*nn.Param

	// The four phases of Update as method values, made once so that handing
	// them to the second goroutine does not allocate.
	phaseSample, phaseQ, phaseCritic, phaseActor func(i int)
}

// critWS is one critic's workspace (one goroutine's).
type critWS struct {
	tgt, pi, data nn.Cache  // target Q'(s',a'), Q(s,ã) for the actor, Q(s,a) for the Bellman loss
	tq, pq        []float32 // [B] target and actor-loss Q values
	dq            []float32 // [B] ∂L/∂Q(s,a)
	dp            []float32 // [B] ∂(−min Q)/∂Q(s,ã)
	dX            []float32 // [B, S+A] ∂(−min Q)/∂[s, ã] (only the action columns are used)
	loss          float32
}

// halfWS is one half of the actor's rows (one goroutine's).
type halfWS struct {
	next, cur nn.Cache // actor forward on s' (target actions) and on s (actor loss)
}

type workspace struct {
	B                    int
	noiseN, noiseS       []float32 // [B, A] ξ for a' ~ π(·|s') and ã ~ π(·|s)
	actN, actS           []float32 // [B, A] a', ã
	logpN, logpS         []float32 // [B]
	outS                 []float32 // [B, 2A] actor output at s (both halves)
	saNext, saPi, saData []float32 // [B, S+A] critic inputs [s',a'], [s,ã], [s,a]
	y                    []float32 // [B] Bellman target
	dAct, dLogp, dOut    []float32 // actor-loss gradients
	crit                 [2]critWS
	halves               [2]halfWS
	b                    *dataset.Batch // the batch of the Update in progress
	alpha                float32        // α of the Update in progress
}

// NewAgent builds networks for obsDim/actDim from cfg.
func NewAgent(cfg Config, obsDim, actDim int, rng *rand.Rand) *Agent {
	a := &Agent{Cfg: cfg, ObsDim: obsDim, ActDim: actDim, LogAlpha: math.Log(cfg.InitAlpha)}
	a.Actor = NewActor(cfg.Net, obsDim, actDim, rng)
	var q, qt [2]*nn.MLP
	q[0] = NewCritic("q1", cfg.Net, obsDim, actDim, rng)
	q[1] = NewCritic("q2", cfg.Net, obsDim, actDim, rng)
	qt[0] = NewCritic("q1", cfg.Net, obsDim, actDim, rng)
	qt[1] = NewCritic("q2", cfg.Net, obsDim, actDim, rng)
	a.Twin = NewTwin(q, qt, cfg.LRCritic)
	a.optA = nn.NewAdam(a.Actor.Params(), cfg.LRActor)
	a.actorTwin = a.Actor.ShareData()
	a.phaseSample, a.phaseQ, a.phaseCritic, a.phaseActor = a.doSample, a.doQ, a.doCritic, a.doActor
	a.pActor, a.pTwin = a.Actor.Params(), a.actorTwin.Params()
	a.pool = nn.NewPair()
	runtime.AddCleanup(a, func(p *nn.Pair) { p.Close() }, a.pool)
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

func (a *Agent) prepare(B int) {
	w := &a.ws
	if w.B == B {
		return
	}
	S, A := a.ObsDim, a.ActDim
	f := func(n int) []float32 { return make([]float32, n) }
	*w = workspace{B: B, noiseN: f(B * A), noiseS: f(B * A), actN: f(B * A), actS: f(B * A), logpN: f(B), logpS: f(B),
		outS: f(B * 2 * A), saNext: f(B * (S + A)), saPi: f(B * (S + A)), saData: f(B * (S + A)), y: f(B),
		dAct: f(B * A), dLogp: f(B), dOut: f(B * 2 * A)}
	for i := range w.crit {
		w.crit[i] = critWS{tq: f(B), pq: f(B), dq: f(B), dp: f(B), dX: f(B * (S + A))}
	}
}

// UpdateFLOPs is the GEMM FLOP count of one Update (2 FLOPs per
// multiply-add) for batch B: per critic the target forward, the actor-loss
// forward and its input gradient, and the Bellman forward, weight gradient
// and input gradient (all layers but the first); for the actor, forwards at
// s' and s, weight gradient and input gradient (all layers but the first).
func UpdateFLOPs(net NetConfig, obsDim, actDim, B int) float64 {
	layers := func(sizes []int) (total, first float64) {
		for i := 0; i+1 < len(sizes); i++ {
			f := 2 * float64(sizes[i]*sizes[i+1])
			total += f
			if i == 0 {
				first = f
			}
		}
		return
	}
	qF, qFirst := layers(append(append([]int{obsDim + actDim}, net.Hidden...), 1))
	aF, aFirst := layers(append(append([]int{obsDim}, net.Hidden...), 2*actDim))
	b := float64(B)
	critic := b*qF + 2*b*qF + 2*b*qF + b*(qF-qFirst)
	actor := 3*b*aF + b*(aF-aFirst)
	return 2*critic + actor
}

// Update performs one SAC gradient step on batch b (actions in [−1, 1]).
//
// All losses are computed with the parameters as they were when Update was
// called (as rlkit, which generated D4RL's data, does): the critics' ∂Q/∂ã
// for the actor loss is taken before the critics' Adam step. Randomness is
// drawn from rng on the calling goroutine only, so results do not depend on
// goroutine scheduling.
func (a *Agent) Update(b *dataset.Batch, rng *rand.Rand) Stats {
	B, S, A := b.B, a.ObsDim, a.ActDim
	a.prepare(B)
	w := &a.ws
	w.b = b
	w.alpha = float32(math.Exp(a.LogAlpha))
	alpha := w.alpha
	g := float32(a.Cfg.Gamma)
	FillNormal(rng, w.noiseN)
	FillNormal(rng, w.noiseS)

	a.pool.Run(a.phaseSample) // a' ~ π(·|s'), ã ~ π(·|s); critic inputs
	a.pool.Run(a.phaseQ)      // Q'_i(s', a') and Q_i(s, ã)

	// y = r + γ(1−d)(min_i Q'_i(s', a') − α log π(a'|s')).
	for i := 0; i < B; i++ {
		v := min(w.crit[0].tq[i], w.crit[1].tq[i]) - alpha*w.logpN[i]
		w.y[i] = b.Rew[i] + g*(1-b.Done[i])*v
	}
	// The actor loss α log π(ã|s) − min_i Q_i(s, ã) sends its gradient to
	// the smaller Q. SAC's loss uses the float32 α (widened), cql's the
	// float64 exp(log α): each keeps the numbers it always had.
	aloss := PolicyLoss(float64(alpha), w.logpS, [2][]float32{w.crit[0].pq, w.crit[1].pq},
		[2][]float32{w.crit[0].dp, w.crit[1].dp})
	lpMean := MeanLogProb(w.logpS)

	a.pool.Run(a.phaseCritic) // ∂(−min Q)/∂ã, Bellman loss, Adam, Polyak
	var qmean float64
	for i := 0; i < B; i++ {
		qmean += float64(w.crit[0].pq[i]) / float64(B)
	}

	PolicyLogpGrad(alpha, w.dLogp)
	PolicyActionGrad([2][]float32{w.crit[0].dX, w.crit[1].dX}, S, A, w.dAct)
	a.pool.Run(a.phaseActor) // actor backward, one half of the rows each
	nn.AddGrads(a.pActor, a.pTwin)
	a.optA.Step()

	// Entropy temperature: minimize −log α·(log π + H̄).
	a.alpha.Step(&a.LogAlpha, TemperatureGrad(lpMean, a.targetEntropy()), a.Cfg.LRAlpha)
	w.b = nil
	return Stats{QLoss: float64(w.crit[0].loss+w.crit[1].loss) / 2, ActorLoss: aloss, Alpha: float64(alpha), QMean: qmean}
}

// rowsOf returns the actor rows [lo, hi) goroutine i works on.
func (w *workspace) rowsOf(i int) (lo, hi int) {
	if i == 0 {
		return 0, w.B / 2
	}
	return w.B / 2, w.B
}

// doSample: actor forward at s' and s for rows rowsOf(i), tanh-Gaussian
// samples, and the critic inputs [s', a'], [s, ã], [s, a] of those rows.
func (a *Agent) doSample(i int) {
	w, b := &a.ws, a.ws.b
	S, A, W := a.ObsDim, a.ActDim, a.ObsDim+a.ActDim
	lo, hi := w.rowsOf(i)
	n := hi - lo
	net := a.Actor
	if i == 1 {
		net = a.actorTwin
	}
	hw := &w.halves[i]
	outN := net.Forward(&hw.next, b.NextObs[lo*S:hi*S], n)
	nn.TanhGaussianSample(outN, n, A, w.noiseN[lo*A:hi*A], w.actN[lo*A:hi*A], w.logpN[lo:hi])
	outS := net.Forward(&hw.cur, b.Obs[lo*S:hi*S], n)
	copy(w.outS[lo*2*A:hi*2*A], outS)
	nn.TanhGaussianSample(outS, n, A, w.noiseS[lo*A:hi*A], w.actS[lo*A:hi*A], w.logpS[lo:hi])
	ConcatSA(b.NextObs[lo*S:], S, w.actN[lo*A:], A, n, w.saNext[lo*W:])
	ConcatSA(b.Obs[lo*S:], S, w.actS[lo*A:], A, n, w.saPi[lo*W:])
	ConcatSA(b.Obs[lo*S:], S, b.Act[lo*A:], A, n, w.saData[lo*W:])
}

// doQ: critic i's target value Q'_i(s', a') and Q_i(s, ã).
func (a *Agent) doQ(i int) {
	w := &a.ws
	c := &w.crit[i]
	copy(c.tq, a.QT[i].Forward(&c.tgt, w.saNext, w.B))
	copy(c.pq, a.Q[i].Forward(&c.pi, w.saPi, w.B))
}

// doCritic: ∂(−min Q)/∂[s, ã] through critic i as it is now (before its
// Adam step), then the Bellman MSE, its backward pass, Adam and Polyak.
func (a *Agent) doCritic(i int) {
	w := &a.ws
	c := &w.crit[i]
	q := a.Q[i]
	q.Backward(&c.pi, c.dp, c.dX, false)
	out := q.Forward(&c.data, w.saData, w.B)
	c.loss = nn.MSE(out, w.y, c.dq, 1)
	a.Descend(i, &c.data, c.dq, a.Cfg.Tau)
}

// doActor: back-propagate the actor loss for rows rowsOf(i) into the
// actor's (i = 0) or its twin's (i = 1) gradients.
func (a *Agent) doActor(i int) {
	w := &a.ws
	A := a.ActDim
	lo, hi := w.rowsOf(i)
	net, ps := a.Actor, a.pActor
	if i == 1 {
		net, ps = a.actorTwin, a.pTwin
	}
	nn.TanhGaussianSampleBackward(w.outS[lo*2*A:hi*2*A], hi-lo, A, w.noiseS[lo*A:hi*A], w.actS[lo*A:hi*A],
		w.dAct[lo*A:hi*A], w.dLogp[lo:hi], w.dOut[lo*2*A:hi*2*A])
	nn.ZeroGrad(ps)
	net.Backward(&w.halves[i].cur, w.dOut[lo*2*A:hi*2*A], nil, true)
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

// trainStream is the PCG stream of online SAC's random draws (network
// initialisation, warm-up actions, resets, minibatches, policy noise), seeded
// with Config.Seed; evaluation has its own stream (run.go). Changing it
// changes every SAC run's numbers.
const trainStream = 0x5ac

// TrainStats are the statistics reported to the onStats callback of Train
// every `every` env steps (a typed event, like RunStats).
type TrainStats struct {
	Step       int     // environment steps taken
	Episodes   int     // finished episodes
	LastReturn float64 // return of the last finished episode
	Stats      Stats
}

// Train runs online SAC on e for cfg.TotalSteps environment steps in
// memory (no checkpoints; for short classic-control runs; Run is the
// resumable D4RL-recipe run), storing every transition in the returned
// replay buffer (env-unit actions). onStats, if non-nil, is called every
// every steps with the agent and its statistics; it may copy the policy
// (e.g. to snapshot a "medium" policy) and may stop training by returning
// false. A cancelled ctx stops it before the next step with ctx's error,
// returning the agent and the transitions so far.
func Train(ctx context.Context, cfg Config, e env.Env, every int, onStats func(*Agent, TrainStats) bool) (*Agent, *dataset.Dataset, error) {
	scale, err := Scale(e)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, trainStream))
	obsDim, actDim := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
	ag := NewAgent(cfg, obsDim, actDim, rng)
	buf := &dataset.Dataset{ObsDim: obsDim, ActDim: actDim, Meta: map[string]string{"env": e.Name(), "policy": "sac-replay"}}
	pol := NewPolicy(ag.Actor, nil, scale)
	batch := dataset.NewBatch(cfg.Batch, obsDim, actDim)
	sampler := dataset.NewSampler(buf, rng)
	envAct := make([]float64, actDim)
	obs := e.Reset(rng)
	var ret, lastRet float64
	episodes := 0
	var st Stats
	for step := 1; step <= cfg.TotalSteps; step++ {
		if err := ctx.Err(); err != nil { // a few ns a step against an env step's µs
			return ag, buf, err
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
				sampler.Sample(batch)
				scale.FromEnv(batch.Act)
				st = ag.Update(batch, rng)
			}
		}
		if onStats != nil && every > 0 && step%every == 0 {
			if !onStats(ag, TrainStats{Step: step, Episodes: episodes, LastReturn: lastRet, Stats: st}) {
				break
			}
		}
	}
	return ag, buf, nil
}

// appendTransition adds a transition to d; a time-limit cut is a timeout
// only when the step did not also terminate.
func appendTransition(d *dataset.Dataset, s []float64, a []float64, r float64, s2 []float64, term, trunc bool) {
	d.Append(s, a, r, s2, term, trunc && !term)
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
