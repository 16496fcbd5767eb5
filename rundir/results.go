package rundir

import (
	"encoding/json"
	"math"

	"github.com/koopq/koopq/internal/fingerprint"
)

// Results is results.json, the record of a finished training run, written
// last (a run directory without it has not finished). Its keys are written
// in the order of the fields. The parts whose types belong to training
// packages are type parameters: C the run's configuration (config.json's
// record), S the learner's statistics of the last step, D the offline
// diagnostics on held-out episodes of a run without a simulator, O that
// run's final offline record. run.TrainResult instantiates them with its
// types and adds its augmentation size (run.Magnitude, whose keys follow
// inline: ShiftL2Mean, ...); RawResults reads them as raw JSON.
type Results[C, S, D, O any] struct {
	Config C      `json:"config"`
	Seed   uint64 `json:"seed"`
	// Provenance is the process that finished the run.
	Provenance Provenance `json:"provenance"`
	// Segments lists every process that trained the run, in order: one
	// for a run trained in one go, one more per resume. The last is the
	// process that finished it (Provenance). A run resumed on another
	// machine, backend or instruction set is a mixture of numeric paths,
	// and only this list shows it. Absent in files written before koopq
	// recorded segments.
	Segments []Segment `json:"segments"`
	// Inputs are the fingerprints of the dataset and Koopman model the run
	// read (inputs.json; zero in results written before koopq recorded
	// them).
	Inputs Inputs `json:"inputs"`
	// Policy is the fingerprint (path relative to the run directory,
	// sha256, bytes) of the policy.safetensors the run wrote, so that a re-evaluation can tell
	// the run's own policy from a file put in its place; nil in results
	// written before koopq recorded it.
	Policy *fingerprint.File `json:"policy,omitempty"`
	// Dataset is the data file (the config's data).
	Dataset string `json:"dataset"`
	// Transitions is the number of transitions trained on (a run without
	// a simulator: less its held-out episodes).
	Transitions int `json:"transitions"`
	// Final is the final evaluation (empty, its scores null, for a run
	// without a simulator).
	Final Eval `json:"final_eval"`
	// History is the evaluations during training and the final one, as
	// in history.json.
	History []HistoryPoint[D] `json:"history"`
	// Steps is the number of gradient steps trained.
	Steps int `json:"steps"`
	// Phases are the steps of behaviour cloning and of CQL.
	Phases PhaseSteps `json:"phase_steps"`
	// FinalPhase is the phase of the last step: "cql" (or "bc").
	FinalPhase string `json:"final_phase"`
	// WallSeconds is the wall time of the process that finished the run,
	// in seconds (not reproducible).
	WallSeconds float64 `json:"wall_seconds"`
	// StepsPerSec is that process's steps per second; 0 when it did no
	// step.
	StepsPerSec float64 `json:"steps_per_second"`
	// LastStats are the learner's statistics of the last step.
	LastStats S `json:"last_stats"`
	// Offline is the final offline diagnostics of a run without a
	// simulator (config env "none"; Final is then empty, its normalized
	// score null), with the held-out split it was computed on.
	Offline *O `json:"offline,omitempty"`
}

// RawResults is results.json as a reader that imports no training package
// sees it: the config, the last stats and the offline records kept as raw
// JSON.
type RawResults = Results[json.RawMessage, json.RawMessage, json.RawMessage, json.RawMessage]

// PhaseSteps counts the gradient steps a run spent in each actor phase.
type PhaseSteps struct {
	// BC is the steps of the behaviour-cloning warm-up of the actor.
	BC int `json:"bc"`
	// CQL is the steps of CQL with the SAC actor update.
	CQL int `json:"cql"`
}

// HistoryPoint is one evaluation during training: an element of
// history.json and of results.json's history. D is the type of the
// offline diagnostics (see Results).
type HistoryPoint[D any] struct {
	// Step is the gradient step evaluated after.
	Step int `json:"step"`
	// Mean and Std are the mean and standard deviation of the episodes'
	// undiscounted returns, in the env's reward units.
	Mean float64 `json:"mean_return"`
	Std  float64 `json:"std_return"`
	// Normalized is D4RL's normalized score of Mean (null without
	// reference returns, and for a run without a simulator). A point that
	// lacks the key reads as NaN, no score, not as 0.
	Normalized Score `json:"normalized_score"`
	// SuccessRate is the fraction of the evaluation's episodes that
	// reached the goal (Eval.SuccessRate) in envs with a per-step success
	// test (Eval.Successes); nil, and omitted, for other envs.
	SuccessRate *Score `json:"success_rate,omitempty"`
	// Offline holds the diagnostics on held-out episodes of a run without
	// a simulator; its return fields are then 0 and the normalized score
	// null.
	Offline *D `json:"offline,omitempty"`
}

