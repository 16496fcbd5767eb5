package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/env/manip"
	"github.com/koopq/koopq/env/panda"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/sac"
)

// evalOptions holds the flag values of 'koopq eval'.
type evalOptions struct {
	envName  string
	policy   string
	episodes int
	seed     uint64
	workers  int
	jsonOut  string
	runDirs  []string
	gamma    float64

	flags *pflag.FlagSet // the command's flags, to tell which were given
}

// newEvalCmd makes 'koopq eval'.
func newEvalCmd() *cobra.Command {
	o := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate a policy (a trained policy.safetensors or 'random') in a simulator",
		Long: "eval runs deterministic episodes (tanh of the policy mean) and prints the mean ± std return and,\n" +
			"where the environment has reference returns, the normalized score 100·(R − R_random)/(R_expert − R_random).\n" +
			"A policy file is checked against the environment before any episode runs: the env it records, its\n" +
			"observation and action sizes and its action bounds must match.\n" +
			"With --run DIR it replays finished runs' final evaluations instead: each run's policy with the env,\n" +
			"episodes and seed its results.json records, episode by episode against the record. DIR is a run\n" +
			"directory, a sweep slot, or a directory of runs (a sweep's --out, 'train --out'); --run repeats. It\n" +
			"exits 1 when any episode of any run differs, or when no run could be replayed; runs without\n" +
			"policy.safetensors are listed and skipped.\n" +
			"With --run DIR --episodes N --seed S it re-evaluates those policies instead, on N fresh episodes from\n" +
			"seed S, and prints each next to its recorded final score, with the difference (how noisy the\n" +
			"recorded score was).\n" +
			"--gamma G also reports each episode's discounted return Σₜ Gᵗ rₜ and their mean (what 'koopq fqe'\n" +
			"estimates from data, to check an off-policy estimate against the simulator).\n" +
			"Environments with a per-step success test (manipulation, MetaWorld style: " + strings.Join(manip.Names(), ", ") +
			"; RoboSuite style: " + strings.Join(panda.Names(), ", ") + ")\n" +
			"also report the success rate: the percentage of episodes whose test held at any step (MetaWorld's measure),\n" +
			"with --run beside the recorded one.\n" +
			"Environments: " + strings.Join(env.Names(), ", "),
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	o.flags = cmd.Flags()
	f := cmd.Flags()
	evalParams().MustRegister(f, o, defaultEvalOptions())
	// --run repeats (a string array, not a comma list): declared here, outside the table.
	f.StringArrayVar(&o.runDirs, "run", nil, "replay the final evaluation of the finished runs in this directory (a run, a sweep slot, a sweep or 'train --out' directory; repeatable) and compare each with its results.json; with --episodes and --seed, re-evaluate their final policies on fresh episodes")
	return cmd
}

// defaultEvalOptions is the flag defaults (a random policy, 10 episodes on 2 workers).
func defaultEvalOptions() evalOptions {
	return evalOptions{policy: "random", episodes: 10, workers: 2}
}

// evalParams is the table of 'koopq eval' settings; eval.CheckEpisodes
// and the --run combinations are code in validate.
func evalParams() param.Table[evalOptions] {
	type o = evalOptions
	return param.Table[o]{
		param.New("env", "", "environment (default: the one recorded in the policy file)", func(o *o) any { return &o.envName }, param.AnyValue),
		param.New("policy", "", "policy file (policy.safetensors from 'koopq train') or a run directory holding one, 'random' (uniform actions) or 'untrained' (a freshly initialized 2×256 actor, seeded by --seed)", func(o *o) any { return &o.policy }, param.AnyValue),
		param.New("episodes", "", "episodes", func(o *o) any { return &o.episodes }, param.Positive),
		param.New("seed", "", "seed of the episodes' initial states", func(o *o) any { return &o.seed }, param.AnyValue),
		param.New("workers", "", "parallel episode workers", func(o *o) any { return &o.workers }, param.Positive),
		param.New("gamma", "", "also report the discounted return Σ γᵗ rₜ per episode with this discount in (0, 1) (0: none)", func(o *o) any { return &o.gamma }, param.Discount),
		param.New("json", "", "also write the result to this JSON file", func(o *o) any { return &o.jsonOut }, param.AnyValue),
	}
}

