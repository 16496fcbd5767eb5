package run

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
)

// CheckDataEnv checks that a dataset (read from path) fits the environment
// envName: its metadata/env, when it names a known environment, is that
// environment; its observation and action dimensions are the env's; and
// every action lies in the env's action range (up to a float32 rounding
// tolerance). A model or policy trained on data of another environment, or
// on actions the env would clip, is a silent wrong answer; errors name both
// sides and the first offending value.
func CheckDataEnv(data *dataset.Dataset, path, envName string) error {
	if err := CheckRecordedEnv(data.Meta, path, envName, "--env "+envName); err != nil {
		return err
	}
	e, err := env.Make(envName)
	if err != nil {
		return err
	}
	if got, want := e.ObservationSpace().Dim(), data.ObsDim; got != want {
		return fmt.Errorf("env %s has %d-dimensional observations, dataset %s has %d", envName, got, path, want)
	}
	sp := e.ActionSpace()
	if got, want := sp.Dim(), data.ActDim; got != want {
		return fmt.Errorf("env %s has %d-dimensional actions, dataset %s has %d", envName, got, path, want)
	}
	if sp.Discrete > 0 {
		return nil
	}
	return checkActionRange(data, path, envName, sp.Low, sp.High)
}

// CheckRecordedEnv checks a dataset's metadata (meta, as dataset.Read or
// dataset.Metadata return it for the file at path) against the
// environment envName it is about to be used in: when its metadata/env
// names a known environment, that must be envName. what says where
// envName came from ("--env hopper", "the spec's env hopper") for the
// error, which names both sides.
func CheckRecordedEnv(meta map[string]string, path, envName, what string) error {
	rec := meta["env"]
	if rec == "" {
		return nil
	}
	if got := EnvOfLabel(rec); got != "" && got != envName {
		return fmt.Errorf("dataset %s was collected in env %s (metadata/env %q), not %s", path, got, rec, what)
	}
	return nil
}

// checkActionRange reports the first action outside [low, high] per column,
// allowing float32 rounding (1e-4 relative to the bound's size).
func checkActionRange(data *dataset.Dataset, path, envName string, low, high []float64) error {
	a := data.ActDim
	bad, first := 0, -1
	for i, v := range data.Actions {
		j := i % a
		x := float64(v)
		tol := 1e-4 * math.Max(1, math.Max(math.Abs(low[j]), math.Abs(high[j])))
		if x < low[j]-tol || x > high[j]+tol {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if first < 0 {
		return nil
	}
	j := first % a
	return fmt.Errorf("dataset %s: actions row %d column %d is %g, outside env %s's action range [%g, %g] (%d values out of range); "+
		"the data comes from another environment or stores unscaled actions", path, first/a, j, data.Actions[first], envName, low[j], high[j], bad)
}

// EnvOfLabel maps an environment label recorded in a dataset or model
// (metadata/env) to the koopq environment it names: an environment name
// itself, or the one a D4RL, Gym or Minari id starts a part with
// ("hopper-medium-v2", "Hopper-v3", "mujoco/hopper/medium-v0",
// "halfcheetah_medium_replay"). The longest matching name wins
// ("cartpole-continuous-v0" is cartpole-continuous, not cartpole). "" when
// no known environment matches.
func EnvOfLabel(label string) string {
	l := strings.ToLower(strings.TrimSpace(label))
	names := env.Names()
	if slices.Contains(names, l) {
		return l
	}
	best := ""
	for _, part := range strings.FieldsFunc(l, func(r rune) bool { return r == '/' || r == ' ' || r == ':' }) {
		for _, n := range names {
			if len(n) <= len(best) {
				continue
			}
			if part == n || strings.HasPrefix(part, n+"-") || strings.HasPrefix(part, n+"_") {
				best = n
			}
		}
	}
	return best
}
