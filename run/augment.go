package run

import (
	"context"
	"fmt"
	"os"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/rundir"
)

// AugmentParams are the augmenters' serializable settings, recorded in
// config.json under "augment_params": augment.Params itself (its doc has
// each key's meaning and default), named here for TrainConfig.
type AugmentParams = augment.Params

// DefaultAugmentParams is augment.DefaultParams.
func DefaultAugmentParams() AugmentParams { return augment.DefaultParams() }

// KoopmanFile is where a run keeps the Koopman model it trained itself.
const KoopmanFile = rundir.KoopmanFile

// KoopmanCheckpointFile holds the state of a run's Koopman training while it
// is under way (after every epoch), so that a run stopped during Step 1
// resumes it instead of starting over; it is removed once KoopmanFile is
// written.
const KoopmanCheckpointFile = "koopman.ckpt"

// BuildAugmenter is the AugmenterFactory used by the CLI and the demo. For
// augmenters that need a Koopman model (kfc, kfc++ and the model-based
// ablations) it loads cfg.KoopmanModel, or the model a previous attempt of
// this run saved, or trains one on data with cfg.KoopmanTrain and saves it
// in the run directory (so a resumed run reuses it); the training itself is
// checkpointed there epoch by epoch (KoopmanCheckpointFile). A cancelled ctx
// during that training is an error and leaves no model behind. cacheDir
// (may be empty) is augment.Options.CacheDir: where the precompute cache is
// kept between runs. progress, if non-nil, sees the Koopman training's
// epochs and the precompute (message "koopman precompute").
func BuildAugmenter(ctx context.Context, cfg TrainConfig, data *dataset.Dataset, dir *Dir, cacheDir string, progress meter.Progress) (augment.Augmenter, error) {
	var phased meter.Staged // the messages name the phase already
	if progress != nil {
		phased = func(_ string, done, total int, msg string) { progress(done, total, msg) }
	}
	return buildAugmenter(ctx, cfg, data, dir, cacheDir, phased)
}

// buildAugmenter is BuildAugmenter reporting the Koopman training as
// PhaseKoopman and the precompute as PhasePrecompute.
func buildAugmenter(ctx context.Context, cfg TrainConfig, data *dataset.Dataset, dir *Dir, cacheDir string, progress meter.Staged) (augment.Augmenter, error) {
	opts := augment.DefaultOptions()
	opts.Params, opts.GaussianSigma = cfg.AugmentParams, cfg.GaussianSigma
	opts.Dataset, opts.Env = data, cfg.Env
	opts.CacheDir = cacheDir
	if augment.NeedsKoopman(cfg.Augment) {
		path := cfg.KoopmanModel
		if path == "" && dir != nil {
			if _, err := os.Stat(dir.File(KoopmanFile)); err == nil {
				path = dir.File(KoopmanFile)
			}
		}
		if path != "" {
			m, _, err := koopman.LoadModel(path)
			if err != nil {
				return nil, err
			}
			opts.Model = m
		} else {
			ckpt := ""
			if dir != nil {
				ckpt = dir.File(KoopmanCheckpointFile)
			}
			m, res, err := trainKoopman(ctx, data, cfg.KoopmanTrain, cfg.KoopmanHidden, cfg.KoopmanLatent, ckpt, meter.Stage(progress, PhaseKoopman))
			if err != nil {
				return nil, err
			}
			if dir != nil {
				meta := res.Metadata() // why the training stopped, final learning rate, undertrained flag
				meta["dataset"], meta[koopman.MetaDataContent] = cfg.Data, data.ContentSHA256()
				if err := m.Save(dir.File(KoopmanFile), meta); err != nil {
					return nil, err
				}
				if err := os.Remove(ckpt); err != nil {
					return nil, fmt.Errorf("removing the finished Koopman training's checkpoint: %w", err)
				}
			}
			opts.Model = m
		}
		if progress != nil {
			opts.Progress = func(done, total int, _ string) { progress(PhasePrecompute, done, total, "koopman precompute") }
		}
	}
	return augment.New(cfg.Augment, opts)
}

// TrainKoopman fits the Koopman forward model (Step 1) on all transitions of
// data. hidden/latent override the paper's 512×512 / 32 when set.
// checkpoint, when not "", is koopman.TrainOptions.Checkpoint: the training
// continues from that file if it exists and keeps its state there after
// every epoch. A cancelled ctx is an error (no half-trained model).
func TrainKoopman(ctx context.Context, data *dataset.Dataset, tc koopman.TrainConfig, hidden []int, latent int, checkpoint string, progress meter.Progress) (*koopman.Model, error) {
	m, _, err := trainKoopman(ctx, data, tc, hidden, latent, checkpoint, progress)
	return m, err
}

// trainKoopman is TrainKoopman that also returns the training's result.
func trainKoopman(ctx context.Context, data *dataset.Dataset, tc koopman.TrainConfig, hidden []int, latent int, checkpoint string, progress meter.Progress) (*koopman.Model, *koopman.TrainResult, error) {
	mc := koopman.DefaultModelConfig(data.ObsDim, data.ActDim)
	if len(hidden) > 0 {
		mc.Hidden = hidden
	}
	if latent > 0 {
		mc.Latent = latent
	}
	m, err := koopman.NewModel(mc)
	if err != nil {
		return nil, nil, err
	}
	res, err := koopman.TrainWith(ctx, m, data.Observations, data.Actions, data.NextObservations, tc, koopman.TrainOptions{
		Checkpoint: checkpoint,
		OnEpoch: func(st koopman.EpochStats) {
			if progress != nil {
				progress(st.Epoch, tc.MaxEpochs, fmt.Sprintf("koopman epoch %d val fwd %.3g ae %.3g", st.Epoch, st.ValFwd, st.ValAE))
			}
		}})
	if err != nil {
		return nil, nil, fmt.Errorf("training the Koopman model: %w", err)
	}
	return m, res, nil
}
