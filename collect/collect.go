package collect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/manip"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/lockfile"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/policies"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

// D4RLMediumScore is the D4RL-normalized mean return of D4RL v2's medium
// dataset per environment (rounded), the level at which a SAC run picks its
// medium policy.
var D4RLMediumScore = map[string]float64{"hopper": 44, "halfcheetah": 41, "walker2d": 62}

// D4RLMediumBand is the default half-width, in normalized points, of the
// band around D4RLMediumScore in which a snapshot's stochastic return must
// lie to be the medium policy (sac.RunConfig.MediumBy "stochastic").
const D4RLMediumBand = 5.0

// MediumReturn converts a normalized medium score for envName into a raw
// return through D4RL's reference returns.
func MediumReturn(envName string, score float64) (float64, error) {
	_, ref, ok := eval.ReferenceFor(envName)
	if !ok {
		names := make([]string, 0, len(eval.References))
		for n := range eval.References {
			names = append(names, n)
		}
		sort.Strings(names)
		return 0, fmt.Errorf("env %q has no reference returns, so its medium level cannot be set on the normalized scale (--medium-score, --medium-band) "+
			"that collect --run-dir picks the medium policy by; use an env that has them: %s", envName, strings.Join(names, ", "))
	}
	return ref.Random + score/100*(ref.Expert-ref.Random), nil
}

// D4RLOptions control WriteD4RLDatasets.
type D4RLOptions struct {
	Out         string // output directory
	Transitions int    // rows of random, medium and expert (medium-expert: both); D4RL: 1,000,000
	Seed        uint64 // rollout seed (and the random policy's initialization)
	FromRun     string // SAC run directory to take medium/expert/replay from; "" = committed policies
	// MediumBy and MediumBand override the run's medium rule (see
	// sac.RunConfig.MediumBy) for FromRun; the band is in D4RL-normalized
	// points. "" keeps the run's own rule.
	MediumBy       string
	MediumBand     float64
	MediumEpisodes int // > 0: re-evaluate snapshots' stochastic returns with this many episodes (see RunMedium)

	// GoalPolicy is the goal-reaching ant policy file that steers AntMaze
	// collection (antmaze-… names); "" = the committed one.
	GoalPolicy string

	// ManipEpisodes is the number of episodes of each manipulation dataset
	// (metaworld-… names); 0 = DefaultManipEpisodes.
	ManipEpisodes int
	// ManipNoise is the action noise std of manipulation datasets; nil =
	// the task's default (ManipDefaultRecipe).
	ManipNoise *float64
	// ManipRandomFraction is the share of uniformly random episodes of
	// manipulation datasets (ManipConfig.RandomFraction); nil = the task's
	// default (ManipDefaultRecipe).
	ManipRandomFraction *float64

	medium *runMediumResult // RunMedium's answer, computed once per WriteD4RLDatasets
	goal   *goalPolicy      // the loaded goal-reaching policy (AntMaze names)
}

type runMediumResult struct {
	info *sac.RunInfo
	i    int
}

// runMedium is RunMedium for opts.FromRun, computed once (a re-evaluation
// over many episodes takes minutes).
func (o *D4RLOptions) runMedium() (*sac.RunInfo, int, error) {
	if o.medium == nil {
		info, i, err := RunMedium(o.FromRun, o.MediumBy, o.MediumBand, o.MediumEpisodes)
		if err != nil {
			return nil, -1, err
		}
		o.medium = &runMediumResult{info, i}
	}
	return o.medium.info, o.medium.i, nil
}

