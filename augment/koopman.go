package augment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
)

// KFCppEpsUnit is the unit of Options.ShiftSigma for KFC++: the authors'
// Eigenspace code draws ε ~ N(0, (shift_sigma·3e-3)²) per eigen-direction
// (their README swaps the units; the code is what ran, see
// kfc-authors-code.md §2b).
const KFCppEpsUnit = 3e-3

// koopMode is the variant a Koopman augmenter implements.
type koopMode int

const (
	modeKFCpp      koopMode = iota // kfc++
	modeKFC                        // kfc
	modeContact                    // kfc++-contact
	modeVAENoise                   // vae-noise
	modePrediction                 // kfc++-prediction (the paper's: re-encode s̃_t)
	modeLatentPred                 // kfc++-latent-prediction (advance the shifted latent)
	modeFwdPred                    // fwd-prediction
)

var koopNames = map[string]koopMode{
	"kfc++": modeKFCpp, "kfc": modeKFC, "kfc++-contact": modeContact,
	"vae-noise": modeVAENoise, "kfc++-prediction": modePrediction, "kfc++-latent-prediction": modeLatentPred,
	"fwd-prediction": modeFwdPred,
}

// NeedsKoopman reports whether the augmenter called name needs a trained
// Koopman model (Options.Model or Options.ModelPath), so that a CLI can
// train one first.
func NeedsKoopman(name string) bool {
	_, ok := koopNames[name]
	return ok
}

func init() {
	for name := range koopNames {
		Register(name, func(o Options) (Augmenter, error) { return NewKoopman(name, o) })
	}
	Register("s4rl-adv", func(o Options) (Augmenter, error) { return NewAdversarial(o) })
}

// KoopmanStats counts what a Koopman augmenter did since it was built.
type KoopmanStats struct {
	Batches         int `json:"batches"`
	KoopmanBatches  int `json:"koopman_batches"`  // batches that took the model branch (probability p_K)
	GaussianBatches int `json:"gaussian_batches"` // batches that took the S4RL-N branch
	CachedRows      int `json:"cached_rows"`      // model-branch rows served from the precomputed cache
	SlowRows        int `json:"slow_rows"`        // model-branch rows computed per batch (beyond the cache budget)
	Fallbacks       int `json:"fallbacks"`        // model-branch rows shifted with the scalar fallback generator
	ContactRows     int `json:"contact_rows"`     // kfc++-contact: rows that got Gaussian noise instead
	// MeanShiftL2 is the mean ‖s̃_t − s_t‖₂ over model-branch rows (the
	// paper measures 2.6e-4 on D4RL).
	MeanShiftL2 float64 `json:"mean_shift_l2"`
}

