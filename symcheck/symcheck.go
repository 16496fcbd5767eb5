package symcheck

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	_ "github.com/koopq/koopq/env/classic" // registers pendulum etc.
	_ "github.com/koopq/koopq/env/mujoco"  // registers hopper etc.
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/stats"
)

// Config configures Run, the paper's ΔS/ΔE study (appendix
// "Local precision symmetry shifts Mujoco").
type Config struct {
	// Env is the simulator the dataset came from ("hopper", "pendulum", …).
	Env string `json:"env"`
	// N is the number of transitions sampled without replacement (default
	// 2000; all of them when the dataset is smaller).
	N int `json:"n"`
	// Seed drives the transition sample, ε and the random latent draws.
	Seed uint64 `json:"seed"`
	// ShiftSigma scales the KFC++ ε as the augmenter does:
	// ε_j ~ N(0, (ShiftSigma·3e-3)²) per eigendirection (default 1).
	ShiftSigma float64 `json:"shift_sigma"`
	// Residual decodes shifted latents with the augmenter's gauge
	// correction s̃ = s + D(g̃) − D(g) instead of s̃ = D(g̃) (the authors'
	// direct decoding, default false).
	Residual bool `json:"residual"`
	// Symmetry configures the eigendecompositions (zero: the default).
	Symmetry koopman.SymmetryConfig `json:"symmetry"`
	// ShiftL2, when set, lists target magnitudes for Magnitudes:
	// for each, ShiftSigma is calibrated so that the kfc++ mean ‖s̃_t − s_t‖₂
	// over the sample equals it (ShiftSigma above is then only the
	// calibration's starting point).
	ShiftL2 []float64 `json:"shift_l2,omitempty"`
	// Workers is the goroutine count of the symmetry shifter (≤ 0: GOMAXPROCS);
	// results do not depend on it.
	Workers int `json:"-"`
}

// DefaultConfig returns n = 2000, seed 0, shift sigma 1 for env.
func DefaultConfig(envName string) Config {
	return Config{Env: envName, N: 2000, ShiftSigma: 1, Symmetry: koopman.DefaultSymmetryConfig()}
}

// Dims returns the observation dimensions that hold positions and
// velocities for env with obsDim-dimensional observations: hopper [0:5] /
// [5:11], walker2d and halfcheetah [0:8] / [8:17], ant [0:13] / [13:27] (its
// contact-force entries are left out), pendulum (cos θ, sin θ) / θ̇.
func Dims(envName string, obsDim int) (pos, vel []int, err error) {
	type split struct{ p, v, obs int }
	var s split
	switch envName {
	case "hopper":
		s = split{5, 6, 11}
	case "walker2d", "halfcheetah":
		s = split{8, 9, 17}
	case "ant":
		s = split{13, 14, 27}
		if obsDim == 111 {
			s.obs = 111
		}
	case "pendulum":
		s = split{2, 1, 3}
	default:
		return nil, nil, fmt.Errorf("symcheck: no position/velocity split known for env %q (known: hopper, walker2d, halfcheetah, ant, pendulum)", envName)
	}
	if obsDim != s.obs {
		return nil, nil, fmt.Errorf("symcheck: env %s has %d-dimensional observations, the data/model %d", envName, s.obs, obsDim)
	}
	for i := 0; i < s.p; i++ {
		pos = append(pos, i)
	}
	for i := s.p; i < s.p+s.v; i++ {
		vel = append(vel, i)
	}
	return pos, vel, nil
}

// ObservationSetter is an environment that can be put into the state an
// observation describes (env/mujoco's Env, env/classic's Pendulum). x is the
// position coordinate the observation omits; the dynamics do not depend on it.
type ObservationSetter interface {
	SetStateFromObservation(obs []float64, x float64) error
}

// Stats summarizes one quantity over the samples (finite values only;
// all zero with Count 0 when there are none).
type Stats struct {
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
	Count  int     `json:"count"`
}

func symStats(v []float64) Stats {
	f := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			f = append(f, x)
		}
	}
	if len(f) == 0 {
		return Stats{} // Count 0: no finite value (JSON has no NaN)
	}
	sort.Float64s(f)
	var s, ss float64
	for _, x := range f {
		s += x
	}
	m := s / float64(len(f))
	for _, x := range f {
		ss += (x - m) * (x - m)
	}
	q := func(p float64) float64 {
		i := p * float64(len(f)-1)
		lo := int(math.Floor(i))
		hi := min(lo+1, len(f)-1)
		return f[lo] + (i-float64(lo))*(f[hi]-f[lo])
	}
	return Stats{Mean: m, Std: math.Sqrt(ss / float64(len(f))), Median: q(0.5), P10: q(0.1), P90: q(0.9), Max: f[len(f)-1], Count: len(f)}
}

