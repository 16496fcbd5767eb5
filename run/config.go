package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/regfile"
	"github.com/koopq/koopq/internal/suggest"
	"github.com/koopq/koopq/koopman"
)

// Param is one setting of a training run: the command-line flag that sets
// it, its dotted key in config.json and YAML config files (the JSON field
// names of TrainConfig), where it lives, and which values are valid. The
// table TrainParams drives the train command's flags, config-file
// validation, and the error messages (which name both the flag and the key).
// A row's Field points at *int, *uint64, *float64, *bool, *string, *[]int
// or *[]float64; its Range (internal/param) checks numbers and list entries.
type Param = param.Row[TrainConfig]

// ReadParams is the rows of the dataset reading flags (dataset.ReadOptions)
// for settings T that hold them at get(c): train's, whose config keys are
// keyPrefix + "drop_invalid" and so on ("read_options."), and those of the
// other commands that read a dataset (keyPrefix "": flags only).
// --read-timeout never has a key: it does not change what is read.
func ReadParams[T any](get func(*T) *dataset.ReadOptions, keyPrefix string) param.Table[T] {
	key := func(k string) string {
		if keyPrefix == "" {
			return ""
		}
		return keyPrefix + k
	}
	return param.Table[T]{
		param.New("drop-invalid", key("drop_invalid"), "drop transitions with NaN/Inf instead of failing", func(c *T) any { return &get(c).DropInvalid }, param.AnyValue),
		param.New("terminate-on-end", key("terminate_on_end"), "keep time-limit steps (d4rl's terminate_on_end)", func(c *T) any { return &get(c).TerminateOnEnd }, param.AnyValue),
		param.New("use-next-observations", key("use_next_observations"), "take s' from the stored next_observations instead of observations[i+1]", func(c *T) any { return &get(c).UseNextObservations }, param.AnyValue),
		param.New("max-episode-steps", key("max_episode_steps"), "time limit for files without a timeouts key (d4rl's env._max_episode_steps fallback; 0: none)", func(c *T) any { return &get(c).MaxEpisodeSteps }, param.NonNegative),
		param.New("read-timeout", "", "time limit for parsing the HDF5 file in its child process (0: 1 min + 1 s per 2 MiB of file; negative: none; never recorded in a config)", func(c *T) any { return &get(c).Timeout }, param.AnyValue),
	}
}

