package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/ope"
	"github.com/koopq/koopq/run"
)

// fqeReport is what `koopq fqe --json` writes.
type fqeReport struct {
	Policy string      `json:"policy"`
	Data   string      `json:"data"`
	Result *ope.Result `json:"result"`
	// PolicySHA256 is the sha256 of the policy file and DataContentSHA256
	// that of the transitions as read (dataset.ContentSHA256): `koopq
	// report --fqe` ranks a run by this file only while the run's
	// policy.safetensors still has this digest, and only against estimates
	// on the same data.
	PolicySHA256      string `json:"policy_sha256"`
	DataContentSHA256 string `json:"data_content_sha256"`
	// Horizon and the undiscounted estimate R ≈ V·H(1−γ)/(1−γᴴ) (with its
	// interval); Normalized* is that estimate on the D4RL scale when the
	// env has reference returns (NaN → null otherwise).
	Horizon        int            `json:"horizon"`
	Undiscounted   float64        `json:"undiscounted"`
	UndiscLow      float64        `json:"undiscounted_low"`
	UndiscHigh     float64        `json:"undiscounted_high"`
	Env            string         `json:"env,omitempty"`
	Normalized     eval.Score     `json:"normalized"`
	NormalizedLow  eval.Score     `json:"normalized_low"`
	NormalizedHigh eval.Score     `json:"normalized_high"`
	Provenance     run.Provenance `json:"provenance"`
}