// RunMedium reads the SAC run in dir and picks its medium snapshot, with
// the run's own rule or, if by is not "", the rule by ("deterministic" or
// "stochastic" with a band of bandScore normalized points). It returns the
// run and the snapshot's index (−1: none yet).
//
// With episodes > 0 each snapshot's stochastic return is first measured
// again over that many episodes (seeded by the run's seed), in order, up to
// the first that satisfies the rule: hopper's stochastic returns are
// bimodal (falls), so the run's 5-episode estimates can be off by 600.
// The rule still looks at each snapshot alone, so the choice stays causal.
func RunMedium(dir, by string, bandScore float64, episodes int) (*sac.RunInfo, int, error) {
	info, err := sac.ReadRun(dir)
	if err != nil {
		return nil, -1, err
	}
	if by != "" {
		cfg := info.Config
		cfg.MediumBy = by
		if by == "stochastic" {
			_, ref, ok := eval.ReferenceFor(cfg.Env)
			if !ok {
				return nil, -1, fmt.Errorf("no D4RL reference returns for env %q: cannot convert the medium band", cfg.Env)
			}
			cfg.MediumBand = bandScore / 100 * (ref.Expert - ref.Random)
		}
		if err := cfg.Validate(); err != nil {
			return nil, -1, err
		}
		info.Config = cfg
	}
	if episodes <= 0 {
		return info, info.Config.PickMedium(info.Snapshots), nil
	}
	for i, snap := range info.Snapshots {
		r, err := sac.PolicyReturn(info.Config.Env, filepath.Join(dir, snap.File), episodes, info.Config.SAC.Seed, true)
		if err != nil {
			return nil, -1, err
		}
		info.Snapshots[i].StochReturn = r
		if info.Config.PickMedium(info.Snapshots[i:i+1]) == 0 {
			return info, i, nil
		}
	}
	return info, -1, nil
}

// ExpertCandidates is how many snapshots ExportPolicies' "best" expert
// rule re-measures.
const ExpertCandidates = 5

// BestSnapshot re-measures the stochastic return of the candidates
// snapshots of the run in dir with the highest recorded stochastic
// returns over episodes episodes each (seeded by the run's seed) and
// returns the index of the best one and its return. Ties go to the
// earlier snapshot.
func BestSnapshot(dir string, info *sac.RunInfo, candidates, episodes int) (int, float64, error) {
	if len(info.Snapshots) == 0 {
		return -1, 0, fmt.Errorf("run %s has no snapshots", dir)
	}
	idx := make([]int, len(info.Snapshots))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return info.Snapshots[idx[a]].StochReturn > info.Snapshots[idx[b]].StochReturn
	})
	idx = idx[:min(candidates, len(idx))]
	sort.Ints(idx)
	best, bestR := -1, math.Inf(-1)
	for _, i := range idx {
		r, err := sac.PolicyReturn(info.Config.Env, filepath.Join(dir, info.Snapshots[i].File), episodes, info.Config.SAC.Seed, true)
		if err != nil {
			return -1, 0, err
		}
		if r > bestR {
			best, bestR = i, r
		}
	}
	return best, bestR, nil
}

// D4RLFile describes one written dataset.
type D4RLFile struct {
	Name       string  `json:"name"` // e.g. "hopper-medium-v2"
	Path       string  `json:"path"`
	Rows       int     `json:"rows"`
	Episodes   int     `json:"episodes"`    // complete episodes (ending in a terminal or timeout)
	MeanReturn float64 `json:"mean_return"` // over complete episodes (AntMaze: the fraction of episodes that reach the evaluation goal)
	Normalized float64 `json:"normalized"`  // D4RL-normalized mean return (AntMaze, manipulation: the percentage of episodes that reach the goal)
	// SuccessEpisodes is, for a manipulation dataset, the number of
	// episodes whose success test held at some step; nil for others.
	SuccessEpisodes *int    `json:"success_episodes,omitempty"`
	Policy          string  `json:"policy"`
	SHA256          string  `json:"policy_sha256,omitempty"`
	SACSteps        int     `json:"sac_steps,omitempty"`
	Seconds         float64 `json:"seconds"`
	Description     string  `json:"description"`
}

// D4RLSummaryFile is the summary koopq collect keeps beside the datasets it
// writes: one D4RLFile per dataset file in the directory, sorted by name.
const D4RLSummaryFile = "collect-d4rl.json"