// TrainParams lists every setting of TrainConfig that has a flag.
func TrainParams() param.Table[TrainConfig] {
	return slices.Concat(param.Table[TrainConfig]{
		param.New("data", "data", "dataset: D4RL-layout HDF5 file, Minari HDF5 file (any name) or Minari dataset directory (required)", func(c *TrainConfig) any { return &c.Data }, param.AnyValue),
		param.New("env", "env", "environment to evaluate in, e.g. pendulum, hopper; none: no simulator, offline diagnostics instead (default: the dataset's recorded env, else none)", func(c *TrainConfig) any { return &c.Env }, param.AnyValue),
		param.New("holdout-fraction", "holdout_fraction", "with --env none: share of episodes held out for the offline diagnostics (0: 0.05)", func(c *TrainConfig) any { return &c.HoldoutFraction }, param.Fraction),
		param.New("action-low", "action_low", "with --env none: lower action bound per dimension (default: the data's minimum)", func(c *TrainConfig) any { return &c.ActionLow }, param.AnyValue),
		param.New("action-high", "action_high", "with --env none: upper action bound per dimension (default: the data's maximum)", func(c *TrainConfig) any { return &c.ActionHigh }, param.AnyValue),
	}, ReadParams(func(c *TrainConfig) *dataset.ReadOptions { return &c.ReadOptions }, "read_options."), param.Table[TrainConfig]{
		param.New("augment", "augment", "state augmentation: "+strings.Join(augment.Names(), ", ")+" (cql: plain CQL; none is an alias)", func(c *TrainConfig) any { return &c.Augment }, param.AnyValue),
		param.New("gaussian-sigma", "gaussian_sigma", "S4RL-N noise σ (also KFC's non-Koopman branch)", func(c *TrainConfig) any { return &c.GaussianSigma }, param.NonNegative),
		param.New("koopman", "koopman_model", "trained Koopman model (koopq koopman train); trained for the run when empty and needed", func(c *TrainConfig) any { return &c.KoopmanModel }, param.AnyValue),
		param.New("koopman-prob", "augment_params.koopman_prob", "p_K: per-batch probability of the Koopman shift (else S4RL-N)", func(c *TrainConfig) any { return &c.AugmentParams.KoopmanProb }, param.Fraction),
		param.New("shift-sigma", "augment_params.shift_sigma", "KFC/KFC++ ε scale in units of 3e-3 (authors' code 1.0, README 0.5)", func(c *TrainConfig) any { return &c.AugmentParams.ShiftSigma }, param.NonNegative),
		param.New("residual", "augment_params.residual", "gauge-corrected decoding s̃ = s + D(g̃) − D(g)", func(c *TrainConfig) any { return &c.AugmentParams.Residual }, param.AnyValue),
		param.New("latent-sigma", "augment_params.latent_sigma", "vae-noise ablation: latent noise σ", func(c *TrainConfig) any { return &c.AugmentParams.LatentSigma }, param.NonNegative),
		param.New("fwd-sigma", "augment_params.fwd_sigma", "fwd-prediction ablation: noise σ", func(c *TrainConfig) any { return &c.AugmentParams.FwdSigma }, param.NonNegative),
		param.New("adv-eps", "augment_params.adv_eps", "S4RL-Adv step size ε", func(c *TrainConfig) any { return &c.AugmentParams.AdvEps }, param.NonNegative),
		param.New("adv-mode", "augment_params.adv_mode", "S4RL-Adv direction: l2, sign or raw", func(c *TrainConfig) any { return &c.AugmentParams.AdvMode }, param.OneOf("", "l2", "sign", "raw")),
		param.New("shift-l2", "augment_params.shift_l2", "calibrate the augmenter's scale so the mean ‖s̃_t − s_t‖₂ equals this (0: off; paper's KFC: 2.6e-4)", func(c *TrainConfig) any { return &c.AugmentParams.ShiftL2 }, param.NonNegative),
		param.New("cache-gib", "augment_params.cache_gib", "memory budget of the per-transition Koopman cache (GiB)", func(c *TrainConfig) any { return &c.AugmentParams.CacheGiB }, param.NonNegative),
	}, NestedKoopmanParams(), param.Table[TrainConfig]{
		param.New("koopman-hidden", "koopman_hidden", "encoder/decoder widths of a Koopman model trained for the run (default: paper 512,512)", func(c *TrainConfig) any { return &c.KoopmanHidden }, param.Positive),
		param.New("koopman-latent", "koopman_latent", "latent size N of a Koopman model trained for the run (0: paper 32)", func(c *TrainConfig) any { return &c.KoopmanLatent }, param.NonNegative),
		param.New("hidden", "cql.net.hidden", "hidden widths of actor and critics, e.g. 256,256", func(c *TrainConfig) any { return &c.CQL.Net.Hidden }, param.Positive),
		param.New("init", "cql.net.init", "weight init: xavier (authors) or orthogonal (CORL)", func(c *TrainConfig) any { return &c.CQL.Net.Init }, param.AnyValue),
		param.New("gamma", "cql.gamma", "discount γ", func(c *TrainConfig) any { return &c.CQL.Gamma }, param.Discount),
		param.New("tau", "cql.tau", "target Polyak rate τ", func(c *TrainConfig) any { return &c.CQL.Tau }, param.OpenUnit),
		param.New("lr-actor", "cql.lr_actor", "policy learning rate", func(c *TrainConfig) any { return &c.CQL.LRActor }, param.Positive),
		param.New("lr-critic", "cql.lr_critic", "Q learning rate", func(c *TrainConfig) any { return &c.CQL.LRCritic }, param.Positive),
		param.New("lr-alpha-prime", "cql.lr_alpha_prime", "Lagrange α' learning rate", func(c *TrainConfig) any { return &c.CQL.LRAlphaPrime }, param.Positive),
		param.New("batch", "cql.batch", "minibatch size", func(c *TrainConfig) any { return &c.CQL.Batch }, param.Positive),
		param.New("num-actions", "cql.num_actions", "sampled actions per source in the CQL logsumexp (×3 sources)", func(c *TrainConfig) any { return &c.CQL.NumActions }, param.Positive),
		param.New("min-q-weight", "cql.min_q_weight", "CQL regularizer weight (min-Q weight)", func(c *TrainConfig) any { return &c.CQL.MinQWeight }, param.NonNegative),
		param.New("temp", "cql.temp", "logsumexp temperature", func(c *TrainConfig) any { return &c.CQL.Temp }, param.Positive),
		param.New("lagrange", "cql.lagrange", "tune α' with the Lagrange threshold (--lagrange=false turns it off)", func(c *TrainConfig) any { return &c.CQL.Lagrange }, param.AnyValue),
		param.New("lagrange-thresh", "cql.lagrange_thresh", "Lagrange threshold τ_lagrange", func(c *TrainConfig) any { return &c.CQL.LagrangeThres }, param.AnyValue),
		param.New("alpha", "cql.alpha", "entropy weight α (initial value with --auto-entropy)", func(c *TrainConfig) any { return &c.CQL.Alpha }, param.Positive),
		param.New("auto-entropy", "cql.auto_entropy", "tune α toward entropy −|A|", func(c *TrainConfig) any { return &c.CQL.AutoEntropy }, param.AnyValue),
		param.New("backup-entropy", "cql.backup_entropy", "subtract α log π in the Bellman target", func(c *TrainConfig) any { return &c.CQL.BackupEntropy }, param.AnyValue),
		param.New("bc-steps", "cql.bc_steps", "behaviour-cloning warm-up steps of the actor", func(c *TrainConfig) any { return &c.CQL.BCSteps }, param.NonNegative),
		param.New("steps", "cql.steps", "gradient steps (with --resume: a larger value extends the run)", func(c *TrainConfig) any { return &c.CQL.Steps }, param.Positive),
		param.New("actor-init", "cql.actor_init", "actor initialization: net (as --init) or torch (CORL: PyTorch default hidden layers, Xavier gain 1e-2 output)", func(c *TrainConfig) any { return &c.CQL.ActorInit }, param.AnyValue),
		param.New("log-std-offset", "cql.log_std_offset", "CORL's log σ offset: log σ = raw + offset", func(c *TrainConfig) any { return &c.CQL.LogStdOffset }, param.AnyValue),
		param.New("normalize-reward", "cql.normalize_reward", "scale rewards by reward-episode-steps/(max − min episode return) (CORL, hopper-medium)", func(c *TrainConfig) any { return &c.CQL.NormalizeReward }, param.AnyValue),
		param.New("reward-episode-steps", "cql.reward_episode_steps", "episode length cap used by --normalize-reward (0: CORL's 1000)", func(c *TrainConfig) any { return &c.CQL.RewardEpisodeSteps }, param.NonNegative),
		param.New("q1-hidden", "cql.q1_hidden", "hidden widths of the first critic (empty: --hidden; CORL AntMaze: 5×256)", func(c *TrainConfig) any { return &c.CQL.Q1Hidden }, param.Positive),
		param.New("q2-hidden", "cql.q2_hidden", "hidden widths of the second critic (empty: --hidden; CORL AntMaze: 3×256)", func(c *TrainConfig) any { return &c.CQL.Q2Hidden }, param.Positive),
		param.New("reward-scale", "cql.reward_scale", "rewards become scale·r + bias in the Bellman target (0 means 1; CORL AntMaze: 10)", func(c *TrainConfig) any { return &c.CQL.RewardScale }, param.AnyValue),
		param.New("reward-bias", "cql.reward_bias", "reward bias added after --reward-scale (CORL AntMaze: −5)", func(c *TrainConfig) any { return &c.CQL.RewardBias }, param.AnyValue),
		param.New("max-target-backup", "cql.max_target_backup", "back up the largest min-Q over --num-actions samples of π(·|s') (CORL AntMaze)", func(c *TrainConfig) any { return &c.CQL.MaxTargetBackup }, param.AnyValue),
		param.New("clip-diff", "cql.clip_diff", "clamp each state's CQL difference to [--clip-diff-min, --clip-diff-max] (CORL AntMaze)", func(c *TrainConfig) any { return &c.CQL.ClipDiff }, param.AnyValue),
		param.New("clip-diff-min", "cql.clip_diff_min", "lower clamp of --clip-diff (CORL AntMaze: −200)", func(c *TrainConfig) any { return &c.CQL.ClipDiffMin }, param.AnyValue),
		param.New("clip-diff-max", "cql.clip_diff_max", "upper clamp of --clip-diff (CORL AntMaze: none, written as 1.8e308)", func(c *TrainConfig) any { return &c.CQL.ClipDiffMax }, param.AnyValue),
		param.New("push-up-clean", "cql.push_up_clean", "CQL's push-up term Q(s, a) at the clean state instead of the shifted s̃ (authors: shifted)", func(c *TrainConfig) any { return &c.CQL.PushUpClean }, param.AnyValue),
		param.New("log-alpha-prime-init", "cql.log_alpha_prime_init", "starting log α' of the Lagrange multiplier (authors 0, CORL 1)", func(c *TrainConfig) any { return &c.CQL.LogAlphaPrimeInit }, param.AnyValue),
		param.New("normalize-states", "cql.normalize_states", "standardize states with the dataset mean/std", func(c *TrainConfig) any { return &c.CQL.Normalize }, param.AnyValue),
		param.New("seed", "cql.seed", "random seed (minibatches, policy noise, augmentation, evaluation; also koopman_train.seed)", func(c *TrainConfig) any { return &c.CQL.Seed }, param.AnyValue),
		param.New("eval-every", "eval_every", "steps between evaluations (0: only at the end; when not given and above --steps: --steps/10)", func(c *TrainConfig) any { return &c.EvalEvery }, param.NonNegative),
		param.New("eval-episodes", "eval_episodes", "episodes per evaluation", func(c *TrainConfig) any { return &c.EvalEpisodes }, param.Positive),
		param.New("log-every", "log_every", "steps between metric rows (0: none; when not given and --steps is below 10× it: --steps/100, at least 1)", func(c *TrainConfig) any { return &c.LogEvery }, param.NonNegative),
		param.New("checkpoint-every", "checkpoint_every", "steps between checkpoints (0: only at the end and on a signal)", func(c *TrainConfig) any { return &c.CheckpointEvery }, param.NonNegative),
	})
}

