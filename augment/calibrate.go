package augment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
)

// CalibrationRows and CalibrationSeed fix the sample Calibrate and
// Decompose measure on: that many dataset rows (see CalibrationSample), chosen by their own PCG stream, so the training
// streams are untouched and every seed and method of a study is
// calibrated on the same rows.
const (
	CalibrationRows        = 2048
	CalibrationSeed uint64 = 0x5ca1ab1e
)

// CalibrationSample returns the fixed calibration sample of d: n rows drawn
// with seed, in a Batch that carries their indices; distinct rows, unless d
// has fewer than n, when its rows repeat (each copy gets its own random
// shift, so the sample still holds n draws).
func CalibrationSample(d *dataset.Dataset, n int, seed uint64) *dataset.Batch {
	rng := rand.New(rand.NewPCG(seed, 0xca1))
	perm := rng.Perm(d.Len())
	b := dataset.NewBatch(n, d.ObsDim, d.ActDim)
	S, A := d.ObsDim, d.ActDim
	for i := range n {
		j := perm[i%len(perm)]
		b.Idx[i] = j
		copy(b.Obs[i*S:(i+1)*S], d.Observations[j*S:(j+1)*S])
		copy(b.NextObs[i*S:(i+1)*S], d.NextObservations[j*S:(j+1)*S])
		copy(b.Act[i*A:(i+1)*A], d.Actions[j*A:(j+1)*A])
		b.Rew[i] = d.Rewards[j]
		b.Done[i] = d.Terminals[j]
	}
	return b
}

// Calibration records how Calibrate set an augmenter's scale.
type Calibration struct {
	// Target is the asked mean ‖s̃_t − s_t‖₂ (--shift-l2).
	Target float64 `json:"target"`
	// Param names the scale that was set (gaussian_sigma, adv_eps,
	// shift_sigma, latent_sigma or fwd_sigma: the config keys) and Scale
	// its calibrated value, in that key's units.
	Param string  `json:"param"`
	Scale float64 `json:"scale"`
	// NoiseSigma is, for the Koopman augmenters, the σ of their S4RL-N
	// branch (batches without the model shift, and kfc++-contact's contact
	// rows), set to the same target.
	NoiseSigma float64 `json:"noise_sigma,omitempty"`
	// Method is "analytic" (Gaussian noise: σ = X / E‖z‖ with z ~ N(0, I_S);
	// s4rl-adv: the step's norm is ε, or ε√S for sign steps) or "bisection"
	// (the Koopman shifts, measured on the sample).
	Method string `json:"method"`
	// Measured is the mean ‖s̃_t − s_t‖₂ over the sample at Scale (the
	// Koopman augmenters: their model branch); 0 for s4rl-adv, whose shift
	// needs the critic.
	Measured float64 `json:"measured,omitempty"`
	// Floor is the measured mean at scale 0: with direct decoding the
	// Koopman model's error ‖D(E(s)) − s‖₂, which no scale goes below.
	Floor       float64 `json:"floor,omitempty"`
	Rows        int     `json:"rows"`
	Evaluations int     `json:"evaluations,omitempty"`
}

// chiMean is E‖z‖₂ for z ~ N(0, I_S): √2 Γ((S+1)/2) / Γ(S/2).
func chiMean(S int) float64 {
	a, _ := math.Lgamma(float64(S+1) / 2)
	b, _ := math.Lgamma(float64(S) / 2)
	return math.Sqrt2 * math.Exp(a-b)
}