func init() {
	var (
		policy, data, envName, jsonOut string
		horizon                        int
	)
	cfg := ope.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "fqe",
		Short: "Estimate a policy's return from a dataset alone (Fitted Q Evaluation)",
		Long: "fqe fits a Q network to the policy's Bellman targets r + γ(1−terminal)·Q̄(s′, π(s′)) on --data\n" +
			"(π's deterministic action tanh(μ), a Polyak-averaged target Q̄, a fixed number of --steps) and prints\n" +
			"the mean over the data's episodes of Q(s₀, π(s₀)): the policy's discounted return from the data's\n" +
			"initial states, with a percentile bootstrap interval over episodes (initial states only: the Q fit is\n" +
			"done once, its error is not in the interval).\n" +
			"It also prints an undiscounted estimate V·H(1−γ)/(1−γᴴ) over --horizon steps, which assumes a\n" +
			"constant reward rate for all H steps (it overestimates policies that fall early), and that estimate\n" +
			"normalized with the D4RL reference returns when the env (the policy's, or --env) is known.\n" +
			"--fits K averages K independent Q fits (seeds seed … seed+K−1) and reports their spread, a 95%\n" +
			"t-interval of the fits' mean: the fitting noise the episode bootstrap leaves out.\n" +
			"Use FQE to rank policies; see docs/ope.md for how well it ranks hopper-medium policies.\n" +
			"--policy is a policy.safetensors or a run directory. With a run directory, --json RUN/fqe.json\n" +
			"lets 'koopq report' rank runs trained without a simulator (--env none) by this estimate.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if policy == "" {
				return fmt.Errorf("--policy is required: a policy.safetensors or a run directory")
			}
			if data == "" {
				return fmt.Errorf("--data is required: a D4RL-layout or Minari HDF5 file")
			}
			if err := needPositive("horizon", horizon); err != nil {
				return err
			}
			if err := needPositive("fits", cfg.Fits); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			if jsonOut != "" {
				if err := needOutFile("json", jsonOut); err != nil {
					return err
				}
			}
			path, err := policyPath(policy)
			if err != nil {
				return err
			}
			p, recorded, err := run.LoadPolicy(path)
			if err != nil {
				return fmt.Errorf("--policy: %w", err)
			}
			d, err := run.ReadDataset(data, dataset.ReadOptions{})
			if err != nil {
				return err
			}
			if err := ope.CheckInputs(d, p); err != nil {
				return fmt.Errorf("--policy %s on --data %s: %w", path, data, err)
			}
			pfp, err := fingerprint.Of(path)
			if err != nil {
				return fmt.Errorf("--policy: %w", err)
			}
			res, err := ope.Evaluate(d, p, cfg)
			if err != nil {
				return err
			}
			rep := fqeReport{Policy: path, Data: data, Result: res, Horizon: horizon,
				PolicySHA256: pfp.SHA256, DataContentSHA256: d.ContentSHA256(),
				Undiscounted: ope.UndiscountedEstimate(res.Value, cfg.Gamma, horizon),
				UndiscLow:    ope.UndiscountedEstimate(res.Low, cfg.Gamma, horizon),
				UndiscHigh:   ope.UndiscountedEstimate(res.High, cfg.Gamma, horizon),
				Normalized:   eval.Score(math.NaN()), NormalizedLow: eval.Score(math.NaN()), NormalizedHigh: eval.Score(math.NaN()),
				Provenance: run.CurrentProvenance()}
			if envName == "" {
				envName = recorded
			}
			if envName == "" {
				envName = d.Meta["env"]
			}
			rep.Env = envName
			fmt.Printf("fqe %s on %s (%d rows, %d episodes; γ %g, %d steps, seed %d):\n", path, data, d.Len(), res.Episodes, cfg.Gamma, cfg.Steps, cfg.Seed)
			fmt.Printf("discounted value %.2f, %g%% interval [%.2f, %.2f] over episodes; final Bellman MSE %.4g\n", res.Value, 100*cfg.Level, res.Low, res.High, res.FinalLoss)
			if len(res.FitValues) > 1 {
				fmt.Printf("%d fits (seeds %d–%d): values %s; std %.2f, 95%% t-interval of their mean [%.2f, %.2f]\n",
					len(res.FitValues), cfg.Seed, cfg.Seed+uint64(len(res.FitValues)-1), fmtFloats(res.FitValues, "%.2f"), res.FitStd, res.FitLow, res.FitHigh)
			}
			fmt.Printf("undiscounted estimate over %d steps %.1f [%.1f, %.1f] (constant-rate rescaling)\n", horizon, rep.Undiscounted, rep.UndiscLow, rep.UndiscHigh)
			if name, ref, ok := eval.ReferenceFor(envName); ok && envName != "" {
				rep.Normalized = eval.Score(ref.Normalize(rep.Undiscounted))
				rep.NormalizedLow = eval.Score(ref.Normalize(rep.UndiscLow))
				rep.NormalizedHigh = eval.Score(ref.Normalize(rep.UndiscHigh))
				fmt.Printf("normalized estimate %.1f [%.1f, %.1f] (%s references: %s)\n", rep.Normalized, rep.NormalizedLow, rep.NormalizedHigh, name, ref.Source)
			}
			if jsonOut != "" {
				return writeJSONFile(jsonOut, rep)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&policy, "policy", "", "policy file (policy.safetensors) or a run directory holding one")
	f.StringVar(&data, "data", "", "dataset: D4RL-layout HDF5, Minari main_data.hdf5 or Minari dataset directory")
	f.StringVar(&envName, "env", "", "environment for the normalized score (default: the policy's recorded env, else the data's)")
	f.Float64Var(&cfg.Gamma, "gamma", cfg.Gamma, "discount of the estimated value")
	f.IntVar(&cfg.Steps, "steps", cfg.Steps, "gradient steps")
	f.IntVar(&cfg.Batch, "batch", cfg.Batch, "minibatch rows")
	f.Float64Var(&cfg.LR, "lr", cfg.LR, "Adam learning rate")
	f.Float64Var(&cfg.Tau, "tau", cfg.Tau, "Polyak rate of the target network")
	f.IntSliceVar(&cfg.Hidden, "hidden", cfg.Hidden, "hidden widths of the Q network")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed (initialization, minibatches, bootstrap)")
	f.IntVar(&cfg.Fits, "fits", 1, "independent Q fits averaged (seeds seed … seed+fits−1); their spread is reported")
	f.IntVar(&cfg.Bootstrap, "bootstrap", cfg.Bootstrap, "bootstrap resamples over episodes (0: no interval)")
	f.Float64Var(&cfg.Level, "level", cfg.Level, "confidence level of the interval")
	f.IntVar(&horizon, "horizon", 1000, "episode horizon H of the undiscounted estimate")
	f.StringVar(&jsonOut, "json", "", "also write the result to this JSON file")
	rootCmd.AddCommand(cmd)
}

// fmtFloats formats x with verb, comma-separated, for messages.
func fmtFloats(x []float64, verb string) string {
	parts := make([]string, len(x))
	for i, v := range x {
		parts[i] = fmt.Sprintf(verb, v)
	}
	return strings.Join(parts, ", ")
}