// KoopmanTrainPrefix is how TrainParams mounts koopman.TrainParams:
// --koopman-lr sets koopman_train.lr, and the help text says it is for the
// Koopman training. min-delta has no flag (koopman_train.min_delta is a
// config-file key only).
var KoopmanTrainPrefix = param.Prefix{Flag: "koopman-", Key: "koopman_train.", Usage: "Koopman training: ", Omit: []string{"min-delta"}}

// NestedKoopmanParams is the --koopman-… rows of TrainParams: the shared
// table of koopman.TrainConfig settings under KoopmanTrainPrefix.
func NestedKoopmanParams() param.Table[TrainConfig] {
	return param.Nest(koopman.TrainParams(), func(c *TrainConfig) *koopman.TrainConfig { return &c.KoopmanTrain }, KoopmanTrainPrefix)
}

// ScaleIntervals fits the logging and evaluation intervals that the user
// did not choose (logGiven, evalGiven: set by a flag or a config file) to a
// run shorter than they assume: a log interval of 1000 leaves a 300-step
// run with empty metrics files and plots. When --steps is below 10× the log
// interval it becomes max(1, steps/100) (about 100 metric rows); an
// evaluation interval above --steps becomes max(1, steps/10) (about 10
// evaluations, the last at the end).
func ScaleIntervals(c *TrainConfig, logGiven, evalGiven bool) {
	steps := c.CQL.Steps
	if steps <= 0 {
		return
	}
	if !logGiven && c.LogEvery > 0 && steps < 10*c.LogEvery {
		c.LogEvery = max(1, steps/100)
	}
	if !evalGiven && c.EvalEvery > steps {
		c.EvalEvery = max(1, steps/10)
	}
}