// Koopman implements the Koopman-model augmenters: kfc++, kfc and the
// paper's ablations kfc++-contact, vae-noise, kfc++-prediction and
// fwd-prediction, plus kfc++-latent-prediction. Per batch, with probability p_K (Options.KoopmanProb) the
// whole batch takes the model branch, otherwise S4RL-N Gaussian noise
// (Options.GaussianSigma) as in the authors' code.
//
// Model branch (g = E(s), a_t the transition's logged, raw action):
//
//   - kfc++:  s̃ = D((1 + σ_{a_t}(ε)) g) for s_t and s_{t+1}, same ε ∈ R^N,
//     σ_a(ε) = Re(U diag(ε) U⁻¹), ε_j ~ N(0, (ShiftSigma·3e-3)²).
//   - kfc:    s̃ = D((1 + ε G_{a_t}) g), one scalar ε per transition,
//     ε ~ N(0, (ShiftSigma·3e-3·√N)²), G the unit-Frobenius commuting
//     generator of koopman.RealBasis.KFCGenerator (the √N makes ‖εGg‖
//     comparable with the KFC++ shift; the authors' 1e-5·X/mean(X) Sylvester
//     generator is ill-posed, see koopman.KFCCoefficients).
//   - kfc++-contact: rows whose velocity dimensions (Options.ContactDims)
//     change sign between s_t and s_{t+1} get S4RL-N noise, the others kfc++.
//   - vae-noise: s̃ = D(g + δ), δ ~ N(0, LatentSigma²·I), the same δ for s_t
//     and s_{t+1} (a random latent direction instead of a symmetry).
//   - kfc++-prediction: s̃_t as kfc++, s̃_{t+1} = D(K(a_t)E(s̃_t)), the
//     paper's formula: the decoded shifted state is encoded again.
//   - kfc++-latent-prediction: s̃_t as kfc++, s̃_{t+1} = D(K(a_t)(1 + σ)g_t),
//     advancing the shifted latent without the decode/encode round trip
//     (equal to kfc++-prediction when E∘D is the identity on latents).
//   - fwd-prediction: s̃_t = s_t + N(0, FwdSigma²), s̃_{t+1} = D(K(a_t)E(s̃_t)).
//
// With Options.Residual the decoded states are gauge-corrected,
// s̃ = s + D(g̃) − D(g) (g the unshifted latent of the same path), so the
// autoencoder's reconstruction error does not enter the augmentation; the
// authors decode directly (their gauged variant exists but is never called).
//
// Speed: the model is frozen, so NewKoopman precomputes per transition E(s_t),
// E(s_{t+1}) and, for the KFC++ family, the real eigenbasis P of K(a_t)
// (float32) and P⁻¹E(s) (see PrecomputeInfo for the bytes), within
// Options.CacheBytes. A cached row then costs O(N²) plus its share of one
// decoder pass; rows beyond the budget are encoded and decomposed per batch
// with koopman.Shifter. Results are deterministic given the rng.
//
// A Koopman augmenter is not safe for concurrent use.
type Koopman struct {
	name string
	mode koopMode
	opts Options
	m    *koopman.Model
	data *dataset.Dataset
	N    int

	cache   *latentCache
	info    PrecomputeInfo
	shifter *koopman.Shifter
	contact []int
	stats   KoopmanStats
	model   bool // the last Augment call took the model branch (Brancher)
	shiftN  int

	// per-batch workspaces
	ws                 koopman.Workspace
	dec                nn.Cache
	eps                []float64 // [B, N] (kfc: [B])
	g, lat, ref, dec2  []float32 // [2B, N] latents: unshifted, shifted, reference; decoder input
	slow               []int     // batch rows not in the cache
	x                  []float32 // [2B, S] encoder input for slow rows
	act                []float32 // [B, M] raw actions
	l64, s64, a64, e64 []float64
	scratch            []float32
	base               []float32 // [2B, S]
	idx                []int     // the batch's dataset rows
	tmpA, tmpB         []float32
}

// NewKoopman builds the Koopman augmenter called name (see NeedsKoopman)
// and precomputes its cache. opts must carry the dataset and a model
// (Model, or ModelPath to load one) with matching dimensions.
func NewKoopman(name string, opts Options) (*Koopman, error) {
	mode, ok := koopNames[name]
	if !ok {
		return nil, fmt.Errorf("augment: %q is not a Koopman augmentation", name)
	}
	if err := opts.validateKoopman(); err != nil {
		return nil, fmt.Errorf("augment %s: %w", name, err)
	}
	m := opts.Model
	if m == nil {
		if opts.ModelPath == "" {
			return nil, fmt.Errorf("augment %s: needs a trained Koopman model (Options.Model or ModelPath; train one with `koopq koopman train`)", name)
		}
		var err error
		if m, _, err = koopman.LoadModel(opts.ModelPath); err != nil {
			return nil, fmt.Errorf("augment %s: %w", name, err)
		}
	}
	d := opts.Dataset
	if d == nil {
		return nil, fmt.Errorf("augment %s: needs the training dataset (Options.Dataset)", name)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("augment %s: %w", name, err)
	}
	if d.ObsDim != m.S() || d.ActDim != m.M() {
		return nil, fmt.Errorf("augment %s: Koopman model is for states %d / actions %d, dataset has %d / %d", name, m.S(), m.M(), d.ObsDim, d.ActDim)
	}
	if err := nn.CheckFinite(m.Params()); err != nil {
		return nil, fmt.Errorf("augment %s: Koopman model: %w", name, err)
	}
	k := &Koopman{name: name, mode: mode, opts: opts, m: m, data: d, N: m.N()}
	if mode == modeContact {
		k.contact = opts.ContactDims
		if k.contact == nil {
			dims, ok := DefaultContactDims(opts.Env, d.ObsDim)
			if !ok {
				return nil, fmt.Errorf("augment %s: no velocity dimensions known for env %q with %d-dim states (kfc++-contact knows hopper, walker2d, "+
					"halfcheetah, ant, pendulum, cartpole(-continuous) and mountaincar-continuous; in Go: set Options.ContactDims); use another augmenter", name, opts.Env, d.ObsDim)
			}
			k.contact = dims
		}
		for _, j := range k.contact {
			if j < 0 || j >= d.ObsDim {
				return nil, fmt.Errorf("augment %s: contact dimension %d outside [0, %d)", name, j, d.ObsDim)
			}
		}
	}
	kind := cacheKFCpp
	switch mode {
	case modeKFC:
		kind = cacheKFC
	case modeVAENoise:
		kind = cacheG
	case modeFwdPred:
		kind = cacheNone
	}
	sym := opts.Symmetry
	if sym.MaxCond == 0 {
		sym = koopman.DefaultSymmetryConfig()
	}
	k.cache, k.info = precomputeCached(opts.CacheDir, m, d, kind, opts.CacheBytes(), opts.Workers, sym, opts.Progress)
	if k.cache.n < d.Len() && kind >= cacheKFC {
		k0, ks := m.Operators()
		k.shifter = koopman.NewShifter(k0, ks, k.N, sym, opts.Workers)
	}
	return k, nil
}