// RecordD4RLFiles adds files to dir's D4RLSummaryFile and returns its path.
// An entry with the same name (a dataset made again) is replaced; entries of
// other datasets, written by earlier or concurrent collections into the same
// directory (two sweeps preparing different datasets), are kept. The update
// holds a lock on <summary>.lock and replaces the file atomically. A summary
// that is not a list of datasets is an error and is left as it is.
func RecordD4RLFiles(dir string, files []D4RLFile) (string, error) {
	p := filepath.Join(dir, D4RLSummaryFile)
	unlock, err := lockfile.Lock(p + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	byName := map[string]D4RLFile{}
	if b, err := os.ReadFile(p); err == nil {
		var old []D4RLFile
		if err := json.Unmarshal(b, &old); err != nil {
			return "", fmt.Errorf("%s is not koopq collect's summary (a list of datasets): %v; move it away and collect again", p, err)
		}
		for _, f := range old {
			byName[f.Name] = f
		}
	} else if !os.IsNotExist(err) {
		return "", err
	}
	for _, f := range files {
		byName[f.Name] = f
	}
	all := make([]D4RLFile, 0, len(byName))
	for _, f := range byName {
		all = append(all, f)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return "", err
	}
	return p, atomicfile.Write(p, append(b, '\n'), nil)
}

// d4rlSource is where one dataset's rows come from.
type d4rlSource struct {
	env, kind string
}

// CheckD4RLNames parses every name before anything is written, so that a
// bad name or a replay dataset without a run fails with no side effect.
func CheckD4RLNames(names []string, fromRun string) ([]d4rlSource, error) {
	var out []d4rlSource
	for _, n := range names {
		e, k, err := sac.ParseD4RLName(n)
		if err != nil {
			return nil, err
		}
		if _, err := env.Make(e); err != nil {
			return nil, fmt.Errorf("dataset %q: %w", n, err)
		}
		if (k == "medium-replay" || k == "full-replay") && fromRun == "" {
			return nil, fmt.Errorf("dataset %q is the replay buffer of the SAC run that made the behaviour policies, "+
				"which is not committed (hundreds of MB); make the run with `koopq collect --env %s --run-dir DIR` "+
				"(1M env steps, resumable with --resume), then `koopq collect %s --from-run DIR`", n, e, n)
		}
		// The behaviour policies must exist before anything is written.
		var roles []string
		switch k {
		case "medium", "expert":
			roles = []string{k}
		case "medium-expert":
			roles = []string{"medium", "expert"}
		}
		for _, role := range roles {
			if fromRun == "" {
				if _, _, err := policies.Lookup(e, role); err != nil {
					return nil, fmt.Errorf("dataset %s: %w", n, err)
				}
			} else if role == "expert" {
				if _, err := os.Stat(filepath.Join(fromRun, sac.RunExpertFile)); err != nil {
					return nil, fmt.Errorf("dataset %s: --from-run %s has no expert policy yet (the run is not finished)", n, fromRun)
				}
			}
		}
		out = append(out, d4rlSource{env: e, kind: k})
	}
	if fromRun != "" {
		cfg, err := sac.ReadRunConfig(fromRun)
		if err != nil {
			return nil, fmt.Errorf("--from-run: %w", err)
		}
		for i, s := range out {
			if s.env != cfg.Env {
				return nil, fmt.Errorf("dataset %q is for %s but --from-run %s is a %s run", names[i], s.env, fromRun, cfg.Env)
			}
		}
	}
	return out, nil
}

// behaviour loads env's role ("medium" or "expert") policy from the run
// directory, or from the committed policies.
func behaviour(envName, role string, opts *D4RLOptions) (*sac.Policy, string, string, int, error) {
	if opts.FromRun != "" {
		path := filepath.Join(opts.FromRun, sac.RunExpertFile)
		if role == "medium" {
			info, i, err := opts.runMedium()
			if err != nil {
				return nil, "", "", 0, err
			}
			if i < 0 {
				return nil, "", "", 0, fmt.Errorf("--from-run %s has no medium policy yet: no snapshot satisfies its medium rule", opts.FromRun)
			}
			path = filepath.Join(opts.FromRun, info.Snapshots[i].File)
		}
		p, meta, err := sac.ReadPolicy(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil, "", "", 0, fmt.Errorf("--from-run %s has no %s policy yet (%s missing): the run has not reached it", opts.FromRun, role, path)
			}
			return nil, "", "", 0, err
		}
		b, _ := os.ReadFile(path)
		sum := sha256.Sum256(b)
		steps, _ := strconv.Atoi(meta["sac_step"])
		return p, path, hex.EncodeToString(sum[:]), steps, nil
	}
	en, b, err := policies.Lookup(envName, role)
	if err != nil {
		return nil, "", "", 0, err
	}
	p, _, err := sac.ReadPolicyBytes(en.File, b)
	if err != nil {
		return nil, "", "", 0, err
	}
	return p, "policies/data/" + en.File, en.SHA256, en.SACSteps, nil
}

