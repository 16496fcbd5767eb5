package koopman

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/koopq/koopq/nn"
)

// TrainConfig controls Step 1 training of the Koopman forward model with the
// loss (paper appendix, "Koopman forward model")
//
//	L = Huber(D(K(a)E(s)), s') + γ_ae · Huber(D(E(x̃)), x̃),  x̃ = [s; s'] + N(0, σ_x²)
//
// (Huber with threshold 1, mean over elements; the authors' smooth_l1_loss).
// The autoencoder term trains on noisy inputs with the noisy input as target,
// as the authors' code does (it is not a denoising autoencoder).
type TrainConfig struct {
	// MaxEpochs is the largest number of passes over the training split.
	// Paper: "We train the model for 75 epochs" (default 75). The authors'
	// code runs up to 400 epochs with early stopping from epoch 75
	// (`koopq koopman train --max-epochs 400`, or koopman_train.max_epochs
	// 400 in a config: early stopping and LearningRatePatience then end a
	// converged training before the cap). A training that reaches the cap
	// while the validation loss still improves is flagged Undertrained.
	MaxEpochs int `json:"max_epochs"`
	// Batch is the minibatch size (paper and code: 256). The last, partial
	// batch of an epoch is kept, as PyTorch's DataLoader does.
	Batch int `json:"batch"`
	// LR is Adam's initial learning rate (paper and code: 3e-4). The
	// authors' code halves it (re-creating Adam) at the fixed epochs 101,
	// 151, …, which the 75-epoch default never reaches; we halve it on a
	// plateau instead (LRPatience).
	LR float64 `json:"lr"`
	// LRPatience is the plateau rule for the learning rate: after
	// LRPatience consecutive epochs without a MinDelta improvement of the
	// validation loss (counted from the last improvement or the last
	// reduction), the learning rate is multiplied by LRFactor (not below
	// MinLR) from the next epoch on; Adam's moments are kept (the authors
	// re-create Adam). When a reduction is due and the rate is already at
	// MinLR, training stops ("min_lr"). 0 turns the rule off (a constant
	// rate, as in configs written before it existed). Default 5, ours: half
	// of Patience, so that a plateau gets one halving before early stopping.
	LRPatience int `json:"lr_patience"`
	// LRFactor multiplies the learning rate on a plateau, in (0, 1). Default
	// 0.5, the authors' halving.
	LRFactor float64 `json:"lr_factor"`
	// MinLR is the floor of the learning rate (default 1e-5, ours: five
	// halvings of 3e-4 reach it). Ignored when LRPatience is 0.
	MinLR float64 `json:"min_lr"`
	// AEWeight is γ_ae (the paper's γ_2) on the autoencoder term. The paper
	// does not state its value; the authors' code uses 10 (default 10). 0
	// drops the term: it is neither trained nor computed, and the reported
	// autoencoder losses are 0.
	AEWeight float64 `json:"ae_weight"`
	// NoiseSigma is σ_x, the standard deviation of the Gaussian noise on the
	// autoencoder inputs, in state units. Paper loss section and code:
	// 6e-2 (default); the paper's hyperparameter paragraph says 1e-2.
	NoiseSigma float64 `json:"noise_sigma"`
	// HuberDelta is the Huber threshold (code: smooth_l1_loss, β = 1).
	HuberDelta float64 `json:"huber_delta"`
	// ValFraction is the held-out share of transitions (paper and code: 30 %),
	// drawn by a seeded random permutation.
	ValFraction float64 `json:"val_fraction"`
	// Patience is the early-stopping rule: training stops once the
	// validation loss (forward + γ_ae·reconstruction, both on the
	// validation split, no input noise) has not improved on its best value
	// by more than a relative MinDelta for Patience consecutive epochs, and
	// the best epoch's weights are restored. 0 disables early stopping (the
	// final weights are still the best-validation ones). Default 10. The
	// authors stop on a ratio of the train total to the validation forward
	// loss only, which is biased by the 10× AE term; we compare like with like.
	Patience int `json:"patience"`
	// MinDelta is the relative improvement that resets the patience counter
	// (default 1e-3).
	MinDelta float64 `json:"min_delta"`
	// Seed drives the split, shuffling and noise.
	Seed uint64 `json:"seed"`
}

