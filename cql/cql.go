package cql

import (
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/sac"
)

// Learner holds CQL's networks, optimizers and per-batch workspaces.
// Step performs one gradient update; it does not allocate after the first call.
//
// CQL is SAC plus a conservative term, as in d3rlpy (CQLImpl extends
// SACImpl and overrides only the critic loss): the twin critics, their
// Polyak step, the policy loss and the temperature's Adam are sac's
// (sac.Twin, sac.PolicyLoss, sac.ScalarAdam, ...); this package adds the
// logsumexp term to the critics' ∂L/∂Q and the Lagrange multiplier α'.
type Learner struct {
	Cfg            Config
	ObsDim, ActDim int
	Norm           *dataset.Normalizer // applied to every state fed to a network
	Actor          *nn.MLP
	sac.Twin               // twin critics Q, their targets QT and optimizers Opt
	LogAlpha       float64 // entropy weight (log), fixed unless AutoEntropy
	LogAlphaPrime  float64 // Lagrange multiplier α' (log)
	Steps          int     // updates done

	optA   *nn.Adam
	scalar [2]sac.ScalarAdam // α and α' (checkpointed as [m, v, t] each)

	ws  workspace
	adv advWS // stateGradient's (S4RL-Adv's) scratch

	// pool runs the two halves of each parallel phase (critic k, or the
	// actor at s and at s') on two goroutines; the phases are method values
	// made once, reading their arguments from ws and adv, so that handing
	// them to the worker does not allocate.
	pool *nn.Pair

	phaseSample, phaseQ, phaseCritic, phaseAdvQ, phaseAdvGrad func(int)

	qGradient QGradient   // l.stateGradient, made once: a method value allocates
	pActor    []*nn.Param // Actor.Params(), listed once (it allocates)

	// noiseHook, when set (tests only), may overwrite the noise Step has
	// just drawn, so an independent reference can replay the same update.
	noiseHook func(*stepNoise)
}

// stepNoise is every random draw of one Step after the augmenter's, drawn
// in this order from the Step's policy stream.
type stepNoise struct {
	pi   []float32 // [B, A] ξ of ã ~ π(·|s), the actor-loss sample
	next []float32 // [B, A] ξ of a' ~ π(·|s'), the target sample
	ood  []float32 // [2BN, A] ξ of the logsumexp samples: row i·N+k is sample k of π(·|s_i), then B·N rows of π(·|s'_i)
	unif []float32 // [BN, A] uniform actions on [−1, 1] for the logsumexp, row i·N+k for state i
	// maxNext [BN, A]: ξ of the MaxTargetBackup samples a'_ik ~ π(·|s'_i),
	// row i·N+k; drawn (last) only with MaxTargetBackup.
	maxNext []float32
}

// critic workspaces, one per twin so both run concurrently.
type criticWS struct {
	big, pi, tgt nn.Cache
	dy           []float32 // [R] ∂L/∂Q over the big batch
	dp           []float32 // [B] ∂L/∂Q(s, a_π)
	dX           []float32 // [B, S+A] ∂L/∂[s, a_π]
	lse          []float32 // [B]
	soft         []float32 // [B, 3N]
	cat          []float32 // [B, 3N]
	active       []bool    // [B] ClipDiff: the state's difference lies inside the clip range
	mse, gap     float64
	qData        float64
	qRand, qPi   float64
}

type workspace struct {
	B                          int       // batch size of the current Step
	obsAug, nextAug, obs, next []float32 // [B, S]
	shift, shiftNext           float64   // batch means of ‖s̃ − s‖₂, ‖s̃' − s'‖₂ (raw units)
	act                        []float32 // [B, A] data actions (in [−1,1])
	xBig                       []float32 // [bigBatch.rows(), S+A]
	saNext, saPi               []float32 // [B, S+A]
	noise                      stepNoise
	actPi, logpPi              []float32 // actor-loss sample
	actNx, logpNx              []float32 // target sample at s'
	actMx, logpMx              []float32 // [BN, A], [BN]: MaxTargetBackup samples at s'
	actOOD, logpOOD            []float32 // [2BN, A], [2BN]: π(s) then π(s') samples
	y                          []float32 // [B]
	tq                         [2][]float32
	pq                         [2][]float32
	dAct, dOut, dOut2, logpBC  []float32
	dLogp                      []float32 // [B] ∂L/∂log π for the actor
	cS, cN                     nn.Cache  // actor on s and s'
	outS, outN                 []float32 // actor outputs at s and s' [B, 2A] (in cS, cN)
	crit                       [2]criticWS

	// Arguments of the Step in progress, for the parallel phases.
	bc         bool    // the actor step is behaviour cloning: no policy-loss Q
	alphaPrime float64 // α' of this Step
}

