package sac

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/nn"
)

// RunConfig configures one resumable SAC run with D4RL's recipe: the
// behaviour policies of every D4RL dataset of one environment come from
// this single seeded run (see Run).
type RunConfig struct {
	Env             string  `json:"env"`
	SAC             Config  `json:"sac"`
	SnapshotEvery   int     `json:"snapshot_every"`   // env steps between evaluated, saved actor snapshots (default 5000)
	EvalEpisodes    int     `json:"eval_episodes"`    // episodes per snapshot evaluation, deterministic and stochastic each (default 5)
	MediumReturn    float64 `json:"medium_return"`    // return that makes a policy "medium" (D4RL's medium level)
	CheckpointEvery int     `json:"checkpoint_every"` // env steps between checkpoints (default 10000)
	// MediumBy is the rule that picks the medium snapshot, the first
	// snapshot that satisfies it: "deterministic" (or "", runs made before
	// the field existed) — its deterministic return ≥ MediumReturn;
	// "stochastic" — its stochastic return (how the datasets act) lies
	// within MediumBand of MediumReturn. SAC's returns jump between
	// snapshots (hopper seed 0: deterministic 1337 at 105k steps, 2951 at
	// 110k), so the first rule can overshoot D4RL's level by far; the
	// second waits for a snapshot near it.
	MediumBy   string  `json:"medium_by,omitempty"`
	MediumBand float64 `json:"medium_band,omitempty"` // half-width of the "stochastic" band, in return units
	// MediumEpisodes, if > 0, is the number of stochastic episodes per
	// snapshot until the medium policy is chosen (EvalEpisodes after):
	// hopper's stochastic returns are bimodal (falls), and 5-episode
	// estimates were off by 600.
	MediumEpisodes int `json:"medium_episodes,omitempty"`
}

// PickMedium returns the index of the first snapshot that satisfies the
// medium rule (see MediumBy), or −1. The rule looks at each snapshot alone,
// so applying it after the run picks what the run picked online.
func (c RunConfig) PickMedium(snaps []RunSnapshot) int {
	for i, s := range snaps {
		if c.isMedium(s) {
			return i
		}
	}
	return -1
}

func (c RunConfig) isMedium(s RunSnapshot) bool {
	if c.MediumBy == "stochastic" {
		return math.Abs(s.StochReturn-c.MediumReturn) <= c.MediumBand
	}
	return s.Return >= c.MediumReturn
}

// DefaultRunConfig is D4RL's recipe for env: SAC with rlkit's settings
// (2×256, lr 3e-4, batch 256, 1000 warm-up steps, 1 update per step) for
// 1M env steps, snapshots every 5000 steps. mediumReturn is the return
// that makes a policy "medium" (the caller knows the reference scores).
func DefaultRunConfig(envName string, mediumReturn float64) RunConfig {
	return RunConfig{Env: envName, SAC: DefaultConfig(1_000_000), SnapshotEvery: 5000, EvalEpisodes: 5,
		MediumReturn: mediumReturn, CheckpointEvery: 10000}
}

// Validate checks the config.
func (c RunConfig) Validate() error {
	switch {
	case c.Env == "":
		return fmt.Errorf("sac run: no environment")
	case c.SAC.TotalSteps <= 0:
		return fmt.Errorf("sac run: SAC steps %d must be positive", c.SAC.TotalSteps)
	case c.SnapshotEvery <= 0 || c.SnapshotEvery > c.SAC.TotalSteps:
		return fmt.Errorf("sac run: snapshot interval %d must be in 1..%d (the SAC steps)", c.SnapshotEvery, c.SAC.TotalSteps)
	case c.EvalEpisodes <= 0 || c.MediumEpisodes < 0:
		return fmt.Errorf("sac run: evaluation episodes %d (medium: %d) must be positive", c.EvalEpisodes, c.MediumEpisodes)
	case c.CheckpointEvery <= 0:
		return fmt.Errorf("sac run: checkpoint interval %d must be positive", c.CheckpointEvery)
	case c.SAC.Batch <= 1:
		return fmt.Errorf("sac run: batch %d must be at least 2", c.SAC.Batch)
	case math.IsNaN(c.MediumReturn) || math.IsInf(c.MediumReturn, 0):
		return fmt.Errorf("sac run: medium return %v is not finite", c.MediumReturn)
	case c.MediumBy != "" && c.MediumBy != "deterministic" && c.MediumBy != "stochastic":
		return fmt.Errorf("sac run: medium rule %q: want deterministic or stochastic", c.MediumBy)
	case c.MediumBy == "stochastic" && !(c.MediumBand > 0):
		return fmt.Errorf("sac run: the stochastic medium rule needs a positive band, got %v", c.MediumBand)
	}
	return c.SAC.Net.Validate()
}