// DefaultTrainConfig returns the defaults documented on TrainConfig.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{MaxEpochs: 75, Batch: 256, LR: 3e-4, LRPatience: 5, LRFactor: 0.5, MinLR: 1e-5,
		AEWeight: 10, NoiseSigma: 6e-2, HuberDelta: 1, ValFraction: 0.3, Patience: 10, MinDelta: 1e-3}
}

// Validate rejects configurations that cannot run. Its error is a
// *SettingError naming the setting at fault (and those it is checked
// against) by JSON key, e.g. "koopman train: min_lr 0.1: must be in [0, lr
// 0.0003] when lr_patience is set".
func (c TrainConfig) Validate() error {
	bad := func(key string, v any, must string) error {
		return &SettingError{Scope: "koopman train", Key: key, Value: v, Must: must}
	}
	switch {
	case c.MaxEpochs <= 0:
		return bad("max_epochs", c.MaxEpochs, "positive")
	case c.Batch <= 0:
		return bad("batch", c.Batch, "positive")
	case !(c.LR > 0):
		return bad("lr", c.LR, "positive")
	case !(c.AEWeight >= 0):
		return bad("ae_weight", c.AEWeight, ">= 0")
	case !(c.NoiseSigma >= 0):
		return bad("noise_sigma", c.NoiseSigma, ">= 0")
	case !(c.HuberDelta > 0):
		return bad("huber_delta", c.HuberDelta, "positive")
	case !(c.ValFraction > 0 && c.ValFraction < 1):
		return bad("val_fraction", c.ValFraction, "in (0, 1)")
	case c.Patience < 0:
		return bad("patience", c.Patience, ">= 0")
	case !(c.MinDelta >= 0):
		return bad("min_delta", c.MinDelta, ">= 0")
	case c.LRPatience < 0:
		return bad("lr_patience", c.LRPatience, ">= 0 (0: constant learning rate)")
	case c.LRPatience > 0 && !(c.LRFactor > 0 && c.LRFactor < 1):
		return bad("lr_factor", c.LRFactor, "in (0, 1) when {lr_patience} is set")
	case c.LRPatience > 0 && !(c.MinLR >= 0 && c.MinLR <= c.LR):
		return bad("min_lr", c.MinLR, fmt.Sprintf("in [0, {lr} %v] when {lr_patience} is set", c.LR))
	}
	return nil
}

// EpochStats are the losses of one epoch: Train* are means over the
// epoch's minibatches (with input noise on the AE term), Val* are over the
// validation split without noise. Total = Fwd + γ_ae·AE.
type EpochStats struct {
	Epoch         int     `json:"epoch"` // 1-based
	TrainTotal    float64 `json:"train_total"`
	TrainFwd      float64 `json:"train_fwd"`
	TrainAE       float64 `json:"train_ae"`
	ValTotal      float64 `json:"val_total"`
	ValFwd        float64 `json:"val_fwd"`
	ValAE         float64 `json:"val_ae"`
	LR            float64 `json:"lr"`             // Adam's learning rate during the epoch
	Seconds       float64 `json:"seconds"`        // wall time of the epoch's training pass
	SamplesPerSec float64 `json:"samples_per_s"`  // training transitions per second
	Best          bool    `json:"best,omitempty"` // the validation total improved
}

// Why a training ended (TrainResult.Stopped).
const (
	StopMaxEpochs = "max_epochs"     // MaxEpochs reached
	StopEarly     = "early_stopping" // Patience epochs without improvement
	StopMinLR     = "min_lr"         // a plateau at MinLR (LRPatience)
)

// UndertrainedWindow is the number of final epochs in which a MinDelta
// improvement of the validation loss marks a training that reached
// MaxEpochs as Undertrained (the loss was still going down).
const UndertrainedWindow = 5