// historyPoint is HistoryPoint without its UnmarshalJSON.
type historyPoint[D any] HistoryPoint[D]

// UnmarshalJSON decodes a point, with Normalized NaN when the key is
// absent.
func (p *HistoryPoint[D]) UnmarshalJSON(b []byte) error {
	q := historyPoint[D]{Normalized: Score(math.NaN())}
	if err := json.Unmarshal(b, &q); err != nil {
		return err
	}
	*p = HistoryPoint[D](q)
	return nil
}

// Eval summarizes an evaluation in a simulator (results.json's
// final_eval); eval.Result is this type.
type Eval struct {
	// Env is the simulator's name.
	Env string `json:"env"`
	// Episodes is the number of episodes run.
	Episodes int `json:"episodes"`
	// Seed seeds the episodes' resets.
	Seed uint64 `json:"seed"`
	// Mean, Std, Min and Max summarize Returns, the episodes' undiscounted
	// returns (env reward units); Lengths are the episodes' steps.
	Mean    float64   `json:"mean_return"`
	Std     float64   `json:"std_return"`
	Min     float64   `json:"min_return"`
	Max     float64   `json:"max_return"`
	Returns []float64 `json:"returns"`
	Lengths []int     `json:"lengths"`
	// Normalized is 100·(Mean − random)/(expert − random) when the env has
	// reference returns (NaN otherwise); NormalizedStd is the same scaling of Std.
	Normalized    Score `json:"normalized_score"`
	NormalizedStd Score `json:"normalized_std"`
	// SuccessRate is the fraction of episodes that reached the goal: in
	// envs with a per-step success test (env.Successer: manipulation) the
	// episodes whose test held at any step (Successes), in goal-reaching
	// envs (Reference.GoalReaching: AntMaze) those with return ≥ 1; NaN
	// (null) otherwise.
	SuccessRate Score `json:"success_rate"`
	// Successes says, per episode, whether the env's success test held
	// at any step; nil (and omitted) for envs without a success test.
	Successes []bool `json:"successes,omitempty"`
	// Gamma, when in (0, 1), is the discount of DiscountedReturns, each
	// episode's Σₜ γᵗ rₜ from its reset (t from 0), and DiscountedMean
	// their mean: the quantity an off-policy estimate such as FQE targets.
	// 0 (and the fields omitted) when no discount was asked for.
	Gamma             float64   `json:"gamma,omitempty"`
	DiscountedReturns []float64 `json:"discounted_returns,omitempty"`
	DiscountedMean    float64   `json:"discounted_mean_return,omitempty"`
}

// Segment is one process's share of a training run: the gradient steps it
// trained that the run kept (from the checkpoint it resumed at, or 0, to
// the step it finished or last checkpointed at) and what it ran on. Steps a
// killed process made after its last checkpoint are redone by the next one
// and belong to that one's segment. The checkpoint's metadata holds the
// segments so far (key "segments", a JSON array of Segment).
type Segment struct {
	FromStep int `json:"from_step"`
	ToStep   int `json:"to_step"`
	// WallSeconds is the time from the process's start to ToStep's
	// checkpoint or the run's end, in seconds.
	WallSeconds float64 `json:"wall_seconds"`
	// Provenance is nil for a segment that a checkpoint written before
	// koopq recorded segments stands for.
	Provenance *Provenance `json:"provenance"`
	// Augment is the augmenter's own record of this process (augment.Reporter:
	// for the Koopman augmenters the precompute — rows cached, bytes,
	// seconds, fallbacks — and the counters of the batches up to ToStep);
	// absent for augmenters that keep none and for older segments. A
	// reader gets it as the JSON value's generic Go form.
	Augment any `json:"augment,omitempty"`
	// Moved lists the inputs this process read at another path than the
	// process before it (train --resume --data/--koopman with the same
	// content), one line each: "dataset moved: OLD → NEW (…)".
	Moved []string `json:"moved,omitempty"`
	// Restarted is set on the segment of a process that resumed a run
	// without a checkpoint but with logs of an earlier process (a run
	// directory that came without its checkpoints/, as from git or another
	// machine): it says which logged steps it replaced by training from
	// step 0 again.
	Restarted string `json:"restarted,omitempty"`
}

