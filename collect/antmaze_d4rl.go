package collect

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/policies"
	"github.com/koopq/koopq/sac"
)

// GoalPolicyRole is the role under which the goal-reaching ant policy is
// committed in policies/data: the final ("expert") actor of a SAC run on
// mujoco.AntGoalName, as `koopq collect --run-dir DIR --export-policies`
// exports it.
const GoalPolicyRole = "expert"

// AntMazeActionNoise and AntMazeEpisodeSteps are D4RL's AntMaze collection
// settings (locomotion/generate_dataset.py: --noisy adds N(0, 0.2²) to
// every action; --max_episode_steps 1000).
const (
	AntMazeActionNoise  = 0.2
	AntMazeEpisodeSteps = 1000
)

// IsAntMazeDataset reports whether name is an AntMaze dataset or env name
// (antmaze-…), which `koopq collect` routes to AntMazeDataset.
func IsAntMazeDataset(name string) bool { return strings.HasPrefix(name, "antmaze-") }

// lookupGoalPolicy finds the committed goal-reaching policy; tests replace
// it to reach the path of a checkout without one.
var lookupGoalPolicy = policies.Lookup

// goalPolicyHelp says how to get a goal-reaching policy when none is committed.
func goalPolicyHelp() string {
	return fmt.Sprintf("no committed goal-reaching ant policy exists yet (policies/data has no %s-%s entry). "+
		"Train one with `koopq collect --env %s --run-dir DIR` (D4RL's 1M-step SAC recipe on the open-floor "+
		"goal-reaching ant; resumable with `koopq collect --run-dir DIR --resume`), then either pass a snapshot "+
		"with --goal-policy DIR/snapshots/actor-NNNNNNN.safetensors (or DIR/expert.safetensors once finished), or "+
		"commit the finished run's policy with `koopq collect --run-dir DIR --export-policies policies/data` and rebuild",
		mujoco.AntGoalName, GoalPolicyRole, mujoco.AntGoalName)
}

// loadGoalPolicy reads the goal-reaching policy: the file if given, else
// the committed one. It checks that the policy maps the goal-reaching
// observation (29 entries) to the ant's 8 actions. It returns the policy,
// where it came from, its sha256 and its SAC steps (0 if unknown).
func loadGoalPolicy(file string) (*sac.Policy, string, string, int, error) {
	var (
		p    *sac.Policy
		meta map[string]string
		src  string
		b    []byte
		err  error
	)
	if file != "" {
		if b, err = os.ReadFile(file); err != nil {
			return nil, "", "", 0, fmt.Errorf("--goal-policy: %w", err)
		}
		if p, meta, err = sac.ReadPolicy(file); err != nil {
			return nil, "", "", 0, fmt.Errorf("--goal-policy: %w", err)
		}
		src = file
	} else {
		en, bb, lerr := lookupGoalPolicy(mujoco.AntGoalName, GoalPolicyRole)
		if lerr != nil {
			return nil, "", "", 0, fmt.Errorf("%s (%v)", goalPolicyHelp(), lerr)
		}
		b = bb
		if p, meta, err = sac.ReadPolicyBytes(en.File, b); err != nil {
			return nil, "", "", 0, err
		}
		src = "policies/data/" + en.File
	}
	if in := p.Actor.In(); in != 29 || p.ActDim != 8 {
		return nil, "", "", 0, fmt.Errorf("goal policy %s maps %d observations to %d actions; a goal-reaching ant policy "+
			"(env %s) maps 29 to 8", src, in, p.ActDim, mujoco.AntGoalName)
	}
	if e := meta["env"]; e != "" && e != mujoco.AntGoalName {
		return nil, "", "", 0, fmt.Errorf("goal policy %s was trained on env %q, not the goal-reaching ant %q", src, e, mujoco.AntGoalName)
	}
	sum := sha256.Sum256(b)
	steps, _ := strconv.Atoi(meta["sac_step"])
	return p, src, hex.EncodeToString(sum[:]), steps, nil
}

