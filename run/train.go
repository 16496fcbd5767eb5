package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/cql"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/sac"
)

// TrainConfig describes one offline CQL run. It is written to config.json,
// and config.json (or any YAML/JSON file with a subset of its keys) can be
// read back with LoadConfigFile.
type TrainConfig struct {
	Preset          string              `json:"preset,omitempty"` // preset the settings started from (informational)
	Env             string              `json:"env"`              // simulator for evaluation and action bounds
	Data            string              `json:"data"`             // dataset: D4RL-layout HDF5 file or Minari dataset
	ReadOptions     dataset.ReadOptions `json:"read_options"`
	Augment         string              `json:"augment"` // cql (alias none), gaussian, kfc, kfc++, s4rl-adv, ablations
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
	// HoldoutFraction is, with Env EnvNone, the share of episodes (at least
	// one) held out of training for the offline diagnostics; 0 means
	// DefaultHoldoutFraction. Unused with a simulator.
	HoldoutFraction float64 `json:"holdout_fraction,omitempty"`
	// ActionLow and ActionHigh are, with Env EnvNone, the action bounds
	// (one per action dimension); empty: the data's per-dimension min and max.
	ActionLow  []float64 `json:"action_low,omitempty"`
	ActionHigh []float64 `json:"action_high,omitempty"`
}

// EnvNone is the Env of a run without a simulator: no online evaluation;
// offline diagnostics on held-out episodes instead (see OfflineEval).
const EnvNone = "none"

// DefaultHoldoutFraction is the share of episodes an EnvNone run holds out.
const DefaultHoldoutFraction = 0.05

// DefaultTrainConfig returns the paper's CQL settings with evaluation every
// 5000 steps over 10 episodes (the authors' protocol). It is the "paper"
// preset.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Augment: augment.CQL, GaussianSigma: 3e-3, CQL: cql.DefaultConfig(), EvalEvery: 5000, EvalEpisodes: 10,
		LogEvery: 1000, CheckpointEvery: 5000, KoopmanTrain: koopman.DefaultTrainConfig(), AugmentParams: DefaultAugmentParams()}
}

// EvalPoint is one evaluation during training (history.json; see
// rundir.HistoryPoint), its Offline the cql.Diagnostics on held-out
// episodes of a run without a simulator.
type EvalPoint = rundir.HistoryPoint[cql.Diagnostics]

// Training phases, as reported to progress callbacks and in results.json.
const (
	PhaseKoopman    = "koopman"    // Step 1: fitting the Koopman model (epochs)
	PhasePrecompute = "precompute" // per-transition Koopman eigenbases (transitions)
	PhaseBC         = "bc"         // behaviour-cloning warm-up of the actor (steps)
	PhaseCQL        = "cql"        // CQL with the SAC actor update (steps)
)

// PhaseSteps counts the gradient steps a run spent in each actor phase.
type PhaseSteps = rundir.PhaseSteps

// TrainResult is results.json of a training run: rundir.Results with run's
// config, the learner's stats and the offline diagnostics, followed by the
// augmentation's size (Magnitude, whose keys are top-level:
// shift_l2_mean, shift_scale, model_error_l2_mean, ...).
type TrainResult struct {
	rundir.Results[TrainConfig, cql.Stats, cql.Diagnostics, OfflineResult]
	Magnitude

	// AlreadyFinished is set (not stored) when Train found the run
	// finished at the requested number of steps and did nothing.
	AlreadyFinished bool `json:"-"`
}

// Segment is one process's share of a training run and what it ran on
// (results.json's segments, and the checkpoint's; see rundir.Segment).
type Segment = rundir.Segment

// resumedSegments reads the segments recorded in a checkpoint's metadata
// (meta["segments"]) written at step. A checkpoint without them (written
// by an older koopq) stands for one segment 0..step of unknown provenance.
func resumedSegments(meta map[string]string, step int) ([]Segment, error) {
	s, ok := meta["segments"]
	if !ok {
		if step == 0 {
			return nil, nil
		}
		return []Segment{{FromStep: 0, ToStep: step}}, nil
	}
	var segs []Segment
	if err := json.Unmarshal([]byte(s), &segs); err != nil {
		return nil, fmt.Errorf("bad segments: %w", err)
	}
	at := 0
	for i, g := range segs {
		if g.FromStep != at || g.ToStep < g.FromStep {
			return nil, fmt.Errorf("bad segments: segment %d covers steps %d..%d after step %d", i, g.FromStep, g.ToStep, at)
		}
		at = g.ToStep
	}
	if at != step {
		return nil, fmt.Errorf("bad segments: they end at step %d, the checkpoint is at step %d", at, step)
	}
	return segs, nil
}

