package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

func init() {
	var (
		envName  string
		policy   string
		episodes int
		seed     uint64
		workers  int
		jsonOut  string
		runDir   string
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate a policy (a trained policy.safetensors or 'random') in a simulator",
		Long: "eval runs deterministic episodes (tanh of the policy mean) and prints the mean ± std return and,\n" +
			"where the environment has reference returns, the normalized score 100·(R − R_random)/(R_expert − R_random).\n" +
			"A policy file is checked against the environment before any episode runs: the env it records, its\n" +
			"observation and action sizes and its action bounds must match.\n" +
			"With --run DIR it replays a finished run's final evaluation instead: the policy in DIR (a run directory,\n" +
			"or a sweep slot holding one) with the env, episodes and seed its results.json records, episode by\n" +
			"episode against the record; it exits 1 when any episode differs.\n" +
			"Environments: " + strings.Join(env.Names(), ", "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Everything is checked before the first episode: flags, the
			// output file, the env, and that the policy fits the env.
			if err := needPositive("episodes", episodes); err != nil {
				return err
			}
			if err := needPositive("workers", workers); err != nil {
				return err
			}
			if jsonOut != "" {
				if err := needOutFile("json", jsonOut); err != nil {
					return err
				}
			}
			if runDir != "" {
				for _, f := range []string{"policy", "env", "episodes", "seed"} {
					if cmd.Flags().Changed(f) {
						return fmt.Errorf("--run replays the run's recorded evaluation: --%s cannot be given with it", f)
					}
				}
				return replayRun(runDir, workers, jsonOut)
			}
			var newPolicy func() eval.Policy
			switch policy {
			case "random", "untrained":
				if envName == "" {
					return fmt.Errorf("--env is required with --policy %s", policy)
				}
				e, err := env.Make(envName)
				if err != nil {
					return fmt.Errorf("--env: %w", err)
				}
				if policy == "random" {
					sp := e.ActionSpace()
					var k uint64
					newPolicy = func() eval.Policy {
						k++
						return &eval.RandomPolicy{Space: sp, Rng: rand.New(rand.NewPCG(seed^0x7a4d, k))}
					}
					workers = 1 // one stream per worker: keep the draw order fixed
					break
				}
				scale, err := sac.Scale(e)
				if err != nil {
					return err
				}
				obsDim := e.ObservationSpace().Dim()
				actor := sac.NewActor(sac.DefaultNetConfig(), obsDim, len(scale.Low), rand.New(rand.NewPCG(seed, 0x5eed)))
				p := sac.NewPolicy(actor, nil, scale)
				newPolicy = func() eval.Policy { return p.Clone() }
			default:
				p, recorded, err := run.LoadPolicy(policy)
				if err != nil {
					return fmt.Errorf("--policy: %w", err)
				}
				if envName == "" {
					if recorded == "" {
						return fmt.Errorf("--env is required: policy %s records no environment", policy)
					}
					envName = recorded
				}
				e, err := env.Make(envName)
				if err != nil {
					return fmt.Errorf("--env: %w", err)
				}
				if err := run.CheckPolicyEnv(policy, p, recorded, envName, e); err != nil {
					return err
				}
				newPolicy = func() eval.Policy { return p.Clone() }
			}
			res, err := eval.Evaluate(envName, newPolicy, episodes, seed, workers)
			if err != nil {
				return err
			}
			fmt.Printf("%s, policy %s, %s (seed %d): return %.2f ± %.2f (min %.2f, max %.2f)\n",
				envName, policy, plural.Count(episodes, "episode"), seed, res.Mean, res.Std, res.Min, res.Max)
			if !math.IsNaN(float64(res.Normalized)) {
				_, ref, _ := eval.ReferenceFor(envName)
				fmt.Printf("normalized score %.2f ± %.2f (random %.4g, expert %.4g: %s)\n", res.Normalized, res.NormalizedStd, ref.Random, ref.Expert, ref.Source)
			}
			if !math.IsNaN(float64(res.SuccessRate)) {
				fmt.Printf("success rate %.1f%% (%d of %s reached the goal)\n", 100*res.SuccessRate,
					int(math.Round(float64(res.SuccessRate)*float64(episodes))), plural.Count(episodes, "episode"))
			}
			if jsonOut != "" {
				return writeJSONFile(jsonOut, struct {
					Result     eval.Result    `json:"result"`
					Policy     string         `json:"policy"`
					Provenance run.Provenance `json:"provenance"`
				}{res, policy, run.CurrentProvenance()})
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&envName, "env", "", "environment (default: the one recorded in the policy file)")
	f.StringVar(&policy, "policy", "random", "policy file (policy.safetensors from 'koopq train'), 'random' (uniform actions) or 'untrained' (a freshly initialized 2×256 actor, seeded by --seed)")
	f.IntVar(&episodes, "episodes", 10, "episodes")
	f.Uint64Var(&seed, "seed", 0, "seed of the episodes' initial states")
	f.IntVar(&workers, "workers", 2, "parallel episode workers")
	f.StringVar(&jsonOut, "json", "", "also write the result to this JSON file")
	f.StringVar(&runDir, "run", "", "replay the final evaluation of this finished run (its directory, or a sweep slot holding it) and compare it with results.json")
	rootCmd.AddCommand(cmd)
}

// replayRun replays the final evaluation of the finished run at dir and
// reports it against the record; a difference is an error (exit 1).
func replayRun(dir string, workers int, jsonOut string) error {
	r, err := run.ReplayFinalEval(dir, workers)
	if err != nil {
		return err
	}
	rec, got := r.Recorded, r.Replayed
	fmt.Printf("%s: final evaluation, %s, %s (seed %d)\n", r.Run, rec.Env, plural.Count(rec.Episodes, "episode"), rec.Seed)
	fmt.Printf("recorded return %.2f ± %.2f", rec.Mean, rec.Std)
	if !math.IsNaN(float64(rec.Normalized)) {
		fmt.Printf(", normalized %.2f", rec.Normalized)
	}
	fmt.Printf("\nreplayed return %.2f ± %.2f", got.Mean, got.Std)
	if !math.IsNaN(float64(got.Normalized)) {
		fmt.Printf(", normalized %.2f", got.Normalized)
	}
	fmt.Println()
	if jsonOut != "" {
		if err := writeJSONFile(jsonOut, struct {
			*run.Replay
			Provenance run.Provenance `json:"provenance"`
		}{r, run.CurrentProvenance()}); err != nil {
			return err
		}
	}
	if !r.Identical {
		return fmt.Errorf("the replay differs from the record: %s (another machine, GEMM backend or koopq version can round differently; results.json's provenance says which trained it)", r.Difference)
	}
	fmt.Printf("identical: every episode's return and length equal the record\n")
	return nil
}
