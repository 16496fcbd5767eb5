package collect

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/manip"
	"github.com/koopq/koopq/env/panda"
	"github.com/koopq/koopq/internal/meter"
)

// Manipulation datasets (MetaWorld-style tasks of package env/manip and
// RoboSuite-style tasks of env/panda): the
// task's scripted controller with Gaussian action noise. S4RL's own recipe
// (its Appendix F) could not be read (docs/manipulation.md), so the
// defaults are koopq's choice, made to give a "medium"-like mix of
// successful and failed episodes; docs/manipulation.md ("Datasets and
// evaluation") gives the measured mix and the time to make one.
const (
	// DefaultManipEpisodes is the default number of 500-step episodes of a
	// manipulation dataset (koopq collect --episodes): 200 episodes, 100,000
	// transitions, made in under a minute on one core (push-v2).
	DefaultManipEpisodes = 200
	// DefaultManipNoise is the default standard deviation of the Gaussian
	// added to every entry of the scripted action before clipping to
	// [−1, 1] (koopq collect --noise). On push-v2 σ = 0.8 leaves about half
	// the episodes successful (0.5: all, 1.0: about a quarter, uniform
	// random actions: none), a "medium" mix of successes and failures.
	DefaultManipNoise = 0.8
	// ManipInfoSuccess is the infos/ key of the per-step success flag: 1
	// where the task's success test (manip.Env.Success, MetaWorld's
	// info["success"]) holds after the row's step, i.e. at
	// next_observations, else 0. Stored as float32 like the other infos.
	ManipInfoSuccess = "success"
)

// IsManipDataset tells whether name is a manipulation dataset: a task of
// env/manip's (MetaWorld-style) or env/panda's (RoboSuite-style) registry
// that has a scripted controller. The dataset has the task's name (e.g.
// "metaworld-push-v2", "robosuite-lift").
func IsManipDataset(name string) bool { return slices.Contains(ManipDatasetNames(), name) }