// TrainOptions are the knobs of TrainWith that are not part of the
// experiment's configuration.
type TrainOptions struct {
	// Resume continues the run in dir from its latest checkpoint (see
	// TrainWith for what may differ from the recorded config).
	Resume bool
	// Progress, if non-nil, receives progress within each phase, the phase
	// (PhaseKoopman, PhasePrecompute, PhaseBC, PhaseCQL) as its stage.
	Progress meter.Staged
	// AugmentCache, when not empty, is the directory where Koopman
	// augmenters keep their precompute cache between runs
	// (augment.Options.CacheDir): runs on the same model, dataset and
	// backend then load it instead of recomputing it, with the same numbers.
	AugmentCache string
	// Warn, if non-nil, receives warnings about the run's settings (e.g.
	// a Koopman shift made mostly of model error); nil prints them to
	// stderr. They are also kept in results.json (shift_warnings).
	Warn func(msg string)
	// Checked, if non-nil, is CheckTrain's result for the call's config and
	// dataset, so that TrainWith need not check them again; one for another
	// config or dataset (say, another seed's) is ignored and they are
	// checked anew.
	Checked *CheckedTrain
	// AllowBackendChange lets a resumed run continue under another GEMM
	// backend, precision, kernel or subnormal mode than the process before
	// it (CheckBackend); the segments record the mixture.
	AllowBackendChange bool
	// Recorded, if non-nil, is the resumed run's config.json as the
	// caller read it before the run directory was locked (koopq train
	// --resume reads it once to check its flags). TrainWith reads the file
	// again under the lock, the only read its decisions rest on, and
	// refuses to go on when it differs from Recorded: another process
	// changed the run (extended it, say) between the two reads. Ignored
	// unless Resume is set.
	Recorded *TrainConfig
}

// Interrupted is returned by Train when its context was cancelled (SIGINT
// or SIGTERM in the CLI): training stopped after a complete step and, when
// Saved, the state at Step is in the checkpoint, so the run can be resumed.
type Interrupted struct {
	Step  int  // steps done when training stopped
	Saved bool // a checkpoint at Step was written
	Err   error
}

func (e *Interrupted) Error() string {
	if e.Saved {
		return fmt.Sprintf("interrupted at step %d (checkpoint saved)", e.Step)
	}
	return fmt.Sprintf("interrupted before training (re)started (%v)", e.Err)
}

func (e *Interrupted) Unwrap() error { return e.Err }

// ReadDataset reads transitions from a D4RL-layout HDF5 file, a Minari
// HDF5 file or a Minari dataset directory (dataset.Read), with a hint on
// how to make the file when it does not exist.
func ReadDataset(path string, opts dataset.ReadOptions) (*dataset.Dataset, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--data %s: no such file; make one with 'koopq collect …' "+
			"(e.g. koopq collect hopper-medium-v2 --out data, or koopq collect --env pendulum --out data)", path)
	}
	return dataset.Read(path, opts)
}

// CheckedTrain is a training configuration that CheckTrain found valid,
// with what it read and worked out on the way: the dataset, its split
// and the action bounds the run trains with. TrainWith takes one in
// TrainOptions.Checked so as not to check (and read) everything again.
type CheckedTrain struct {
	cfg   TrainConfig
	full  *dataset.Dataset // the whole dataset (fingerprinted)
	train *dataset.Dataset // what the run trains on: full, or with Env EnvNone full less held
	held  *dataset.Dataset // Env EnvNone: the held-out episodes for the offline diagnostics
	scale sac.ActionScale  // ScaleFor
}

// Dataset returns the whole dataset that was checked (read from cfg.Data
// when CheckTrain was given none).
func (c *CheckedTrain) Dataset() *dataset.Dataset { return c.full }

// of tells whether c is the check of cfg on data (data nil: on whatever
// dataset it read).
func (c *CheckedTrain) of(cfg TrainConfig, data *dataset.Dataset) bool {
	return c != nil && (data == nil || data == c.full) && reflect.DeepEqual(c.cfg, cfg)
}