// Provenance records what produced a result: code version and machine.
type Provenance struct {
	Version string `json:"version"`    // module version or "devel"
	Commit  string `json:"git_commit"` // VCS revision the binary was built from
	Dirty   bool   `json:"git_dirty"`  // built from a modified tree
	// CommitSource is "build" when Commit is the binary's own VCS stamp, and
	// "checkout" when the binary has none and Commit is the HEAD of the koopq
	// checkout it ran in (its code only if built from that HEAD; build with
	// `make build` for stamped binaries); "" when Commit is "unknown".
	CommitSource  string `json:"git_commit_source"`
	GoVersion     string `json:"go_version"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	CPUs          int    `json:"cpus"`
	CPUModel      string `json:"cpu_model"`
	Hostname      string `json:"hostname"`
	BLAS          string `json:"blas"`           // GEMM backend: onednn, openblas or gonum
	BLASPrecision string `json:"blas_precision"` // GEMM inputs: f32, or bf16 (mixed precision, f32 accumulation)
	BLASISA       string `json:"blas_isa"`       // CPU instruction set the GEMM backend dispatches to
	BLASThreads   int    `json:"blas_threads"`   // threads inside one GEMM call
	BLASKernel    string `json:"blas_kernel"`    // implementation: oneDNN matmul kernels, or OpenBLAS core type and whether OPENBLAS_CORETYPE forced it
	// BLASSubnormals is "flushed" (GEMMs under FTZ/DAZ, the default) or
	// "kept" (IEEE subnormals: KOOPQ_SUBNORMALS=keep, or gonum); empty in
	// files written before koopq recorded it (they kept subnormals).
	BLASSubnormals string `json:"blas_subnormals,omitempty"`
	GOMAXPROCS     int    `json:"gomaxprocs"`
	Started        string `json:"started"` // RFC 3339
	CommandLine    string `json:"command_line"`
}

// Inputs are the fingerprints of a run's inputs (inputs.json, and
// results.json's inputs): the dataset it trains on and the Koopman model
// its augmenter uses. A resumed run recomputes them and refuses to
// continue when one differs from inputs.json (run.CheckInputs); `koopq
// report` refuses a table cell whose runs read different data or models.
type Inputs struct {
	Dataset DatasetInput `json:"dataset"`
	// KoopmanModel is the model file the augmenter uses (the config's
	// koopman_model, or the run's own KoopmanFile once trained); nil for
	// augmentations that use none and before the run has trained its own.
	KoopmanModel *fingerprint.File `json:"koopman_model,omitempty"`
}

// DatasetInput fingerprints the dataset two ways: the file as stored
// (sha256 of the HDF5 file, or of a Minari directory's files: what
// `sha256sum` can confirm) and the transitions as read (after the read
// options: what the run actually trains on). Runs compare ContentSHA256;
// a file rewritten with the same transitions is the same input.
type DatasetInput struct {
	Path          string `json:"path"`
	SHA256        string `json:"sha256,omitempty"` // of the file; empty for a dataset given in memory
	Bytes         int64  `json:"bytes,omitempty"`
	ContentSHA256 string `json:"content_sha256"` // dataset.Dataset.ContentSHA256
	Transitions   int    `json:"transitions"`
}

// SweepRun is the part of a sweep's sweep-run.json (SweepRunFile, the
// record sweep.Run writes beside the slot's run directory) that names the
// run in a report. sweep.Run owns the whole record; these fields carry its
// keys.
type SweepRun struct {
	// Index is the run's position in the spec's expansion.
	Index int    `json:"index"`
	Seed  uint64 `json:"seed"`
	// Dataset is the spec's dataset name.
	Dataset string `json:"dataset"`
	// Method is the method's name, or the ablation's name for ablation runs.
	Method string `json:"method"`
	// Ablation is set for ablation runs: then Base is the method it varies.
	Ablation bool   `json:"ablation"`
	Base     string `json:"base"`
}