// TrainResult summarizes a training run.
type TrainResult struct {
	Config    TrainConfig  `json:"config"`
	Epochs    []EpochStats `json:"epochs"`
	BestEpoch int          `json:"best_epoch"`
	// Stopped is why training ended: StopMaxEpochs, StopEarly or
	// StopMinLR; StopDetail says it in words.
	Stopped    string `json:"stopped"`
	StopDetail string `json:"stop_detail"`
	// FinalLR is the learning rate of the last epoch trained.
	FinalLR float64 `json:"final_lr"`
	// Undertrained is set when training reached MaxEpochs while the
	// validation loss still improved by MinDelta within the last
	// UndertrainedWindow epochs: more epochs would likely help. Warning
	// then says so in words.
	Undertrained bool   `json:"undertrained"`
	Warning      string `json:"warning,omitempty"`
	NTrain       int    `json:"n_train"`
	NVal         int    `json:"n_val"`
	// TrainIdx and ValIdx are the dataset rows of the two splits.
	TrainIdx []int `json:"-"`
	ValIdx   []int `json:"-"`
}

// trainer holds one training run's workspaces.
//
// One loss evaluation runs on two goroutines (one core each, single-threaded
// BLAS): goroutine 0 takes the forward path D(K(a)E(s)) on all rows plus the
// autoencoder on the first quarter of x = [s̃; s̃'], goroutine 1 the
// autoencoder on the other three quarters, through twin networks that share
// the weights but accumulate their own gradients (added in afterwards, in a
// fixed order, so results do not depend on scheduling). The two halves cost
// about the same: 1 + ½ versus 1½ batch-sized passes through E and D.
type trainer struct {
	m          *Model
	cfg        TrainConfig
	ws         [2]Workspace // 0: forward path, 1: autoencoder rows of goroutine 0
	ws2        nn.Cache     // autoencoder rows of goroutine 1 (encoder)
	ws2d       nn.Cache     // (decoder)
	enc2, dec2 *nn.MLP      // weight-sharing twins of m.Enc, m.Dec for goroutine 1
	s, a, s2,
	x, gp, dPred, dRec,
	dGp, dG []float32
	// dG2 are the two autoencoder parts' own latent-gradient scratch
	// buffers: separate, so the goroutines cannot overlap in them.
	dG2 [2][]float32
}

func (t *trainer) prepare(rows int) {
	S, M, N := t.m.S(), t.m.M(), t.m.N()
	t.s, t.a, t.s2 = growF(t.s, rows*S), growF(t.a, rows*M), growF(t.s2, rows*S)
	t.x, t.dRec = growF(t.x, 2*rows*S), growF(t.dRec, 2*rows*S)
	t.gp, t.dGp, t.dG = growF(t.gp, rows*N), growF(t.dGp, rows*N), growF(t.dG, rows*N)
	t.dPred = growF(t.dPred, rows*S)
	t.dG2[0], t.dG2[1] = growF(t.dG2[0], 2*rows*N), growF(t.dG2[1], 2*rows*N)
}

// lossGrad computes the loss for s, a, s2 [rows, ·] with the autoencoder
// input x = [s; s'] + noise already in t.x ([2·rows, S]) and returns the
// forward and the unweighted autoencoder Huber losses. With grads it
// accumulates the gradients of fwd + γ_ae·ae (callers zero them).
func (t *trainer) lossGrad(rows int, grads bool) (fwd, ae float64) {
	m := t.m
	S, N := m.S(), m.N()
	delta := float32(t.cfg.HuberDelta)
	if t.enc2 == nil {
		t.enc2, t.dec2 = m.Enc.ShareData(), m.Dec.ShareData()
	}
	var dp, dr []float32
	if grads {
		dp, dr = t.dPred, t.dRec
	}
	// Autoencoder rows [0, k) go with the forward path, [k, 2·rows) to the
	// other goroutine. Each part's Huber mean is rescaled by its share of
	// the 2·rows·S elements so that the sum is the full mean.
	k := rows / 2
	total := float64(2 * rows * S)
	var aeParts [2]float64
	aePart := func(i int, enc, dec *nn.MLP, ec, dc *nn.Cache, lo, hi int) {
		if hi <= lo || t.cfg.AEWeight <= 0 {
			return
		}
		x := t.x[lo*S : hi*S]
		share := float64((hi-lo)*S) / total
		gx := enc.Forward(ec, x, hi-lo)
		rec := dec.Forward(dc, gx, hi-lo)
		var g []float32
		if grads {
			g = dr[lo*S : hi*S]
		}
		aeParts[i] = float64(nn.Huber(rec, x, delta, g, float32(t.cfg.AEWeight*share))) * share
		if grads {
			dg := t.dG2[i][:(hi-lo)*N]
			dec.Backward(dc, g, dg, true)
			enc.Backward(ec, dg, nil, true)
		}
	}
	nn.Both(func(i int) {
		if i == 1 {
			aePart(1, t.enc2, t.dec2, &t.ws2, &t.ws2d, k, 2*rows)
			return
		}
		// Forward path: D(K(a) E(s)) vs s'.
		g := m.Encode(&t.ws[0].Enc, t.s, rows)
		m.Advance(&t.ws[0], g, t.a, rows, t.gp)
		pred := m.Decode(&t.ws[0].Dec, t.gp, rows)
		fwd = float64(nn.Huber(pred, t.s2, delta, dp, 1))
		if grads {
			m.Dec.Backward(&t.ws[0].Dec, t.dPred, t.dGp, true)
			m.AdvanceBackward(&t.ws[0], t.dGp, t.dG, true)
			m.Enc.Backward(&t.ws[0].Enc, t.dG, nil, true)
		}
		aePart(0, m.Enc, m.Dec, &t.ws[1].Enc, &t.ws[1].Dec, 0, k)
	})
	if grads {
		nn.AddGrads(m.Enc.Params(), t.enc2.Params())
		nn.AddGrads(m.Dec.Params(), t.dec2.Params())
	}
	return fwd, aeParts[0] + aeParts[1]
}