// CheckTrain validates cfg and its inputs without side effects: the
// settings (TrainConfig.Validate), the dataset (read from cfg.Data when data
// is nil), its dimensions against the environment's, the action bounds and
// a given Koopman model's dimensions. It returns what it checked, for
// TrainOptions.Checked.
func CheckTrain(cfg TrainConfig, data *dataset.Dataset) (*CheckedTrain, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if data == nil {
		var err error
		if data, err = ReadDataset(cfg.Data, cfg.ReadOptions); err != nil {
			return nil, err
		}
	}
	if err := data.Validate(); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", cfg.Data, err)
	}
	c := &CheckedTrain{cfg: cfg, full: data, train: data}
	var err error
	if c.scale, err = ScaleFor(cfg, data); err != nil {
		return nil, err
	}
	if cfg.Env == EnvNone {
		if c.train, c.held, err = SplitHoldout(data, cfg.HoldoutFraction, cfg.CQL.Seed); err != nil {
			return nil, fmt.Errorf("dataset %s: %w", cfg.Data, err)
		}
	} else if err := CheckDataEnv(data, cfg.Data, cfg.Env); err != nil {
		return nil, err
	}
	if err := cfg.checkSize(data.ObsDim, data.ActDim, data.Len()); err != nil {
		return nil, err
	}
	if cfg.KoopmanModel != "" && augment.NeedsKoopman(cfg.Augment) {
		if err := checkKoopmanModel(cfg, data); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// checkKoopmanModel checks the given Koopman model (cfg.KoopmanModel)
// against the run: its environment, its dimensions and the --shift-l2 floor.
func checkKoopmanModel(cfg TrainConfig, data *dataset.Dataset) error {
	m, meta, err := koopman.LoadModel(cfg.KoopmanModel)
	if err != nil {
		return fmt.Errorf("--koopman %s: %w", cfg.KoopmanModel, err)
	}
	if got := EnvOfLabel(meta["env"]); got != "" && got != cfg.Env && cfg.Env != EnvNone {
		return fmt.Errorf("--koopman %s: the model was trained for env %s (metadata env %q), not --env %s", cfg.KoopmanModel, got, meta["env"], cfg.Env)
	}
	if m.Cfg.ObsDim != data.ObsDim || m.Cfg.ActDim != data.ActDim {
		return fmt.Errorf("--koopman %s: model is for %d-dimensional states and %d-dimensional actions, dataset %s has %d and %d",
			cfg.KoopmanModel, m.Cfg.ObsDim, m.Cfg.ActDim, cfg.Data, data.ObsDim, data.ActDim)
	}
	return checkShiftFloor(cfg, data, m)
}

// Train runs (or, with resume, continues) an offline CQL experiment in dir;
// see TrainWith. progress, if non-nil, sees every phase's progress.
func Train(ctx context.Context, cfg TrainConfig, dir *Dir, data *dataset.Dataset, resume bool, progress meter.Progress) (*TrainResult, error) {
	return TrainWith(ctx, cfg, dir, data, TrainOptions{Resume: resume, Progress: meter.Flat(progress)})
}

// TrainWith runs (or, with opts.Resume, continues) an offline CQL experiment
// in dir. data may be nil, in which case cfg.Data is read.
//
// Everything is validated (CheckTrain, unless opts.Checked is its result
// for cfg and data) before the directory is touched. The
// directory is locked for the whole call (a second Train on it fails), and
// stale temporary files of a killed process are removed. The run directory
// gets config.json, metrics.jsonl/.csv, history.json,
// checkpoints/latest.safetensors (every CheckpointEvery steps, at the end and
// on cancellation; atomic, never with non-finite weights), the Koopman model
// when one was trained, policy.safetensors and results.json (written last).
//
// Resuming: cfg must equal the recorded config.json except for a larger
// cql.steps, which extends the run (CheckResume; config.json is updated
// and results.json removed until the new end is reached). A run already finished at
// cfg.CQL.Steps is left as it is and its results are returned with
// AlreadyFinished set. Otherwise training continues from the checkpoint, and
// the logs, history and results end exactly as those of an uninterrupted
// run (timing fields aside).
func TrainWith(ctx context.Context, cfg TrainConfig, dir *Dir, data *dataset.Dataset, opts TrainOptions) (*TrainResult, error) {
	start := time.Now()
	in := opts.Checked
	if !in.of(cfg, data) {
		var err error
		if in, err = CheckTrain(cfg, data); err != nil {
			return nil, err
		}
	}
	unlock, err := dir.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := dir.CleanTemp(); err != nil {
		return nil, err
	}
	inputs, err := currentInputs(cfg, in.full, dir)
	if err != nil {
		return nil, err
	}
	prov := CurrentProvenance()
	done, moved, err := openRun(cfg, dir, inputs, prov, opts)
	if done != nil || err != nil {
		return done, err
	}
	for _, m := range moved {
		warn(opts.Warn, m)
	}
	r, err := newTrainRun(ctx, in, dir, inputs, prov, opts, start)
	if err == nil {
		r.moved = moved
	}
	if err != nil {
		var intr *Interrupted
		if !opts.Resume && !errors.As(err, &intr) && !errors.Is(err, context.Canceled) && dir.removeUnstarted() {
			return nil, fmt.Errorf("%w (nothing had started: the new run directory was removed)", err)
		}
		return nil, err
	}
	keep := -1 // metric rows to keep: all of a new run's are new
	if opts.Resume {
		if keep, err = r.resume(opts.Warn); err != nil {
			return nil, err
		}
	}
	if r.metrics, err = dir.OpenMetrics(keep); err != nil {
		return nil, err
	}
	defer r.metrics.Close()
	r.firstStep = r.tr.Learner.Steps
	r.phase = phaseOf(r.last)
	if err := r.tr.Run(ctx, r.step); err != nil {
		return nil, r.stopped(err)
	}
	return r.finish()
}

// openRun readies dir for this process's training: for a new run it writes
// config.json; resuming, it checks that cfg, the inputs and the GEMM
// backend may continue the recorded run, and it returns the run's results
// (AlreadyFinished set) when it is finished at cfg.CQL.Steps (a finished
// run's config.json keeps its paths: it reads nothing); inputs moved to
// other paths are checked (Relocations) and returned as moved, for the
// first checkpoint to record (trainRun.followMoves). Either way it records
// the inputs (inputs.json).
func openRun(cfg TrainConfig, dir *Dir, inputs Inputs, prov Provenance, opts TrainOptions) (finished *TrainResult, moved []string, err error) {
	if opts.Resume {
		var recorded TrainConfig
		if err := dir.ReadJSON(rundir.ConfigFile, &recorded); err != nil {
			return nil, nil, err
		}
		if opts.Recorded != nil {
			diffs, err := DiffConfigs(*opts.Recorded, recorded)
			if err != nil {
				return nil, nil, err
			}
			if len(diffs) > 0 {
				return nil, nil, fmt.Errorf("run %s: %s changed while this command started (%s): another process resumed or extended the run; try again",
					dir.Path, rundir.ConfigFile, diffs[0])
			}
		}
		if err := CheckResume(recorded, cfg); err != nil {
			return nil, nil, err
		}
		var rec *Inputs
		if err := dir.ReadJSON(InputsFile, &rec); err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		} // none: a run started before koopq recorded inputs; they are recorded from now on
		if moved, err = Relocations(recorded, cfg, RecordedInputs(rec, dir.File(checkpointFile)), inputs); err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", dir.Path, err)
		}
		if rec != nil {
			if err := CheckInputs(*rec, inputs); err != nil {
				return nil, nil, fmt.Errorf("run %s: %w", dir.Path, err)
			}
		}
		if err := CheckBackend(dir.File(checkpointFile), prov, opts.AllowBackendChange); err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", dir.Path, err)
		}
		if err := CheckCheckpoint(dir.File(checkpointFile), recorded, inputs); err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", dir.Path, err)
		}
		var prev TrainResult
		if dir.ReadJSON(rundir.ResultsFile, &prev) == nil && prev.Steps == cfg.CQL.Steps {
			if _, err := os.Stat(dir.File(rundir.PolicyFile)); err == nil {
				prev.AlreadyFinished = true
				return &prev, nil, nil
			}
		}
		if prev.Steps > 0 && prev.Steps != cfg.CQL.Steps {
			if _, err := os.Stat(dir.File(checkpointFile)); errors.Is(err, fs.ErrNotExist) {
				return nil, nil, fmt.Errorf("run %s finished at step %d but has no checkpoint (%s; git and copies to other machines do not bring it): "+
					"it cannot be extended to %d steps without training it again from step 0 over its results; train a new run with --steps %d",
					dir.Path, prev.Steps, checkpointFile, cfg.CQL.Steps, cfg.CQL.Steps)
			}
		}
		if cfg.CQL.Steps != recorded.CQL.Steps {
			// Extending: the run is unfinished again until the new end.
			// Moved paths wait for the first checkpoint (followMoves).
			ext := cfg
			ext.Data, ext.KoopmanModel = recorded.Data, recorded.KoopmanModel
			if err := dir.WriteJSON(rundir.ConfigFile, ext); err != nil {
				return nil, nil, err
			}
			if err := os.Remove(dir.File(rundir.ResultsFile)); err != nil && !os.IsNotExist(err) {
				return nil, nil, err
			}
		}
	} else if err := writeConfig(dir, cfg); err != nil {
		// A new run directory without its config.json could be neither
		// resumed nor told apart from a run: remove it, all or nothing.
		if dir.removeSkeleton() {
			return nil, nil, fmt.Errorf("writing %s: %w (the new run directory was removed)", dir.File(rundir.ConfigFile), err)
		}
		return nil, nil, err
	}
	return nil, moved, dir.WriteJSON(InputsFile, inputs)
}