// RunSnapshot is one evaluated actor snapshot of a run.
type RunSnapshot struct {
	Step        int     `json:"step"`              // env steps taken when captured
	Return      float64 `json:"return"`            // mean deterministic (tanh μ) return
	StochReturn float64 `json:"stochastic_return"` // mean return acting stochastically, as the datasets do
	ReplayLen   int     `json:"replay_len"`        // replay-buffer size at capture
	File        string  `json:"file"`              // policy file, relative to the run directory
}

// RunResult is result.json: the run's outcome.
type RunResult struct {
	Config    RunConfig     `json:"config"`
	Snapshots []RunSnapshot `json:"snapshots"`
	Medium    *RunSnapshot  `json:"medium"` // nil if no snapshot reached MediumReturn
	Expert    RunSnapshot   `json:"expert"` // the final policy
	Version   string        `json:"koopq_version"`
	BLAS      string        `json:"blas"` // backend and kernel: bitwise reproducibility needs the same
	// BLASHistory lists the kernels the run was made with when it was
	// resumed under another one (ResumeOptions.AllowBLASChange); empty
	// for a run made with one kernel throughout.
	BLASHistory []BLASSpan `json:"blas_history,omitempty"`
	Machine     string     `json:"machine"`
}

// BLASSpan says which GEMM backend and kernel made a run's steps from
// FromStep on (until the next span).
type BLASSpan struct {
	FromStep int    `json:"from_step"` // first env step made with BLAS
	BLAS     string `json:"blas"`      // backend and kernel, as RunResult.BLAS
}

// ResumeOptions changes how Resume continues a run.
type ResumeOptions struct {
	// AllowBLASChange continues a run made under another GEMM backend or
	// kernel instead of refusing. The continuation then differs in
	// rounding from an uninterrupted run (it is no longer bit-identical
	// to one), so the switch is recorded in the checkpoint and in
	// result.json (BLASHistory). Use it to move a long run to a faster
	// backend or another machine.
	AllowBLASChange bool
}

// RunStats are an online run's statistics, reported to the onStats
// callback of StartRun, Run and Resume every 1000 env steps and at every
// snapshot. Like koopman.EpochStats, they are a typed event, not a
// meter.Progress: the caller prints the snapshot's returns, not a count.
type RunStats struct {
	Step, Total int
	Episodes    int
	LastReturn  float64      // return of the last finished training episode
	Snapshot    *RunSnapshot // non-nil when a snapshot was taken at this step
	StepsPerSec float64      // env steps per second since this process started
}

// Files of a run directory.
const (
	runConfigFile     = "config.json"
	runCheckpointFile = "checkpoint.safetensors"
	runReplayFile     = "replay.f32"
	RunResultFile     = "result.json"
	RunMediumFile     = "medium.safetensors"
	RunExpertFile     = "expert.safetensors"
	runSnapshotsFile  = "snapshots.json"
	runSpeedFile      = "speed.json"
)

// runState is the checkpoint's bookkeeping (everything but tensors), stored
// as JSON in the checkpoint file's metadata. float64 values round-trip
// exactly through encoding/json.
type runState struct {
	Step          int           `json:"step"`
	Episodes      int           `json:"episodes"`
	EpisodeReturn float64       `json:"episode_return"`
	LastReturn    float64       `json:"last_return"`
	Obs           []float64     `json:"obs"`
	EnvState      []float64     `json:"env_state"`
	RNG           []byte        `json:"rng"`
	EvalRNG       []byte        `json:"eval_rng"`
	LogAlpha      float64       `json:"log_alpha"`
	AlphaM        float64       `json:"alpha_m"`
	AlphaV        float64       `json:"alpha_v"`
	AdamT         [3]int        `json:"adam_t"`
	ReplayLen     int           `json:"replay_len"`
	Snapshots     []RunSnapshot `json:"snapshots"`
	Medium        int           `json:"medium"` // index into Snapshots, −1 while not chosen
	Done          bool          `json:"done"`
	BLAS          string        `json:"blas"`                   // GEMM backend and kernel the run was made with
	BLASHistory   []BLASSpan    `json:"blas_history,omitempty"` // earlier kernels, see ResumeOptions
}

