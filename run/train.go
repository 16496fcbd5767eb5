package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/koopq/koopq/cql"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/sac"
)

// TrainConfig describes one offline CQL run. It is written to config.json.
type TrainConfig struct {
	Env             string              `json:"env"`  // simulator for evaluation and action bounds
	Data            string              `json:"data"` // dataset file (D4RL-layout HDF5)
	ReadOptions     dataset.ReadOptions `json:"read_options"`
	Augment         string              `json:"augment"` // none, gaussian, kfc, kfc++, s4rl-adv, ablations
	GaussianSigma   float64             `json:"gaussian_sigma"`
	KoopmanModel    string              `json:"koopman_model,omitempty"`  // model file; empty: train one when needed
	KoopmanTrain    koopman.TrainConfig `json:"koopman_train"`            // used when a model is trained for the run
	KoopmanHidden   []int               `json:"koopman_hidden,omitempty"` // override E/D widths (paper 512,512)
	KoopmanLatent   int                 `json:"koopman_latent,omitempty"` // override N (paper 32)
	AugmentParams   AugmentParams       `json:"augment_params"`
	CQL             cql.Config          `json:"cql"`
	EvalEvery       int                 `json:"eval_every"`       // gradient steps between evaluations (0: only at the end)
	EvalEpisodes    int                 `json:"eval_episodes"`    // episodes per evaluation
	LogEvery        int                 `json:"log_every"`        // steps between metric rows
	CheckpointEvery int                 `json:"checkpoint_every"` // steps between checkpoints
}

// DefaultTrainConfig returns the paper's CQL settings with evaluation every
// 5000 steps over 10 episodes (the authors' protocol).
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Augment: "none", GaussianSigma: 3e-3, CQL: cql.DefaultConfig(), EvalEvery: 5000, EvalEpisodes: 10,
		LogEvery: 1000, CheckpointEvery: 5000, KoopmanTrain: koopman.DefaultTrainConfig(), AugmentParams: DefaultAugmentParams()}
}

// EvalPoint is one evaluation during training.
type EvalPoint struct {
	Step       int        `json:"step"`
	Mean       float64    `json:"mean_return"`
	Std        float64    `json:"std_return"`
	Normalized eval.Score `json:"normalized_score"`
}

// TrainResult is results.json of a training run.
type TrainResult struct {
	Config      TrainConfig `json:"config"`
	Seed        uint64      `json:"seed"`
	Provenance  Provenance  `json:"provenance"`
	Dataset     string      `json:"dataset"`
	Transitions int         `json:"transitions"`
	Final       eval.Result `json:"final_eval"`
	History     []EvalPoint `json:"history"`
	Steps       int         `json:"steps"`
	WallSeconds float64     `json:"wall_seconds"`
	StepsPerSec float64     `json:"steps_per_second"`
	LastStats   cql.Stats   `json:"last_stats"`
}

// ProgressFunc reports progress of long work: done of total units, with a
// short status message.
type ProgressFunc func(done, total int, msg string)