// checkpointFile is the run's checkpoint, relative to its directory.
const checkpointFile = rundir.CheckpointFile

// actorPhase is where a training run is: in the behaviour-cloning warm-up
// of the actor, in CQL with the SAC actor update, or done (the final
// checkpoint, evaluation and results).
type actorPhase int

const (
	phaseBC   actorPhase = iota // steps 1..cql.bc_steps
	phaseCQL                    // the steps after them
	phaseDone                   // after the last step
)

// phaseOf is the phase of the step that returned st.
func phaseOf(st cql.Stats) actorPhase {
	if st.BC {
		return phaseBC
	}
	return phaseCQL
}

// String is the phase's name in progress reports and results.json
// (PhaseBC, PhaseCQL), or "done".
func (p actorPhase) String() string {
	switch p {
	case phaseBC:
		return PhaseBC
	case phaseCQL:
		return PhaseCQL
	}
	return "done"
}

// trainRun is one process's share of a training run (TrainWith): the
// trainer with its inputs and outputs, and what the loop keeps track of.
type trainRun struct {
	ctx      context.Context
	cfg      TrainConfig
	dir      *Dir
	train    *dataset.Dataset // what the learner samples
	held     *dataset.Dataset // Env EnvNone: the held-out episodes; else nil
	progress meter.Staged
	start    time.Time // of the process (TrainWith's call)

	aug     augment.Augmenter
	meter   *augment.Meter // ‖s̃ − s‖ of every row, checkpointed (shift_meter)
	tr      *cql.Trainer
	metrics *Metrics
	res     *TrainResult // filled in as the run goes; written by finish
	ckpt    string       // the checkpoint's path

	phase         actorPhase
	last          cql.Stats       // of the last step (restored on resume)
	lastCkpt      int             // step of the last checkpoint on disk; -1: none
	firstStep     int             // step this process started at
	prior         []Segment       // segments of the processes before this one (resume)
	moved         []string        // inputs this process reads at new paths (Segment.Moved)
	restarted     string          // logs of an earlier process this one replaces (Segment.Restarted)
	movesFollowed bool            // config.json holds the moved paths (followMoves)
	lastEval      float64         // mean return of the last regular evaluation; NaN: none (or no simulator)
	lastSuccess   float64         // its success rate (fraction) in an env with a success test; NaN: none
	lastOffline   cql.Diagnostics // the last offline diagnostics (Env EnvNone)
}