// Validate checks every setting without touching the disk: numbers finite
// and in range, required fields present, known environment and
// augmentation, and a run that reaches the CQL phase. Errors name the flag
// and the config key.
func (c TrainConfig) Validate() error {
	if err := TrainParams().Validate(&c); err != nil {
		return err
	}
	switch {
	case c.Data == "":
		return fmt.Errorf("--data (data) is required: a D4RL-layout HDF5 file or a Minari dataset ('koopq collect' makes some)")
	case c.Env == "":
		return fmt.Errorf("--env (env) is required: the simulator the policy is evaluated in (known: %s), or none", strings.Join(env.Names(), ", "))
	case len(c.CQL.Net.Hidden) == 0:
		return fmt.Errorf("--hidden (cql.net.hidden) is empty: give at least one hidden width")
	}
	if c.Env != EnvNone && !slices.Contains(env.Names(), c.Env) {
		return fmt.Errorf("--env (env) %q: unknown environment (known: %s; none trains without a simulator)%s", c.Env, strings.Join(env.Names(), ", "), suggest.Hint(c.Env, env.Names()))
	}
	if c.Env != EnvNone && (len(c.ActionLow) > 0 || len(c.ActionHigh) > 0) {
		return fmt.Errorf("--action-low/--action-high (action_low/action_high) apply only with --env none: env %s has its own action bounds", c.Env)
	}
	if c.Env == EnvNone && c.HoldoutFraction >= 1 {
		return fmt.Errorf("--holdout-fraction (holdout_fraction) = %v: must be below 1 (the rest is trained on)", c.HoldoutFraction)
	}
	if !augment.Known(c.Augment) {
		return fmt.Errorf("--augment (augment) %q: unknown augmentation (known: %s; none is an alias of cql)%s", c.Augment,
			strings.Join(augment.Names(), ", "), suggest.Hint(c.Augment, augment.Names()))
	}
	if err := c.checkShiftL2(); err != nil {
		return err
	}
	if c.CQL.Steps <= c.CQL.BCSteps {
		return fmt.Errorf("--steps (cql.steps) %d is not above --bc-steps (cql.bc_steps) %d: the whole run would be behaviour cloning "+
			"and no CQL actor update would happen; raise --steps or lower --bc-steps (e.g. --bc-steps 0)", c.CQL.Steps, c.CQL.BCSteps)
	}
	if err := c.CQL.Validate(); err != nil {
		return err
	}
	if err := c.KoopmanTrain.Validate(); err != nil {
		// Its cross-setting rules, named by flag and key.
		return param.Explain(err, koopman.TrainParams(), KoopmanTrainPrefix)
	}
	return nil
}

