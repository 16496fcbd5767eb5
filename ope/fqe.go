// Package ope estimates a fixed policy's value from logged data alone
// (off-policy evaluation) with Fitted Q Evaluation (Le, Voloshin & Yue
// 2019): a Q network is regressed on r + γ(1−terminal)·Q̄(s′, π(s′)) with
// the policy's deterministic action, and the policy's value is the mean of
// Q(s₀, π(s₀)) over the initial states of the dataset's episodes.
package ope

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
	"github.com/koopq/koopq/stats"
)

// Config sets FQE's hyperparameters.
type Config struct {
	Gamma     float64 `json:"gamma"`     // discount of the estimated value, in (0, 1)
	Steps     int     `json:"steps"`     // gradient steps on the Q network
	Batch     int     `json:"batch"`     // minibatch rows per step
	LR        float64 `json:"lr"`        // Adam learning rate
	Tau       float64 `json:"tau"`       // Polyak rate of the target network
	Hidden    []int   `json:"hidden"`    // hidden widths of the Q network
	Seed      uint64  `json:"seed"`      // seeds initialization, minibatches and the bootstrap
	Bootstrap int     `json:"bootstrap"` // bootstrap resamples of the episodes for the interval
	Level     float64 `json:"level"`     // confidence level of the interval, e.g. 0.95
	// Fits is the number of independent Q fits averaged (an ensemble):
	// fit i is the fit a single-fit run with seed Seed+i makes, and the
	// estimate is their mean. One fit's value moves with its seed by as much
	// as good hopper policies differ (docs/ope.md); averaging K fits shrinks
	// that noise by about √K. 0 is read as 1 (configs from before the field).
	Fits int `json:"fits,omitempty"`
}

// DefaultConfig is FQE with γ = 0.99, a 2×256 ReLU Q, Adam 3e-4, batch 256,
// τ = 0.02 and 30,000 steps: the settings validated on hopper-medium in
// docs/ope.md. τ is larger than SAC's 0.005 so that values propagate
// through the 1/(1−γ) = 100-step horizon within the step budget.
func DefaultConfig() Config {
	return Config{Gamma: 0.99, Steps: 30000, Batch: 256, LR: 3e-4, Tau: 0.02,
		Hidden: []int{256, 256}, Seed: 0, Bootstrap: 1000, Level: 0.95, Fits: 1}
}

// Validate checks the config.
func (c Config) Validate() error {
	switch {
	case !(c.Gamma > 0 && c.Gamma < 1):
		return fmt.Errorf("fqe: gamma %v must be in (0, 1)", c.Gamma)
	case c.Steps <= 0:
		return fmt.Errorf("fqe: steps %d must be positive", c.Steps)
	case c.Batch <= 0:
		return fmt.Errorf("fqe: batch %d must be positive", c.Batch)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("fqe: learning rate %v must be positive and finite", c.LR)
	case !(c.Tau > 0 && c.Tau <= 1):
		return fmt.Errorf("fqe: tau %v must be in (0, 1]", c.Tau)
	case c.Fits < 0 || c.Fits > 1000:
		return fmt.Errorf("fqe: fits %d must be in [1, 1000]", c.Fits)
	case c.Bootstrap < 0:
		return fmt.Errorf("fqe: bootstrap %d must not be negative", c.Bootstrap)
	case c.Bootstrap > 0 && !(c.Level > 0 && c.Level < 1):
		return fmt.Errorf("fqe: level %v must be in (0, 1)", c.Level)
	}
	return sac.NetConfig{Hidden: c.Hidden, Init: "xavier"}.Validate()
}

// Result is an FQE estimate.
type Result struct {
	// Value is the estimated discounted return E[Σ γᵗ rₜ] from the data's
	// initial-state distribution: the mean over episodes of Q(s₀, π(s₀)).
	Value float64 `json:"value"`
	// Low and High bound the percentile bootstrap interval of Value over
	// episodes (resampling initial states; the Q network is fitted once, so
	// its fitting error is not in the interval). NaN without a bootstrap.
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// Episodes is the number of initial states averaged.
	Episodes int `json:"episodes"`
	// Initial holds Q(s₀, π(s₀)) per episode, in dataset order (the mean
	// over the fits).
	Initial []float64 `json:"initial"`
	// FinalLoss is the Bellman MSE (in reward units²) over the last 1% of
	// steps (the mean over the fits).
	FinalLoss float64 `json:"final_loss"`
	// FitValues is each fit's Value (one entry per Config.Fits, fit i
	// seeded Seed+i); FitStd their sample standard deviation (NaN for one
	// fit) and FitLow/FitHigh a 95% t-interval of their mean (NaN for one
	// fit): the fitting noise the episode bootstrap leaves out.
	FitValues []float64 `json:"fit_values"`
	FitStd    float64   `json:"fit_std"`
	FitLow    float64   `json:"fit_low"`
	FitHigh   float64   `json:"fit_high"`
	Config    Config    `json:"config"`
}