// Name implements Augmenter.
func (k *Koopman) Name() string { return k.name }

// Precompute reports the cache built by NewKoopman.
func (k *Koopman) Precompute() PrecomputeInfo { return k.info }

// Stats returns the running counters.
func (k *Koopman) Stats() KoopmanStats { return k.stats }

// LastBatchModel implements Brancher.
func (k *Koopman) LastBatchModel() bool { return k.model }

// KoopmanReport is what a Koopman augmenter reports (Reporter): the
// precompute it built and the counters of its batches since then.
type KoopmanReport struct {
	Precompute PrecomputeInfo `json:"precompute"`
	Stats      KoopmanStats   `json:"stats"`
}

// Report implements Reporter.
func (k *Koopman) Report() any { return KoopmanReport{Precompute: k.info, Stats: k.stats} }

// Model returns the frozen Koopman model.
func (k *Koopman) Model() *koopman.Model { return k.m }

func (k *Koopman) prepare(B int) {
	N, S, M := k.N, k.m.S(), k.m.M()
	k.eps = growF64(k.eps, B*N)
	k.g, k.lat, k.ref = growF32(k.g, 2*B*N), growF32(k.lat, 2*B*N), growF32(k.ref, 2*B*N)
	k.dec2 = growF32(k.dec2, 4*B*N)
	k.x = growF32(k.x, 2*B*S)
	k.act = growF32(k.act, B*M)
	k.l64, k.s64 = growF64(k.l64, 2*B*N), growF64(k.s64, 2*B*N)
	k.a64, k.e64 = growF64(k.a64, B*M), growF64(k.e64, B*N)
	k.scratch = growF32(k.scratch, N)
	k.base = growF32(k.base, 2*B*S)
	k.tmpA, k.tmpB = growF32(k.tmpA, B*N), growF32(k.tmpB, B*N)
	k.slow = k.slow[:0]
}

