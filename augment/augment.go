// Package augment implements Step 3's state shifts: the transformations of
// (s_t, s_{t+1}) that CQL trains its Bellman update on. Shipped here: none
// (plain CQL), gaussian (S4RL-N), s4rl-adv (S4RL-Adv), the Koopman shifts
// kfc and kfc++, the paper's ablations kfc++-contact, vae-noise,
// kfc++-prediction and fwd-prediction, and kfc++-latent-prediction, a
// variant of kfc++-prediction (koopman.go). NeedsKoopman tells which
// need a trained koopman.Model.
//
// Augmenters never import package cql, nor cql this package: cql declares
// the interface it consumes (cql.StateShift), which every Augmenter
// satisfies, and hands augmenters a QGradient callback when they need ∂Q/∂s
// (S4RL-Adv).
package augment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/internal/suggest"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/rundir"
)

// QGradient gives an augmenter access to the critic: it writes
// ∂ min(Q1,Q2)(s, a)/∂s for rows of states s [rows, S] and actions a [rows, A]
// into grad [rows, S]. States are in raw (unnormalized) units.
//
// It is an alias of the unnamed func type, as cql.QGradient is, so that
// Augmenter's Augment method has exactly cql.StateShift's signature and
// every Augmenter is a cql.StateShift without this package importing cql.
type QGradient = func(s, a []float32, rows int, grad []float32)

// Augmenter produces shifted states for a batch. It has the same methods
// as cql.StateShift, so any Augmenter can be handed to cql.NewTrainer.
type Augmenter interface {
	// Name is the --augment value, e.g. "gaussian".
	Name() string
	// Augment writes the shifted s̃_t into obs [B, S] and the shifted
	// s̃_{t+1} into next [B, S] for the transitions in b. rng is the
	// trainer's augmentation stream (its own, in cql's paired layout, so
	// the draws an augmenter makes never shift the minibatches or the
	// policy noise); q may be nil when the augmenter does not need it.
	Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, q QGradient) error
}

// Reporter is implemented by augmenters that keep a record of their work
// (the Koopman ones: their precompute and per-row counters). Report returns
// a JSON-serializable summary of what the augmenter did since it was built;
// a run stores it with each training process (run.Segment.Augment).
type Reporter interface {
	Report() any
}

// Brancher is implemented by augmenters that pick a branch per batch (the
// Koopman ones: the model shift with probability p_K, else S4RL-N noise).
// LastBatchModel reports the branch of the most recent Augment call, true
// for the model branch; the trainer logs it with each metrics row
// (model_batch), so a report can read the CQL regularizer's statistics on
// model-shifted batches apart from the noise batches.
type Brancher interface {
	LastBatchModel() bool
}

// None is plain CQL: s̃ = s.
type None struct{}

// Name implements Augmenter.
func (None) Name() string { return CQL }

// Augment copies the batch's states unchanged.
func (None) Augment(b *dataset.Batch, obs, next []float32, _ *rand.Rand, _ QGradient) error {
	copy(obs, b.Obs)
	copy(next, b.NextObs)
	return nil
}

// Gaussian is S4RL-N (Sinha et al. 2021): independent N(0, Sigma²) noise on
// s_t and on s_{t+1}, applied to every batch. The KFC authors use Sigma = 3e-3.
type Gaussian struct {
	Sigma float64 // noise standard deviation in state units, default 3e-3
}

// Name implements Augmenter.
func (Gaussian) Name() string { return "gaussian" }

// Augment adds independent Gaussian noise to s_t and s_{t+1}.
func (g Gaussian) Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, _ QGradient) error {
	AddNoise(obs, b.Obs, g.Sigma, rng)
	AddNoise(next, b.NextObs, g.Sigma, rng)
	return nil
}

// AddNoise writes dst = src + N(0, sigma²) elementwise.
func AddNoise(dst, src []float32, sigma float64, rng *rand.Rand) {
	for i, v := range src {
		dst[i] = v + float32(sigma*rng.NormFloat64())
	}
}