// NewLearner builds networks for the given dimensions; norm may be nil
// (identity).
func NewLearner(cfg Config, obsDim, actDim int, norm *dataset.Normalizer, rng *rand.Rand) *Learner {
	if norm == nil {
		norm = dataset.Identity(obsDim)
	}
	l := &Learner{Cfg: cfg, ObsDim: obsDim, ActDim: actDim, Norm: norm, LogAlpha: math.Log(cfg.Alpha), LogAlphaPrime: cfg.LogAlphaPrimeInit}
	l.Actor = sac.NewActor(cfg.Net, obsDim, actDim, rng)
	if cfg.ActorInit == "torch" {
		torchActorInit(l.Actor, rng)
	}
	out := l.Actor.Layers[len(l.Actor.Layers)-1].B.Data // [μ (A), log σ (A)]
	for j := actDim; j < 2*actDim; j++ {
		out[j] += float32(cfg.LogStdOffset)
	}
	var q, qt [2]*nn.MLP
	for i := range q {
		name := []string{"q1", "q2"}[i]
		q[i] = sac.NewCritic(name, cfg.CriticNet(i), obsDim, actDim, rng)
		qt[i] = sac.NewCritic(name, cfg.CriticNet(i), obsDim, actDim, rng)
	}
	l.Twin = sac.NewTwin(q, qt, cfg.LRCritic)
	l.optA = nn.NewAdam(l.Actor.Params(), cfg.LRActor)
	l.phaseSample, l.phaseQ, l.phaseCritic = l.doSample, l.doQ, l.doCritic
	l.phaseAdvQ, l.phaseAdvGrad = l.doAdvQ, l.doAdvGrad
	l.qGradient, l.pActor = l.stateGradient, l.Actor.Params()
	l.pool = nn.NewPair()
	runtime.AddCleanup(l, func(p *nn.Pair) { p.Close() }, l.pool)
	return l
}

// torchActorInit gives the actor CORL's initialization: PyTorch's nn.Linear
// default on the hidden layers (weights and biases uniform on ±1/√fan_in,
// kaiming_uniform with a = √5) and Xavier-uniform with gain 1e-2, zero bias
// on the output layer.
func torchActorInit(m *nn.MLP, rng *rand.Rand) {
	last := len(m.Layers) - 1
	for i, l := range m.Layers {
		if i == last {
			nn.XavierUniform(l.W.Data, l.In, l.Out, 1e-2, rng)
			clear(l.B.Data)
			continue
		}
		bound := 1 / math.Sqrt(float64(l.In))
		for _, p := range [][]float32{l.W.Data, l.B.Data} {
			for j := range p {
				p[j] = float32(bound * (2*rng.Float64() - 1))
			}
		}
	}
}

// Stats summarizes one update (means over the batch).
type Stats struct {
	QLoss      float64 `json:"q_loss"`      // Bellman MSE, mean of the twins
	CQLGap     float64 `json:"cql_gap"`     // logsumexp Q(s,·) − Q(s̃,a) (Q(s,a) with PushUpClean), mean of twins
	AlphaPrime float64 `json:"alpha_prime"` // Lagrange multiplier α'
	Alpha      float64 `json:"alpha"`       // entropy weight
	ActorLoss  float64 `json:"actor_loss"`
	QData      float64 `json:"q_data"`   // mean Q(s̃_t, a_t)
	QRandom    float64 `json:"q_random"` // mean Q(s, uniform a)
	QPolicy    float64 `json:"q_policy"` // mean Q(s, a ~ π(s))
	LogPi      float64 `json:"log_pi"`
	BC         bool    `json:"bc"` // the actor step was behaviour cloning
	// ShiftL2 and ShiftNextL2 are the batch means of ‖s̃_t − s_t‖₂ and
	// ‖s̃_{t+1} − s_{t+1}‖₂ in raw state units: how far the augmenter moved
	// the states this step (0 for plain CQL, about σ√S for S4RL-N; for
	// KFC/KFC++ with direct decoding it includes the autoencoder's
	// reconstruction error D(E(s)) − s).
	ShiftL2     float64 `json:"shift_l2"`
	ShiftNextL2 float64 `json:"shift_next_l2"`
}

