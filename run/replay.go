package run

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/sac"
)

// Replay is a finished run's final evaluation run again from its saved
// policy, with the environment, episode count and seed that results.json
// records: the one-command check that a committed score comes from the
// committed policy.
type Replay struct {
	// Run is the run directory (the one holding results.json).
	Run string `json:"run"`
	// Recorded is results.json's final_eval; Replayed the new evaluation.
	Recorded eval.Result `json:"recorded"`
	Replayed eval.Result `json:"replayed"`
	// Identical: every episode's return and length equal the record's, bit
	// for bit. Another machine, GEMM backend or koopq version can round the
	// policy's float32 arithmetic differently, and a contact-rich episode
	// then drifts apart; the same ones reproduce it exactly.
	Identical bool `json:"identical"`
	// Difference names the first episode that differs ("" when identical).
	Difference string `json:"difference,omitempty"`
}

// FindFinishedRuns lists, sorted, the finished run directories (those
// holding results.json) at path: path itself when it is one, else its
// subdirectories that are (a sweep slot, or a 'koopq train --out'
// directory), else those one level further down (a sweep directory, whose
// runs are <slot>/<run>).
func FindFinishedRuns(path string) ([]string, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", path)
	} else if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (give a run directory, the one holding results.json, or a directory of runs)", path)
	}
	for _, pattern := range []string{rundir.ResultsFile, filepath.Join("*", rundir.ResultsFile), filepath.Join("*", "*", rundir.ResultsFile)} {
		found, err := filepath.Glob(filepath.Join(path, pattern))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			continue
		}
		dirs := make([]string, len(found))
		for i, f := range found {
			dirs[i] = filepath.Dir(f)
		}
		sort.Strings(dirs)
		return dirs, nil
	}
	return nil, fmt.Errorf("%s holds no finished run: no results.json in it or two levels below (a run writes results.json last)", path)
}

// ErrNoPolicy marks a finished run without policy.safetensors (runs
// committed before their policies were), which ReplayFinalEval and
// ReevaluateFinal cannot evaluate.
var ErrNoPolicy = errors.New("no policy.safetensors: nothing to evaluate")

// ErrNoSimulator marks a finished run trained without a simulator (--env
// none): it has no final evaluation to replay or re-evaluate.
var ErrNoSimulator = errors.New("trained without a simulator (--env none): no evaluation to replay; evaluate its policy with koopq eval --policy RUN --env NAME")

// ReplayFinalEval evaluates the policy.safetensors of the finished run in
// dir (the directory holding results.json) as results.json's final
// evaluation did (same env, episodes and seed, deterministic actions) on
// workers goroutines (results do not depend on workers), and compares the
// two episode by episode. A run without its policy gives ErrNoPolicy.
func ReplayFinalEval(dir string, workers int) (*Replay, error) {
	rec, newPolicy, err := finalPolicy(dir)
	if err != nil {
		return nil, err
	}
	got, err := eval.Evaluate(rec.Env, newPolicy, rec.Episodes, rec.Seed, workers)
	if err != nil {
		return nil, err
	}
	r := &Replay{Run: dir, Recorded: rec, Replayed: got, Identical: true}
	for k := range rec.Returns {
		if math.Float64bits(rec.Returns[k]) != math.Float64bits(got.Returns[k]) || rec.Lengths[k] != got.Lengths[k] {
			r.Identical = false
			r.Difference = fmt.Sprintf("episode %d: recorded return %.6g over %d steps, replayed %.6g over %d steps",
				k, rec.Returns[k], rec.Lengths[k], got.Returns[k], got.Lengths[k])
			break
		}
	}
	return r, nil
}

// Reevaluation is a finished run's final policy evaluated again on fresh
// episodes (another seed, usually more of them) beside the final
// evaluation results.json records: one 10-episode evaluation is a noisy
// score of a policy, and this measures how noisy.
type Reevaluation struct {
	// Run is the run directory (the one holding results.json).
	Run string `json:"run"`
	// Recorded is results.json's final_eval; Reevaluated the new one, on
	// the same env with the episodes and seed asked for.
	Recorded    eval.Result `json:"recorded"`
	Reevaluated eval.Result `json:"reevaluated"`
}