// gather copies rows idx of the transition arrays into the workspace and
// fills x = [s; s'] + N(0, sigma²) (sigma = 0: no noise, rng unused).
func (t *trainer) gather(obs, act, next []float32, idx []int, sigma float64, rng *rand.Rand) {
	S, M := t.m.S(), t.m.M()
	rows := len(idx)
	t.prepare(rows)
	for r, i := range idx {
		copy(t.s[r*S:(r+1)*S], obs[i*S:(i+1)*S])
		copy(t.s2[r*S:(r+1)*S], next[i*S:(i+1)*S])
		copy(t.a[r*M:(r+1)*M], act[i*M:(i+1)*M])
	}
	copy(t.x[:rows*S], t.s[:rows*S])
	copy(t.x[rows*S:], t.s2[:rows*S])
	if sigma > 0 {
		for i := range t.x {
			t.x[i] += float32(sigma * rng.NormFloat64())
		}
	}
}

// evaluate returns the noise-free mean losses over rows idx.
func (t *trainer) evaluate(obs, act, next []float32, idx []int) (fwd, ae float64) {
	var n float64
	for lo := 0; lo < len(idx); lo += t.cfg.Batch {
		hi := min(lo+t.cfg.Batch, len(idx))
		t.gather(obs, act, next, idx[lo:hi], 0, nil)
		f, a := t.lossGrad(hi-lo, false)
		w := float64(hi - lo)
		fwd += f * w
		ae += a * w
		n += w
	}
	return fwd / n, ae / n
}

// TrainOptions are Train's optional hooks.
type TrainOptions struct {
	// OnEpoch, if non-nil, is called after every epoch (after the epoch's
	// checkpoint is written).
	OnEpoch func(EpochStats)
	// Checkpoint, when non-empty, is a file that holds the complete
	// training state after every finished epoch (weights, Adam moments, the
	// best weights so far, early-stopping counters, the epoch history, the
	// RNG state and the shuffled order), written atomically. If the file
	// exists when Train starts, training continues from it and ends with
	// the same weights and history, bit for bit, as an uninterrupted run; a
	// checkpoint made with another config, model shape or data is refused.
	// Train leaves the file in place when it returns: the caller removes it
	// once the trained model is safely written.
	Checkpoint string
	// Backend, when non-empty, names the numeric path of this process (the
	// GEMM backend, precision and kernel). It is stored in the checkpoint,
	// and a checkpoint written under another Backend is refused unless
	// AllowBackendChange is set: the continuation would not reproduce an
	// uninterrupted training. Checkpoints without one (older koopq) pass.
	Backend            string
	AllowBackendChange bool
}

