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

// FindFinishedRun resolves path to a finished run directory: path itself
// when it holds results.json, else its one subdirectory that does (a sweep
// slot, whose run is <slot>/run-<time>).
func FindFinishedRun(path string) (string, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist", path)
	} else if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory (give a run directory, the one holding results.json)", path)
	}
	if _, err := os.Stat(filepath.Join(path, "results.json")); err == nil {
		return path, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	found, err := filepath.Glob(filepath.Join(path, "*", "results.json"))
	if err != nil {
		return "", err
	}
	sort.Strings(found)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s holds no finished run: no results.json in it or in its subdirectories (a run writes results.json last)", path)
	case 1:
		return filepath.Dir(found[0]), nil
	}
	dirs := make([]string, len(found))
	for i, f := range found {
		dirs[i] = filepath.Dir(f)
	}
	return "", fmt.Errorf("%s holds %d finished runs; name one: %v", path, len(found), dirs)
}

// ReplayFinalEval evaluates the policy.safetensors of the finished run at
// path (see FindFinishedRun) as results.json's final evaluation did (same
// env, episodes and seed, deterministic actions) on workers goroutines
// (results do not depend on workers), and compares the two episode by
// episode.
func ReplayFinalEval(path string, workers int) (*Replay, error) {
	dir, err := FindFinishedRun(path)
	if err != nil {
		return nil, err
	}
	d, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	var res TrainResult
	if err := d.ReadJSON("results.json", &res); err != nil {
		return nil, err
	}
	rec := res.Final
	if rec.Env == "" || rec.Episodes <= 0 || len(rec.Returns) != rec.Episodes || len(rec.Lengths) != rec.Episodes {
		return nil, fmt.Errorf("%s: results.json's final_eval records no complete evaluation (env %q, %d episodes, %d returns, %d lengths)",
			dir, rec.Env, rec.Episodes, len(rec.Returns), len(rec.Lengths))
	}
	policy := d.File("policy.safetensors")
	if _, err := os.Stat(policy); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has results.json but no policy.safetensors: nothing to replay", dir)
	}
	p, recorded, err := LoadPolicy(policy)
	if err != nil {
		return nil, err
	}
	e, err := env.Make(rec.Env)
	if err != nil {
		return nil, fmt.Errorf("%s: final_eval's env: %w", dir, err)
	}
	if err := CheckPolicyEnv(policy, p, recorded, rec.Env, e); err != nil {
		return nil, err
	}
	got, err := eval.Evaluate(rec.Env, func() eval.Policy { return p.Clone() }, rec.Episodes, rec.Seed, workers)
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