// newTrainRun builds the augmenter (training the Koopman model when the
// run needs one and none is given, and recording it in inputs.json),
// calibrates it and makes the trainer. A cancellation while the Koopman
// model trains or its precompute runs is an *Interrupted with nothing saved.
func newTrainRun(ctx context.Context, in *CheckedTrain, dir *Dir, inputs Inputs, prov Provenance, opts TrainOptions, start time.Time) (*trainRun, error) {
	cfg := in.cfg
	r := &trainRun{ctx: ctx, cfg: cfg, dir: dir, train: in.train, held: in.held, progress: opts.Progress, start: start,
		ckpt: dir.File(checkpointFile), lastCkpt: -1, lastEval: math.NaN(), lastSuccess: math.NaN()}
	if r.progress == nil {
		r.progress = func(string, int, int, string) {}
	}
	aug, err := buildAugmenter(ctx, cfg, r.train, dir, opts.AugmentCache, r.progress)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &Interrupted{Err: ctx.Err()}
		}
		return nil, err
	}
	if inputs.KoopmanModel == nil { // the run's own model, trained just now
		if inputs.KoopmanModel, err = koopmanInput(cfg, dir); err != nil {
			return nil, err
		}
		if inputs.KoopmanModel != nil {
			if err := dir.WriteJSON(InputsFile, inputs); err != nil {
				return nil, err
			}
		}
	}
	aug, mag, err := prepareMagnitude(cfg, r.train, aug, opts.Warn)
	if err != nil {
		return nil, err
	}
	if w, err := modelDataWarning(cfg, inputs.Dataset); err != nil {
		return nil, err
	} else if w != "" {
		warn(opts.Warn, w)
		mag.ShiftWarnings = append([]string{w}, mag.ShiftWarnings...)
	}
	r.aug, r.meter = aug, augment.NewMeter(aug)
	if r.tr, err = cql.NewTrainer(cfg.CQL, r.train, r.meter, in.scale); err != nil {
		return nil, err
	}
	r.res = &TrainResult{Results: rundir.Results[TrainConfig, cql.Stats, cql.Diagnostics, OfflineResult]{Config: cfg, Seed: cfg.CQL.Seed,
		Provenance: prov, Inputs: inputs, Dataset: cfg.Data, Transitions: r.train.Len()}, Magnitude: mag}
	return r, nil
}