// ValidationSize is the number of the n transitions that Koopman training
// holds out for validation at fraction valFraction (rounded), or an error
// when that leaves no transition for validation or none for training, so
// that callers can refuse the split before they write anything.
func ValidationSize(valFraction float64, n int) (int, error) {
	nVal := int(math.Round(valFraction * float64(n)))
	if nVal < 1 || n-nVal < 1 {
		return 0, fmt.Errorf("a validation fraction of %g leaves %d of %d transitions for validation and %d for training; "+
			"each needs at least 1 (raise or lower the validation fraction, or give more data)", valFraction, nVal, n, n-nVal)
	}
	return nVal, nil
}

// Train fits m on transitions obs [n, S], raw actions act [n, m], next
// [n, S] (n = len(obs)/S) with cfg, calling onEpoch (if non-nil) after every
// epoch. It is TrainWith without a checkpoint.
func Train(ctx context.Context, m *Model, obs, act, next []float32, cfg TrainConfig, onEpoch func(EpochStats)) (*TrainResult, error) {
	return TrainWith(ctx, m, obs, act, next, cfg, TrainOptions{OnEpoch: onEpoch})
}

// TrainWith fits m on transitions obs [n, S], raw actions act [n, m], next
// [n, S] (n = len(obs)/S) with cfg and returns the per-epoch losses; m ends
// with the weights of the epoch with the best validation loss. Data
// dimensions that disagree with the model and non-finite values are
// errors, as is a diverged loss. A cancelled ctx stops training within one
// minibatch and returns an error wrapping ctx.Err() (never a half-trained
// model as if it were finished); with opts.Checkpoint the epochs completed
// so far are kept there and a later call continues from them.
func TrainWith(ctx context.Context, m *Model, obs, act, next []float32, cfg TrainConfig, opts TrainOptions) (*TrainResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	S := m.S()
	if S == 0 || len(obs)%S != 0 {
		return nil, fmt.Errorf("koopman train: %d state values are not a multiple of the model's state dimension %d", len(obs), S)
	}
	n := len(obs) / S
	if err := m.CheckData(obs, act, next, n); err != nil {
		return nil, fmt.Errorf("koopman train: %w", err)
	}
	nVal, err := ValidationSize(cfg.ValFraction, n)
	if err != nil {
		return nil, fmt.Errorf("koopman train: %w", err)
	}
	pcg := rand.NewPCG(cfg.Seed, 0x7ea1)
	rng := rand.New(pcg)
	perm := rng.Perm(n)
	res := &TrainResult{Config: cfg, NTrain: n - nVal, NVal: nVal, TrainIdx: perm[nVal:], ValIdx: perm[:nVal]}
	t := &trainer{m: m, cfg: cfg}
	ps := m.Params()
	opt := nn.NewAdam(ps, cfg.LR)
	st := &trainState{best: math.Inf(1), bestParams: make([][]float32, len(ps)),
		train: append([]int(nil), res.TrainIdx...), lr: cfg.LR}
	for i, p := range ps {
		st.bestParams[i] = append([]float32(nil), p.Data...)
	}
	var ck *checkpointer
	if opts.Checkpoint != "" {
		ck = &checkpointer{path: opts.Checkpoint, m: m, cfg: cfg, opt: opt, pcg: pcg,
			data: fingerprint(obs, act, next, n), backend: opts.Backend, allowBackend: opts.AllowBackendChange}
		if err := ck.load(st, res); err != nil {
			return nil, err
		}
	}
	opt.LR = st.lr
	train := st.train
	for ep := len(res.Epochs) + 1; ep <= cfg.MaxEpochs && st.stopped == ""; ep++ {
		start := time.Now()
		rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
		es := EpochStats{Epoch: ep, LR: opt.LR}
		batches := 0
		for lo := 0; lo < len(train); lo += cfg.Batch {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("koopman train: stopped in epoch %d (%d epochs complete): %w", ep, ep-1, err)
			}
			hi := min(lo+cfg.Batch, len(train))
			t.gather(obs, act, next, train[lo:hi], cfg.NoiseSigma, rng)
			nn.ZeroGrad(ps)
			f, a := t.lossGrad(hi-lo, true)
			if !finite(f) || !finite(a) {
				return res, fmt.Errorf("koopman train: loss diverged at epoch %d (forward %v, autoencoder %v)", ep, f, a)
			}
			opt.Step()
			es.TrainFwd += f
			es.TrainAE += a
			batches++
		}
		es.Seconds = time.Since(start).Seconds()
		es.SamplesPerSec = float64(len(train)) / es.Seconds
		es.TrainFwd /= float64(batches)
		es.TrainAE /= float64(batches)
		es.TrainTotal = es.TrainFwd + cfg.AEWeight*es.TrainAE
		es.ValFwd, es.ValAE = t.evaluate(obs, act, next, res.ValIdx)
		es.ValTotal = es.ValFwd + cfg.AEWeight*es.ValAE
		if math.IsNaN(es.ValTotal) {
			return res, fmt.Errorf("koopman train: validation loss is NaN at epoch %d", ep)
		}
		if es.ValTotal < st.best*(1-cfg.MinDelta) || math.IsInf(st.best, 1) {
			st.sinceBest, st.sinceLR = 0, 0
		} else {
			st.sinceBest++
			st.sinceLR++
		}
		if es.ValTotal < st.best {
			st.best = es.ValTotal
			es.Best = true
			res.BestEpoch = ep
			for i, p := range ps {
				copy(st.bestParams[i], p.Data)
			}
		}
		res.Epochs = append(res.Epochs, es)
		switch {
		case cfg.Patience > 0 && st.sinceBest >= cfg.Patience:
			st.stopped = StopEarly
		case cfg.LRPatience > 0 && st.sinceLR >= cfg.LRPatience:
			if opt.LR <= cfg.MinLR {
				st.stopped = StopMinLR
				break
			}
			opt.LR = max(opt.LR*cfg.LRFactor, cfg.MinLR) // from the next epoch on
			st.sinceLR = 0
		}
		st.lr = opt.LR
		if ck != nil {
			if err := ck.save(st, res); err != nil {
				return res, err
			}
		}
		if opts.OnEpoch != nil {
			opts.OnEpoch(es)
		}
	}
	for i, p := range ps {
		copy(p.Data, st.bestParams[i])
	}
	res.finish(st)
	return res, nil
}