// qposer is implemented by MuJoCo environments (env/mujoco.Env).
type qposer interface {
	QPos() []float64
	QVel() []float64
}

// StartRun begins a new run in dir (which must not hold one) and runs it to
// the end. See Run; onStats, if non-nil, receives the run's RunStats.
func StartRun(ctx context.Context, cfg RunConfig, dir string, onStats func(RunStats)) (*RunResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := env.Make(cfg.Env); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, runConfigFile)); err == nil {
		return nil, fmt.Errorf("sac run: %s already holds a run; resume it (--resume) or choose another directory", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "snapshots"), 0o755); err != nil {
		return nil, fmt.Errorf("sac run: %w", err)
	}
	if err := writeJSONAtomic(filepath.Join(dir, runConfigFile), cfg); err != nil {
		return nil, err
	}
	return Run(ctx, dir, onStats)
}

// ReadRunConfig reads the config of the run in dir.
func ReadRunConfig(dir string) (RunConfig, error) {
	var cfg RunConfig
	b, err := os.ReadFile(filepath.Join(dir, runConfigFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return cfg, fmt.Errorf("sac run: %s holds no run (no %s)", dir, runConfigFile)
		}
		return cfg, fmt.Errorf("sac run: %w", err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("sac run: %s: %w", filepath.Join(dir, runConfigFile), err)
	}
	return cfg, cfg.Validate()
}

// ReadRunResult reads result.json of a finished run in dir.
func ReadRunResult(dir string) (*RunResult, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunResultFile))
	if err != nil {
		return nil, fmt.Errorf("sac run %s is not finished (no %s): %w", dir, RunResultFile, err)
	}
	var r RunResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunResultFile), err)
	}
	return &r, nil
}

// Run continues the run in dir (made by StartRun) from its last checkpoint,
// or from the start if it has none, until cfg.SAC.TotalSteps env steps; an
// already finished run just returns its result.
//
// One seeded SAC run produces every behaviour policy, as in D4RL: every
// SnapshotEvery steps the actor is evaluated (deterministic and stochastic
// returns) and saved under snapshots/; the first snapshot whose
// return satisfies the medium rule (MediumBy) becomes medium.safetensors,
// and the replay length at that moment is the medium-replay dataset's
// size; the final actor is expert.safetensors; the whole replay buffer
// (replay.f32) is the full-replay dataset. Every transition is kept.
//
// The run checkpoints every CheckpointEvery steps and when ctx is
// cancelled: networks, Adam states, α, both RNGs, the environment's exact
// simulator state, the episode in progress and the snapshot bookkeeping go
// into checkpoint.safetensors (written to a temporary file and renamed);
// the replay buffer is an append-only file whose rows beyond the
// checkpoint's count are discarded on resume. A run killed at any moment
// (kill -9) and resumed therefore ends with the same bytes as one never
// interrupted.
func Run(ctx context.Context, dir string, onStats func(RunStats)) (*RunResult, error) {
	return Resume(ctx, dir, ResumeOptions{}, onStats)
}

// Resume is Run with options; see ResumeOptions.
func Resume(ctx context.Context, dir string, opts ResumeOptions, onStats func(RunStats)) (*RunResult, error) {
	r, err := openOnlineRun(dir)
	if err != nil {
		return nil, err
	}
	if r.st.Done {
		return ReadRunResult(dir)
	}
	if err := r.checkBLAS(opts); err != nil {
		return nil, err
	}
	defer func() {
		if r.rf != nil {
			r.rf.Close()
		}
	}()
	if err := r.openReplay(); err != nil {
		return nil, err
	}
	if err := r.start(); err != nil {
		return nil, err
	}
	for r.st.Step < r.cfg.SAC.TotalSteps {
		if ctx.Err() != nil {
			return nil, r.interrupt(ctx.Err())
		}
		if err := r.step(onStats); err != nil {
			return nil, err
		}
	}
	return r.finish()
}