// resume restores the state of the run's checkpoint, if it has one (the
// learner, the last step's stats, the shift meter and the segments), and
// the evaluations up to it. It returns the step whose metric rows are kept
// (0 without a checkpoint). Without a checkpoint, logs of an earlier
// process are replaced by training from step 0: that goes to warnf and
// into this process's segment (Segment.Restarted).
func (r *trainRun) resume(warnf func(string)) (keep int, err error) {
	if _, err := os.Stat(r.ckpt); errors.Is(err, fs.ErrNotExist) {
		// A run directory from git or another machine has no checkpoints/:
		// the first checkpoint needs it.
		if err := os.MkdirAll(r.dir.File(rundir.CheckpointsDir), 0o755); err != nil {
			return 0, err
		}
		if r.restarted, err = r.dir.restartNotice(); err != nil {
			return 0, err
		}
		if r.restarted != "" {
			warn(warnf, r.restarted)
		}
	} else if err != nil {
		return 0, err
	} else {
		meta, err := r.tr.Resume(r.ckpt)
		if err != nil {
			return 0, err
		}
		if s := meta["last_stats"]; s != "" {
			if err := json.Unmarshal([]byte(s), &r.last); err != nil {
				return 0, fmt.Errorf("checkpoint %s: bad last_stats: %w", r.ckpt, err)
			}
		}
		if s := meta["shift_meter"]; s != "" {
			if err := r.meter.SetState(s); err != nil {
				return 0, fmt.Errorf("checkpoint %s: %w", r.ckpt, err)
			}
		}
		keep, r.lastCkpt = r.tr.Learner.Steps, r.tr.Learner.Steps
		if r.prior, err = resumedSegments(meta, keep); err != nil {
			return 0, fmt.Errorf("checkpoint %s: %w", r.ckpt, err)
		}
	}
	var hist []EvalPoint
	if err := r.dir.ReadJSON(rundir.HistoryFile, &hist); err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	r.res.History = resumedHistory(hist, keep, r.cfg)
	return keep, nil
}

// step is the loop's hook after each gradient step: it stops a diverged
// run, then logs, evaluates and checkpoints at their intervals and reports
// progress.
func (r *trainRun) step(step int, st cql.Stats) error {
	if r.phase == phaseDone {
		return fmt.Errorf("training step %d after the run finished", step)
	}
	crashPointStop(r.ctx, "step")
	if err := r.tr.Learner.CheckFinite(); err != nil {
		return divergedError(step, err, r.lastCkpt, r.ckpt)
	}
	r.last, r.phase = st, phaseOf(st)
	if every(step, r.cfg.LogEvery) {
		if err := r.log(step, st); err != nil {
			return err
		}
	}
	if every(step, r.cfg.EvalEvery) && step < r.cfg.CQL.Steps {
		res, err := r.evaluate(step)
		if err != nil {
			return err
		}
		r.lastEval, r.lastSuccess = res.Mean, math.NaN()
		if res.Successes != nil {
			r.lastSuccess = float64(res.SuccessRate)
		}
		if r.held != nil {
			r.lastEval = math.NaN()
		}
	}
	if every(step, r.cfg.CheckpointEvery) {
		if err := r.checkpoint(); err != nil {
			return err
		}
	}
	r.report(step, st)
	return nil
}

// every tells whether step is one of every n steps (never for n <= 0).
func every(step, n int) bool { return n > 0 && step%n == 0 }

// log writes the metric row of step.
func (r *trainRun) log(step int, st cql.Stats) error {
	row := st.Row()
	row[rundir.Step], row[rundir.WallSeconds] = float64(step), time.Since(r.start).Seconds()
	if br, ok := r.aug.(augment.Brancher); ok {
		row[rundir.ModelBatch] = 0
		if br.LastBatchModel() {
			row[rundir.ModelBatch] = 1
		}
	}
	return r.metrics.Log(row)
}