// Row is the statistics as one metrics row (metrics.jsonl/.csv), keyed by
// rundir's metric names; BC is 1 for a behaviour-cloning step, else 0. The
// caller adds what is not the update's: the step, the wall time and the
// augmenter's branch.
func (s Stats) Row() map[string]float64 {
	bc := 0.0
	if s.BC {
		bc = 1
	}
	return map[string]float64{rundir.QLoss: s.QLoss, rundir.CQLGap: s.CQLGap, rundir.AlphaPrime: s.AlphaPrime,
		rundir.Alpha: s.Alpha, rundir.ActorLoss: s.ActorLoss, rundir.QData: s.QData, rundir.QRandom: s.QRandom,
		rundir.QPolicy: s.QPolicy, rundir.LogPi: s.LogPi, rundir.BC: bc, rundir.ShiftL2: s.ShiftL2,
		rundir.ShiftNextL2: s.ShiftNextL2}
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func (l *Learner) prepare(B int) {
	S, A, N := l.ObsDim, l.ActDim, l.Cfg.NumActions
	w := &l.ws
	w.B = B
	w.obsAug, w.nextAug = grow(w.obsAug, B*S), grow(w.nextAug, B*S)
	w.obs, w.next = grow(w.obs, B*S), grow(w.next, B*S)
	w.act = grow(w.act, B*A)
	R := l.big(B).rows()
	w.xBig = grow(w.xBig, R*(S+A))
	w.saNext, w.saPi = grow(w.saNext, l.targetRows(B)*(S+A)), grow(w.saPi, B*(S+A))
	n := &w.noise
	n.pi, n.next, n.ood, n.unif = grow(n.pi, B*A), grow(n.next, B*A), grow(n.ood, 2*B*N*A), grow(n.unif, B*N*A)
	w.actPi, w.logpPi = grow(w.actPi, B*A), grow(w.logpPi, B)
	w.actNx, w.logpNx = grow(w.actNx, B*A), grow(w.logpNx, B)
	if l.Cfg.MaxTargetBackup {
		n.maxNext = grow(n.maxNext, B*N*A)
		w.actMx, w.logpMx = grow(w.actMx, B*N*A), grow(w.logpMx, B*N)
	}
	w.actOOD, w.logpOOD = grow(w.actOOD, 2*B*N*A), grow(w.logpOOD, 2*B*N)
	w.y = grow(w.y, B)
	w.dLogp = grow(w.dLogp, B)
	w.dAct, w.dOut, w.dOut2, w.logpBC = grow(w.dAct, B*A), grow(w.dOut, B*2*A), grow(w.dOut2, B*2*A), grow(w.logpBC, B)
	for i := range w.crit {
		c := &w.crit[i]
		c.dy, c.dp, c.dX = grow(c.dy, R), grow(c.dp, B), grow(c.dX, B*(S+A))
		c.lse, c.soft, c.cat = grow(c.lse, B), grow(c.soft, B*3*N), grow(c.cat, B*3*N)
		if cap(c.active) < B {
			c.active = make([]bool, B)
		}
		c.active = c.active[:B]
	}
}

// sampleRows draws n reparameterized actions per row of the policy output
// out [B, 2A] into act [B·n, A] and logp [B·n] (row i·n+k is sample k of state i).
func sampleRows(out []float32, B, A, n int, noise, act, logp []float32) {
	for i := 0; i < B; i++ {
		o := out[i*2*A : (i+1)*2*A]
		for k := 0; k < n; k++ {
			r := i*n + k
			nn.TanhGaussianSample(o, 1, A, noise[r*A:(r+1)*A], act[r*A:(r+1)*A], logp[r:r+1])
		}
	}
}

// bigBatch names the row blocks of the critics' input xBig [rows(), S+A],
// which every critic evaluates in one forward pass:
//
//	rows [0, B)          data     [s̃_i, a_i]                  Bellman error and CQL push-up
//	rows uniform(i, k)   uniform  [s_i, u_ik],  u ~ U[−1,1]^A   logsumexp samples,
//	rows piS(i, k)       π(s)     [s_i, a_ik ~ π(·|s_i)]        N per state, all at
//	rows piNext(i, k)    π(s')    [s_i, a_ik ~ π(·|s'_i)]       the clean s_i
//	rows pushUp(i)       clean    [s_i, a_i]                    CQL push-up, with Config.PushUpClean
//	                                                            only (otherwise pushUp(i) = i)
//
// The logsumexp reads them back per state in the authors' column order
// [uniform | π(s') | π(s)] (torch.cat([q_rand, q_next_actions,
// q_curr_actions]) in their CQL.py); the lse* methods name those columns.
type bigBatch struct {
	B, N  int
	Clean bool // Config.PushUpClean: B more rows for the push-up at s
}

// big returns the layout for batch size B.
func (l *Learner) big(B int) bigBatch {
	return bigBatch{B: B, N: l.Cfg.NumActions, Clean: l.Cfg.PushUpClean}
}

func (g bigBatch) rows() int {
	if g.Clean {
		return g.B * (2 + 3*g.N)
	}
	return g.B * (1 + 3*g.N)
}

func (g bigBatch) pushUp(i int) int {
	if g.Clean {
		return g.B*(1+3*g.N) + i
	}
	return i
}

func (g bigBatch) uniform(i, k int) int   { return g.B + i*g.N + k }
func (g bigBatch) piS(i, k int) int       { return g.B + g.B*g.N + i*g.N + k }
func (g bigBatch) piNext(i, k int) int    { return g.B + 2*g.B*g.N + i*g.N + k }
func (g bigBatch) lseUniform(k int) int   { return k }
func (g bigBatch) lsePiNext(k int) int    { return g.N + k }
func (g bigBatch) lsePiS(k int) int       { return 2*g.N + k }
func (g bigBatch) lseCols() int           { return 3 * g.N }
func (g bigBatch) oodPiS(i, k int) int    { return i*g.N + k }           // row of w.actOOD / w.logpOOD
func (g bigBatch) oodPiNext(i, k int) int { return g.B*g.N + i*g.N + k } // row of w.actOOD / w.logpOOD

// Step performs one CQL update on batch b, whose actions must already be in
// [−1, 1]. aug supplies the shifted states (nil means none). It reads top to
// bottom like CORL's cql.py train(): states and samples, Bellman target,
// policy loss with the current critics, critic losses and their steps,
// policy step, α and α'. The losses it implements are written out as
// formulas, and checked against this code, in reference_test.go (the whole
// update, independently in float64) and grad_test.go (criticLoss: the
// critic loss, by finite differences). rng feeds both the augmenter and the
// policy samples, in that order; StepStreams gives each its own stream.
func (l *Learner) Step(b *dataset.Batch, aug StateShift, rng *rand.Rand) (Stats, error) {
	return l.StepStreams(b, aug, rng, rng)
}

// StepStreams is Step with the augmenter drawing only from augRNG and the
// policy samples (stepNoise) only from policyRNG, so however many numbers
// an augmenter draws, the policy noise of the update is the same.
func (l *Learner) StepStreams(b *dataset.Batch, aug StateShift, augRNG, policyRNG *rand.Rand) (Stats, error) {
	B, A := b.B, l.ActDim
	l.prepare(B)
	cfg := &l.Cfg
	if aug == nil {
		aug = NoShift{}
	}
	// Step 3 of the paper: shifted s̃, s̃' (raw units), clean s, s'; then
	// the normalizer on every network input.
	if err := l.states(b, aug, augRNG); err != nil {
		return Stats{}, err
	}
	alpha := math.Exp(l.LogAlpha)
	alphaPrime := 1.0
	if cfg.Lagrange {
		alphaPrime = math.Min(math.Max(math.Exp(l.LogAlphaPrime), 0), 1e6)
	}
	bc := l.Steps < cfg.BCSteps
	w := &l.ws
	w.bc, w.alphaPrime = bc, alphaPrime

	// Policy samples, all at clean states, and the critic inputs.
	outS := l.sample(policyRNG)
	l.fillCriticInputs()

	// Target Q̄(s̃', a'), and Q(s, ã) for the policy loss (current critics).
	l.pool.Run(l.phaseQ)
	l.bellmanTarget(b, alpha)
	var actorLoss float64
	if !bc {
		// SAC's policy loss mean(α log π(ã|s) − min_k Q_k(s, ã)), and each
		// twin's ∂loss/∂Q_k(s, ã) in w.crit[k].dp.
		actorLoss = sac.PolicyLoss(alpha, w.logpPi, w.pq, [2][]float32{w.crit[0].dp, w.crit[1].dp})
	}

	// Each critic: ∂(−min Q(s, ã))/∂ã for the policy first, then its
	// Bellman + CQL loss, backward, Adam step and Polyak target update.
	l.pool.Run(l.phaseCritic)

	// Policy step (BC warm-up or SAC), then α and α'.
	lpMean, bcLoss := l.actorUpdate(outS, bc, alpha)
	if bc {
		actorLoss = bcLoss
	}
	if cfg.AutoEntropy {
		// L_α = −log α·(log π(ã|s) − A): target entropy −|A|, the
		// learning rate the actor's (CORL).
		l.scalar[0].Step(&l.LogAlpha, sac.TemperatureGrad(lpMean, -float64(A)), cfg.LRActor)
	}
	if cfg.Lagrange {
		// L_α' = −½ Σ_k α'(w·gap_k − τ); gradient with respect to log α'.
		gsum := 0.0
		for i := range w.crit {
			gsum += cfg.MinQWeight*w.crit[i].gap - cfg.LagrangeThres
		}
		l.scalar[1].Step(&l.LogAlphaPrime, -0.5*alphaPrime*gsum, cfg.LRAlphaPrime)
	}
	l.Steps++
	c0, c1 := &w.crit[0], &w.crit[1]
	return Stats{QLoss: (c0.mse + c1.mse) / 2, CQLGap: (c0.gap + c1.gap) / 2, AlphaPrime: alphaPrime, Alpha: alpha,
		ActorLoss: actorLoss, QData: (c0.qData + c1.qData) / 2, QRandom: (c0.qRand + c1.qRand) / 2,
		QPolicy: (c0.qPi + c1.qPi) / 2, LogPi: lpMean, BC: bc, ShiftL2: w.shift, ShiftNextL2: w.shiftNext}, nil
}

// states fills w.obsAug, w.nextAug (the augmenter's s̃, s̃') and w.obs,
// w.next, w.act (clean s, s', a) and normalizes the four state buffers.
func (l *Learner) states(b *dataset.Batch, aug StateShift, rng *rand.Rand) error {
	w := &l.ws
	if err := aug.Augment(b, w.obsAug, w.nextAug, rng, l.qGradient); err != nil {
		return err
	}
	copy(w.obs, b.Obs)
	copy(w.next, b.NextObs)
	copy(w.act, b.Act)
	w.shift = meanRowDistance(w.obsAug, w.obs, w.B, l.ObsDim)
	w.shiftNext = meanRowDistance(w.nextAug, w.next, w.B, l.ObsDim)
	for _, x := range [][]float32{w.obsAug, w.nextAug, w.obs, w.next} {
		l.Norm.Apply(x)
	}
	return nil
}

// meanRowDistance is the mean over the B rows of x and y ([B, S]) of the
// Euclidean distance between them, accumulated in float64.
func meanRowDistance(x, y []float32, B, S int) float64 {
	if B == 0 {
		return 0
	}
	sum := 0.0
	for i := 0; i < B; i++ {
		ss := 0.0
		for j := i * S; j < (i+1)*S; j++ {
			d := float64(x[j]) - float64(y[j])
			ss += d * d
		}
		sum += math.Sqrt(ss)
	}
	return sum / float64(B)
}

// sample draws the update's noise (stepNoise, in its order) and the policy
// samples at the clean states: ã ~ π(·|s) for the policy loss, a' ~ π(·|s')
// for the target, N of each for the logsumexp. It returns the actor's
// output at s [B, 2A], kept in w.cS for the actor's backward pass.
func (l *Learner) sample(rng *rand.Rand) []float32 {
	w := &l.ws
	B, A, N := w.B, l.ActDim, l.Cfg.NumActions
	nz := &w.noise
	sac.FillNormal(rng, nz.pi)
	sac.FillNormal(rng, nz.next)
	sac.FillNormal(rng, nz.ood)
	for j := range nz.unif {
		nz.unif[j] = float32(2*rng.Float64() - 1)
	}
	if l.Cfg.MaxTargetBackup {
		sac.FillNormal(rng, nz.maxNext)
	}
	if l.noiseHook != nil {
		l.noiseHook(nz)
	}
	// The samples at s and at s' are independent: one core each.
	l.pool.Run(l.phaseSample)
	if l.Cfg.MaxTargetBackup {
		sampleRows(w.outN, B, A, N, nz.maxNext, w.actMx, w.logpMx)
	}
	return w.outS
}

// doSample is sample's parallel phase: the actor's samples at s (i = 0:
// ã and the logsumexp's π(s) rows) or at s' (i = 1: a' and the π(s')
// rows), from the noise already drawn.
func (l *Learner) doSample(i int) {
	w := &l.ws
	B, A, N := w.B, l.ActDim, l.Cfg.NumActions
	nz := &w.noise
	if i == 0 {
		w.outS = l.Actor.Forward(&w.cS, w.obs, B)
		nn.TanhGaussianSample(w.outS, B, A, nz.pi, w.actPi, w.logpPi)
		sampleRows(w.outS, B, A, N, nz.ood[:B*N*A], w.actOOD[:B*N*A], w.logpOOD[:B*N])
		return
	}
	w.outN = l.Actor.Forward(&w.cN, w.next, B)
	nn.TanhGaussianSample(w.outN, B, A, nz.next, w.actNx, w.logpNx)
	sampleRows(w.outN, B, A, N, nz.ood[B*N*A:], w.actOOD[B*N*A:], w.logpOOD[B*N:])
}

// doQ is Step's first critic phase for twin i: the target's Q̄_i(s̃', a')
// and, unless the actor step is BC, the critic's Q_i(s, ã).
func (l *Learner) doQ(i int) {
	w := &l.ws
	w.tq[i] = l.QT[i].Forward(&w.crit[i].tgt, w.saNext, l.targetRows(w.B))
	if !w.bc {
		w.pq[i] = l.Q[i].Forward(&w.crit[i].pi, w.saPi, w.B)
	}
}

// doCritic is Step's second critic phase for twin i: the policy loss's
// ∂/∂ã through the critic as it is (unless BC), then the critic's update.
func (l *Learner) doCritic(i int) {
	if !l.ws.bc {
		l.policyQGradient(i)
	}
	l.criticUpdate(i, l.ws.alphaPrime)
}

// fillCriticInputs lays out xBig (see bigBatch), saNext = [s̃', a'] for the
// target and saPi = [s, ã] for the policy loss.
func (l *Learner) fillCriticInputs() {
	w := &l.ws
	S, A := l.ObsDim, l.ActDim
	B, N := w.B, l.Cfg.NumActions
	g := l.big(B)
	W := S + A
	x := w.xBig
	sac.ConcatSA(w.obsAug, S, w.act, A, B, x)
	if g.Clean {
		sac.ConcatSA(w.obs, S, w.act, A, B, x[g.pushUp(0)*W:])
	}
	for i := 0; i < B; i++ {
		s := w.obs[i*S : (i+1)*S]
		for k := 0; k < N; k++ {
			row := x[g.uniform(i, k)*W : (g.uniform(i, k)+1)*W]
			copy(row[:S], s)
			copy(row[S:], w.noise.unif[(i*N+k)*A:(i*N+k+1)*A])
			row = x[g.piS(i, k)*W : (g.piS(i, k)+1)*W]
			copy(row[:S], s)
			copy(row[S:], w.actOOD[g.oodPiS(i, k)*A:(g.oodPiS(i, k)+1)*A])
			row = x[g.piNext(i, k)*W : (g.piNext(i, k)+1)*W]
			copy(row[:S], s)
			copy(row[S:], w.actOOD[g.oodPiNext(i, k)*A:(g.oodPiNext(i, k)+1)*A])
		}
	}
	if l.Cfg.MaxTargetBackup {
		for i := 0; i < B; i++ {
			for k := 0; k < N; k++ {
				r := i*N + k
				copy(w.saNext[r*W:r*W+S], w.nextAug[i*S:(i+1)*S])
				copy(w.saNext[r*W+S:(r+1)*W], w.actMx[r*A:(r+1)*A])
			}
		}
	} else {
		sac.ConcatSA(w.nextAug, S, w.actNx, A, B, w.saNext)
	}
	sac.ConcatSA(w.obs, S, w.actPi, A, B, w.saPi)
}

// bellmanTarget writes y = r + γ(1 − d)·(min_k Q̄_k(s̃', a') − α log π(a'|s'))
// (the entropy term only with BackupEntropy) from the target critics'
// outputs w.tq.
//
// With MaxTargetBackup the value is the largest min_k Q̄_k(s̃', a'_j) over
// the NumActions samples a'_j, with that sample's log π. With a reward
// transform, r is replaced by RewardScale·r + RewardBias.
func (l *Learner) bellmanTarget(b *dataset.Batch, alpha float64) {
	w := &l.ws
	g := float32(l.Cfg.Gamma)
	scale, bias, transform := l.Cfg.rewardTransform()
	N := l.Cfg.NumActions
	for i := range w.y {
		var v, logp float32
		if l.Cfg.MaxTargetBackup {
			best := i * N
			v = min(w.tq[0][best], w.tq[1][best])
			for r := i*N + 1; r < (i+1)*N; r++ {
				if q := min(w.tq[0][r], w.tq[1][r]); q > v {
					v, best = q, r
				}
			}
			logp = w.logpMx[best]
		} else {
			v, logp = min(w.tq[0][i], w.tq[1][i]), w.logpNx[i]
		}
		if l.Cfg.BackupEntropy {
			v -= float32(alpha) * logp
		}
		r := b.Rew[i]
		if transform {
			r = float32(scale*float64(r) + bias)
		}
		w.y[i] = r + g*(1-b.Done[i])*v
	}
}

// targetRows is the number of rows the target critics evaluate: B, or B·N
// with MaxTargetBackup.
func (l *Learner) targetRows(B int) int {
	if l.Cfg.MaxTargetBackup {
		return B * l.Cfg.NumActions
	}
	return B
}

// policyQGradient writes critic i's ∂(policy loss)/∂[s, ã] into
// w.crit[i].dX. It must run before critic i's optimizer step: the policy
// loss uses the critics as they were before this update (CORL computes the
// policy loss before stepping the critics; the authors' code steps the
// policy first).
func (l *Learner) policyQGradient(i int) {
	c := &l.ws.crit[i]
	l.Q[i].Backward(&c.pi, c.dp, c.dX, false)
}

// criticUpdate computes critic i's loss
//
//	L = mean_s (Q(s̃,a) − y)² + α'·w·(mean_s T·LSE_j(c_sj / T) − mean_s Q(s̃,a)),
//	c_s· = [Q(s,u) − log 2^−A | Q(s,a~π(s')) − log π | Q(s,a~π(s)) − log π]
//
// with Q(s,a) in the last term under PushUpClean (the Lagrange threshold
// shifts L by a constant), back-propagates it, takes
// the Adam step and Polyak-updates the target Q̄_i ← (1 − τ)Q̄_i + τQ_i
// (sac.Twin.Descend, as SAC's critic step).
func (l *Learner) criticUpdate(i int, alphaPrime float64) {
	w, cfg := &l.ws, &l.Cfg
	B, N, A := w.B, cfg.NumActions, l.ActDim
	g := l.big(B)
	c := &w.crit[i]
	q := l.Q[i].Forward(&c.big, w.xBig, g.rows())
	c.mse = float64(nn.MSE(q[:B], w.y, c.dy[:B], 1))

	// Logsumexp columns: Q minus the log density of the proposal.
	logUniform := float32(float64(A) * math.Log(0.5)) // U[−1,1]^A
	temp := float32(cfg.Temp)
	var qr, qp float64
	for s := 0; s < B; s++ {
		cat := c.cat[s*g.lseCols() : (s+1)*g.lseCols()]
		for k := 0; k < N; k++ {
			qUniform, qPiS, qPiNext := q[g.uniform(s, k)], q[g.piS(s, k)], q[g.piNext(s, k)]
			qr += float64(qUniform)
			qp += float64(qPiS)
			cat[g.lseUniform(k)] = (qUniform - logUniform) / temp
			cat[g.lsePiNext(k)] = (qPiNext - w.logpOOD[g.oodPiNext(s, k)]) / temp
			cat[g.lsePiS(k)] = (qPiS - w.logpOOD[g.oodPiS(s, k)]) / temp
		}
	}
	nn.LogSumExpRows(c.cat, B, g.lseCols(), c.lse, c.soft)
	var lse, qd, qs float64 // qd: push-up rows; qs: data rows Q(s̃, a)
	for s := 0; s < B; s++ {
		lse += float64(c.lse[s]) * cfg.Temp
		qd += float64(q[g.pushUp(s)])
		qs += float64(q[s])
	}
	lse /= float64(B)
	qd /= float64(B)
	c.gap = lse - qd
	c.qData, c.qRand, c.qPi = qs/float64(B), qr/float64(B*N), qp/float64(B*N)
	if cfg.ClipDiff {
		// The gap is the mean of the clamped per-state differences; a
		// clamped state contributes no gradient (torch.clamp's backward
		// passes where min ≤ d ≤ max).
		var sum float64
		for s := 0; s < B; s++ {
			d := float64(c.lse[s])*cfg.Temp - float64(q[g.pushUp(s)])
			clamped := math.Min(math.Max(d, cfg.ClipDiffMin), cfg.ClipDiffMax)
			c.active[s] = d >= cfg.ClipDiffMin && d <= cfg.ClipDiffMax
			sum += clamped
		}
		c.gap = sum / float64(B)
	}

	// ∂/∂Q of α'·w·(mean LSE − mean Q_data): the softmax weight on each
	// sampled row, −α'w/B on the push-up rows (added to the MSE's gradient
	// when they are the data rows).
	k := float32(alphaPrime * cfg.MinQWeight / float64(B))
	if g.Clean {
		clear(c.dy[g.pushUp(0):g.rows()])
	}
	for s := 0; s < B; s++ {
		ks := k
		if cfg.ClipDiff && !c.active[s] {
			ks = 0
		}
		c.dy[g.pushUp(s)] -= ks
		soft := c.soft[s*g.lseCols() : (s+1)*g.lseCols()]
		for j := 0; j < N; j++ {
			c.dy[g.uniform(s, j)] = ks * soft[g.lseUniform(j)]
			c.dy[g.piNext(s, j)] = ks * soft[g.lsePiNext(j)]
			c.dy[g.piS(s, j)] = ks * soft[g.lsePiS(j)]
		}
	}
	l.Descend(i, &c.big, c.dy, cfg.Tau)
}

// actorUpdate takes the policy's gradient step and returns mean log π(ã|s)
// and, in the BC warm-up, the BC loss. BC warm-up (authors' code, first
// BCSteps updates): mean(α log π(ã|s) − log π(a|s)); afterwards SAC's
// mean(α log π(ã|s) − min_k Q_k(s, ã)), whose ∂/∂ã policyQGradient left in
// w.crit[·].dX.
func (l *Learner) actorUpdate(outS []float32, bc bool, alpha float64) (lpMean, bcLoss float64) {
	w := &l.ws
	S, A := l.ObsDim, l.ActDim
	B := w.B
	nz := &w.noise
	lpMean = sac.MeanLogProb(w.logpPi)
	dLogp := w.dLogp
	sac.PolicyLogpGrad(float32(alpha), dLogp)
	if bc {
		nn.TanhGaussianLogProb(outS, B, A, w.act, w.logpBC)
		var bcl float64
		for i := 0; i < B; i++ {
			bcl += float64(w.logpBC[i])
		}
		bcLoss = alpha*lpMean - bcl/float64(B)
		nn.TanhGaussianSampleBackward(outS, B, A, nz.pi, w.actPi, nil, dLogp, w.dOut)
		for i := range w.logpBC {
			w.logpBC[i] = -1 / float32(B)
		}
		nn.TanhGaussianLogProbBackward(outS, B, A, w.act, w.logpBC, w.dOut2)
		for i := range w.dOut {
			w.dOut[i] += w.dOut2[i]
		}
	} else {
		sac.PolicyActionGrad([2][]float32{w.crit[0].dX, w.crit[1].dX}, S, A, w.dAct)
		nn.TanhGaussianSampleBackward(outS, B, A, nz.pi, w.actPi, w.dAct, dLogp, w.dOut)
	}
	nn.ZeroGrad(l.pActor)
	l.Actor.Backward(&w.cS, w.dOut, nil, true)
	l.optA.Step()
	return lpMean, bcLoss
}