// validate checks the flags and the output file; run checks the env and
// that the policy fits it, all before the first episode.
func (o *evalOptions) validate() error {
	if err := firstErr(evalParams().Validate(o), eval.CheckEpisodes(o.episodes)); err != nil {
		return err
	}
	if o.jsonOut != "" {
		if err := needOutFile("json", o.jsonOut, inFile{"policy", o.policy}); err != nil {
			return err
		}
	}
	if !o.flags.Changed("run") {
		switch o.policy {
		case "":
			return fmt.Errorf("--policy: empty; give a policy file, random or untrained")
		case "random", "untrained":
			if o.envName == "" {
				return fmt.Errorf("--env is required with --policy %s", o.policy)
			}
		}
		return nil
	}
	for _, d := range o.runDirs {
		if d == "" {
			return fmt.Errorf("--run: empty directory name")
		}
	}
	for _, f := range []string{"policy", "env", "gamma"} {
		if o.flags.Changed(f) {
			return fmt.Errorf("--run evaluates each run's own policy on the env its results.json records: --%s cannot be given with it", f)
		}
	}
	if ep, sd := o.flags.Changed("episodes"), o.flags.Changed("seed"); ep != sd {
		return fmt.Errorf("--run with --episodes and --seed re-evaluates the runs' final policies on fresh episodes: " +
			"give both (without either, --run replays the recorded evaluation)")
	}
	return nil
}

// run evaluates the policy, or with --run replays or re-evaluates the
// runs; validate has passed.
func (o *evalOptions) run() error {
	if o.flags.Changed("run") {
		if o.flags.Changed("episodes") {
			return reevaluateRuns(o.runDirs, o.episodes, o.seed, o.workers, o.jsonOut)
		}
		return replayRuns(o.runDirs, o.workers, o.jsonOut)
	}
	newPolicy, err := o.policyMaker()
	if err != nil {
		return err
	}
	envName, episodes, gamma := o.envName, o.episodes, o.gamma
	res, err := eval.EvaluateDiscounted(envName, newPolicy, episodes, o.seed, o.workers, gamma)
	if err != nil {
		return err
	}
	fmt.Printf("%s, policy %s, %s (seed %d): return %.2f ± %.2f (min %.2f, max %.2f)\n",
		envName, o.policy, plural.Count(episodes, "episode"), o.seed, res.Mean, res.Std, res.Min, res.Max)
	if gamma > 0 {
		_, sd := eval.MeanStd(res.DiscountedReturns)
		fmt.Printf("discounted return (γ %g) %.2f ± %.2f\n", gamma, res.DiscountedMean, sd)
	}
	if !math.IsNaN(float64(res.Normalized)) {
		_, ref, _ := eval.ReferenceFor(envName)
		fmt.Printf("normalized score %.2f ± %.2f (random %.4g, expert %.4g: %s)\n", res.Normalized, res.NormalizedStd, ref.Random, ref.Expert, ref.Source)
	}
	if !math.IsNaN(float64(res.SuccessRate)) {
		fmt.Printf("success rate %.1f%% (%d of %s reached the goal)\n", 100*res.SuccessRate,
			int(math.Round(float64(res.SuccessRate)*float64(episodes))), plural.Count(episodes, "episode"))
	}
	if o.jsonOut != "" {
		return writeJSONFile(o.jsonOut, struct {
			Result     eval.Result    `json:"result"`
			Policy     string         `json:"policy"`
			Provenance run.Provenance `json:"provenance"`
		}{res, o.policy, run.CurrentProvenance()})
	}
	return nil
}