// Variant is one way of producing (s̃_t, s̃_{t+1}) and its measured errors.
// ΔS = ‖s̃_t − s_t‖ + ‖s̃_{t+1} − s_{t+1}‖ and ΔE = ‖s̃_{t+1} − M(s̃_t, a_t)‖
// (Euclidean norms over the position and velocity dimensions; ΔE_pos and
// ΔE_vel over each group alone).
type Variant struct {
	// Name is "data", "reconstruction", "kfc++", "random-shared",
	// "random-independent" or (Magnitudes only) "s4rl-n".
	Name        string `json:"name"`
	Description string `json:"description"`
	// LatentScale is λ of the random variants' latent shift δ = λz,
	// z ~ N(0, I_N), fitted so that mean ΔS equals the KFC++ one.
	LatentScale float64 `json:"latent_scale,omitempty"`
	// NoiseSigma is σ of s4rl-n's state noise s̃ = s + σz, fitted like λ.
	NoiseSigma float64 `json:"noise_sigma,omitempty"`
	// LatentShift is ‖g̃_t − g_t‖ (zero for data and reconstruction).
	LatentShift Stats `json:"latent_shift"`
	DeltaS      Stats `json:"delta_s"`
	DeltaEPos   Stats `json:"delta_e_pos"`
	DeltaEVel   Stats `json:"delta_e_vel"`
	DeltaE      Stats `json:"delta_e"`
	// Failures counts samples whose state could not be set or stepped
	// (excluded from the statistics, NaN in the samples).
	Failures int `json:"failures"`

	// Per-sample values [n] (also written to samples.csv).
	SampleDS   []float64 `json:"-"`
	SampleEPos []float64 `json:"-"`
	SampleEVel []float64 `json:"-"`
	SampleE    []float64 `json:"-"`
}

// Comparison compares the KFC++ shift with one random latent shift of the
// same mean ΔS on the same transitions (paired): the ratio of mean ΔE and of
// median ΔE, kfc++ / random (below 1: KFC++ lands closer to the simulator's
// own next state), and the fraction of transitions on which KFC++'s ΔE is
// the smaller, each with a 95% percentile bootstrap interval from
// BootstrapReps resamples of the transitions (seeded by the config's
// seed, so the same run gives the same interval). Transitions on which
// either variant failed in the simulator are left out.
type Comparison struct {
	Against string `json:"against"`
	Pairs   int    `json:"pairs"`
	// Defined is false when there are no pairs or a mean or median ΔE of
	// Against is 0 (the ratios are then undefined and left zero).
	Defined bool `json:"defined"`
	// MeanRatio is mean ΔE(kfc++) / mean ΔE(Against).
	MeanRatio stats.CI `json:"mean_ratio"`
	// MedianRatio is median ΔE(kfc++) / median ΔE(Against).
	MedianRatio stats.CI `json:"median_ratio"`
	// Closer is the fraction of pairs with ΔE(kfc++) < ΔE(Against).
	Closer stats.CI `json:"closer"`
}

// BootstrapReps is the number of bootstrap resamples of Comparison.
const BootstrapReps = 2000