// Unused names the settings of c that are given but have no effect on its
// run (config.json still records them): --holdout-fraction with a
// simulator, which evaluates in it instead, and --koopman with an
// augmentation that uses no Koopman model. They are warnings, not
// errors, so that runs recorded with them still resume.
func (c TrainConfig) Unused() []string {
	var w []string
	if c.Env != EnvNone && c.HoldoutFraction != 0 {
		w = append(w, fmt.Sprintf("--holdout-fraction (holdout_fraction) %v has no effect with --env %s: it applies only with --env none", c.HoldoutFraction, c.Env))
	}
	if c.KoopmanModel != "" && !augment.NeedsKoopman(c.Augment) {
		w = append(w, fmt.Sprintf("--koopman (koopman_model) %s has no effect with --augment %s, which uses no Koopman model", c.KoopmanModel, c.Augment))
	}
	return w
}

// LoadConfigFile reads a YAML (or JSON: config.json of a run directory
// works) file of TrainConfig fields over base: keys present in the file
// replace base's values, others keep them. A top-level "preset" key picks
// the base preset (unless presetOverride is set). Unknown keys are errors
// naming the key.
func LoadConfigFile(path string, base TrainConfig, presetOverride string) (TrainConfig, error) {
	cfg, _, err := LoadConfigFileKeys(path, base, presetOverride)
	return cfg, err
}