// Calibrate returns a copy of a (or a itself, changed) whose scale makes the
// mean ‖s̃_t − s_t‖₂ over the rows it shifts equal target, measured on
// sample (CalibrationSample); see Calibration.Method for how each augmenter
// is solved. It fails for augmenters without a scale (none), for s4rl-adv's
// raw mode (its step is the critic's gradient, which changes as the critic
// learns) and, naming --residual, when a Koopman augmenter with direct
// decoding cannot go below target because the model's reconstruction error
// alone is larger.
func Calibrate(a Augmenter, sample *dataset.Batch, target float64) (Augmenter, Calibration, error) {
	if !(target > 0) || math.IsInf(target, 0) {
		return nil, Calibration{}, fmt.Errorf("shift-l2 %v must be a positive finite number", target)
	}
	c := Calibration{Target: target, Rows: sample.B, Method: "analytic"}
	S := sample.ObsDim
	switch x := a.(type) {
	case Gaussian:
		c.Param, c.Scale = "gaussian_sigma", target/chiMean(S)
		g := Gaussian{Sigma: c.Scale}
		obs, next := make([]float32, len(sample.Obs)), make([]float32, len(sample.Obs))
		_ = g.Augment(sample, obs, next, rand.New(rand.NewPCG(CalibrationSeed, 1)), nil)
		c.Measured = meanRowL2(obs, sample.Obs, sample.B, S)
		return g, c, nil
	case *Adversarial:
		c.Param = "adv_eps"
		switch x.Mode {
		case "sign":
			c.Scale = target / math.Sqrt(float64(S))
		case "raw":
			return nil, c, fmt.Errorf("--shift-l2 with s4rl-adv's raw mode: its step is ε times the critic's gradient, whose size changes as the critic learns; use --adv-mode l2 (every row moves by exactly ε) or sign")
		default:
			c.Scale = target
		}
		x.Eps = c.Scale
		return x, c, nil
	case *Koopman:
		err := x.calibrate(sample, target, &c)
		return x, c, err
	}
	return nil, c, fmt.Errorf("--shift-l2: augmentation %q has no scale to calibrate (calibrated: gaussian, s4rl-adv and the Koopman augmentations)", a.Name())
}

// calibrate sets the noise branch's σ analytically and solves the model
// branch's scale by bisection on a log scale: the measured mean shift on
// the sample, with the same ε draws at every scale (one seeded stream), is
// increasing in the scale.
func (k *Koopman) calibrate(sample *dataset.Batch, target float64, c *Calibration) error {
	S := sample.ObsDim
	k.opts.GaussianSigma = target / chiMean(S)
	c.NoiseSigma = k.opts.GaussianSigma
	var p *float64
	switch k.mode {
	case modeFwdPred: // s̃_t = s_t + N(0, FwdSigma²)
		k.opts.FwdSigma = target / chiMean(S)
		c.Param, c.Scale = "fwd_sigma", k.opts.FwdSigma
		m, err := k.measure(sample)
		c.Measured = m
		return err
	case modeVAENoise:
		c.Param, p = "latent_sigma", &k.opts.LatentSigma
	default:
		c.Param, p = "shift_sigma", &k.opts.ShiftSigma
	}
	c.Method = "bisection"
	start := *p // the search starts from the augmenter's own scale (f(0) below overwrites *p)
	f := func(v float64) (float64, error) {
		*p = v
		c.Evaluations++
		return k.measure(sample)
	}
	floor, err := f(0)
	if err != nil {
		return err
	}
	c.Floor = floor
	if floor >= target {
		if !k.opts.Residual {
			return fmt.Errorf("--shift-l2 %.3g is below the model-error floor of %s with direct decoding: D(E(s)) − s alone "+
				"has mean ‖·‖₂ %.3g on the calibration sample; use --residual (s̃ = s + D(g̃) − D(g)) or a better Koopman model", target, k.name, floor)
		}
		return fmt.Errorf("--shift-l2 %.3g: %s's shift at scale 0 is already %.3g", target, k.name, floor)
	}
	const tol = 1e-3 // relative: well inside the 5% asked for
	lo, hi := 0.0, start
	if !(hi > 0) {
		hi = 1
	}
	m, err := f(hi)
	if err != nil {
		return err
	}
	for i := 0; m < target && !(math.Abs(m-target) <= tol*target); i++ {
		if i == 60 {
			return fmt.Errorf("--shift-l2 %.3g: %s's shift reaches only %.3g at %s %.3g", target, k.name, m, c.Param, hi)
		}
		lo, hi = hi, hi*4
		if m, err = f(hi); err != nil {
			return err
		}
	}
	best, bestErr := hi, math.Abs(m-target)
	// probe measures scale v, keeps the closest so far and narrows [lo, hi].
	probe := func(v float64) error {
		mv, err := f(v)
		if err != nil {
			return err
		}
		if d := math.Abs(mv - target); d < bestErr {
			best, bestErr = v, d
		}
		if mv < target {
			lo = v
		} else {
			hi = v
		}
		return nil
	}
	for i := 0; lo == 0 && bestErr > tol*target && i < 60; i++ { // find a lower end above 0 for the log scale
		if err := probe(hi / 4); err != nil {
			return err
		}
	}
	for i := 0; i < 60 && bestErr > tol*target && lo > 0; i++ { // bisection on the log scale
		if err := probe(math.Sqrt(lo * hi)); err != nil {
			return err
		}
	}
	*p = best
	c.Scale = best
	c.Measured, err = f(best)
	return err
}