// evaluate evaluates the policy at step, in the simulator or, without one,
// with the offline diagnostics on the held-out episodes (whose result has
// NaN scores), and appends it to the history (history.json).
func (r *trainRun) evaluate(step int) (eval.Result, error) {
	if r.held != nil {
		dg, err := r.tr.Diagnose(r.held)
		if err != nil {
			return eval.Result{}, err
		}
		r.lastOffline = dg
		res := eval.Result{Env: EnvNone, Normalized: eval.Score(math.NaN()), NormalizedStd: eval.Score(math.NaN()), SuccessRate: eval.Score(math.NaN())}
		r.res.History = append(r.res.History, EvalPoint{Step: step, Normalized: res.Normalized, Offline: &dg})
		return res, r.dir.WriteJSON(rundir.HistoryFile, r.res.History)
	}
	res, err := eval.Evaluate(r.cfg.Env, func() eval.Policy { return r.tr.Policy() }, r.cfg.EvalEpisodes, r.cfg.CQL.Seed+uint64(step), 2)
	if err != nil {
		return res, err
	}
	crashPoint("eval")
	pt := EvalPoint{Step: step, Mean: res.Mean, Std: res.Std, Normalized: res.Normalized}
	if res.Successes != nil { // an env with a success test: manipulation
		sr := res.SuccessRate
		pt.SuccessRate = &sr
	}
	r.res.History = append(r.res.History, pt)
	return res, r.dir.WriteJSON(rundir.HistoryFile, r.res.History)
}

// report tells the progress callback about step, within its phase.
func (r *trainRun) report(step int, st cql.Stats) {
	msg := fmt.Sprintf("q %.3g gap %.3g", st.QData, st.CQLGap)
	if !math.IsNaN(r.lastEval) {
		msg += fmt.Sprintf(" return %.1f", r.lastEval)
		if !math.IsNaN(r.lastSuccess) {
			msg += fmt.Sprintf(" success %.0f%%", 100*r.lastSuccess)
		}
	} else if r.held != nil && r.lastOffline.Transitions > 0 {
		msg += fmt.Sprintf(" holdout td %.3g mse %.3g", r.lastOffline.TDError, r.lastOffline.ActionMSE)
	}
	bc, total := r.cfg.CQL.BCSteps, r.cfg.CQL.Steps
	if r.phase == phaseBC {
		r.progress(r.phase.String(), step, bc, msg)
	} else {
		r.progress(r.phase.String(), step-bc, total-bc, msg)
	}
}

// segments returns the run's segments: those before this process and,
// when it kept a step, its own up to now.
func (r *trainRun) segments() []Segment {
	if r.tr.Learner.Steps == r.firstStep && r.firstStep > 0 {
		return r.prior // this process kept no step
	}
	seg := Segment{FromStep: r.firstStep, ToStep: r.tr.Learner.Steps,
		WallSeconds: time.Since(r.start).Seconds(), Provenance: &r.res.Provenance, Moved: r.moved, Restarted: r.restarted}
	if rep, ok := r.aug.(augment.Reporter); ok {
		seg.Augment = rep.Report()
	}
	return append(slices.Clip(r.prior), seg)
}

// checkpoint writes the checkpoint of the current step, with the seed, the
// last stats, the segments and the shift meter in its metadata.
func (r *trainRun) checkpoint() error {
	if err := r.tr.Learner.CheckFiniteState(); err != nil {
		return divergedError(r.tr.Learner.Steps, err, r.lastCkpt, r.ckpt)
	}
	meta := map[string]string{"seed": strconv.FormatUint(r.cfg.CQL.Seed, 10)}
	sj, err := json.Marshal(r.last)
	if err != nil {
		return fmt.Errorf("checkpoint: last stats: %w", err)
	}
	meta["last_stats"] = string(sj)
	gj, err := json.Marshal(r.segments())
	if err != nil {
		return fmt.Errorf("checkpoint: segments: %w", err)
	}
	meta["segments"] = string(gj)
	// What the checkpoint was trained with, so that a resume can tell a
	// hand-edited config.json or a checkpoint of another run.
	cj, err := json.Marshal(r.cfg)
	if err != nil {
		return fmt.Errorf("checkpoint: config: %w", err)
	}
	meta[ckptRunConfig] = string(cj)
	ij, err := json.Marshal(r.res.Inputs)
	if err != nil {
		return fmt.Errorf("checkpoint: inputs: %w", err)
	}
	meta[ckptInputs] = string(ij)
	if meta["shift_meter"], err = r.meter.State(); err != nil {
		return fmt.Errorf("checkpoint: shift meter: %w", err)
	}
	crashPoint("checkpoint")
	if err := r.tr.Save(r.ckpt, meta); err != nil {
		return err
	}
	r.lastCkpt = r.tr.Learner.Steps
	return r.followMoves()
}

// followMoves writes the new paths of moved inputs into config.json once a
// checkpoint records this process's segment with the move (Segment.Moved):
// before that, a failed or stopped resume leaves config.json as it was, and
// the next resume is given the new paths again and records the move then.
func (r *trainRun) followMoves() error {
	if len(r.moved) == 0 || r.movesFollowed || r.tr.Learner.Steps == r.firstStep {
		return nil // no move, done, or this process's segment is not in the checkpoint yet
	}
	var c TrainConfig
	if err := r.dir.ReadJSON(rundir.ConfigFile, &c); err != nil {
		return err
	}
	c.Data = r.cfg.Data
	if augment.NeedsKoopman(r.cfg.Augment) {
		c.KoopmanModel = r.cfg.KoopmanModel
	}
	if err := r.dir.WriteJSON(rundir.ConfigFile, c); err != nil {
		return err
	}
	r.movesFollowed = true
	return nil
}