// policyMaker makes --policy's policy for each episode worker, after it
// checked the env and that the policy fits it. It settles --env (a policy
// file's recorded env when not given) and, for random, --workers.
func (o *evalOptions) policyMaker() (func() eval.Policy, error) {
	switch o.policy {
	case "random", "untrained":
		e, err := env.Make(o.envName)
		if err != nil {
			return nil, fmt.Errorf("--env: %w", err)
		}
		if o.policy == "random" {
			sp := e.ActionSpace()
			var k uint64
			o.workers = 1 // one stream per worker: keep the draw order fixed
			return func() eval.Policy {
				k++
				return &eval.RandomPolicy{Space: sp, Rng: rand.New(rand.NewPCG(o.seed^0x7a4d, k))}
			}, nil
		}
		scale, err := sac.Scale(e)
		if err != nil {
			return nil, err
		}
		obsDim := e.ObservationSpace().Dim()
		actor := sac.NewActor(sac.DefaultNetConfig(), obsDim, len(scale.Low), rand.New(rand.NewPCG(o.seed, 0x5eed)))
		p := sac.NewPolicy(actor, nil, scale)
		return func() eval.Policy { return p.Clone() }, nil
	}
	path, err := rundir.PolicyPath(o.policy)
	if err != nil {
		return nil, fmt.Errorf("--policy %w", err)
	}
	o.policy = path
	p, meta, err := sac.ReadPolicy(path)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	recorded := meta["env"]
	if o.envName == "" {
		if recorded == "" {
			return nil, fmt.Errorf("--env is required: policy %s records no environment", o.policy)
		}
		if recorded == run.EnvNone {
			return nil, fmt.Errorf("--env is required: policy %s was trained without a simulator (--env none); name the env to evaluate it in", o.policy)
		}
		o.envName = recorded
	}
	e, err := env.Make(o.envName)
	if err != nil {
		return nil, fmt.Errorf("--env: %w", err)
	}
	if err := run.CheckPolicyEnv(o.policy, p, recorded, o.envName, e); err != nil {
		return nil, err
	}
	return func() eval.Policy { return p.Clone() }, nil
}