// compareShifts builds the Comparison of per-transition ΔE values k
// (kfc++) and o (the other variant), pairing equal indexes.
func compareShifts(against string, k, o []float64, reps int, rng *rand.Rand) Comparison {
	var a, b []float64
	for i := range k {
		if finite(k[i]) && finite(o[i]) {
			a, b = append(a, k[i]), append(b, o[i])
		}
	}
	c := Comparison{Against: against, Pairs: len(a)}
	ratios := func(a, b []float64) (mean, median, closer float64) {
		n := 0
		for i := range a {
			if a[i] < b[i] {
				n++
			}
		}
		return stats.Mean(a) / stats.Mean(b), stats.Percentile(a, 50) / stats.Percentile(b, 50), float64(n) / float64(len(a))
	}
	if len(a) == 0 {
		return c
	}
	m, md, cl := ratios(a, b)
	if !finite(m) || !finite(md) {
		return c // a mean or median ΔE of the other variant is 0
	}
	c.Defined = true
	c.MeanRatio.Value, c.MedianRatio.Value, c.Closer.Value = m, md, cl
	ra, rb := make([]float64, len(a)), make([]float64, len(a))
	var means, medians, closers []float64
	for range reps {
		for i := range ra {
			j := rng.IntN(len(a))
			ra[i], rb[i] = a[j], b[j]
		}
		m, md, cl := ratios(ra, rb)
		if finite(m) && finite(md) {
			means, medians, closers = append(means, m), append(medians, md), append(closers, cl)
		}
	}
	c.MeanRatio.Lo, c.MeanRatio.Hi = m, m
	c.MedianRatio.Lo, c.MedianRatio.Hi = md, md
	c.Closer.Lo, c.Closer.Hi = cl, cl
	if len(means) > 0 {
		c.MeanRatio.Lo, c.MeanRatio.Hi = stats.Percentile(means, 2.5), stats.Percentile(means, 97.5)
		c.MedianRatio.Lo, c.MedianRatio.Hi = stats.Percentile(medians, 2.5), stats.Percentile(medians, 97.5)
		c.Closer.Lo, c.Closer.Hi = stats.Percentile(closers, 2.5), stats.Percentile(closers, 97.5)
	}
	return c
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Result is the outcome of Run.
type Result struct {
	Config      Config         `json:"config"`
	Provenance  run.Provenance `json:"provenance"`
	Model       string         `json:"model,omitempty"` // path, or how it was made
	Data        string         `json:"data,omitempty"`
	Transitions int            `json:"transitions"` // dataset size
	Samples     int            `json:"samples"`     // n actually used
	// Terminals counts terminal transitions left out of the sample: under
	// d4rl's qlearning_dataset conversion their s' is observations[i+1],
	// the next episode's first state, not a successor of s_t.
	Terminals int     `json:"terminals_excluded"`
	ObsDim    int     `json:"obs_dim"`
	ActDim    int     `json:"act_dim"`
	Latent    int     `json:"latent"`
	EpsStd    float64 `json:"eps_std"` // ShiftSigma·3e-3
	PosDims   []int   `json:"position_dims"`
	VelDims   []int   `json:"velocity_dims"`
	// Fallbacks counts transitions whose K(a_t) eigenbasis was rejected, so
	// that KFC++ used the scalar fallback generator; MaxCond is the largest
	// eigenbasis condition number seen (−1 when an inversion failed).
	Fallbacks int     `json:"fallbacks"`
	MaxCond   float64 `json:"max_cond"`
	// MatchRelErr is |mean ΔS_random − mean ΔS_kfc++| / mean ΔS_kfc++ for
	// each random variant; Matched says whether both are below 1e-6.
	MatchRelErr map[string]float64 `json:"match_rel_err"`
	Matched     bool               `json:"matched"`
	Variants    []Variant          `json:"variants"`
	// Comparisons pairs kfc++ with random-shared and random-independent.
	Comparisons []Comparison `json:"comparisons"`
}

// Variant returns the variant called name, or nil.
func (r *Result) Variant(name string) *Variant {
	for i := range r.Variants {
		if r.Variants[i].Name == name {
			return &r.Variants[i]
		}
	}
	return nil
}

// symWork holds the sampled transitions and the model pieces of one study.
type symWork struct {
	m        *koopman.Model
	n, S, N  int
	s        []float32 // [2n, S] interleaved rows s_t, s_{t+1}
	act      []float32 // [n, M]
	g        []float32 // [2n, N] E(s), same layout
	recon    []float32 // [2n, S] D(E(s))
	residual bool
	dec      nn.Cache
	dims     []int // position then velocity dims
}

// decodeShifted writes s̃ [2n, S] for shifted latents gs [2n, N].
func (w *symWork) decodeShifted(gs []float32) []float32 {
	out := append([]float32(nil), w.m.Decode(&w.dec, gs, 2*w.n)...)
	if w.residual {
		for i := range out {
			out[i] = w.s[i] + out[i] - w.recon[i]
		}
	}
	return out
}

// normDiff is ‖a − b‖ over dims.
func normDiff(a, b []float32, dims []int) float64 {
	s := 0.0
	for _, j := range dims {
		d := float64(a[j]) - float64(b[j])
		s += d * d
	}
	return math.Sqrt(s)
}

// deltaS returns the per-sample ΔS [n] of shifted states st [2n, S] and their mean.
func (w *symWork) deltaS(st []float32) ([]float64, float64) {
	ds := make([]float64, w.n)
	tot := 0.0
	S := w.S
	for i := range w.n {
		a := normDiff(st[2*i*S:(2*i+1)*S], w.s[2*i*S:(2*i+1)*S], w.dims)
		b := normDiff(st[(2*i+1)*S:(2*i+2)*S], w.s[(2*i+1)*S:(2*i+2)*S], w.dims)
		ds[i] = a + b
		tot += ds[i]
	}
	return ds, tot / float64(w.n)
}

// Run runs the ΔS/ΔE study of the paper's appendix for the Koopman
// model m on data, which must come from the simulator cfg.Env. It samples
// cfg.N transitions (s_t, a_t, s_{t+1}) and builds five variants of shifted
// pairs (s̃_t, s̃_{t+1}):
//
//   - data: s̃ = s (checks that the simulator reproduces the data);
//   - reconstruction: s̃ = D(E(s)), the autoencoder error alone;
//   - kfc++: s̃ = D((1 + σ_{a_t}(ε)) E(s)), the same ε for s_t and s_{t+1},
//     as augment's kfc++ draws it;
//   - random-shared: s̃ = D(E(s) + λz), one z ~ N(0, I_N) for both states;
//   - random-independent: independent z for s_t and s_{t+1};
//
// with λ fitted per random variant (bisection) so that mean ΔS equals the
// kfc++ mean ΔS. With cfg.Residual the shifted variants decode as
// s + D(g̃) − D(g). For each it puts the simulator in s̃_t, steps with a_t
// and records ΔE = ‖s̃_{t+1} − M(s̃_t, a_t)‖, split into positions and
// velocities. progress (may be nil) is called per variant. cfg.ShiftL2 must
// be empty (see Magnitudes).
func Run(ctx context.Context, m *koopman.Model, data *dataset.Dataset, cfg Config, progress meter.Progress) (*Result, error) {
	if len(cfg.ShiftL2) > 0 {
		return nil, fmt.Errorf("symcheck: shift-l2 %v is set: calibrated magnitudes are Magnitudes' job", cfg.ShiftL2)
	}
	p, err := prepareSymcheck(m, data, cfg)
	if err != nil {
		return nil, err
	}
	defer p.close()
	r, _, err := p.study(ctx, cfg.ShiftSigma, false, progress)
	return r, err
}

// symPrep is what every study on one model and sample shares: the sampled
// transitions and their latents, the simulator, and the random stream's
// state after the sample was drawn (each study restarts from it, so studies
// at different scales see the same ε, z and noise draws).
type symPrep struct {
	cfg      Config
	w        *symWork
	idx      []int // dataset rows of the sample
	data     *dataset.Dataset
	e        env.Env
	setter   ObservationSetter
	pos, vel []int
	cands    int
	pcg      rand.PCG
}

func (p *symPrep) close() {
	if c, ok := p.e.(interface{ Close() }); ok {
		c.Close()
	}
}

// prepareSymcheck checks the inputs, makes the simulator, draws the sample
// and encodes it.
func prepareSymcheck(m *koopman.Model, data *dataset.Dataset, cfg Config) (*symPrep, error) {
	if m == nil || data == nil {
		return nil, fmt.Errorf("symcheck: needs a Koopman model and a dataset")
	}
	if cfg.N <= 0 {
		return nil, fmt.Errorf("symcheck: n = %d must be positive", cfg.N)
	}
	if !(cfg.ShiftSigma > 0) || math.IsInf(cfg.ShiftSigma, 0) {
		return nil, fmt.Errorf("symcheck: shift sigma %v must be finite and > 0", cfg.ShiftSigma)
	}
	if cfg.Symmetry.MaxCond == 0 {
		cfg.Symmetry = koopman.DefaultSymmetryConfig()
	}
	if err := data.Validate(); err != nil {
		return nil, fmt.Errorf("symcheck: %w", err)
	}
	if data.Len() == 0 {
		return nil, fmt.Errorf("symcheck: the dataset is empty")
	}
	if data.ObsDim != m.S() || data.ActDim != m.M() {
		return nil, fmt.Errorf("symcheck: Koopman model is for states %d / actions %d, dataset has %d / %d", m.S(), m.M(), data.ObsDim, data.ActDim)
	}
	if err := nn.CheckFinite(m.Params()); err != nil {
		return nil, fmt.Errorf("symcheck: Koopman model: %w", err)
	}
	pos, vel, err := Dims(cfg.Env, data.ObsDim)
	if err != nil {
		return nil, err
	}
	e, err := env.Make(cfg.Env)
	if err != nil {
		return nil, fmt.Errorf("symcheck: %w", err)
	}
	p := &symPrep{cfg: cfg, data: data, e: e, pos: pos, vel: vel}
	done := false
	defer func() {
		if !done {
			p.close()
		}
	}()
	setter, ok := e.(ObservationSetter)
	if !ok {
		return nil, fmt.Errorf("symcheck: env %s cannot be set from an observation (no SetStateFromObservation)", cfg.Env)
	}
	p.setter = setter
	if od, ad := e.ObservationSpace().Dim(), e.ActionSpace().Dim(); od != data.ObsDim || ad != data.ActDim {
		return nil, fmt.Errorf("symcheck: env %s has observations %d / actions %d, dataset %d / %d", cfg.Env, od, ad, data.ObsDim, data.ActDim)
	}

	// Terminal transitions are left out (see Result.Terminals).
	cands := make([]int, 0, data.Len())
	for i, t := range data.Terminals {
		if t == 0 {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("symcheck: every transition in the dataset is terminal")
	}
	p.cands = len(cands)
	src := rand.NewPCG(cfg.Seed, 0x5c)
	rng := rand.New(src)
	n := min(cfg.N, len(cands))
	idx := rng.Perm(len(cands))[:n]
	for i, k := range idx {
		idx[i] = cands[k]
	}
	sort.Ints(idx)
	p.pcg, p.idx = *src, idx
	S, M, N := m.S(), m.M(), m.N()
	w := &symWork{m: m, n: n, S: S, N: N, residual: cfg.Residual, dims: append(append([]int(nil), pos...), vel...)}
	w.s = make([]float32, 2*n*S)
	w.act = make([]float32, n*M)
	for i, r := range idx {
		copy(w.s[2*i*S:(2*i+1)*S], data.Observations[r*S:(r+1)*S])
		copy(w.s[(2*i+1)*S:(2*i+2)*S], data.NextObservations[r*S:(r+1)*S])
		copy(w.act[i*M:(i+1)*M], data.Actions[r*M:(r+1)*M])
	}
	var enc nn.Cache
	w.g = append([]float32(nil), m.Encode(&enc, w.s, 2*n)...)
	w.recon = append([]float32(nil), m.Decode(&w.dec, w.g, 2*n)...)
	p.w = w
	done = true
	return p, nil
}

// study runs the variants with the KFC++ scale shiftSigma and, when
// calibrated (Magnitudes), with the ε draws of augment.Calibrate's
// measurement and the s4rl-n row (and its comparison). It also returns the
// kfc++ row's mean ‖s̃_t − s_t‖₂ over all state dimensions (the quantity
// --shift-l2 sets).
func (p *symPrep) study(ctx context.Context, shiftSigma float64, calibrated bool, progress meter.Progress) (*Result, float64, error) {
	s := p.newStudy(ctx, shiftSigma, calibrated, progress)
	w := p.w
	gSym, symStates, err := s.kfcpp()
	if err != nil {
		return nil, 0, err
	}
	_, target := w.deltaS(symStates)
	shiftL2, stateDims := 0.0, allDims(w.S)
	for i := range w.n {
		shiftL2 += normDiff(symStates[2*i*w.S:(2*i+1)*w.S], w.s[2*i*w.S:(2*i+1)*w.S], stateDims)
	}
	shiftL2 /= float64(w.n)

	// Random latent shifts: z fixed, λ fitted to the KFC++ mean ΔS.
	zShared, zIndep := s.drawLatentNoise()
	lam0 := s.initialLambda(gSym)
	vars := s.fixedVariants(symStates, gSym)
	for _, rv := range []struct {
		name, desc string
		z          []float32
	}{
		{"random-shared", "s̃ = D(E(s) + λz), one z ~ N(0, I) for s_t and s_{t+1}", zShared},
		{"random-independent", "s̃ = D(E(s) + λz), independent z for s_t and s_{t+1}", zIndep},
	} {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		vars = append(vars, s.randomVariant(rv.name, rv.desc, rv.z, target, lam0))
	}
	if s.calibrated {
		vars = append(vars, s.noiseVariant(target))
	}
	s.res.Matched = true
	for _, r := range s.res.MatchRelErr {
		if !(r <= 1e-6) {
			s.res.Matched = false
		}
	}
	if err := s.simulate(vars); err != nil {
		return nil, 0, err
	}
	s.compare()
	if progress != nil {
		progress(len(vars), len(vars), "done")
	}
	return s.res, shiftL2, nil
}

// symStudy is one study of a symPrep at one KFC++ scale: its config (with
// that scale), its random stream (restarted from the prep's), the result
// it fills and the progress callback (may be nil). When calibrated it also
// draws the s4rl-n row.
type symStudy struct {
	*symPrep
	ctx        context.Context
	cfg        Config
	calibrated bool
	progress   meter.Progress
	rng        *rand.Rand
	nVars      int // variants to simulate, for progress
	res        *Result
}

// symShifted is a variant's shifted pairs before simulation: its states
// and latents (2n rows each) and the latent scale λ or noise σ it was
// fitted with.
type symShifted struct {
	name, desc string
	states     []float32
	lat        []float32
	lambda     float64
	sigma      float64
}

// newStudy starts a study at scale shiftSigma with an empty result.
func (p *symPrep) newStudy(ctx context.Context, shiftSigma float64, calibrated bool, progress meter.Progress) *symStudy {
	cfg, w, data := p.cfg, p.w, p.data
	cfg.ShiftSigma = shiftSigma
	pcg := p.pcg
	s := &symStudy{symPrep: p, ctx: ctx, cfg: cfg, calibrated: calibrated, progress: progress, rng: rand.New(&pcg), nVars: 5}
	if calibrated {
		s.nVars = 6
	}
	s.res = &Result{Config: cfg, Provenance: run.CurrentProvenance(), Transitions: data.Len(), Samples: w.n, Terminals: data.Len() - p.cands,
		ObsDim: w.S, ActDim: w.m.M(), Latent: w.N, EpsStd: cfg.ShiftSigma * augment.KFCppEpsUnit, PosDims: p.pos, VelDims: p.vel,
		MatchRelErr: map[string]float64{}}
	return s
}

// kfcpp shifts the sample's latents exactly as augment's kfc++ does (the
// same ε for s_t and s_{t+1}) and returns the shifted latents and their
// decoded states, recording the fallbacks and the largest condition number.
func (s *symStudy) kfcpp() (gSym, symStates []float32, err error) {
	w, res := s.w, s.res
	m, n, N := w.m, w.n, w.N
	M := m.M()
	lat := make([]float64, 2*n*N)
	for i, v := range w.g {
		lat[i] = float64(v)
	}
	a64 := make([]float64, n*M)
	for i, v := range w.act {
		a64[i] = float64(v)
	}
	eps := make([]float64, n*N)
	epsRng := s.rng
	if s.calibrated {
		// The ε augment.Calibrate measured the scale with: its stream, its
		// branch draw, then ε row by row, so that the kfc++ row's mean
		// ‖s̃_t − s_t‖₂ is the calibrated one, not a fresh draw of it.
		epsRng = augment.MeasureRand(augment.CalibrationSeed)
		epsRng.Float64()
	}
	for i := range eps {
		eps[i] = res.EpsStd * epsRng.NormFloat64()
	}
	k0, ks := m.Operators()
	sh := koopman.NewShifter(k0, ks, N, s.cfg.Symmetry, s.cfg.Workers)
	shifted := make([]float64, 2*n*N)
	const chunk = 512
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		st := sh.ShiftKFCpp(shifted[2*lo*N:2*hi*N], lat[2*lo*N:2*hi*N], a64[lo*M:hi*M], eps[lo*N:hi*N])
		res.Fallbacks += st.Fallbacks
		res.MaxCond = math.Max(res.MaxCond, st.MaxCond)
		if err := s.ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	if math.IsInf(res.MaxCond, 0) || math.IsNaN(res.MaxCond) {
		res.MaxCond = -1
	}
	gSym = make([]float32, 2*n*N)
	for i, v := range shifted {
		gSym[i] = float32(v)
	}
	return gSym, w.decodeShifted(gSym), nil
}

// drawLatentNoise draws the random variants' latent directions: zShared,
// one z per transition for both states, then zIndep, one per state.
func (s *symStudy) drawLatentNoise() (zShared, zIndep []float32) {
	n, N := s.w.n, s.w.N
	zShared = make([]float32, 2*n*N)
	zIndep = make([]float32, 2*n*N)
	for i := range n {
		for j := range N {
			v := float32(s.rng.NormFloat64())
			zShared[2*i*N+j], zShared[(2*i+1)*N+j] = v, v
		}
	}
	for i := range zIndep {
		zIndep[i] = float32(s.rng.NormFloat64())
	}
	return zShared, zIndep
}

// initialLambda is the starting λ of the random variants' fit: the KFC++
// latent shift's RMS per component (the ε scale if that is not positive).
func (s *symStudy) initialLambda(gSym []float32) float64 {
	w := s.w
	ms := 0.0
	for i, v := range gSym {
		d := float64(v) - float64(w.g[i])
		ms += d * d
	}
	lam0 := math.Sqrt(ms / float64(2*w.n*w.N))
	if !(lam0 > 0) {
		lam0 = s.res.EpsStd
	}
	return lam0
}

// fixedVariants returns the variants that need no fit: data,
// reconstruction and kfc++ (symStates, decoded from gSym).
func (s *symStudy) fixedVariants(symStates, gSym []float32) []symShifted {
	w, epsStd := s.w, s.res.EpsStd
	vars := []symShifted{
		{name: "data", desc: "s̃ = s (simulator consistency)", states: w.s, lat: w.g},
		{name: "reconstruction", desc: "s̃ = D(E(s)) (autoencoder error alone)", states: w.recon, lat: w.g},
		{name: "kfc++", desc: fmt.Sprintf("s̃ = D((1+σ_a(ε))E(s)), ε ~ N(0, %.3g²) per eigendirection, shared by s_t, s_{t+1}", epsStd), states: symStates, lat: gSym},
	}
	if s.cfg.Residual {
		vars[2].desc = fmt.Sprintf("s̃ = s + D((1+σ_a(ε))E(s)) − D(E(s)), ε ~ N(0, %.3g²) per eigendirection, shared by s_t, s_{t+1}", epsStd)
	}
	return vars
}

// randomVariant fits λ of the latent shift λz (from lam0) so that its mean
// ΔS is target, and records how close the fit came.
func (s *symStudy) randomVariant(name, desc string, z []float32, target, lam0 float64) symShifted {
	w := s.w
	if s.progress != nil {
		s.progress(0, s.nVars, "fitting λ of "+name)
	}
	gs := make([]float32, 2*w.n*w.N)
	eval := func(lam float64) ([]float32, float64) {
		for i, v := range z {
			gs[i] = w.g[i] + float32(lam)*v
		}
		st := w.decodeShifted(gs)
		_, mean := w.deltaS(st)
		return st, mean
	}
	lam, st, mean := fitLambda(eval, target, lam0)
	for i, v := range z {
		gs[i] = w.g[i] + float32(lam)*v
	}
	s.res.MatchRelErr[name] = relErr(mean, target)
	if s.cfg.Residual {
		desc = strings.Replace(desc, "D(E(s) + λz)", "s + D(E(s) + λz) − D(E(s))", 1)
	}
	return symShifted{name: name, desc: desc, states: st, lat: gs, lambda: lam}
}

// noiseVariant is S4RL-N as the gaussian augmenter draws it: independent
// noise for s_t and s_{t+1}, on every state dimension, σ fitted so that its
// mean ΔS is target.
func (s *symStudy) noiseVariant(target float64) symShifted {
	w := s.w
	if s.progress != nil {
		s.progress(0, s.nVars, "fitting σ of s4rl-n")
	}
	z := make([]float32, 2*w.n*w.S)
	for i := range z {
		z[i] = float32(s.rng.NormFloat64())
	}
	eval := func(sig float64) ([]float32, float64) {
		st := make([]float32, len(z))
		for i, v := range z {
			st[i] = w.s[i] + float32(sig)*v
		}
		_, mean := w.deltaS(st)
		return st, mean
	}
	sig0 := target / (2 * math.Sqrt(float64(len(w.dims))))
	if !(sig0 > 0) {
		sig0 = s.res.EpsStd
	}
	sig, st, mean := fitLambda(eval, target, sig0)
	s.res.MatchRelErr["s4rl-n"] = relErr(mean, target)
	var enc nn.Cache
	gs := append([]float32(nil), w.m.Encode(&enc, st, 2*w.n)...)
	return symShifted{name: "s4rl-n", desc: "s̃ = s + σz, independent z ~ N(0, I_S) for s_t and s_{t+1} (the gaussian augmenter)",
		states: st, lat: gs, sigma: sig}
}

// simulate compares, for each variant, s̃_{t+1} with M(s̃_t, a_t) from the
// simulator (reset once, with its own stream) and appends the variants'
// rows to the result.
func (s *symStudy) simulate(vars []symShifted) error {
	s.e.Reset(rand.New(rand.NewPCG(s.cfg.Seed, 0x5d)))
	buf := symStepBuf{obs: make([]float64, s.w.S), act: make([]float64, s.w.m.M()), next32: make([]float32, s.w.S)}
	for vi, v := range vars {
		if s.progress != nil {
			s.progress(vi, len(vars), "simulating "+v.name)
		}
		out, etot, lsh := s.simulateVariant(v, &buf)
		if err := s.ctx.Err(); err != nil {
			return err
		}
		out.LatentShift = symStats(lsh)
		out.DeltaS = symStats(out.SampleDS)
		out.DeltaEPos = symStats(out.SampleEPos)
		out.DeltaEVel = symStats(out.SampleEVel)
		out.DeltaE = symStats(etot)
		out.SampleE = etot
		s.res.Variants = append(s.res.Variants, out)
	}
	return nil
}

// symStepBuf holds the simulator's per-step input and output buffers.
type symStepBuf struct {
	obs, act []float64
	next32   []float32
}

// simulateVariant steps the simulator from each of v's s̃_t with a_t and
// returns v's row with its per-sample ΔS, position and velocity errors,
// the total errors ΔE and the latent shifts.
func (s *symStudy) simulateVariant(v symShifted, buf *symStepBuf) (out Variant, etot, lsh []float64) {
	w := s.w
	n, S, N, M := w.n, w.S, w.N, w.m.M()
	latDims := allDims(N)
	out = Variant{Name: v.name, Description: v.desc, LatentScale: v.lambda, NoiseSigma: v.sigma,
		SampleEPos: make([]float64, n), SampleEVel: make([]float64, n)}
	out.SampleDS, _ = w.deltaS(v.states)
	lsh = make([]float64, n)
	etot = make([]float64, n)
	for i := range n {
		lsh[i] = normDiff(v.lat[2*i*N:(2*i+1)*N], w.g[2*i*N:(2*i+1)*N], latDims)
		for j := range S {
			buf.obs[j] = float64(v.states[2*i*S+j])
		}
		for j := range M {
			buf.act[j] = float64(w.act[i*M+j])
		}
		var next []float64
		err := s.setter.SetStateFromObservation(buf.obs, 0)
		if err == nil {
			next, _, _, _, err = s.e.Step(buf.act)
		}
		if err != nil {
			out.Failures++
			out.SampleEPos[i], out.SampleEVel[i], etot[i] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		for j := range S {
			buf.next32[j] = float32(next[j])
		}
		want := v.states[(2*i+1)*S : (2*i+2)*S]
		p, q := normDiff(want, buf.next32, s.pos), normDiff(want, buf.next32, s.vel)
		out.SampleEPos[i], out.SampleEVel[i], etot[i] = p, q, math.Hypot(p, q)
	}
	return out, etot, lsh
}

// compare tests kfc++'s ΔE against each random variant's (and s4rl-n's
// when calibrated), with its own bootstrap stream.
func (s *symStudy) compare() {
	res := s.res
	brng := rand.New(rand.NewPCG(s.cfg.Seed, 0x5e))
	against := []string{"random-shared", "random-independent"}
	if s.calibrated {
		against = append(against, "s4rl-n")
	}
	for _, name := range against {
		res.Comparisons = append(res.Comparisons, compareShifts(name, res.Variant("kfc++").SampleE, res.Variant(name).SampleE, BootstrapReps, brng))
	}
}

// relErr is |got − want| / want (|got − want| when want is 0).
func relErr(got, want float64) float64 {
	r := math.Abs(got - want)
	if want > 0 {
		r /= want
	}
	return r
}

func allDims(n int) []int {
	d := make([]int, n)
	for i := range d {
		d[i] = i
	}
	return d
}

// fitLambda finds λ ≥ 0 with eval(λ) = target by bracketing and bisection;
// it returns λ and eval's states and mean at λ (the best point found when no
// exact match exists, e.g. when eval(0) already exceeds target).
func fitLambda(eval func(float64) ([]float32, float64), target, lam0 float64) (float64, []float32, float64) {
	bestLam, bestSt, bestMean := 0.0, []float32(nil), math.Inf(1)
	try := func(l float64) float64 {
		st, m := eval(l)
		if math.Abs(m-target) < math.Abs(bestMean-target) || bestSt == nil {
			bestLam, bestSt, bestMean = l, st, m
		}
		return m - target
	}
	if try(0) >= 0 {
		return bestLam, bestSt, bestMean
	}
	lo, hi := 0.0, lam0
	fhi := try(hi)
	for k := 0; fhi < 0 && k < 60; k++ {
		lo, hi = hi, 2*hi
		fhi = try(hi)
	}
	if fhi < 0 {
		return bestLam, bestSt, bestMean
	}
	for k := 0; k < 100 && math.Abs(bestMean-target) > 1e-9*target; k++ {
		mid := 0.5 * (lo + hi)
		if mid == lo || mid == hi {
			break
		}
		if try(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return bestLam, bestSt, bestMean
}