// measure is the mean ‖s̃_t − s_t‖₂ of the model branch over sample, with
// a fixed seed; the augmenter's counters are left as they were.
func (k *Koopman) measure(sample *dataset.Batch) (float64, error) {
	obs, next, err := k.modelShift(sample, CalibrationSeed)
	if err != nil {
		return 0, err
	}
	_ = next
	return meanRowL2(obs, sample.Obs, sample.B, sample.ObsDim), nil
}

// modelShift runs the model branch (p_K = 1) on b with its own seeded
// stream and restores the counters afterwards.
func (k *Koopman) modelShift(b *dataset.Batch, seed uint64) (obs, next []float32, err error) {
	stats, shiftN, model, prob := k.stats, k.shiftN, k.model, k.opts.KoopmanProb
	defer func() { k.stats, k.shiftN, k.model, k.opts.KoopmanProb = stats, shiftN, model, prob }()
	k.opts.KoopmanProb = 1
	obs, next = make([]float32, len(b.Obs)), make([]float32, len(b.NextObs))
	err = k.Augment(b, obs, next, MeasureRand(seed), nil)
	return obs, next, err
}

// MeasureRand is the stream a Koopman augmenter's shift is measured with by
// Calibrate and Decompose (seed CalibrationSeed): Augment draws its branch
// (one Float64) and then its ε from it, row by row, so a caller that draws
// the same way from it (run's symcheck) gets the calibration's own shifts.
func MeasureRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 2)) }

// Decomposition splits a Koopman augmenter's shift of s_t into its two
// parts, means over a sample's rows: ModelError = ‖D(E(s)) − s‖₂, what
// direct decoding adds to every shifted state (the model's reconstruction
// error), and Symmetry = ‖D(g̃) − D(E(s))‖₂ with g̃ the shifted latent
// ((1+σ)E(s) for kfc++; kfc, vae-noise and the prediction ablations their
// own g̃). With Residual the shift is the symmetry part alone.
type Decomposition struct {
	ModelError float64 `json:"model_error_l2_mean"`
	Symmetry   float64 `json:"symmetry_l2_mean"`
	Residual   bool    `json:"residual"`
	Rows       int     `json:"rows"`
}

// Decompose measures the two parts of the model branch's shift of s_t on
// sample at the augmenter's current scale: the shift is computed once with
// direct decoding (D(g̃)) and once with residual decoding (s + D(g̃) − D(g))
// from the same ε draws (seed), so D(g) − s is their difference and
// D(g̃) − D(g) the residual shift. kfc++-contact's contact rows get the same
// noise in both and count as symmetry part. ok is false for fwd-prediction,
// whose s̃_t is plain noise.
func (k *Koopman) Decompose(sample *dataset.Batch, seed uint64) (d Decomposition, ok bool, err error) {
	if k.mode == modeFwdPred {
		return d, false, nil
	}
	residual := k.opts.Residual
	defer func() { k.opts.Residual = residual }()
	k.opts.Residual = false
	direct, _, err := k.modelShift(sample, seed)
	if err != nil {
		return d, false, err
	}
	k.opts.Residual = true
	res, _, err := k.modelShift(sample, seed)
	if err != nil {
		return d, false, err
	}
	B, S := sample.B, sample.ObsDim
	return Decomposition{ModelError: meanRowL2(direct, res, B, S), Symmetry: meanRowL2(res, sample.Obs, B, S),
		Residual: residual, Rows: B}, true, nil
}

// ModelErrorL2 is the mean ‖D(E(s)) − s‖₂ over the states of b: the floor
// of a direct-decoding Koopman shift.
func ModelErrorL2(m *koopman.Model, b *dataset.Batch) float64 {
	rec := m.Reconstruct(b.Obs, b.B)
	return meanRowL2(rec, b.Obs, b.B, b.ObsDim)
}

// DecodesState reports whether the Koopman augmenter called name decodes
// its shifted s̃_t (all but fwd-prediction), so that with direct decoding
// the model's error enters it.
func DecodesState(name string) bool {
	m, ok := koopNames[name]
	return ok && m != modeFwdPred
}