// Params are the augmenters' serializable settings: the knobs a run's
// config records under "augment_params" (run.TrainConfig.AugmentParams is
// this type), the sweep specs and config files set, and Options carries to
// New. One type, so a setting is declared once: its JSON key here, its flag
// in run's parameter table, its check in Options.validateKoopman (or the
// augmenter's constructor), its use in the augmenter.
type Params struct {
	// KoopmanProb is p_K, the per-batch probability of the model branch;
	// otherwise the batch gets S4RL-N noise (authors' code and README: 0.8).
	KoopmanProb float64 `json:"koopman_prob"`
	// ShiftSigma scales the KFC++ ε: ε_j ~ N(0, (ShiftSigma·3e-3)²) per
	// eigen-direction (authors' code default 1.0; their README example
	// uses 0.5). KFC uses a scalar ε ~ N(0, (ShiftSigma·3e-3·√N)²).
	ShiftSigma float64 `json:"shift_sigma"`
	// Residual decodes with a gauge correction, s̃ = s + D(g̃) − D(g), so
	// the autoencoder error does not enter the shift (authors: off).
	Residual bool `json:"residual"`
	// LatentSigma is the vae-noise ablation's latent noise σ (paper's best
	// value of its sweep: 3e-3).
	LatentSigma float64 `json:"latent_sigma"`
	// FwdSigma is the fwd-prediction ablation's state noise σ (paper:
	// N(0, 6e-3), read as a standard deviation).
	FwdSigma float64 `json:"fwd_sigma"`
	// AdvEps is S4RL-Adv's step ε (S4RL / KFC paper: 1e-4), AdvMode its
	// direction ("l2", "sign" or "raw"; see Adversarial).
	AdvEps  float64 `json:"adv_eps"`
	AdvMode string  `json:"adv_mode"`
	// CacheGiB bounds the per-transition precompute cache in GiB (default
	// 4; ≈4.8 KB per transition for the KFC++ family at N = 32, so ≈900k
	// transitions). Rows beyond it are computed per batch; ≤ 0 disables
	// the cache. See CacheBytes.
	CacheGiB float64 `json:"cache_gib"`
	// ShiftL2 (--shift-l2), when > 0, asks the run to calibrate the
	// augmenter's scale before the first step so that the mean ‖s̃_t − s_t‖₂
	// over the rows it shifts equals it (Calibrate, called by run; New does
	// not read it); the scale keys above are then replaced. 0: off. The
	// paper measures 2.6e-4 for KFC on D4RL.
	ShiftL2 float64 `json:"shift_l2,omitempty"`
}

// CacheBytes is CacheGiB in bytes (truncated), the precompute cache bound;
// a bound beyond int64's range is taken as no bound (math.MaxInt64), not
// converted (which gave a negative number: no cache at all).
func (p Params) CacheBytes() int64 {
	b := p.CacheGiB * float64(GiB)
	if b >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(b)
}

// Options configure augmenters built by New: the serializable Params plus
// what a run supplies at build time (data, model, environment, cache
// directory, workers, progress). Start from DefaultOptions: zero values
// are taken literally (e.g. KoopmanProb 0 never uses the model).
type Options struct {
	Params
	GaussianSigma float64 // S4RL-N noise σ, default 3e-3

	// Dataset is the training dataset (required by the Koopman augmenters:
	// their cache is indexed by Batch.Idx and K(a) uses its raw actions).
	Dataset *dataset.Dataset
	// Model is the trained, frozen Koopman model; when nil, ModelPath is
	// loaded with koopman.LoadModel. Needed when NeedsKoopman(name).
	Model     *koopman.Model
	ModelPath string
	// Env names the environment; used only for default contact dimensions.
	Env string

	// CacheDir, when not empty, keeps the precompute cache in a file there
	// (created if missing) for the next run on the same model, dataset and
	// GEMM backend: a run finding its file loads it in seconds instead of
	// recomputing it (minutes on 1M rows), with identical numbers. The file
	// name carries a hash of everything the cache depends on; see
	// PrecomputeInfo for what is reported. Files are not removed by koopq.
	CacheDir string
	// Workers is the number of goroutines for the precompute and the
	// per-batch Shifter (≤ 0: GOMAXPROCS).
	Workers int
	// Progress, if non-nil, is told how many transitions have been
	// precomputed (calls are serialized).
	Progress meter.Progress
	// Symmetry configures the eigendecomposition (zero: koopman defaults).
	Symmetry koopman.SymmetryConfig
	// ContactDims are the velocity dimensions for kfc++-contact; nil uses
	// DefaultContactDims(Env, obsDim).
	ContactDims []int
}