// Augment implements Augmenter.
func (k *Koopman) Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, _ QGradient) error {
	B, S, M, N := b.B, k.m.S(), k.m.M(), k.N
	if b.ObsDim != S || len(obs) < B*S || len(next) < B*S {
		return fmt.Errorf("augment %s: batch states have dimension %d, Koopman model %d", k.name, b.ObsDim, S)
	}
	if len(b.Idx) < B {
		return fmt.Errorf("augment %s: batch carries no dataset row indices (Batch.Idx)", k.name)
	}
	k.stats.Batches++
	k.model = rng.Float64() < k.opts.KoopmanProb // u ∈ [0, 1): probability exactly p_K
	if !k.model {
		k.stats.GaussianBatches++
		AddNoise(obs[:B*S], b.Obs[:B*S], k.opts.GaussianSigma, rng)
		AddNoise(next[:B*S], b.NextObs[:B*S], k.opts.GaussianSigma, rng)
		return nil
	}
	k.stats.KoopmanBatches++
	k.prepare(B)
	k.idx = b.Idx[:B]
	n := k.data.Len()
	for i := 0; i < B; i++ {
		j := b.Idx[i]
		if j < 0 || j >= n {
			return fmt.Errorf("augment %s: batch row %d has dataset index %d outside [0, %d)", k.name, i, j, n)
		}
		copy(k.act[i*M:(i+1)*M], k.data.Actions[j*M:(j+1)*M])
	}
	// Random draws, always in the same order for a given mode.
	std := k.opts.ShiftSigma * KFCppEpsUnit
	switch k.mode {
	case modeKFC:
		std *= math.Sqrt(float64(N))
		for i := 0; i < B; i++ {
			k.eps[i] = std * rng.NormFloat64()
		}
	case modeVAENoise, modeFwdPred:
	default:
		for i := range k.eps[:B*N] {
			k.eps[i] = std * rng.NormFloat64()
		}
	}
	copy(k.base[:B*S], b.Obs[:B*S])
	copy(k.base[B*S:2*B*S], b.NextObs[:B*S])
	var err error
	switch k.mode {
	case modeFwdPred:
		err = k.fwdPrediction(b, obs, next, rng)
	default:
		err = k.shiftBatch(b, obs, next, rng)
	}
	if err != nil {
		return err
	}
	// Running mean of ‖s̃_t − s_t‖₂.
	for i := 0; i < B; i++ {
		s := 0.0
		for j := i * S; j < (i+1)*S; j++ {
			d := float64(obs[j] - b.Obs[j])
			s += d * d
		}
		k.shiftN++
		k.stats.MeanShiftL2 += (math.Sqrt(s) - k.stats.MeanShiftL2) / float64(k.shiftN)
	}
	return nil
}

// latents fills k.g ([2B, N]: rows 0..B−1 E(s_t), rows B..2B−1 E(s_{t+1}))
// from the cache or, for rows beyond it, by encoding; uncached rows are
// listed in k.slow.
func (k *Koopman) latents(b *dataset.Batch) {
	B, S, N := b.B, k.m.S(), k.N
	for i := 0; i < B; i++ {
		j := b.Idx[i]
		if j < k.cache.n {
			copy(k.g[i*N:(i+1)*N], k.cache.g[j*2*N:j*2*N+N])
			copy(k.g[(B+i)*N:(B+i+1)*N], k.cache.g[j*2*N+N:(j+1)*2*N])
			continue
		}
		k.slow = append(k.slow, i)
	}
	if len(k.slow) == 0 {
		return
	}
	ns := len(k.slow)
	for r, i := range k.slow {
		copy(k.x[r*S:(r+1)*S], b.Obs[i*S:(i+1)*S])
		copy(k.x[(ns+r)*S:(ns+r+1)*S], b.NextObs[i*S:(i+1)*S])
	}
	g := k.m.Encode(&k.ws.Enc, k.x[:2*ns*S], 2*ns)
	for r, i := range k.slow {
		copy(k.g[i*N:(i+1)*N], g[r*N:(r+1)*N])
		copy(k.g[(B+i)*N:(B+i+1)*N], g[(ns+r)*N:(ns+r+1)*N])
	}
}