// onlineRun is one process's part of a run (Resume): the environments,
// agent, replay buffer and RNGs, the checkpointed bookkeeping, and the open
// replay file. Its methods are Resume's steps, in the order Resume calls
// them: openOnlineRun, checkBLAS, openReplay, start, then step until the
// end (interrupt when cancelled), then finish.
type onlineRun struct {
	dir     string
	cfg     RunConfig
	e       env.Env
	evalEnv env.Env
	mj      qposer // e's simulator state, nil for a non-MuJoCo env
	scale   ActionScale

	pcg, evalPCG *rand.PCG
	rng, evalRng *rand.Rand
	ag           *Agent
	buf          *Replay
	st           runState
	ckpt         string // the checkpoint's path
	resumed      bool   // the run continues from a checkpoint
	kernel       string // blasKernel of this process

	rf      *os.File // the replay file, open from openReplay on
	written int      // replay rows in rf

	obs          []float64 // the observation the next env step acts on
	pol, evalPol *Policy
	sampler      *dataset.Sampler
	batch        *dataset.Batch
	envAct       []float64
	sp           env.Space
	uniformLogp  float64 // log-density of the uniform warm-up actions
	started      time.Time
	startStep    int // st.Step when this process started
}

// openOnlineRun reads the run's config, makes its environments, agent and
// replay buffer, and restores the checkpoint if there is one.
func openOnlineRun(dir string) (*onlineRun, error) {
	cfg, err := ReadRunConfig(dir)
	if err != nil {
		return nil, err
	}
	r := &onlineRun{dir: dir, cfg: cfg}
	if r.e, err = env.Make(cfg.Env); err != nil {
		return nil, err
	}
	if r.evalEnv, err = env.Make(cfg.Env); err != nil {
		return nil, err
	}
	if r.scale, err = Scale(r.e); err != nil {
		return nil, err
	}
	obsDim, actDim := r.e.ObservationSpace().Dim(), r.e.ActionSpace().Dim()
	r.pcg, r.evalPCG = rand.NewPCG(cfg.SAC.Seed, trainStream), rand.NewPCG(cfg.SAC.Seed, 0xe7a1)
	r.rng, r.evalRng = rand.New(r.pcg), rand.New(r.evalPCG)
	r.ag = NewAgent(cfg.SAC, obsDim, actDim, r.rng)
	nq, nv := 0, 0
	if mj, isMJ := r.e.(qposer); isMJ {
		r.mj = mj
		nq, nv = len(mj.QPos()), len(mj.QVel())
	}
	r.buf = NewReplay(obsDim, actDim, nq, nv, cfg.SAC.TotalSteps)
	r.st = runState{Medium: -1}
	r.ckpt = filepath.Join(dir, runCheckpointFile)
	if _, err := os.Stat(r.ckpt); err == nil {
		if err := loadCheckpoint(r.ckpt, r.ag, &r.st); err != nil {
			return nil, err
		}
		if err := r.pcg.UnmarshalBinary(r.st.RNG); err != nil {
			return nil, fmt.Errorf("%s: rng: %w", r.ckpt, err)
		}
		if err := r.evalPCG.UnmarshalBinary(r.st.EvalRNG); err != nil {
			return nil, fmt.Errorf("%s: eval rng: %w", r.ckpt, err)
		}
		r.resumed = true
	}
	return r, nil
}

// checkBLAS refuses to continue a run made under another GEMM kernel
// unless opts allow it, which then goes into the BLAS history.
func (r *onlineRun) checkBLAS(opts ResumeOptions) error {
	r.kernel = blasKernel()
	st := &r.st
	if r.resumed && st.BLAS != "" && st.BLAS != r.kernel {
		if !opts.AllowBLASChange {
			return fmt.Errorf("sac run %s was made with BLAS %q, this process has %q: the continuation would not be "+
				"bit-identical (choose the recorded backend with --backend / OPENBLAS_CORETYPE, or accept the change with "+
				"--allow-backend-change)", r.dir, st.BLAS, r.kernel)
		}
		if len(st.BLASHistory) == 0 {
			st.BLASHistory = []BLASSpan{{FromStep: 0, BLAS: st.BLAS}}
		}
		st.BLASHistory = append(st.BLASHistory, BLASSpan{FromStep: st.Step, BLAS: r.kernel})
	}
	st.BLAS = r.kernel
	return nil
}