// KiB, MiB, GiB are byte units for the precompute cache bound.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)

// DefaultParams returns the paper's and the authors' values (see each
// field): p_K 0.8, shift σ 1, direct decoding, vae-noise σ 3e-3,
// fwd-prediction σ 6e-3, S4RL-Adv ε 1e-4 in l2 mode, a 4 GiB cache, no
// magnitude calibration.
func DefaultParams() Params {
	return Params{KoopmanProb: 0.8, ShiftSigma: 1, CacheGiB: 4, LatentSigma: 3e-3, FwdSigma: 6e-3, AdvEps: 1e-4, AdvMode: "l2"}
}

// DefaultOptions returns DefaultParams with S4RL-N's σ 3e-3.
func DefaultOptions() Options {
	return Options{Params: DefaultParams(), GaussianSigma: 3e-3}
}

// validateKoopman checks the numeric Koopman options.
func (o Options) validateKoopman() error {
	switch {
	case !(o.KoopmanProb >= 0 && o.KoopmanProb <= 1):
		return fmt.Errorf("koopman probability %v must be in [0, 1]", o.KoopmanProb)
	case !(o.ShiftSigma >= 0) || math.IsInf(o.ShiftSigma, 0):
		return fmt.Errorf("shift sigma %v must be finite and >= 0", o.ShiftSigma)
	case !(o.LatentSigma >= 0) || !(o.FwdSigma >= 0):
		return fmt.Errorf("latent sigma %v and fwd sigma %v must be >= 0", o.LatentSigma, o.FwdSigma)
	}
	return nil
}

// Builder constructs an augmenter by name; packages with more augmenters
// (Koopman ones need a trained model) register builders with Register.
type Builder func(opts Options) (Augmenter, error)

var builders = map[string]Builder{
	"cql":      func(Options) (Augmenter, error) { return None{}, nil },
	"gaussian": func(o Options) (Augmenter, error) { return Gaussian{Sigma: o.GaussianSigma}, nil },
}

// Register adds a named builder (at init time).
func Register(name string, b Builder) { builders[name] = b }

// Plain CQL, without augmentation, is "cql"; "none", its name before,
// is an alias that every place taking an augmentation accepts (run
// directories of older koopqs record it in config.json). The run-directory
// format owns the names (rundir.AugmentCQL).
const (
	CQL       = rundir.AugmentCQL
	CQLLegacy = rundir.AugmentCQLLegacy
)

// IsCQL tells whether name is plain CQL: "cql", or its alias "none"
// (rundir.IsPlainCQL).
func IsCQL(name string) bool { return rundir.IsPlainCQL(name) }

// Label is the name tables, plots and run names give augmentation name:
// "cql" for plain CQL under either name, else name itself
// (rundir.MethodLabel).
func Label(name string) string { return rundir.MethodLabel(name) }

// Known tells whether name is an augmentation New builds (an alias included).
func Known(name string) bool {
	_, ok := builders[name]
	return ok || name == CQLLegacy
}

// Names lists the known augmenter names (without the alias "none").
func Names() []string {
	out := make([]string, 0, len(builders))
	for k := range builders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// New builds the augmenter called name.
func New(name string, opts Options) (Augmenter, error) {
	b, ok := builders[Label(name)]
	if !ok {
		return nil, fmt.Errorf("unknown augmentation %q (known: %s)%s", name, strings.Join(Names(), ", "), suggest.Hint(name, Names()))
	}
	if opts.GaussianSigma < 0 {
		return nil, fmt.Errorf("gaussian sigma %v must be >= 0", opts.GaussianSigma)
	}
	return b(opts)
}