// Train runs (or, with resume, continues) an offline CQL experiment in dir.
// data may be nil, in which case cfg.Data is read. The run directory gets
// config.json, metrics, checkpoints/latest.safetensors (every
// CheckpointEvery steps, atomic), policy.safetensors and results.json.
func Train(ctx context.Context, cfg TrainConfig, dir *Dir, data *dataset.Dataset, resume bool, progress ProgressFunc) (*TrainResult, error) {
	start := time.Now()
	if data == nil {
		var err error
		if data, err = dataset.ReadD4RL(cfg.Data, cfg.ReadOptions); err != nil {
			return nil, err
		}
	}
	e, err := env.Make(cfg.Env)
	if err != nil {
		return nil, err
	}
	if got, want := e.ObservationSpace().Dim(), data.ObsDim; got != want {
		return nil, fmt.Errorf("env %s has %d-dimensional observations, dataset %s has %d", cfg.Env, got, cfg.Data, want)
	}
	if got, want := e.ActionSpace().Dim(), data.ActDim; got != want {
		return nil, fmt.Errorf("env %s has %d-dimensional actions, dataset %s has %d", cfg.Env, got, cfg.Data, want)
	}
	scale, err := sac.Scale(e)
	if err != nil {
		return nil, err
	}
	if cfg.EvalEpisodes <= 0 {
		return nil, fmt.Errorf("eval_episodes must be positive")
	}
	if !resume {
		if err := dir.WriteJSON("config.json", cfg); err != nil {
			return nil, err
		}
	}
	aug, err := BuildAugmenter(ctx, cfg, data, dir, progress)
	if err != nil {
		return nil, err
	}
	tr, err := cql.NewTrainer(cfg.CQL, data, aug, scale)
	if err != nil {
		return nil, err
	}
	res := &TrainResult{Config: cfg, Seed: cfg.CQL.Seed, Provenance: CurrentProvenance(), Dataset: cfg.Data, Transitions: data.Len()}
	ckpt := dir.File("checkpoints/latest.safetensors")
	keep := -1
	if resume {
		if _, err := os.Stat(ckpt); err == nil {
			if _, err := tr.Resume(ckpt); err != nil {
				return nil, err
			}
			keep = tr.Learner.Steps
			var prev TrainResult
			if err := dir.ReadJSON("history.json", &prev.History); err == nil {
				for _, h := range prev.History {
					if h.Step <= keep {
						res.History = append(res.History, h)
					}
				}
			}
		} else {
			keep = 0
		}
	}
	metrics, err := dir.OpenMetrics(keep)
	if err != nil {
		return nil, err
	}
	defer metrics.Close()

	newPolicy := func() eval.Policy { return tr.Policy() }
	evaluate := func(step int) (eval.Result, error) {
		r, err := eval.Evaluate(cfg.Env, newPolicy, cfg.EvalEpisodes, cfg.CQL.Seed+uint64(step), 2)
		if err != nil {
			return r, err
		}
		res.History = append(res.History, EvalPoint{Step: step, Mean: r.Mean, Std: r.Std, Normalized: r.Normalized})
		return r, dir.WriteJSON("history.json", res.History)
	}
	firstStep := tr.Learner.Steps
	var last cql.Stats
	lastEval := math.NaN()
	err = tr.Run(ctx, func(step int, st cql.Stats) error {
		last = st
		if cfg.LogEvery > 0 && step%cfg.LogEvery == 0 {
			row := map[string]float64{"step": float64(step), "q_loss": st.QLoss, "cql_gap": st.CQLGap, "alpha_prime": st.AlphaPrime,
				"alpha": st.Alpha, "actor_loss": st.ActorLoss, "q_data": st.QData, "q_random": st.QRandom, "q_policy": st.QPolicy,
				"log_pi": st.LogPi, "wall_seconds": time.Since(start).Seconds()}
			if err := metrics.Log(row); err != nil {
				return err
			}
		}
		if cfg.EvalEvery > 0 && step%cfg.EvalEvery == 0 && step < cfg.CQL.Steps {
			r, err := evaluate(step)
			if err != nil {
				return err
			}
			lastEval = r.Mean
		}
		if cfg.CheckpointEvery > 0 && step%cfg.CheckpointEvery == 0 {
			if err := tr.Save(ckpt, map[string]string{"seed": strconv.FormatUint(cfg.CQL.Seed, 10)}); err != nil {
				return err
			}
		}
		if progress != nil {
			msg := fmt.Sprintf("q %.3g gap %.3g", st.QData, st.CQLGap)
			if !math.IsNaN(lastEval) {
				msg += fmt.Sprintf(" return %.1f", lastEval)
			}
			progress(step, cfg.CQL.Steps, msg)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			_ = tr.Save(ckpt, nil)
		}
		return nil, err
	}
	if err := tr.Save(ckpt, map[string]string{"seed": strconv.FormatUint(cfg.CQL.Seed, 10)}); err != nil {
		return nil, err
	}
	final, err := evaluate(tr.Learner.Steps)
	if err != nil {
		return nil, err
	}
	if err := SavePolicy(dir.File("policy.safetensors"), tr.Policy(), cfg.CQL.Net, cfg.Env, map[string]string{"augment": cfg.Augment}); err != nil {
		return nil, err
	}
	res.Final, res.Steps, res.LastStats = final, tr.Learner.Steps, last
	res.WallSeconds = time.Since(start).Seconds()
	if n := tr.Learner.Steps - firstStep; n > 0 {
		res.StepsPerSec = float64(n) / res.WallSeconds
	}
	return res, dir.WriteJSON("results.json", res)
}