// WriteD4RLDatasets writes each named D4RL v2 dataset (e.g.
// "hopper-medium-v2") to opts.Out/<name>.hdf5 in D4RL's layout with
// infos/qpos, infos/qvel, infos/action_log_probs and metadata (env,
// dataset, policy, policy sha256, seed, koopq version):
//   - random: a randomly initialized actor (seeded by opts.Seed);
//   - medium, expert: the committed (or --from-run) SAC actors;
//   - medium-expert: the medium dataset (same seed) cut after its last
//     complete episode, then the expert dataset: D4RL's stitch of the two files;
//   - medium-replay, full-replay: the SAC run's replay buffer up to the
//     medium snapshot, or all of it (needs opts.FromRun).
//
// Rollouts act stochastically; the bytes depend only on the names and opts.
//
// AntMaze names (antmaze-umaze-v2, antmaze-*-diverse-v2, antmaze-*-play-v2)
// are collected after the others with D4RL's AntMaze recipe (see
// AntMazeDataset) steered by opts.GoalPolicy or the committed goal-reaching
// policy.
//
// progress, if non-nil, sees each rollout as a stage named after its
// dataset ("hopper-medium-v2 medium", "antmaze-umaze-v2", "<task>
// episodes").
func WriteD4RLDatasets(ctx context.Context, names []string, opts D4RLOptions, progress meter.Staged) ([]D4RLFile, error) {
	mazes, manips, others, srcs, err := checkD4RLRequest(names, &opts)
	if err != nil {
		return nil, err
	}
	var out []D4RLFile
	for i, s := range srcs {
		j := &d4rlJob{ctx: ctx, opts: &opts, src: s, label: others[i], progress: progress}
		f, err := j.write()
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	for _, name := range mazes {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		f, err := writeAntMaze(name, &opts, meter.Stage(progress, name))
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	for _, name := range manips {
		f, err := writeManip(ctx, name, &opts, meter.Stage(progress, name+" episodes"))
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	return out, nil
}

// checkD4RLRequest checks WriteD4RLDatasets' names and opts before any
// rollout (names, transitions, memory, a writable opts.Out, which it
// creates) and splits names into AntMaze ones (mazes), manipulation ones
// (manips) and the others, with the sources of the others.
func checkD4RLRequest(names []string, opts *D4RLOptions) (mazes, manips, others []string, srcs []d4rlSource, err error) {
	for _, n := range names {
		switch {
		case IsAntMazeDataset(n):
			mazes = append(mazes, n)
		case IsManipDataset(n):
			manips = append(manips, n)
		default:
			others = append(others, n)
		}
	}
	if err := checkAntMazeNames(mazes, opts); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := checkManipNames(manips, opts); err != nil {
		return nil, nil, nil, nil, err
	}
	if len(others) > 0 {
		if srcs, err = CheckD4RLNames(others, opts.FromRun); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	if opts.Transitions <= 0 {
		return nil, nil, nil, nil, fmt.Errorf("--transitions %d must be positive", opts.Transitions)
	}
	for _, n := range names {
		envName, rows, what := n, 2*float64(opts.Transitions), fmt.Sprintf("--transitions %d (%s)", opts.Transitions, n) // AntMaze and manipulation dataset names are env names
		switch {
		case IsManipDataset(n):
			c := manipConfig(n, opts)
			rows, what = float64(c.Episodes*manip.MaxEpisodeSteps), fmt.Sprintf("--episodes %d (%s)", c.Episodes, n)
		case !IsAntMazeDataset(n):
			envName = run.EnvOfLabel(n)
		}
		if envName == "" {
			continue
		}
		if err := run.CheckCollectMemory(what, envName, rows); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("--out: %w", err)
	}
	if err := run.CheckWritable("--out", opts.Out); err != nil {
		return nil, nil, nil, nil, err
	}
	return mazes, manips, others, srcs, nil
}

// d4rlJob writes one non-AntMaze D4RL dataset: src, asked for as label
// (the name errors quote), into f.
type d4rlJob struct {
	ctx      context.Context
	opts     *D4RLOptions
	src      d4rlSource
	label    string
	progress meter.Staged
	name     string // <env>-<kind>-v2
	f        D4RLFile
}

// write generates the dataset, writes its file and returns its record.
func (j *d4rlJob) write() (D4RLFile, error) {
	t0 := time.Now()
	j.name = j.src.env + "-" + j.src.kind + "-v2"
	j.f = D4RLFile{Name: j.name, Path: filepath.Join(j.opts.Out, j.name+".hdf5")}
	e, _ := env.Make(j.src.env)
	g, err := j.generate(e)
	if err != nil {
		return D4RLFile{}, err
	}
	f := &j.f
	g.Data.Meta = map[string]string{"env": j.src.env, "dataset": j.name, "policy": f.Policy, "seed": strconv.FormatUint(j.opts.Seed, 10),
		"algorithm": "SAC", "description": f.Description}
	if f.SHA256 != "" {
		g.Data.Meta["policy_sha256"] = f.SHA256
	}
	if f.SACSteps > 0 {
		g.Data.Meta["sac_steps"] = strconv.Itoa(f.SACSteps)
	}
	var wo []dataset.WriteOption
	for k, a := range g.Infos {
		wo = append(wo, dataset.WithInfo(k, a))
	}
	if err := dataset.WriteD4RL(f.Path, g.Data, wo...); err != nil {
		return D4RLFile{}, err
	}
	f.Rows = g.Data.Len()
	f.MeanReturn, f.Episodes = sac.EpisodeReturns(g.Data)
	_, ref, _ := eval.ReferenceFor(j.src.env)
	f.Normalized = ref.Normalize(f.MeanReturn)
	f.Seconds = time.Since(t0).Seconds()
	return *f, nil
}

// stage returns the progress callback of one rollout (nil without
// progress).
func (j *d4rlJob) stage(what string) meter.Progress {
	return meter.Stage(j.progress, j.name+" "+what)
}

// generate makes the dataset's transitions by its kind, recording its
// policy and description in j.f (e: the env, for the random actor).
func (j *d4rlJob) generate(e env.Env) (*sac.Generated, error) {
	opts, f := j.opts, &j.f
	switch j.src.kind {
	case "random":
		p, err := sac.RandomPolicy(e, sac.DefaultNetConfig(), opts.Seed)
		if err != nil {
			return nil, err
		}
		f.Policy = "random-init sac actor 2x256 (seed " + strconv.FormatUint(opts.Seed, 10) + ")"
		g, err := sac.Generate(j.ctx, j.src.env, p, opts.Transitions, opts.Seed, j.stage("random"))
		if err != nil {
			return nil, err
		}
		f.Description = "randomly initialized tanh-Gaussian actor, stochastic"
		return g, nil
	case "medium", "expert":
		g, err := j.rollout(j.src.kind, opts.Seed)
		if err != nil {
			return nil, err
		}
		f.Description = "SAC " + j.src.kind + " policy, stochastic"
		return g, nil
	case "medium-expert":
		m, err := j.rollout("medium", opts.Seed)
		if err != nil {
			return nil, err
		}
		x, err := j.rollout("expert", opts.Seed)
		if err != nil {
			return nil, err
		}
		f.Description = "medium (cut after its last complete episode) followed by expert"
		return sac.MediumExpert(m, x), nil
	case "medium-replay", "full-replay":
		return j.replay()
	}
	return nil, nil // CheckD4RLNames admits no other kind
}

// rollout generates transitions with the role ("medium" or "expert")
// behaviour policy, appending it to j.f's policy and sha256.
func (j *d4rlJob) rollout(role string, seed uint64) (*sac.Generated, error) {
	p, src, sum, steps, err := behaviour(j.src.env, role, j.opts)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", j.label, err)
	}
	f := &j.f
	if f.Policy != "" {
		f.Policy += " + "
		f.SHA256 += " + "
	}
	f.Policy += "sac-" + role + " " + src
	f.SHA256 += sum
	f.SACSteps = steps
	return sac.Generate(j.ctx, j.src.env, p, j.opts.Transitions, seed, j.stage(role))
}

// replay takes the transitions of the --from-run SAC run's replay buffer:
// up to its medium snapshot (medium-replay) or all of it (full-replay).
func (j *d4rlJob) replay() (*sac.Generated, error) {
	opts, f := j.opts, &j.f
	info, mi, err := opts.runMedium()
	if err != nil {
		return nil, err
	}
	var n int
	if j.src.kind == "medium-replay" {
		if mi < 0 {
			return nil, fmt.Errorf("dataset %s: run %s has not reached its medium level yet", j.label, opts.FromRun)
		}
		n = info.Snapshots[mi].ReplayLen
		f.SACSteps = info.Snapshots[mi].Step
	} else {
		if info.Expert == nil {
			return nil, fmt.Errorf("dataset %s: run %s is not finished (full-replay is the whole %d-step buffer)", j.label, opts.FromRun, info.Config.SAC.TotalSteps)
		}
		n = info.ReplayLen
		f.SACSteps = info.Expert.Step
	}
	buf, err := sac.RunReplay(opts.FromRun, n)
	if err != nil {
		return nil, err
	}
	d, infos := buf.Slice(0, buf.Len())
	f.Policy = "sac replay buffer " + opts.FromRun
	f.Description = "SAC replay buffer (all transitions, incl. the uniform warm-up) up to " + map[bool]string{true: "the medium snapshot", false: "the end of the run"}[j.src.kind == "medium-replay"]
	return &sac.Generated{Data: d, Infos: infos}, nil
}

// SACRunConfig is D4RL's recipe run for envName: sac.DefaultRunConfig with
// the medium level given as a normalized score (D4RLMediumScore by
// default) converted to a return, and the medium rule "stochastic": the
// first snapshot whose stochastic return, measured over 50 episodes, lies
// within D4RLMediumBand points of the level.
//
// mujoco.AntGoalName, the goal-reaching ant that steers AntMaze data
// collection, has no D4RL datasets and no reference returns: its run picks
// no medium policy (medium return math.MaxFloat64 under the deterministic
// rule, which no return reaches) and only its snapshots and final actor
// are used. A --medium-score is rejected for it.
func SACRunConfig(envName string, mediumScore float64) (sac.RunConfig, error) {
	if envName == mujoco.AntGoalName {
		if mediumScore != 0 {
			return sac.RunConfig{}, fmt.Errorf("--medium-score: env %q has no D4RL medium level (its run only makes the goal-reaching policy)", envName)
		}
		c := sac.DefaultRunConfig(envName, math.MaxFloat64)
		c.MediumBy = "deterministic"
		return c, nil
	}
	if _, err := MediumReturn(envName, 0); err != nil {
		return sac.RunConfig{}, err
	}
	if mediumScore == 0 {
		s, ok := D4RLMediumScore[envName]
		if !ok {
			return sac.RunConfig{}, fmt.Errorf("env %q has no D4RL medium level: give --medium-score", envName)
		}
		mediumScore = s
	}
	r, err := MediumReturn(envName, mediumScore)
	if err != nil {
		return sac.RunConfig{}, err
	}
	c := sac.DefaultRunConfig(envName, r)
	band, _ := MediumReturn(envName, D4RLMediumBand)
	lo, _ := MediumReturn(envName, 0)
	c.MediumBy, c.MediumBand, c.MediumEpisodes = "stochastic", band-lo, 50
	return c, nil
}

// ExportPolicies copies the medium policy (once chosen) and the expert
// policy (once the run is finished) of the SAC run in runDir into dst as
// <env>-medium.safetensors and <env>-expert.safetensors, and records them
// in dst/manifest.json (replacing earlier entries of the same env and
// role). This is how koopq's committed policies/data is made.
//
// expertBy chooses the expert: "" or "final" is D4RL's rule, the final
// actor; "best" takes, once the run is finished, the snapshot with the
// highest stochastic return among the ExpertCandidates snapshots whose
// recorded (5-episode) stochastic returns are highest, each re-measured
// over mediumEpisodes episodes (50 when 0). SAC on hopper can collapse
// late in a run (koopq's seed-0 run ended at 1379 after 3300+ at 790k
// steps), so "best" is the way to an expert-level file from such a run.
func ExportPolicies(runDir, dst, mediumBy string, mediumBand float64, mediumEpisodes int, expertBy string) ([]policies.Entry, error) {
	if expertBy != "" && expertBy != "final" && expertBy != "best" {
		return nil, fmt.Errorf("--expert-by %q: want final or best", expertBy)
	}
	info, mi, err := RunMedium(runDir, mediumBy, mediumBand, mediumEpisodes)
	if err != nil {
		return nil, err
	}
	cfg := info.Config
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, fmt.Errorf("--export-policies: %w", err)
	}
	mp := filepath.Join(dst, "manifest.json")
	var manifest []policies.Entry
	if b, err := os.ReadFile(mp); err == nil {
		if err := json.Unmarshal(b, &manifest); err != nil {
			return nil, fmt.Errorf("%s: %w", mp, err)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	rule := fmt.Sprintf("medium: first snapshot with deterministic return >= %.1f", cfg.MediumReturn)
	if cfg.Env == mujoco.AntGoalName {
		rule = "the goal-reaching policy for AntMaze collection: the final actor"
	} else if cfg.MediumBy == "stochastic" {
		rule = fmt.Sprintf("medium: first snapshot with stochastic return within %.1f of %.1f", cfg.MediumBand, cfg.MediumReturn)
		if mediumEpisodes > 0 {
			rule += fmt.Sprintf(", re-evaluated over %d episodes", mediumEpisodes)
		}
	}
	expertFile, expertStoch := filepath.Join(runDir, sac.RunExpertFile), math.NaN()
	if _, err := os.Stat(expertFile); err == nil && expertBy == "best" {
		eps := mediumEpisodes
		if eps <= 0 {
			eps = 50
		}
		bi, r, err := BestSnapshot(runDir, info, ExpertCandidates, eps)
		if err != nil {
			return nil, err
		}
		final := info.Snapshots[len(info.Snapshots)-1] // BestSnapshot refuses a run without snapshots
		expertFile, expertStoch = filepath.Join(runDir, info.Snapshots[bi].File), r
		rule += fmt.Sprintf("; expert: the best of the %d snapshots with the highest 5-episode stochastic returns, re-evaluated over %d episodes "+
			"(the final actor returned %.1f, stochastic %.1f)", ExpertCandidates, eps, final.Return, final.StochReturn)
	}
	made := fmt.Sprintf("koopq collect --env %s --run-dir DIR --seed %d --sac-steps %d --snapshot-every %d --hidden %s (%s)",
		cfg.Env, cfg.SAC.Seed, cfg.SAC.TotalSteps, cfg.SnapshotEvery, joinInts(cfg.SAC.Net.Hidden), rule)
	var out []policies.Entry
	for _, role := range []string{"medium", "expert"} {
		src := expertFile
		if role == "medium" {
			if mi < 0 {
				continue
			}
			src = filepath.Join(runDir, info.Snapshots[mi].File)
		}
		b, err := os.ReadFile(src)
		if os.IsNotExist(err) && role == "expert" {
			continue
		}
		if err != nil {
			return nil, err
		}
		_, meta, err := sac.ReadPolicy(src)
		if err != nil {
			return nil, err
		}
		e := policies.Entry{Env: cfg.Env, Role: role, File: cfg.Env + "-" + role + ".safetensors", Seed: cfg.SAC.Seed, Made: made}
		e.SACSteps, _ = strconv.Atoi(meta["sac_step"])
		e.Return, _ = strconv.ParseFloat(meta["deterministic_return"], 64)
		e.StochReturn, _ = strconv.ParseFloat(meta["stochastic_return"], 64)
		if role == "medium" {
			e.StochReturn = info.Snapshots[mi].StochReturn // re-measured when mediumEpisodes > 0
		} else if !math.IsNaN(expertStoch) {
			e.StochReturn = expertStoch
		}
		sum := sha256.Sum256(b)
		e.SHA256 = hex.EncodeToString(sum[:])
		if err := run.WriteFileAtomic(filepath.Join(dst, e.File), b); err != nil {
			return nil, err
		}
		kept := manifest[:0]
		for _, m := range manifest {
			if m.Env != e.Env || m.Role != e.Role {
				kept = append(kept, m)
			}
		}
		manifest = append(kept, e)
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("run %s has neither a medium nor an expert policy yet", runDir)
	}
	sort.Slice(manifest, func(i, j int) bool {
		if manifest[i].Env != manifest[j].Env {
			return manifest[i].Env < manifest[j].Env
		}
		return manifest[i].Role < manifest[j].Role
	})
	b, _ := json.MarshalIndent(manifest, "", "  ")
	return out, run.WriteFileAtomic(mp, append(b, '\n'))
}

func joinInts(x []int) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}