// replayRuns replays the final evaluation of every finished run under
// dirs, one line per run, and reports the ones that differ from their
// records as an error (exit 1); runs without a policy are listed, not
// failed, unless no run could be replayed at all.
func replayRuns(dirs []string, workers int, jsonOut string) error {
	runs, err := finishedRuns(dirs)
	if err != nil {
		return err
	}
	var replays []*run.Replay
	var differ []string
	noPolicy, err := eachWithPolicy(runs, func(dir string) error {
		r, err := run.ReplayFinalEval(dir, workers)
		if err != nil {
			return err
		}
		replays = append(replays, r)
		rec, got := r.Recorded, r.Replayed
		fmt.Printf("%s: %s, %s (seed %d): return %.2f recorded, %.2f replayed", r.Run, rec.Env,
			plural.Count(rec.Episodes, "episode"), rec.Seed, rec.Mean, got.Mean)
		if !math.IsNaN(float64(rec.Normalized)) {
			fmt.Printf(", normalized %.2f / %.2f", rec.Normalized, got.Normalized)
		}
		if !math.IsNaN(float64(rec.SuccessRate)) {
			fmt.Printf(", success rate %.1f%% / %.1f%%", 100*rec.SuccessRate, 100*got.SuccessRate)
		}
		if r.Identical {
			fmt.Println(": identical")
		} else {
			fmt.Printf(": DIFFERS, %s\n", r.Difference)
			differ = append(differ, r.Run+": "+r.Difference)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if jsonOut != "" {
		if err := writeJSONFile(jsonOut, struct {
			Replays    []*run.Replay  `json:"replays"`
			NoPolicy   []string       `json:"no_policy"`
			Provenance run.Provenance `json:"provenance"`
		}{replays, noPolicy, run.CurrentProvenance()}); err != nil {
			return err
		}
	}
	if len(runs) > 1 {
		fmt.Printf("%s replayed: %d identical, %d differ", plural.Count(len(replays), "run"), len(replays)-len(differ), len(differ))
		if len(noPolicy) > 0 {
			fmt.Printf("; %s without a policy or a simulator not replayed", plural.Count(len(noPolicy), "run"))
		}
		fmt.Println()
	}
	switch {
	case len(differ) > 0:
		return fmt.Errorf("%s of %d %s from %s (another machine, GEMM backend or koopq version can round "+
			"differently; each results.json's provenance says which trained it):\n  %s", plural.Count(len(differ), "replay"),
			len(replays), plural.Pick(len(differ), "differs", "differ"), plural.Pick(len(differ), "its record", "their records"),
			strings.Join(differ, "\n  "))
	case len(replays) == 0:
		return fmt.Errorf("no run could be replayed: %s without a policy or a simulator", plural.Count(len(noPolicy), "finished run"))
	}
	return nil
}

// finishedRuns lists the finished runs under dirs (each --run), each once,
// in the order given.
func finishedRuns(dirs []string) ([]string, error) {
	var runs []string
	seen := map[string]bool{}
	for _, d := range dirs {
		found, err := run.FindFinishedRuns(d)
		if err != nil {
			return nil, fmt.Errorf("--run: %w", err)
		}
		for _, r := range found {
			if !seen[r] {
				seen[r] = true
				runs = append(runs, r)
			}
		}
	}
	return runs, nil
}

// reevaluateRuns evaluates the final policy of every finished run under
// dirs on episodes fresh episodes from seed and prints each score beside
// the recorded final one, then the differences' mean, mean magnitude and
// largest; runs without a policy are listed, not failed, unless no run
// could be evaluated at all.
func reevaluateRuns(dirs []string, episodes int, seed uint64, workers int, jsonOut string) error {
	runs, err := finishedRuns(dirs)
	if err != nil {
		return err
	}
	var evals []*run.Reevaluation
	var sum, sumAbs, largestD float64
	var largest string
	noPolicy, err := eachWithPolicy(runs, func(dir string) error {
		r, err := run.ReevaluateFinal(dir, episodes, seed, workers)
		if err != nil {
			return err
		}
		evals = append(evals, r)
		rec, now := r.Recorded, r.Reevaluated
		what := "normalized score"
		if math.IsNaN(float64(rec.Normalized)) {
			what = "mean return"
		}
		then, _ := run.EvalScore(rec)
		score, se := run.EvalScore(now)
		d := r.Difference()
		fmt.Printf("%s: %s %s, recorded %.2f (%s, seed %d), re-evaluated %.2f ± %.2f SE (%s, seed %d): %+.2f",
			r.Run, rec.Env, what, then, plural.Count(rec.Episodes, "episode"), rec.Seed, score, se,
			plural.Count(episodes, "episode"), seed, d)
		if !math.IsNaN(float64(now.SuccessRate)) {
			fmt.Printf("; success rate %.1f%% re-evaluated", 100*now.SuccessRate)
			if !math.IsNaN(float64(rec.SuccessRate)) {
				fmt.Printf(", %.1f%% recorded", 100*rec.SuccessRate)
			}
		}
		fmt.Println()
		sum += d
		sumAbs += math.Abs(d)
		if largest == "" || math.Abs(d) > math.Abs(largestD) {
			largest, largestD = r.Run, d
		}
		return nil
	})
	if err != nil {
		return err
	}
	if jsonOut != "" {
		if err := writeJSONFile(jsonOut, struct {
			Episodes      int                 `json:"episodes"`
			Seed          uint64              `json:"seed"`
			Reevaluations []*run.Reevaluation `json:"reevaluations"`
			NoPolicy      []string            `json:"no_policy"`
			Provenance    run.Provenance      `json:"provenance"`
		}{episodes, seed, evals, noPolicy, run.CurrentProvenance()}); err != nil {
			return err
		}
	}
	if len(evals) == 0 {
		return fmt.Errorf("no run could be re-evaluated: %s without a policy or a simulator", plural.Count(len(noPolicy), "finished run"))
	}
	if len(runs) > 1 {
		n := float64(len(evals))
		fmt.Printf("%s re-evaluated: difference (re-evaluated − recorded) mean %+.2f, mean magnitude %.2f, largest %+.2f (%s)",
			plural.Count(len(evals), "run"), sum/n, sumAbs/n, largestD, largest)
		if len(noPolicy) > 0 {
			fmt.Printf("; %s without a policy or a simulator not re-evaluated", plural.Count(len(noPolicy), "run"))
		}
		fmt.Println()
	}
	return nil
}

// eachWithPolicy calls do for each run in turn and stops at its first
// error, except run.ErrNoPolicy and run.ErrNoSimulator: such runs are
// printed, collected in noPolicy and skipped.
func eachWithPolicy(runs []string, do func(dir string) error) (noPolicy []string, err error) {
	for _, dir := range runs {
		err := do(dir)
		if errors.Is(err, run.ErrNoPolicy) || errors.Is(err, run.ErrNoSimulator) {
			noPolicy = append(noPolicy, dir)
			fmt.Println(err)
			continue
		}
		if err != nil {
			return noPolicy, err
		}
	}
	return noPolicy, nil
}