// shiftBatch handles every mode but fwd-prediction.
func (k *Koopman) shiftBatch(b *dataset.Batch, obs, next []float32, rng *rand.Rand) error {
	B, N := b.B, k.N
	k.latents(b)
	copy(k.lat[:2*B*N], k.g[:2*B*N])
	copy(k.ref[:2*B*N], k.g[:2*B*N])
	switch k.mode {
	case modeVAENoise:
		sig := k.opts.LatentSigma
		for i := 0; i < B; i++ {
			for j := 0; j < N; j++ {
				d := float32(sig * rng.NormFloat64())
				k.lat[i*N+j] += d
				k.lat[(B+i)*N+j] += d
			}
		}
		k.stats.CachedRows += B - len(k.slow)
		k.stats.SlowRows += len(k.slow)
	case modeKFC:
		k.shiftKFC(B)
	default:
		k.shiftKFCpp(B)
	}
	if k.mode == modeLatentPred {
		// s̃_{t+1} = D(K(a)(1+σ)g_t); its unshifted reference is K(a) g_t.
		k.m.Advance(&k.ws, k.lat[:B*N], k.act[:B*k.m.M()], B, k.tmpA)
		copy(k.lat[B*N:2*B*N], k.tmpA)
		k.m.Advance(&k.ws, k.ref[:B*N], k.act[:B*k.m.M()], B, k.tmpB)
		copy(k.ref[B*N:2*B*N], k.tmpB)
	}
	k.decodeInto(B, obs, next, 2*B)
	if k.mode == modeContact {
		k.applyContact(b, obs, next, rng)
	}
	if k.mode == modePrediction {
		k.predictNext(b, obs, next) // replaces the decoded shifted s_{t+1}
	}
	return nil
}

// decodeInto decodes k.lat ([2B, N]) into obs and next; with Residual it
// also decodes k.ref and writes s̃ = base + D(lat) − D(ref).
func (k *Koopman) decodeInto(B int, obs, next []float32, rows int) {
	S, N := k.m.S(), k.N
	if !k.opts.Residual {
		out := k.m.Decode(&k.dec, k.lat[:rows*N], rows)
		copy(obs[:B*S], out[:B*S])
		copy(next[:B*S], out[B*S:2*B*S])
		return
	}
	copy(k.dec2[:rows*N], k.lat[:rows*N])
	copy(k.dec2[rows*N:2*rows*N], k.ref[:rows*N])
	out := k.m.Decode(&k.dec, k.dec2[:2*rows*N], 2*rows)
	off := rows * S
	for j := 0; j < B*S; j++ {
		obs[j] = k.base[j] + out[j] - out[off+j]
		next[j] = k.base[B*S+j] + out[B*S+j] - out[off+B*S+j]
	}
}

// shiftKFCpp shifts k.lat in place: cached rows through the cache, the
// rest through the Shifter.
func (k *Koopman) shiftKFCpp(B int) {
	N := k.N
	buf := k.dec2[:2*N] // scratch for one row's two shifted latents
	slowSet := k.slow
	si := 0
	for i := 0; i < B; i++ {
		if si < len(slowSet) && slowSet[si] == i {
			si++
			continue
		}
		j := k.idx[i]
		if k.cache.shiftKFCpp(buf, j, k.eps[i*N:(i+1)*N], k.scratch) {
			k.stats.Fallbacks++
		}
		copy(k.lat[i*N:(i+1)*N], buf[:N])
		copy(k.lat[(B+i)*N:(B+i+1)*N], buf[N:])
	}
	k.stats.CachedRows += B - len(slowSet)
	if len(slowSet) == 0 {
		return
	}
	k.stats.SlowRows += len(slowSet)
	k.stats.Fallbacks += k.shiftSlow(B, false)
}

// shiftKFC shifts k.lat in place with the KFC generator.
func (k *Koopman) shiftKFC(B int) {
	N := k.N
	si := 0
	for i := 0; i < B; i++ {
		if si < len(k.slow) && k.slow[si] == i {
			si++
			continue
		}
		j := k.idx[i]
		if k.cache.fb[j] {
			k.stats.Fallbacks++
		}
		e := float32(k.eps[i])
		gg := k.cache.extra[j*2*N : (j+1)*2*N]
		for c := 0; c < N; c++ {
			k.lat[i*N+c] += e * gg[c]
			k.lat[(B+i)*N+c] += e * gg[N+c]
		}
	}
	k.stats.CachedRows += B - len(k.slow)
	if len(k.slow) == 0 {
		return
	}
	k.stats.SlowRows += len(k.slow)
	k.stats.Fallbacks += k.shiftSlow(B, true)
}