// checkAntMazeNames validates AntMaze dataset names and loads the goal
// policy (once) before anything is written.
func checkAntMazeNames(names []string, opts *D4RLOptions) error {
	if len(names) == 0 {
		if opts.GoalPolicy != "" {
			return fmt.Errorf("--goal-policy is only used for AntMaze datasets (antmaze-…-v2)")
		}
		return nil
	}
	if opts.FromRun != "" {
		return fmt.Errorf("--from-run does not apply to AntMaze datasets (%s): give the goal-reaching policy with --goal-policy FILE", names[0])
	}
	for _, n := range names {
		if _, _, err := AntMazeKindOf(n); err != nil {
			return fmt.Errorf("dataset %w", err)
		}
	}
	p, src, sum, steps, err := loadGoalPolicy(opts.GoalPolicy)
	if err != nil {
		return err
	}
	opts.goal = &goalPolicy{p, src, sum, steps}
	return nil
}

type goalPolicy struct {
	p        *sac.Policy
	src, sum string
	steps    int
}

// writeAntMaze collects one AntMaze dataset with D4RL's recipe (see
// AntMazeDataset) and writes it to opts.Out/<name>.hdf5 in D4RL's layout:
// observations, actions, rewards, terminals, timeouts, infos/goal,
// infos/qpos, infos/qvel and metadata (dataset, kind, evaluation goal,
// goal policy and its sha256, seed, noise, koopq version).
func writeAntMaze(name string, opts *D4RLOptions, progress meter.Progress) (D4RLFile, error) {
	t0 := time.Now()
	g := opts.goal
	f := D4RLFile{Name: name, Path: filepath.Join(opts.Out, name+".hdf5"), Policy: "goal-reaching sac actor " + g.src,
		SHA256: g.sum, SACSteps: g.steps}
	cfg := AntMazeConfig{Dataset: name, Transitions: opts.Transitions, EpisodeSteps: AntMazeEpisodeSteps,
		ActionNoise: AntMazeActionNoise, Seed: opts.Seed, Progress: progress}
	d, infos, err := AntMazeDataset(cfg, g.p)
	if err != nil {
		return f, err
	}
	m, kind, _ := AntMazeKindOf(name)
	f.Description = map[AntMazeKind]string{
		AntMazeFixed:   "fixed start and goal: the waypoint planner steers the goal-reaching ant from the start to the goal cell",
		AntMazeDiverse: "random starts, goals in uniformly random free cells, steered by the waypoint planner",
		AntMazePlay:    "random starts, goals from hand-picked cells, steered by the waypoint planner",
	}[kind]
	d.Meta["dataset"] = name
	d.Meta["policy"] = f.Policy
	d.Meta["policy_sha256"] = g.sum
	d.Meta["algorithm"] = "SAC goal-reaching policy + waypoint planner"
	d.Meta["description"] = f.Description
	d.Meta["koopq_version"] = dataset.Version()
	if g.steps > 0 {
		d.Meta["sac_steps"] = strconv.Itoa(g.steps)
	}
	var wo []dataset.WriteOption
	for _, k := range []string{"goal", "qpos", "qvel"} {
		wo = append(wo, dataset.WithInfo(k, infos[k]))
	}
	if err := dataset.WriteD4RL(f.Path, d, wo...); err != nil {
		return f, err
	}
	cov, err := AntMazeCoverage(d, m)
	if err != nil {
		return f, err
	}
	f.Rows, f.Episodes = d.Len(), cov.Episodes
	// The sparse "return" reported is the fraction of episodes that reach
	// the evaluation goal; normalized as D4RL's AntMaze (×100).
	f.MeanReturn = float64(cov.GoalEpisodes) / float64(max(1, cov.Episodes))
	f.Normalized = 100 * f.MeanReturn
	f.Seconds = time.Since(t0).Seconds()
	return f, nil
}