// EvalScore is the evaluation's headline number: the normalized score where
// the env has reference returns, else the mean return; its standard error
// is the matching std over √episodes.
func EvalScore(r eval.Result) (score, stdErr float64) {
	score, std := float64(r.Normalized), float64(r.NormalizedStd)
	if math.IsNaN(score) {
		score, std = r.Mean, r.Std
	}
	return score, std / math.Sqrt(float64(max(r.Episodes, 1)))
}

// Difference is the re-evaluated score minus the recorded one (normalized
// where the env has reference returns, else mean returns).
func (r *Reevaluation) Difference() float64 {
	now, _ := EvalScore(r.Reevaluated)
	then, _ := EvalScore(r.Recorded)
	return now - then
}

// ReevaluateFinal evaluates the policy.safetensors of the finished run in
// dir on the env its final evaluation used, over episodes fresh episodes
// from seed (deterministic actions, workers goroutines; results do not
// depend on workers). A run without its policy gives ErrNoPolicy.
func ReevaluateFinal(dir string, episodes int, seed uint64, workers int) (*Reevaluation, error) {
	rec, newPolicy, err := finalPolicy(dir)
	if err != nil {
		return nil, err
	}
	got, err := eval.Evaluate(rec.Env, newPolicy, episodes, seed, workers)
	if err != nil {
		return nil, err
	}
	return &Reevaluation{Run: dir, Recorded: rec, Reevaluated: got}, nil
}

// finalPolicy reads the final evaluation that results.json in dir records
// and loads the run's policy, checked against that evaluation's env; it
// returns the record and a maker of independent copies of the policy.
func finalPolicy(dir string) (eval.Result, func() eval.Policy, error) {
	d, err := OpenDir(dir)
	if err != nil {
		return eval.Result{}, nil, err
	}
	var res TrainResult
	if err := d.ReadJSON(rundir.ResultsFile, &res); err != nil {
		return eval.Result{}, nil, err
	}
	rec := res.Final
	if rec.Env == EnvNone || res.Offline != nil {
		return eval.Result{}, nil, fmt.Errorf("%s: %w", dir, ErrNoSimulator)
	}
	if rec.Env == "" || rec.Episodes <= 0 || len(rec.Returns) != rec.Episodes || len(rec.Lengths) != rec.Episodes {
		return eval.Result{}, nil, fmt.Errorf("%s: results.json's final_eval records no complete evaluation (env %q, %d episodes, %d returns, %d lengths)",
			dir, rec.Env, rec.Episodes, len(rec.Returns), len(rec.Lengths))
	}
	policy := d.File(rundir.PolicyFile)
	if _, err := os.Stat(policy); errors.Is(err, fs.ErrNotExist) {
		return eval.Result{}, nil, fmt.Errorf("%s: %w", dir, ErrNoPolicy)
	}
	if want := res.Policy; want != nil {
		now, err := fingerprint.Of(policy)
		if err != nil {
			return eval.Result{}, nil, err
		}
		if now.SHA256 != want.SHA256 {
			return eval.Result{}, nil, fmt.Errorf("%s: %s (sha256 %s) is not the policy this run wrote (sha256 %s, as results.json records): "+
				"restore it, or evaluate the file on its own with 'koopq eval --policy'", dir, policy, now.Short(), want.Short())
		}
	}
	p, meta, err := sac.ReadPolicy(policy)
	if err != nil {
		return eval.Result{}, nil, err
	}
	recorded := meta["env"]
	e, err := env.Make(rec.Env)
	if err != nil {
		return eval.Result{}, nil, fmt.Errorf("%s: final_eval's env: %w", dir, err)
	}
	if err := CheckPolicyEnv(policy, p, recorded, rec.Env, e); err != nil {
		return eval.Result{}, nil, err
	}
	return rec, func() eval.Policy { return p.Clone() }, nil
}