// shiftSlow shifts the uncached rows of k.lat with the Shifter (float64),
// KFC when kfc is set, otherwise KFC++, and returns the fallback count.
func (k *Koopman) shiftSlow(B int, kfc bool) int {
	N, M := k.N, k.m.M()
	ns := len(k.slow)
	lat, dst := k.l64[:ns*2*N], k.s64[:ns*2*N]
	act := k.a64[:ns*M]
	for r, i := range k.slow {
		for c := 0; c < N; c++ {
			lat[r*2*N+c] = float64(k.lat[i*N+c])
			lat[r*2*N+N+c] = float64(k.lat[(B+i)*N+c])
		}
		for c := 0; c < M; c++ {
			act[r*M+c] = float64(k.act[i*M+c])
		}
	}
	var st koopman.BatchStats
	if kfc {
		eps := k.e64[:ns]
		for r, i := range k.slow {
			eps[r] = k.eps[i]
		}
		st = k.shifter.ShiftKFC(dst, lat, act, eps)
	} else {
		eps := k.e64[:ns*N]
		for r, i := range k.slow {
			copy(eps[r*N:(r+1)*N], k.eps[i*N:(i+1)*N])
		}
		st = k.shifter.ShiftKFCpp(dst, lat, act, eps)
	}
	for r, i := range k.slow {
		for c := 0; c < N; c++ {
			k.lat[i*N+c] = float32(dst[r*2*N+c])
			k.lat[(B+i)*N+c] = float32(dst[r*2*N+N+c])
		}
	}
	return st.Fallbacks
}

// fwdPrediction: s̃_t = s_t + N(0, FwdSigma²), s̃_{t+1} = D(K(a)E(s̃_t)).
func (k *Koopman) fwdPrediction(b *dataset.Batch, obs, next []float32, rng *rand.Rand) error {
	AddNoise(obs[:b.B*b.ObsDim], b.Obs[:b.B*b.ObsDim], k.opts.FwdSigma, rng)
	k.predictNext(b, obs, next)
	k.stats.SlowRows += b.B
	return nil
}

// predictNext writes the model's prediction from the augmented s̃_t in obs:
// s̃_{t+1} = D(K(a)E(s̃_t)) (with Residual: s_{t+1} + D(K(a)E(s̃_t)) −
// D(K(a)E(s_t))).
func (k *Koopman) predictNext(b *dataset.Batch, obs, next []float32) {
	B, S, N, M := b.B, k.m.S(), k.N, k.m.M()
	copy(k.x[:B*S], obs[:B*S])
	rows := B
	if k.opts.Residual {
		copy(k.x[B*S:2*B*S], b.Obs[:B*S])
		rows = 2 * B
	}
	g := k.m.Encode(&k.ws.Enc, k.x[:rows*S], rows)
	k.m.Advance(&k.ws, g[:B*N], k.act[:B*M], B, k.lat[:B*N])
	if k.opts.Residual {
		k.m.Advance(&k.ws, g[B*N:2*B*N], k.act[:B*M], B, k.lat[B*N:2*B*N])
	}
	out := k.m.Decode(&k.dec, k.lat[:rows*N], rows)
	if !k.opts.Residual {
		copy(next[:B*S], out[:B*S])
	} else {
		for j := 0; j < B*S; j++ {
			next[j] = b.NextObs[j] + out[j] - out[B*S+j]
		}
	}
}

// applyContact replaces the rows of contact transitions (a velocity
// dimension changes sign between s_t and s_{t+1}) by S4RL-N noise.
func (k *Koopman) applyContact(b *dataset.Batch, obs, next []float32, rng *rand.Rand) {
	B, S := b.B, k.m.S()
	for i := 0; i < B; i++ {
		if !IsContact(b.Obs[i*S:(i+1)*S], b.NextObs[i*S:(i+1)*S], k.contact) {
			continue
		}
		k.stats.ContactRows++
		AddNoise(obs[i*S:(i+1)*S], b.Obs[i*S:(i+1)*S], k.opts.GaussianSigma, rng)
		AddNoise(next[i*S:(i+1)*S], b.NextObs[i*S:(i+1)*S], k.opts.GaussianSigma, rng)
	}
}

func growF32(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func growF64(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