// LoadConfigFileKeys is LoadConfigFile that also returns the top-level
// keys the file sets, from the same read, so that a caller can tell a
// value the user chose in the file from one that only equals the preset's:
// an interval the user set must not be rescaled (ScaleIntervals).
func LoadConfigFileKeys(path string, base TrainConfig, presetOverride string) (TrainConfig, map[string]bool, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return base, nil, fmt.Errorf("--config-file: %w", err)
	}
	cfg, keys, err := parseConfig(b, base, presetOverride)
	if err != nil {
		return base, nil, fmt.Errorf("--config-file %s: %w", path, err)
	}
	return cfg, keys, nil
}

// ParseConfig is LoadConfigFile on the file's text. Keys must match
// exactly (JSON decoding alone matches BATCH to batch and keeps one of two
// case variants silently), and nothing may follow the document.
func ParseConfig(text []byte, base TrainConfig, presetOverride string) (TrainConfig, error) {
	cfg, _, err := parseConfig(text, base, presetOverride)
	return cfg, err
}

// parseConfig is ParseConfig, also returning the top-level keys the text
// sets (none for an empty document).
func parseConfig(text []byte, base TrainConfig, presetOverride string) (TrainConfig, map[string]bool, error) {
	var tree any
	ydec := yaml.NewDecoder(bytes.NewReader(text))
	if err := ydec.Decode(&tree); err != nil && err != io.EOF {
		return base, nil, err
	}
	var extra yaml.Node
	if err := ydec.Decode(&extra); err == nil {
		return base, nil, fmt.Errorf("more than one document (or text after the settings, line %d)", extra.Line)
	} else if err != io.EOF {
		return base, nil, fmt.Errorf("text after the settings: %w", err)
	}
	if tree == nil {
		return base, nil, nil
	}
	m, ok := tree.(map[string]any)
	if !ok {
		return base, nil, fmt.Errorf("want a mapping of settings at the top level, got %T", tree)
	}
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	if err := exactKeys("", m, reflect.TypeOf(base)); err != nil {
		return base, nil, err
	}
	var err error
	if p, ok := m["preset"].(string); ok && presetOverride == "" && p != "" {
		if base, err = Preset(p); err != nil {
			return base, nil, err
		}
	}
	if err := finiteTree("", m); err != nil {
		return base, nil, err
	}
	js, err := json.Marshal(m)
	if err != nil {
		return base, nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	cfg := base
	cfg.CQL.Net.Hidden = slices.Clone(base.CQL.Net.Hidden)
	cfg.CQL.Q1Hidden, cfg.CQL.Q2Hidden = slices.Clone(base.CQL.Q1Hidden), slices.Clone(base.CQL.Q2Hidden)
	if err := dec.Decode(&cfg); err != nil {
		// The text went through encoding/json, but the file may be YAML:
		// its errors are about the settings, not JSON.
		return base, nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if presetOverride != "" {
		cfg.Preset = presetOverride
	}
	return cfg, keys, nil
}

// exactKeys rejects the keys of a decoded tree that name a field of the
// struct type t (JSON names) only case-insensitively: encoding/json would
// take them ({"BATCH": 64} sets batch; of batch and BATCH one wins
// silently). Unknown keys are left to the JSON decoder's own error.
func exactKeys(prefix string, v any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return nil
		}
		fields := map[string]reflect.Type{}
		jsonFields(t, fields)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				for name := range fields {
					if strings.EqualFold(name, k) {
						return fmt.Errorf("key %s: keys are case-sensitive, did you mean %q?", key, name)
					}
				}
				continue
			}
			if err := exactKeys(key, x[k], ft); err != nil {
				return err
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil
		}
		for _, c := range x {
			if err := exactKeys(prefix, c, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields adds the JSON names of struct type t's fields and their types
// to out (embedded structs without a name flattened, as encoding/json does).
func jsonFields(t reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
		case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			jsonFields(f.Type, out)
		case name == "":
			out[f.Name] = f.Type
		default:
			out[name] = f.Type
		}
	}
}

// finiteTree rejects NaN and ±Inf anywhere in a decoded YAML tree (JSON
// cannot carry them), naming the key and its flag.
func finiteTree(key string, v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			sub := k
			if key != "" {
				sub = key + "." + k
			}
			if err := finiteTree(sub, c); err != nil {
				return err
			}
		}
	case []any:
		for _, c := range x {
			if err := finiteTree(key, c); err != nil {
				return err
			}
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			for _, p := range TrainParams() {
				if p.Key == key {
					return fmt.Errorf("%s (--%s) = %v: must be a finite number", key, p.Flag, x)
				}
			}
			return fmt.Errorf("%s = %v: must be a finite number", key, x)
		}
	}
	return nil
}