// stopped is TrainWith's error when the loop ended early with err: on
// cancellation an *Interrupted, with the state checkpointed when a step
// was made; otherwise err.
func (r *trainRun) stopped(err error) error {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	ie := &Interrupted{Step: r.tr.Learner.Steps, Err: err}
	if r.tr.Learner.Steps > 0 {
		if serr := r.checkpoint(); serr != nil {
			return fmt.Errorf("%w; saving the checkpoint failed: %v", ie, serr)
		}
		ie.Saved = true
	}
	return ie
}

// finish ends a run whose loop reached the last step: the final
// checkpoint (unless the last step's is on disk), the final evaluation,
// policy.safetensors and, last, results.json.
func (r *trainRun) finish() (*TrainResult, error) {
	finalPhase := r.phase
	r.phase = phaseDone
	steps := r.tr.Learner.Steps
	if err := r.tr.Learner.CheckFinite(); err != nil {
		return nil, divergedError(steps, err, r.lastCkpt, r.ckpt)
	}
	if r.lastCkpt != steps {
		if err := r.checkpoint(); err != nil {
			return nil, err
		}
	}
	crashPoint("final")
	final, err := r.evaluate(steps)
	if err != nil {
		return nil, err
	}
	cfg := r.cfg
	if err := sac.SavePolicy(r.dir.File(rundir.PolicyFile), r.tr.Policy(), cfg.CQL.Net, cfg.Env, map[string]string{"augment": cfg.Augment}); err != nil {
		return nil, err
	}
	crashPoint("policy")
	res := r.res
	pf, err := fingerprint.Of(r.dir.File(rundir.PolicyFile))
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	pf.Path = rundir.PolicyFile // relative to the run directory, which may move
	res.Policy = &pf
	res.Final, res.Steps, res.LastStats = final, steps, r.last
	if r.held != nil {
		res.Offline = &OfflineResult{Diagnostics: r.lastOffline, HoldoutEpisodes: len(r.held.Episodes()), TrainEpisodes: len(r.train.Episodes()),
			HoldoutFraction: holdoutFraction(cfg.HoldoutFraction)}
		res.Transitions = r.train.Len()
	}
	res.Magnitude.record(r.meter)
	bc := cfg.CQL.BCSteps
	res.Phases = PhaseSteps{BC: min(steps, bc), CQL: max(steps-bc, 0)}
	res.FinalPhase = finalPhase.String()
	res.WallSeconds = time.Since(r.start).Seconds()
	res.Segments = r.segments()
	if n := steps - r.firstStep; n > 0 {
		res.StepsPerSec = float64(n) / res.WallSeconds
	}
	return res, r.dir.WriteJSON(rundir.ResultsFile, res)
}

// resumedHistory keeps the evaluations an uninterrupted run would have made
// up to the checkpoint at step keep: those before it, and the one at keep
// itself only when it is a regular evaluation (it ran before that
// checkpoint was written). A final evaluation at keep is dropped: it is
// redone when the run ends there, and not made when the run is extended.
func resumedHistory(hist []EvalPoint, keep int, cfg TrainConfig) []EvalPoint {
	var out []EvalPoint
	for _, h := range hist {
		regular := cfg.EvalEvery > 0 && h.Step%cfg.EvalEvery == 0 && h.Step < cfg.CQL.Steps
		if h.Step < keep || h.Step == keep && regular {
			if len(out) == 0 || out[len(out)-1].Step < h.Step {
				out = append(out, h)
			}
		}
	}
	return slices.Clip(out)
}

// writeConfig writes a new run's config.json (a variable so that a test can
// make the write fail, as a full disk does).
var writeConfig = func(dir *Dir, cfg TrainConfig) error { return dir.WriteJSON(rundir.ConfigFile, cfg) }

func divergedError(step int, cause error, lastCkpt int, ckpt string) error {
	kept := "no checkpoint was written yet, so nothing is lost by starting over: delete the run directory and train again with other settings " +
		"(--resume restarts it from step 0 with the same ones)"
	if lastCkpt >= 0 {
		kept = fmt.Sprintf("the last good checkpoint (step %d) is kept in %s", lastCkpt, ckpt)
	}
	return fmt.Errorf("training diverged at step %d: %v; %s; lower the learning rates or --min-q-weight", step, cause, kept)
}