// ManipDatasetNames lists the manipulation datasets koopq collect can make
// (every env/manip and env/panda task with a scripted controller), sorted.
func ManipDatasetNames() []string {
	var out []string
	for _, n := range append(manip.Names(), panda.Names()...) {
		if _, err := scriptedController(n); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// roboSuiteStyle tells whether task is one of env/panda's (RoboSuite-style)
// tasks; the others are env/manip's (MetaWorld-style).
func roboSuiteStyle(task string) bool { return slices.Contains(panda.Names(), task) }

// manipPackage names the package that holds task's environment and
// scripted controller, for the dataset's provenance.
func manipPackage(task string) string {
	if roboSuiteStyle(task) {
		return "env/panda"
	}
	return "env/manip"
}

// scriptedController is task's scripted controller from the registry of
// env/manip or env/panda: a function of the observation alone.
func scriptedController(task string) (func(obs []float64) []float64, error) {
	if roboSuiteStyle(task) {
		p, err := panda.ScriptedPolicy(task)
		return p, err
	}
	p, err := manip.ScriptedPolicy(task)
	return p, err
}

// manipEnv is what collecting needs of a manipulation task's environment:
// the simulator, its per-step success test and its release.
type manipEnv interface {
	env.Env
	env.Successer
	Close()
}

// newManipEnv makes task's environment from env/panda or env/manip.
func newManipEnv(task string) (manipEnv, error) {
	if roboSuiteStyle(task) {
		e, err := panda.New(task)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	e, err := manip.New(task)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ManipRecipe is the behaviour of a manipulation dataset: the scripted
// controller's action noise and the share of uniformly random episodes
// (ManipConfig's Noise and RandomFraction).
type ManipRecipe struct {
	Noise          float64 `json:"noise"`           // std of the Gaussian action noise (action units)
	RandomFraction float64 `json:"random_fraction"` // probability of a uniformly random episode, in [0, 1]
}

// manipRecipes is each task's default recipe, chosen by measurement so that
// about half of a 200-episode dataset's episodes reach the goal
// (docs/manipulation.md, "Datasets and evaluation", gives the measured
// fractions at seeds 0–2). Tasks without a row get DefaultManipNoise and no
// random episodes.
var manipRecipes = map[string]ManipRecipe{
	// Noise alone: σ 0.8 leaves about half the episodes successful.
	manip.PushName: {Noise: DefaultManipNoise},
	// The scripted controller still closes the door in every episode at
	// σ 3, and random actions never do: half the episodes random.
	manip.DoorCloseName: {Noise: 1, RandomFraction: 0.5},
	// Scripted: every episode up to σ 3; random: about 1 in 5.
	manip.DrawerCloseName: {Noise: 1, RandomFraction: 0.6},
	// Scripted at σ 0.8: about 93%, random: none. (Noise alone is steep
	// here: σ 0.9 about 80%, 1.1 about 40%.)
	manip.DrawerOpenName: {Noise: DefaultManipNoise, RandomFraction: 0.45},
	// RoboSuite-style Lift: σ 0.8 alone lifts the cube in about half the
	// episodes (20 of 40 at seed 1; σ 1.5: 7 of 40).
	panda.LiftName: {Noise: DefaultManipNoise},
	// RoboSuite-style Door (7-D OSC_POSE actions, noise on the rotation
	// too): steep in σ; 40 episodes at seed 1 opened 40 at σ 0.3, 33 at
	// 0.35, 21 at 0.38 (21 at seed 2 as well), 15 at 0.4 and none at 0.8.
	panda.DoorName: {Noise: 0.38},
}

// ManipDefaultRecipe is task's default recipe (koopq collect's --noise and
// --random-fraction when not given) and whether the task has its own row
// in the table; a task without one gets the generic default: noise
// DefaultManipNoise, no random episodes.
func ManipDefaultRecipe(task string) (ManipRecipe, bool) {
	r, ok := manipRecipes[task]
	if !ok {
		return ManipRecipe{Noise: DefaultManipNoise}, false
	}
	return r, true
}

// ManipConfig configures one manipulation dataset.
type ManipConfig struct {
	// Task is the env/manip task name, e.g. "metaworld-push-v2".
	Task string `json:"task"`
	// Episodes is the number of episodes, each MaxEpisodeSteps (500) steps.
	Episodes int `json:"episodes"`
	// Noise is the standard deviation of the Gaussian added to each of the
	// scripted action's entries before clipping to [−1, 1] (action units).
	Noise float64 `json:"noise"`
	// RandomFraction in [0, 1] is the probability that an episode is acted
	// by uniformly random actions in [−1, 1]^4 (the action box of every task) instead of the noisy
	// scripted controller; ManipRandomEpisodes says which episodes are. It
	// mixes failures into tasks whose scripted controller succeeds even
	// under heavy noise (door-close, drawer-close). 0 leaves every episode
	// scripted and the rows exactly those of a config without it.
	RandomFraction float64 `json:"random_fraction"`
	// Seed seeds the resets (object and goal positions), the noise, the
	// random actions and the choice of random episodes.
	Seed uint64 `json:"seed"`
	// Progress, if set, is called after every episode.
	Progress meter.Progress `json:"-"`
}

// ManipStats summarizes a manipulation dataset's episodes.
type ManipStats struct {
	Episodes        int     `json:"episodes"`
	SuccessEpisodes int     `json:"success_episodes"` // episodes whose success test held at some step
	SuccessRows     int     `json:"success_rows"`     // rows whose success flag is 1
	MeanReturn      float64 `json:"mean_return"`      // undiscounted, over episodes
	RandomEpisodes  int     `json:"random_episodes"`  // episodes acted by uniformly random actions
}

// ManipRandomEpisodes tells, for each of episodes episodes of a
// manipulation dataset with seed and random fraction, whether it is acted
// by uniformly random actions (true) or by the noisy scripted controller.
// The choice comes from its own stream seeded by seed (one uniform draw per
// episode, random when below fraction), apart from the stream of resets and
// actions, so it does not depend on what happens in the episodes and a
// fraction of 0 changes nothing in them. The result has length episodes
// (none for episodes ≤ 0).
func ManipRandomEpisodes(seed uint64, episodes int, fraction float64) []bool {
	out := make([]bool, max(episodes, 0))
	pick := rand.New(rand.NewPCG(seed, 0x5e1ec7))
	for i := range out {
		out[i] = pick.Float64() < fraction
	}
	return out
}

// validManipFraction tells whether f is a random fraction in [0, 1].
func validManipFraction(f float64) bool { return f >= 0 && f <= 1 }

// validManipNoise tells whether σ is a finite, non-negative noise level.
func validManipNoise(sigma float64) bool { return sigma >= 0 && !math.IsInf(sigma, 0) }

// ManipDataset rolls out cfg.Task's scripted controller with Gaussian
// action noise (or, in the episodes ManipRandomEpisodes picks, uniformly
// random actions) for cfg.Episodes full episodes and returns the rows in
// episode order: observations and next_observations [N, 39], actions
// [N, 4] (the actions the env executed: noisy and clipped, or random),
// rewards [N], terminals all 0 (MetaWorld v2 never terminates), timeouts
// 1 at each episode's step 500, and infos[ManipInfoSuccess] [N].
// N = 500·Episodes. One RNG stream (cfg.Seed) draws every reset and then
// the episode's noise or random actions: the same config gives the same
// rows on any machine with the same MuJoCo build. The Meta records the
// provenance.
func ManipDataset(ctx context.Context, cfg ManipConfig) (*dataset.Dataset, map[string]dataset.Array, ManipStats, error) {
	var st ManipStats
	policy, err := scriptedController(cfg.Task)
	if err != nil {
		return nil, nil, st, err
	}
	if cfg.Episodes <= 0 || !validManipNoise(cfg.Noise) || !validManipFraction(cfg.RandomFraction) {
		return nil, nil, st, fmt.Errorf("manipulation dataset %s: episodes %d must be positive, noise %v finite and ≥ 0, random fraction %v in [0, 1]",
			cfg.Task, cfg.Episodes, cfg.Noise, cfg.RandomFraction)
	}
	e, err := newManipEnv(cfg.Task)
	if err != nil {
		return nil, nil, st, err
	}
	defer e.Close()
	steps := e.MaxEpisodeSteps()
	N := cfg.Episodes * steps
	od, ad := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
	random := ManipRandomEpisodes(cfg.Seed, cfg.Episodes, cfg.RandomFraction)
	var randomIdx []string
	for i, r := range random {
		if r {
			randomIdx = append(randomIdx, strconv.Itoa(i))
		}
	}
	st.RandomEpisodes = len(randomIdx)
	d := &dataset.Dataset{ObsDim: od, ActDim: ad,
		Observations: make([]float32, 0, N*od), NextObservations: make([]float32, 0, N*od),
		Actions: make([]float32, 0, N*ad), Rewards: make([]float32, 0, N),
		Terminals: make([]float32, 0, N), Timeouts: make([]float32, 0, N),
		Meta: manipMeta(cfg, steps, randomIdx)}
	success := make([]float32, 0, N)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x3e7a))
	var sumRet float64
	for ep := range cfg.Episodes {
		if err := ctx.Err(); err != nil {
			return nil, nil, st, err
		}
		act := func(obs []float64) []float64 {
			a := policy(obs)
			for i := range a {
				a[i] = math.Max(-1, math.Min(1, a[i]+cfg.Noise*rng.NormFloat64()))
			}
			return a
		}
		if random[ep] {
			act = func([]float64) []float64 {
				a := make([]float64, ad)
				for i := range a {
					a[i] = 2*rng.Float64() - 1
				}
				return a
			}
		}
		obs := e.Reset(rng)
		hit := false
		for t := 1; t <= steps; t++ {
			a := act(obs)
			next, r, _, trunc, err := e.Step(a)
			if err != nil {
				return nil, nil, st, fmt.Errorf("manipulation dataset %s: episode %d step %d: %w", cfg.Task, ep, t, err)
			}
			if trunc != (t == steps) {
				return nil, nil, st, fmt.Errorf("manipulation dataset %s: episode %d: truncated %v at step %d of %d", cfg.Task, ep, trunc, t, steps)
			}
			ok := e.Success()
			d.Append(obs, a, r, next, false, trunc)
			success = append(success, float32(b2f64(ok)))
			if ok {
				st.SuccessRows++
			}
			hit = hit || ok
			sumRet += r
			obs = next
		}
		if hit {
			st.SuccessEpisodes++
		}
		if cfg.Progress != nil {
			cfg.Progress(ep+1, cfg.Episodes, "")
		}
	}
	st.Episodes = cfg.Episodes
	st.MeanReturn = sumRet / float64(cfg.Episodes)
	return d, map[string]dataset.Array{ManipInfoSuccess: {Data: success, Shape: []int{N}}}, st, nil
}

// manipMeta is the provenance metadata of a manipulation dataset made by
// cfg with steps-step episodes, randomIdx the indices of its random
// episodes (metadata/random_episodes, comma-separated, empty for none).
func manipMeta(cfg ManipConfig, steps int, randomIdx []string) map[string]string {
	desc := fmt.Sprintf("%s's scripted controller, action noise N(0, %g²) clipped to [-1, 1], %d-step episodes (timeouts, never terminals)",
		cfg.Task, cfg.Noise, steps)
	alg := "scripted controller + Gaussian action noise"
	if cfg.RandomFraction > 0 {
		desc = fmt.Sprintf("%s's scripted controller, action noise N(0, %g²) clipped to [-1, 1]; random fraction %g: %d of %d episodes "+
			"uniformly random actions in [-1, 1]; %d-step episodes (timeouts, never terminals)",
			cfg.Task, cfg.Noise, cfg.RandomFraction, len(randomIdx), cfg.Episodes, steps)
		alg += ", uniformly random episodes"
	}
	m := map[string]string{"env": cfg.Task, "dataset": cfg.Task, "seed": strconv.FormatUint(cfg.Seed, 10),
		"policy": "scripted " + cfg.Task + " (" + manipPackage(cfg.Task) + " ScriptedPolicy)", "algorithm": alg,
		"action_noise": strconv.FormatFloat(cfg.Noise, 'g', -1, 64), "episodes": strconv.Itoa(cfg.Episodes),
		"episode_steps": strconv.Itoa(steps), "success_key": "infos/" + ManipInfoSuccess, "description": desc,
		"random_fraction": strconv.FormatFloat(cfg.RandomFraction, 'g', -1, 64)}
	if len(randomIdx) > 0 {
		m["random_episodes"] = strings.Join(randomIdx, ",")
	}
	return m
}

// checkManipNames checks koopq collect's manipulation dataset names and
// their options before anything is written.
func checkManipNames(names []string, opts *D4RLOptions) error {
	if len(names) == 0 {
		if opts.ManipEpisodes != 0 || opts.ManipNoise != nil || opts.ManipRandomFraction != nil {
			return fmt.Errorf("--episodes, --noise and --random-fraction size and perturb manipulation datasets (%v): give one of those names", ManipDatasetNames())
		}
		return nil
	}
	if opts.FromRun != "" {
		return fmt.Errorf("--from-run does not apply to manipulation datasets (%s): their behaviour policy is the task's scripted controller", names[0])
	}
	if opts.ManipEpisodes < 0 {
		return fmt.Errorf("--episodes %d must be positive", opts.ManipEpisodes)
	}
	if n := opts.ManipNoise; n != nil && !validManipNoise(*n) {
		return fmt.Errorf("--noise %v must be finite and ≥ 0", *n)
	}
	if f := opts.ManipRandomFraction; f != nil && !validManipFraction(*f) {
		return fmt.Errorf("--random-fraction %v must lie in [0, 1]", *f)
	}
	for _, n := range names {
		if _, err := scriptedController(n); err != nil {
			return fmt.Errorf("dataset %q: %w", n, err)
		}
		e, err := newManipEnv(n)
		if err != nil {
			return fmt.Errorf("dataset %q: %w", n, err)
		}
		e.Close()
	}
	return nil
}

// manipConfig is the config of manipulation dataset name under opts: the
// task's recipe (ManipDefaultRecipe) unless opts overrides it.
func manipConfig(name string, opts *D4RLOptions) ManipConfig {
	r, _ := ManipDefaultRecipe(name)
	c := ManipConfig{Task: name, Episodes: DefaultManipEpisodes, Noise: r.Noise, RandomFraction: r.RandomFraction, Seed: opts.Seed}
	if opts.ManipEpisodes > 0 {
		c.Episodes = opts.ManipEpisodes
	}
	if opts.ManipNoise != nil {
		c.Noise = *opts.ManipNoise
	}
	if opts.ManipRandomFraction != nil {
		c.RandomFraction = *opts.ManipRandomFraction
	}
	return c
}

// writeManip makes manipulation dataset name and writes
// opts.Out/<name>.hdf5. The returned record's MeanReturn is the mean
// episode return and Normalized the percentage of episodes that reached
// the goal at some step (as for AntMaze; the task has no reference
// returns), SuccessEpisodes their count.
func writeManip(ctx context.Context, name string, opts *D4RLOptions, progress meter.Progress) (D4RLFile, error) {
	t0 := time.Now()
	cfg := manipConfig(name, opts)
	cfg.Progress = progress
	f := D4RLFile{Name: name, Path: filepath.Join(opts.Out, name+".hdf5"), Policy: "scripted " + name}
	d, infos, st, err := ManipDataset(ctx, cfg)
	if err != nil {
		return f, err
	}
	f.Description = d.Meta["description"]
	if err := dataset.WriteD4RL(f.Path, d, dataset.WithInfo(ManipInfoSuccess, infos[ManipInfoSuccess])); err != nil {
		return f, err
	}
	f.Rows, f.Episodes, f.MeanReturn = d.Len(), st.Episodes, st.MeanReturn
	f.Normalized = 100 * float64(st.SuccessEpisodes) / float64(st.Episodes)
	f.SuccessEpisodes = &st.SuccessEpisodes
	f.Seconds = time.Since(t0).Seconds()
	return f, nil
}