// openReplay opens the replay file and keeps exactly the rows the
// checkpoint counts, reading them into the buffer. The caller closes r.rf
// once it is set, whatever the error.
func (r *onlineRun) openReplay() error {
	rf, err := os.OpenFile(filepath.Join(r.dir, runReplayFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("sac run: %w", err)
	}
	r.rf = rf
	if err := r.buf.readRows(rf, r.st.ReplayLen); err != nil {
		return fmt.Errorf("sac run: %s: %w", filepath.Join(r.dir, runReplayFile), err)
	}
	rowBytes := int64(r.buf.rowFloats() * 4)
	if err := rf.Truncate(int64(r.st.ReplayLen) * rowBytes); err != nil {
		return fmt.Errorf("sac run: %w", err)
	}
	if _, err := rf.Seek(int64(r.st.ReplayLen)*rowBytes, 0); err != nil {
		return fmt.Errorf("sac run: %w", err)
	}
	r.written = r.st.ReplayLen
	return nil
}

// start puts the environment where the checkpoint left it (or resets it)
// and makes the policies, sampler and buffers the steps use.
func (r *onlineRun) start() error {
	if r.resumed {
		if err := r.e.SetState(r.st.EnvState); err != nil {
			return fmt.Errorf("%s: environment state: %w", r.ckpt, err)
		}
		r.obs = r.st.Obs
	} else {
		r.obs = r.e.Reset(r.rng)
	}
	obsDim, actDim := r.e.ObservationSpace().Dim(), r.e.ActionSpace().Dim()
	r.pol = NewPolicy(r.ag.Actor, nil, r.scale)
	r.evalPol = NewPolicy(r.ag.Actor, nil, r.scale)
	r.sampler = dataset.NewSampler(r.buf.View(), r.rng)
	r.batch = dataset.NewBatch(r.cfg.SAC.Batch, obsDim, actDim)
	r.envAct = make([]float64, actDim)
	r.sp = r.e.ActionSpace()
	r.uniformLogp = 0.0
	for i := range r.sp.Low {
		r.uniformLogp -= math.Log(r.sp.High[i] - r.sp.Low[i])
	}
	r.started = now()
	r.startStep = r.st.Step
	return nil
}

// meta is the metadata of a policy file the run writes: the run's, then
// extra.
func (r *onlineRun) meta(extra map[string]string) map[string]string {
	m := map[string]string{"seed": strconv.FormatUint(r.cfg.SAC.Seed, 10), "koopq_version": dataset.Version(), "blas": r.kernel}
	if len(r.st.BLASHistory) > 0 {
		h, _ := json.Marshal(r.st.BLASHistory) // a slice of plain structs: cannot fail
		m["blas_history"] = string(h)
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// checkpoint appends the new replay rows to the replay file and syncs it,
// then writes snapshots.json, the checkpoint and speed.json.
func (r *onlineRun) checkpoint() error {
	st := &r.st
	if err := r.buf.writeRows(r.rf, r.written, r.buf.Len()); err != nil {
		return fmt.Errorf("sac run: replay: %w", err)
	}
	if err := r.rf.Sync(); err != nil {
		return fmt.Errorf("sac run: replay: %w", err)
	}
	r.written = r.buf.Len()
	st.ReplayLen = r.buf.Len()
	st.EnvState = r.e.State()
	st.Obs = r.obs
	st.RNG, _ = r.pcg.MarshalBinary()
	st.EvalRNG, _ = r.evalPCG.MarshalBinary()
	if err := writeJSONAtomic(filepath.Join(r.dir, runSnapshotsFile), st.Snapshots); err != nil {
		return err
	}
	if err := saveCheckpoint(r.ckpt, r.ag, st); err != nil {
		return err
	}
	sec := now().Sub(r.started).Seconds()
	return writeJSONAtomic(filepath.Join(r.dir, runSpeedFile), map[string]any{
		"step": st.Step, "steps_this_process": st.Step - r.startStep, "seconds_this_process": sec,
		"env_steps_per_second": float64(st.Step-r.startStep) / sec})
}

// finite refuses to save non-finite weights (the last checkpoint stays).
func (r *onlineRun) finite() error {
	ag := r.ag
	for _, ps := range [][]*nn.Param{ag.pActor, ag.params[0], ag.params[1], ag.targets[0], ag.targets[1]} {
		if err := nn.CheckFinite(ps); err != nil {
			return fmt.Errorf("sac run: step %d: %w (nothing saved; the last checkpoint stays)", r.st.Step, err)
		}
	}
	return nil
}

// safeCheckpoint is checkpoint after finite.
func (r *onlineRun) safeCheckpoint() error {
	if err := r.finite(); err != nil {
		return err
	}
	return r.checkpoint()
}

// interrupt checkpoints a cancelled run and returns ctxErr, or the error
// that kept it from checkpointing.
func (r *onlineRun) interrupt(ctxErr error) error {
	if err := r.safeCheckpoint(); err != nil {
		return err
	}
	return ctxErr
}

// snapshot evaluates the actor (deterministic, then stochastic returns),
// saves it under snapshots/, and saves it as the medium policy too when
// it is the first to satisfy the medium rule.
func (r *onlineRun) snapshot() (RunSnapshot, error) {
	cfg, st := r.cfg, &r.st
	if err := r.finite(); err != nil {
		return RunSnapshot{}, err
	}
	det, err := policyReturn(r.evalEnv, r.evalPol, cfg.EvalEpisodes, r.evalRng, false)
	if err != nil {
		return RunSnapshot{}, err
	}
	stoEpisodes := cfg.EvalEpisodes
	if st.Medium < 0 && cfg.MediumEpisodes > 0 {
		stoEpisodes = cfg.MediumEpisodes
	}
	sto, err := policyReturn(r.evalEnv, r.evalPol, stoEpisodes, r.evalRng, true)
	if err != nil {
		return RunSnapshot{}, err
	}
	s := RunSnapshot{Step: st.Step, Return: det, StochReturn: sto, ReplayLen: r.buf.Len(),
		File: filepath.Join("snapshots", fmt.Sprintf("actor-%07d.safetensors", st.Step))}
	m := r.meta(map[string]string{"sac_step": strconv.Itoa(s.Step), "deterministic_return": fmtF(det),
		"stochastic_return": fmtF(sto), "replay_len": strconv.Itoa(s.ReplayLen)})
	if err := WritePolicy(filepath.Join(r.dir, s.File), r.ag.Actor, cfg.SAC.Net, r.scale, cfg.Env, m); err != nil {
		return s, err
	}
	st.Snapshots = append(st.Snapshots, s)
	if st.Medium < 0 && cfg.isMedium(s) {
		st.Medium = len(st.Snapshots) - 1
		m["role"] = "medium"
		if err := WritePolicy(filepath.Join(r.dir, RunMediumFile), r.ag.Actor, cfg.SAC.Net, r.scale, cfg.Env, m); err != nil {
			return s, err
		}
	}
	return s, nil
}

// step takes one env step, the updates after it, then the snapshot,
// checkpoint and statistics report (onStats) due at the new step count.
func (r *onlineRun) step(onStats func(RunStats)) error {
	if err := r.collect(); err != nil {
		return err
	}
	r.update()
	st := &r.st
	var snap *RunSnapshot
	if st.Step%r.cfg.SnapshotEvery == 0 {
		s, err := r.snapshot()
		if err != nil {
			return err
		}
		snap = &s
	}
	if st.Step%r.cfg.CheckpointEvery == 0 && st.Step < r.cfg.SAC.TotalSteps {
		if err := r.safeCheckpoint(); err != nil {
			return err
		}
	}
	if onStats != nil && (st.Step%1000 == 0 || snap != nil) {
		onStats(RunStats{Step: st.Step, Total: r.cfg.SAC.TotalSteps, Episodes: st.Episodes, LastReturn: st.LastReturn,
			Snapshot: snap, StepsPerSec: float64(st.Step-r.startStep) / now().Sub(r.started).Seconds()})
	}
	return nil
}

// collect acts in the environment (uniformly during the warm-up, else
// with the actor), adds the transition to the replay buffer, and keeps the
// episode's bookkeeping, resetting the environment when the episode ends.
func (r *onlineRun) collect() error {
	st := &r.st
	logp := r.uniformLogp
	if st.Step < r.cfg.SAC.StartSteps {
		for i := range r.envAct {
			r.envAct[i] = r.sp.Low[i] + r.rng.Float64()*(r.sp.High[i]-r.sp.Low[i])
		}
	} else {
		logp = float64(r.pol.SampleLogProb(r.obs, r.rng, r.envAct))
	}
	var qpos, qvel []float64
	if r.mj != nil {
		qpos, qvel = r.mj.QPos(), r.mj.QVel()
	}
	next, rew, term, trunc, err := r.e.Step(r.envAct)
	if err != nil {
		return fmt.Errorf("sac run: env step %d: %w", st.Step+1, err)
	}
	if err := r.buf.Add(r.obs, r.envAct, rew, next, term, trunc, qpos, qvel, logp); err != nil {
		return err
	}
	st.Step++
	st.EpisodeReturn += rew
	r.obs = next
	if term || trunc {
		st.Episodes++
		st.LastReturn, st.EpisodeReturn = st.EpisodeReturn, 0
		r.obs = r.e.Reset(r.rng)
	}
	return nil
}

// update makes the agent's updates after an env step, once past the
// warm-up.
func (r *onlineRun) update() {
	if r.st.Step <= r.cfg.SAC.StartSteps {
		return
	}
	for u := 0; u < max(r.cfg.SAC.UpdatesPerEnv, 1); u++ {
		r.sampler.Sample(r.batch)
		r.scale.FromEnv(r.batch.Act)
		r.ag.Update(r.batch, r.rng)
	}
}

// finish saves the final policy as the expert (snapshotting it first
// unless the last snapshot is of this step), writes result.json, and marks
// the run done in a last checkpoint.
func (r *onlineRun) finish() (*RunResult, error) {
	cfg, st := r.cfg, &r.st
	res := &RunResult{Config: cfg, Snapshots: st.Snapshots, Version: dataset.Version(), BLAS: r.kernel,
		BLASHistory: st.BLASHistory, Machine: fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())}
	if n := len(st.Snapshots); n > 0 && st.Snapshots[n-1].Step == st.Step {
		res.Expert = st.Snapshots[n-1]
	} else {
		s, err := r.snapshot()
		if err != nil {
			return nil, err
		}
		res.Expert, res.Snapshots = s, st.Snapshots
	}
	res.Expert.File = RunExpertFile
	if err := WritePolicy(filepath.Join(r.dir, RunExpertFile), r.ag.Actor, cfg.SAC.Net, r.scale, cfg.Env,
		r.meta(map[string]string{"sac_step": strconv.Itoa(st.Step), "deterministic_return": fmtF(res.Expert.Return),
			"stochastic_return": fmtF(res.Expert.StochReturn), "role": "expert"})); err != nil {
		return nil, err
	}
	if st.Medium >= 0 {
		m := st.Snapshots[st.Medium]
		m.File = RunMediumFile
		res.Medium = &m
	}
	if err := writeJSONAtomic(filepath.Join(r.dir, RunResultFile), res); err != nil {
		return nil, err
	}
	st.Done = true
	if err := r.checkpoint(); err != nil {
		return nil, err
	}
	return res, nil
}

func fmtF(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// policyReturn is the mean return of p over episodes in e, acting
// deterministically (tanh μ) or stochastically.
func policyReturn(e env.Env, p *Policy, episodes int, rng *rand.Rand, stochastic bool) (float64, error) {
	act := make([]float64, p.ActDim)
	var total float64
	for ep := 0; ep < episodes; ep++ {
		obs := e.Reset(rng)
		for {
			if stochastic {
				p.Sample(obs, rng, act)
			} else {
				p.Act(obs, act)
			}
			next, r, term, trunc, err := e.Step(act)
			if err != nil {
				return 0, err
			}
			total += r
			obs = next
			if term || trunc {
				break
			}
		}
	}
	return total / float64(episodes), nil
}

// checkpointParams lists every tensor of the agent's training state under
// unique names: the five networks and the three Adam optimizers' moments.
func checkpointParams(ag *Agent) []*nn.Param {
	var out []*nn.Param
	add := func(prefix string, ps []*nn.Param) {
		for _, p := range ps {
			out = append(out, &nn.Param{Name: prefix + p.Name, Shape: p.Shape, Data: p.Data})
		}
	}
	addAdam := func(prefix string, o *nn.Adam) {
		for i, p := range o.Params {
			out = append(out, &nn.Param{Name: prefix + "m." + p.Name, Shape: p.Shape, Data: o.M[i]})
			out = append(out, &nn.Param{Name: prefix + "v." + p.Name, Shape: p.Shape, Data: o.V[i]})
		}
	}
	add("actor/", ag.pActor)
	add("q1/", ag.params[0])
	add("q2/", ag.params[1])
	add("q1_target/", ag.targets[0])
	add("q2_target/", ag.targets[1])
	addAdam("adam_actor/", ag.optA)
	addAdam("adam_q1/", ag.Opt[0])
	addAdam("adam_q2/", ag.Opt[1])
	return out
}

func saveCheckpoint(path string, ag *Agent, st *runState) error {
	st.LogAlpha, st.AlphaM, st.AlphaV = ag.LogAlpha, ag.alpha.M, ag.alpha.V
	st.AdamT = [3]int{ag.optA.T, ag.Opt[0].T, ag.Opt[1].T}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("sac run: checkpoint state: %w", err)
	}
	return nn.SaveSafetensors(path, checkpointParams(ag), map[string]string{"koopq.kind": "sac-run-checkpoint", "state": string(b)})
}

func loadCheckpoint(path string, ag *Agent, st *runState) error {
	ts, meta, err := nn.LoadSafetensors(path)
	if err != nil {
		return fmt.Errorf("sac run: %w", err)
	}
	if meta["koopq.kind"] != "sac-run-checkpoint" {
		return fmt.Errorf("sac run: %s is not a SAC run checkpoint (kind %q)", path, meta["koopq.kind"])
	}
	if err := json.Unmarshal([]byte(meta["state"]), st); err != nil {
		return fmt.Errorf("sac run: %s: state: %w", path, err)
	}
	if err := nn.AssignParams(checkpointParams(ag), ts); err != nil {
		return fmt.Errorf("sac run: %s: %w", path, err)
	}
	// log α takes one Adam step per actor step: its step count is the
	// actor's (the checkpoint stores it once, as AdamT[0]).
	ag.LogAlpha, ag.alpha = st.LogAlpha, ScalarAdam{M: st.AlphaM, V: st.AlphaV, T: st.AdamT[0]}
	ag.optA.T, ag.Opt[0].T, ag.Opt[1].T = st.AdamT[0], st.AdamT[1], st.AdamT[2]
	return nil
}

// now is the clock of the run's speed figures (RunStats.StepsPerSec,
// speed.json); tests replace it with one whose readings they know.
var now = time.Now

// beforeRename, when non-nil, is called by writeJSONAtomic with the target
// path once the new contents are synced to a temporary file and before
// the rename; tests use it to check that run files are written that way.
var beforeRename func(path string)

// writeJSONAtomic writes v as indented JSON to path atomically
// (internal/atomicfile: a synced temporary file renamed over path), so a
// crash leaves the old file or the new, never an empty or partial one.
func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	var hook func()
	if beforeRename != nil {
		hook = func() { beforeRename(path) }
	}
	if err := atomicfile.Write(path, append(b, '\n'), hook); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// PolicyReturn is the mean return of the policy in file over episodes in a
// fresh instance of envName, acting stochastically (as the datasets do) or
// deterministically, with seeded resets and noise.
func PolicyReturn(envName, file string, episodes int, seed uint64, stochastic bool) (float64, error) {
	p, _, err := ReadPolicy(file)
	if err != nil {
		return 0, err
	}
	e, err := env.Make(envName)
	if err != nil {
		return 0, err
	}
	return policyReturn(e, p, episodes, rand.New(rand.NewPCG(seed, 0x5e7a1)), stochastic)
}

// blasKernel names the GEMM code a run's numbers depend on: backend, kernel,
// and ", subnormals flushed" under FTZ/DAZ (runs recorded before koopq had
// the setting kept subnormals, and their names lack the suffix).
func blasKernel() string {
	k := blas.Backend() + " " + blas.Kernel()
	if blas.Subnormals() == "flushed" {
		k += ", subnormals flushed"
	}
	return k
}