// MarshalJSON writes NaN fields (no interval) as null.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	type out struct {
		plain
		Low     *float64 `json:"low"`
		High    *float64 `json:"high"`
		FitStd  *float64 `json:"fit_std"`
		FitLow  *float64 `json:"fit_low"`
		FitHigh *float64 `json:"fit_high"`
	}
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(out{plain(r), f(r.Low), f(r.High), f(r.FitStd), f(r.FitLow), f(r.FitHigh)})
}

// CheckInputs reports whether policy p can be evaluated on d: the actor's
// input must be d's observation size and its action size d's.
func CheckInputs(d *dataset.Dataset, p *sac.Policy) error {
	if d == nil || p == nil {
		return fmt.Errorf("fqe: nil dataset or policy")
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("fqe: %w", err)
	}
	if p.Actor.In() != d.ObsDim {
		return fmt.Errorf("fqe: policy observes %d dimensions, the data has %d", p.Actor.In(), d.ObsDim)
	}
	if p.ActDim != d.ActDim {
		return fmt.Errorf("fqe: policy acts in %d dimensions, the data has %d", p.ActDim, d.ActDim)
	}
	if len(p.Scale.Low) != p.ActDim || len(p.Scale.High) != p.ActDim {
		return fmt.Errorf("fqe: policy action scale has %d dimensions, actor %d", len(p.Scale.Low), p.ActDim)
	}
	return nil
}

// evaluator holds the fixed pieces of one FQE fit.
type evaluator struct {
	d      *dataset.Dataset
	p      *sac.Policy
	qNorm  *dataset.Normalizer // Q network's own state normalizer (fitted on d)
	o, a   int
	pcache nn.Cache
	pobs   []float32
}

// policyActions writes π(s) in [−1, 1] for rows of raw observations s.
func (e *evaluator) policyActions(s []float32, rows int, out []float32) {
	e.pobs = append(e.pobs[:0], s[:rows*e.o]...)
	if e.p.Norm != nil {
		e.p.Norm.Apply(e.pobs)
	}
	y := e.p.Actor.Forward(&e.pcache, e.pobs, rows)
	nn.TanhGaussianMode(y, rows, e.a, out)
}

// input writes the Q network's input rows [norm(s), a] into x.
func (e *evaluator) input(s []float32, act []float32, rows int, x []float32) {
	w := e.o + e.a
	for i := 0; i < rows; i++ {
		row := x[i*w : i*w+e.o]
		copy(row, s[i*e.o:(i+1)*e.o])
		e.qNorm.Apply(row)
		copy(x[i*w+e.o:(i+1)*w], act[i*e.a:(i+1)*e.a])
	}
}

// Evaluate fits FQE for policy p on d and returns the estimated discounted
// value from the initial states of d's episodes. Data actions are mapped to
// [−1, 1] with the policy's action scale (clipped), the space its
// deterministic action tanh(μ) lives in. Rewards are divided by their mean
// absolute value for the fit and multiplied back.
//
// With cfg.Fits = K > 1 it makes K fits (seeds Seed … Seed+K−1), averages
// their per-episode values and reports the spread between fits.
func Evaluate(d *dataset.Dataset, p *sac.Policy, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := CheckInputs(d, p); err != nil {
		return nil, err
	}
	eps := d.Episodes()
	if len(eps) == 0 {
		return nil, fmt.Errorf("fqe: the data has no episodes")
	}
	k := max(1, cfg.Fits)
	res := &Result{Episodes: len(eps), Initial: make([]float64, len(eps)), Config: cfg,
		Low: math.NaN(), High: math.NaN(), FitStd: math.NaN(), FitLow: math.NaN(), FitHigh: math.NaN()}
	for i := 0; i < k; i++ {
		fc := cfg
		fc.Seed = cfg.Seed + uint64(i)
		initial, loss, err := fit(d, p, fc, eps)
		if err != nil {
			if k > 1 {
				return nil, fmt.Errorf("fit %d of %d (seed %d): %w", i+1, k, fc.Seed, err)
			}
			return nil, err
		}
		var v float64
		for j, x := range initial {
			res.Initial[j] += x / float64(k)
			v += x
		}
		res.FitValues = append(res.FitValues, v/float64(len(initial)))
		res.FinalLoss += loss / float64(k)
	}
	for _, x := range res.Initial {
		res.Value += x
	}
	res.Value /= float64(len(eps))
	if k > 1 {
		res.FitStd = stats.Std(res.FitValues)
		res.FitLow, res.FitHigh = stats.TInterval(res.FitValues, 0.95)
	}
	if cfg.Bootstrap > 0 {
		ci := stats.BootstrapMean(res.Initial, cfg.Bootstrap, cfg.Level, rand.New(rand.NewPCG(cfg.Seed, 0xb007)))
		res.Low, res.High = ci.Lo, ci.Hi
	}
	return res, nil
}