// Metadata is the training's outcome as model-file metadata (string
// values): best_epoch, epochs, stopped, final_lr, undertrained, and
// train_config (JSON).
func (res *TrainResult) Metadata() map[string]string {
	cfg, _ := json.Marshal(res.Config)
	return map[string]string{"best_epoch": fmt.Sprint(res.BestEpoch), "epochs": fmt.Sprint(len(res.Epochs)),
		"stopped": res.Stopped, "final_lr": fmt.Sprint(res.FinalLR), "undertrained": fmt.Sprint(res.Undertrained),
		"train_config": string(cfg)}
}

// finish fills the stop reason, final learning rate and undertraining
// flag from the state after the last epoch.
func (res *TrainResult) finish(st *trainState) {
	cfg := res.Config
	res.Stopped = st.stopped
	if res.Stopped == "" {
		res.Stopped = StopMaxEpochs
	}
	if n := len(res.Epochs); n > 0 {
		res.FinalLR = res.Epochs[n-1].LR
	}
	switch res.Stopped {
	case StopEarly:
		res.StopDetail = fmt.Sprintf("early stopping: no %.2g relative improvement of the validation loss in %d epochs",
			cfg.MinDelta, cfg.Patience)
	case StopMinLR:
		res.StopDetail = fmt.Sprintf("learning rate at min_lr %.3g and no %.2g relative improvement in %d more epochs",
			cfg.MinLR, cfg.MinDelta, cfg.LRPatience)
	default:
		res.StopDetail = fmt.Sprintf("reached max_epochs %d", cfg.MaxEpochs)
		if st.sinceBest < UndertrainedWindow {
			res.Undertrained = true
			res.Warning = fmt.Sprintf("the model may be undertrained: the validation loss improved by more than %.2g (relative) "+
				"%d epoch(s) before the max_epochs %d cap (best epoch %d); raise max_epochs (the authors allow 400)",
				cfg.MinDelta, st.sinceBest, cfg.MaxEpochs, res.BestEpoch)
		}
	}
}

// finite reports whether x is neither NaN nor ±Inf.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
