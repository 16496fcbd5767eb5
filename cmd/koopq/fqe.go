package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/ope"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/sac"
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
	UndiscLow      eval.Score     `json:"undiscounted_low"`  // NaN (null) with --bootstrap 0
	UndiscHigh     eval.Score     `json:"undiscounted_high"` // NaN (null) with --bootstrap 0
	Env            string         `json:"env,omitempty"`
	Normalized     eval.Score     `json:"normalized"`
	NormalizedLow  eval.Score     `json:"normalized_low"`
	NormalizedHigh eval.Score     `json:"normalized_high"`
	Provenance     run.Provenance `json:"provenance"`
}

// fqeOptions holds the flag values of 'koopq fqe'.
type fqeOptions struct {
	policy  string
	data    string
	envName string
	jsonOut string
	horizon int
	cfg     ope.Config // --gamma, --steps, --batch, --lr, --tau, --hidden, --seed, --fits, --bootstrap, --level
	ropts   dataset.ReadOptions
}

// newFQECmd makes 'koopq fqe'.
func newFQECmd() *cobra.Command {
	o := new(fqeOptions)
	*o = defaultFQEOptions()
	cmd := &cobra.Command{
		Use:   "fqe",
		Short: "Estimate a policy's return from a dataset alone (Fitted Q Evaluation)",
		Long:  fqeLong,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	fqeParams().MustRegister(cmd.Flags(), o, defaultFQEOptions())
	return cmd
}

// defaultFQEOptions is the flag defaults: ope.DefaultConfig, one fit, a
// 1000-step horizon.
func defaultFQEOptions() fqeOptions {
	o := fqeOptions{cfg: ope.DefaultConfig(), horizon: 1000}
	o.cfg.Fits = 1
	return o
}

// fqeParams is the table of 'koopq fqe' settings; ope.Config.Validate
// keeps the checks across settings (--level only matters with
// --bootstrap, the network's layout).
func fqeParams() param.Table[fqeOptions] {
	type o = fqeOptions
	return append(param.Table[o]{
		param.New("policy", "", "policy file (policy.safetensors) or a run directory holding one", func(o *o) any { return &o.policy }, param.AnyValue),
		param.New("data", "", "dataset: D4RL-layout HDF5, Minari HDF5 file or Minari dataset directory", func(o *o) any { return &o.data }, param.AnyValue),
		param.New("env", "", "environment for the normalized score (default: the policy's recorded env, else the data's)", func(o *o) any { return &o.envName }, param.AnyValue),
		param.New("gamma", "", "discount of the estimated value", func(o *o) any { return &o.cfg.Gamma }, param.OpenFraction),
		param.New("steps", "", "gradient steps", func(o *o) any { return &o.cfg.Steps }, param.Positive),
		param.New("batch", "", "minibatch rows", func(o *o) any { return &o.cfg.Batch }, param.Positive),
		param.New("lr", "", "Adam learning rate", func(o *o) any { return &o.cfg.LR }, param.Positive),
		param.New("tau", "", "Polyak rate of the target network", func(o *o) any { return &o.cfg.Tau }, param.OpenUnit),
		param.New("hidden", "", "hidden widths of the Q network", func(o *o) any { return &o.cfg.Hidden }, param.Positive),
		param.New("seed", "", "seed (initialization, minibatches, bootstrap)", func(o *o) any { return &o.cfg.Seed }, param.AnyValue),
		param.New("fits", "", "independent Q fits averaged (seeds seed … seed+fits−1); their spread is reported", func(o *o) any { return &o.cfg.Fits }, param.Between(1, 1000)),
		param.New("bootstrap", "", "bootstrap resamples over episodes (0: no interval)", func(o *o) any { return &o.cfg.Bootstrap }, param.NonNegative),
		param.New("level", "", "confidence level of the interval", func(o *o) any { return &o.cfg.Level }, param.OpenFraction),
		param.New("horizon", "", "episode horizon H of the undiscounted estimate", func(o *o) any { return &o.horizon }, param.Positive),
		param.New("json", "", "also write the result to this JSON file", func(o *o) any { return &o.jsonOut }, param.AnyValue),
	}, readParams(func(o *o) *dataset.ReadOptions { return &o.ropts })...)
}

// fqeLong is the long help of 'koopq fqe'.
const fqeLong = "fqe fits a Q network to the policy's Bellman targets r + γ(1−terminal)·Q̄(s′, π(s′)) on --data\n" +
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
	"lets 'koopq report' rank runs trained without a simulator (--env none) by this estimate."

// validate checks the flags and the output file; run checks that the
// policy fits the data before fitting.
func (o *fqeOptions) validate() error {
	if o.policy == "" {
		return fmt.Errorf("--policy is required: a policy.safetensors or a run directory")
	}
	if o.data == "" {
		return fmt.Errorf("--data is required: a D4RL-layout or Minari HDF5 file")
	}
	if err := firstErr(fqeParams().Validate(o), o.cfg.Validate()); err != nil {
		return err
	}
	if _, _, ok := eval.ReferenceFor(o.envName); o.envName != "" && !ok {
		return fmt.Errorf("--env %q: no reference returns for it, so no normalized estimate (known: %s)", o.envName, strings.Join(referenceNames(), ", "))
	}
	if o.jsonOut != "" {
		return needOutFile("json", o.jsonOut, inFile{"policy", o.policy}, inFile{"data", o.data})
	}
	return nil
}

// run fits FQE for the policy on the data, prints the estimates and with
// --json writes them.
func (o *fqeOptions) run() error {
	path, err := rundir.PolicyPath(o.policy)
	if err != nil {
		return fmt.Errorf("--policy %w", err)
	}
	p, meta, err := sac.ReadPolicy(path)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	recorded := meta["env"]
	d, err := run.ReadDataset(o.data, o.ropts)
	if err != nil {
		return err
	}
	if err := ope.CheckInputs(d, p); err != nil {
		return fmt.Errorf("--policy %s on --data %s: %w", path, o.data, err)
	}
	pfp, err := fingerprint.Of(path)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	res, err := ope.Evaluate(d, p, o.cfg)
	if err != nil {
		return err
	}
	rep := o.report(path, res)
	rep.PolicySHA256, rep.DataContentSHA256 = pfp.SHA256, d.ContentSHA256()
	rep.Env = o.envName
	if rep.Env != "" && recorded != "" && recorded != run.EnvNone && recorded != rep.Env {
		return fmt.Errorf("--env %s: policy %s was trained on %q (omit --env to use the recorded one)", rep.Env, path, recorded)
	}
	if rep.Env == "" && recorded != run.EnvNone {
		rep.Env = recorded
	}
	if rep.Env == "" {
		rep.Env = d.Meta["env"]
	}
	o.print(&rep, d.Len())
	if o.jsonOut != "" {
		return writeJSONFile(o.jsonOut, rep)
	}
	return nil
}

// report makes the --json report of res for the policy file path, with
// the undiscounted estimates and no normalized score yet.
func (o *fqeOptions) report(path string, res *ope.Result) fqeReport {
	cfg, h := o.cfg, o.horizon
	nan := eval.Score(math.NaN())
	return fqeReport{Policy: path, Data: o.data, Result: res, Horizon: h,
		Undiscounted: ope.UndiscountedEstimate(res.Value, cfg.Gamma, h),
		UndiscLow:    eval.Score(ope.UndiscountedEstimate(res.Low, cfg.Gamma, h)),
		UndiscHigh:   eval.Score(ope.UndiscountedEstimate(res.High, cfg.Gamma, h)),
		Normalized:   nan, NormalizedLow: nan, NormalizedHigh: nan,
		Provenance: run.CurrentProvenance()}
}

// print prints the estimates of rep (rows: the data's row count) and fills
// in the normalized ones when rep.Env has reference returns.
func (o *fqeOptions) print(rep *fqeReport, rows int) {
	cfg, res := o.cfg, rep.Result
	fmt.Printf("fqe %s on %s (%d rows, %d episodes; γ %g, %d steps, seed %d):\n", rep.Policy, o.data, rows, res.Episodes, cfg.Gamma, cfg.Steps, cfg.Seed)
	fmt.Printf("discounted value %.2f, %g%% interval [%.2f, %.2f] over episodes; final Bellman MSE %.4g\n", res.Value, 100*cfg.Level, res.Low, res.High, res.FinalLoss)
	if len(res.FitValues) > 1 {
		fmt.Printf("%d fits (seeds %d–%d): values %s; std %.2f, 95%% t-interval of their mean [%.2f, %.2f]\n",
			len(res.FitValues), cfg.Seed, cfg.Seed+uint64(len(res.FitValues)-1), fmtFloats(res.FitValues, "%.2f"), res.FitStd, res.FitLow, res.FitHigh)
	}
	fmt.Printf("undiscounted estimate over %d steps %.1f [%.1f, %.1f] (constant-rate rescaling)\n", o.horizon, rep.Undiscounted, rep.UndiscLow, rep.UndiscHigh)
	if name, ref, ok := eval.ReferenceFor(rep.Env); ok && rep.Env != "" {
		rep.Normalized = eval.Score(ref.Normalize(rep.Undiscounted))
		rep.NormalizedLow = eval.Score(ref.Normalize(float64(rep.UndiscLow)))
		rep.NormalizedHigh = eval.Score(ref.Normalize(float64(rep.UndiscHigh)))
		fmt.Printf("normalized estimate %.1f [%.1f, %.1f] (%s references: %s)\n", rep.Normalized, rep.NormalizedLow, rep.NormalizedHigh, name, ref.Source)
	}
}

// fmtFloats formats x with verb, comma-separated, for messages.
func fmtFloats(x []float64, verb string) string {
	parts := make([]string, len(x))
	for i, v := range x {
		parts[i] = fmt.Sprintf(verb, v)
	}
	return strings.Join(parts, ", ")
}