// fit makes one FQE fit with cfg.Seed and returns Q(s₀, π(s₀)) per episode
// of eps (reward units) and the Bellman MSE over the last 1% of steps.
func fit(d *dataset.Dataset, p *sac.Policy, cfg Config, eps []dataset.Episode) ([]float64, float64, error) {
	o, a, n := d.ObsDim, d.ActDim, d.Len()
	e := &evaluator{d: d, p: p.Clone(), qNorm: dataset.FitNormalizer(d, 1e-3), o: o, a: a}
	var absR float64
	for _, r := range d.Rewards {
		absR += math.Abs(float64(r))
	}
	rScale := absR / float64(n)
	if rScale == 0 {
		rScale = 1
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xf0e))
	net := sac.NetConfig{Hidden: cfg.Hidden, Init: "xavier"}
	q := sac.NewCritic("fqe_q", net, o, a, rng)
	qt := sac.NewCritic("fqe_qt", net, o, a, rng)
	nn.CopyParams(qt.Params(), q.Params())
	opt := nn.NewAdam(q.Params(), cfg.LR)

	B := cfg.Batch
	s := make([]float32, B*o)
	s2 := make([]float32, B*o)
	act := make([]float32, B*a)
	pi2 := make([]float32, B*a)
	x := make([]float32, B*(o+a))
	x2 := make([]float32, B*(o+a))
	y := make([]float32, B)
	dy := make([]float32, B)
	var cq, ct nn.Cache
	gamma := float32(cfg.Gamma)
	tail := max(1, cfg.Steps/100)
	var lossSum float64
	rows := make([]int, B)
	for step := 0; step < cfg.Steps; step++ {
		for i := range rows {
			rows[i] = rng.IntN(n)
		}
		for i, r := range rows {
			copy(s[i*o:(i+1)*o], d.Observations[r*o:(r+1)*o])
			copy(s2[i*o:(i+1)*o], d.NextObservations[r*o:(r+1)*o])
			copy(act[i*a:(i+1)*a], d.Actions[r*a:(r+1)*a])
		}
		p.Scale.FromEnv(act)
		e.policyActions(s2, B, pi2)
		e.input(s2, pi2, B, x2)
		qn := qt.Forward(&ct, x2, B)
		for i, r := range rows {
			y[i] = d.Rewards[r]/float32(rScale) + gamma*(1-d.Terminals[r])*qn[i]
		}
		e.input(s, act, B, x)
		qp := q.Forward(&cq, x, B)
		loss := nn.MSE(qp, y, dy, 1)
		if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
			return nil, 0, fmt.Errorf("fqe: Bellman loss diverged at step %d (%v); lower --lr or raise --tau's stability", step, loss)
		}
		if step >= cfg.Steps-tail {
			lossSum += float64(loss)
		}
		nn.ZeroGrad(q.Params())
		q.Backward(&cq, dy, nil, true)
		opt.Step()
		nn.Polyak(qt.Params(), q.Params(), float32(cfg.Tau))
	}

	// Q(s₀, π(s₀)) for each episode's first row.
	initial := make([]float64, len(eps))
	s0 := make([]float32, o)
	p0 := make([]float32, a)
	x0 := make([]float32, o+a)
	var c0 nn.Cache
	for k, ep := range eps {
		copy(s0, d.Observations[ep.Start*o:(ep.Start+1)*o])
		e.policyActions(s0, 1, p0)
		e.input(s0, p0, 1, x0)
		initial[k] = float64(q.Forward(&c0, x0, 1)[0]) * rScale
	}
	return initial, lossSum / float64(tail) * rScale * rScale, nil
}

// UndiscountedEstimate converts a discounted value V into an estimate of the
// undiscounted return over horizon steps, assuming a constant reward rate
// over the whole horizon: R ≈ V·H(1−γ)/(1−γᴴ). It is exact for a policy that
// earns the same reward every step and survives all H steps; for a policy
// that falls early it overestimates (its reward stops, the rescaling assumes
// it does not).
func UndiscountedEstimate(v, gamma float64, horizon int) float64 {
	h := float64(horizon)
	return v * h * (1 - gamma) / (1 - math.Pow(gamma, h))
}