// ConfigDiff is one setting that differs between two configs.
type ConfigDiff struct {
	Key      string // dotted config key
	Old, New string // JSON values
}

func (d ConfigDiff) String() string { return fmt.Sprintf("%s (%s → %s)", d.Key, d.Old, d.New) }

// DiffConfigs lists the settings (dotted keys, sorted) whose values differ
// between a and b.
func DiffConfigs(a, b TrainConfig) ([]ConfigDiff, error) {
	fa, err := flatten(a)
	if err != nil {
		return nil, err
	}
	fb, err := flatten(b)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []ConfigDiff
	for k := range keys {
		if fa[k] != fb[k] {
			out = append(out, ConfigDiff{Key: k, Old: orNone(fa[k]), New: orNone(fb[k])})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

// flatten turns a config into dotted keys → JSON values (arrays are leaves).
func flatten(c TrainConfig) (map[string]string, error) { return FlattenJSON(c) }

// FlattenJSON turns v's JSON form into dotted keys (sac.net.hidden) →
// JSON values (arrays are leaves), for comparing two configurations key by
// key.
func FlattenJSON(v any) (map[string]string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, x)
			}
			return
		}
		jb, _ := json.Marshal(v)
		out[prefix] = string(jb)
	}
	walk("", tree)
	return out, nil
}

// CheckResume compares the configuration a resumed run is asked to use
// (next) with the one recorded in its directory (recorded). The accepted
// changes are a larger cql.steps, which extends the run, and the paths of
// the dataset and of a given Koopman model (moved files, checked by content
// when the run opens: Relocations); any other difference is an error
// naming the differing keys.
func CheckResume(recorded, next TrainConfig) error {
	if next.CQL.Steps < recorded.CQL.Steps {
		return fmt.Errorf("--steps %d is below the run's %d steps: a resumed run can only be extended", next.CQL.Steps, recorded.CQL.Steps)
	}
	diffs, err := resumeDiffs(recorded, next)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("--resume: settings differ from the run's config.json: %s; a resumed run keeps its settings (only a larger --steps is allowed); start a new run instead",
			strings.Join(diffs, ", "))
	}
	return nil
}

// resumeDiffs lists the settings in which next differs from recorded
// other than a larger cql.steps (a smaller one is listed too) and the
// paths of the dataset and of a given Koopman model, as "key (old → new)"
// texts.
func resumeDiffs(recorded, next TrainConfig) ([]string, error) {
	a, b := recorded, next
	if b.CQL.Steps >= a.CQL.Steps {
		b.CQL.Steps = a.CQL.Steps
	}
	if augment.Label(a.Augment) == augment.Label(b.Augment) {
		b.Augment = a.Augment // "none" is "cql"
	}
	// Where the inputs are is not a setting: a dataset or model at
	// another path is checked by content (CheckInputs, Relocations).
	b.Data = a.Data
	if a.KoopmanModel != "" && b.KoopmanModel != "" {
		b.KoopmanModel = a.KoopmanModel
	}
	diffs, err := DiffConfigs(a, b)
	if err != nil {
		return nil, err
	}
	s := make([]string, len(diffs))
	for i, d := range diffs {
		s[i] = d.String()
	}
	return s, nil
}

// AbsPaths makes the dataset and Koopman model paths absolute, so that a run
// can be resumed from another working directory.
func (c *TrainConfig) AbsPaths() error {
	for _, p := range []*string{&c.Data, &c.KoopmanModel} {
		if *p == "" {
			continue
		}
		a, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = a
	}
	return nil
}
