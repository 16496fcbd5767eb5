package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestFQECLI(t *testing.T) {
	fx := fixtures(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "fqe.json")
	r := runCLI(t, dir, 2*time.Minute, "fqe", "--policy", fx.PendulumPolicy, "--data", fx.Data,
		"--steps", "200", "--hidden", "16", "--batch", "32", "--bootstrap", "200", "--json", out)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Env    string `json:"env"`
		Result struct {
			Value, Low, High float64
			Episodes         int
		} `json:"result"`
		Undiscounted float64  `json:"undiscounted"`
		Normalized   *float64 `json:"normalized"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	// The fixture has 400 rows in episodes of 100 steps.
	if rep.Result.Episodes != 4 || rep.Env != "pendulum" || rep.Normalized == nil {
		t.Errorf("episodes %d env %q normalized %v: want 4, pendulum, a number", rep.Result.Episodes, rep.Env, rep.Normalized)
	}
	if !(rep.Result.Low <= rep.Result.Value && rep.Result.Value <= rep.Result.High) || math.IsNaN(rep.Undiscounted) {
		t.Errorf("value %v interval [%v, %v] undiscounted %v", rep.Result.Value, rep.Result.Low, rep.Result.High, rep.Undiscounted)
	}

	// Bad inputs: one clear error line each, no panic.
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--data", fx.Data), "--policy is required")
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--policy", fx.PendulumPolicy), "--data is required")
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--policy", filepath.Join(dir, "nope.safetensors"), "--data", fx.Data), "nope.safetensors")
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--policy", fx.PendulumPolicy, "--data", filepath.Join(dir, "none.hdf5")), "no such file")
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--policy", fx.HopperPolicy, "--data", fx.Data), "observes 11 dimensions, the data has 3")
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--policy", dir, "--data", fx.Data), "without policy.safetensors")
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--policy", fx.PendulumPolicy, "--data", fx.Data, "--gamma", "1.5"), "gamma")
	expectCLIError(t, runCLI(t, dir, time.Minute, "fqe", "--policy", fx.Data, "--data", fx.Data), "--policy")
}

// fqe --bootstrap 0 --json wrote nothing ("json: unsupported value:
// NaN") after the whole fit; --env was not checked (a pendulum policy was
// normalized with hopper's references, an unknown env silently dropped
// the normalized line); and the data reading flags that its own errors
// name (--max-episode-steps, --drop-invalid) did not exist.
func TestFQEInputsAndNoInterval(t *testing.T) {
	fx := fixtures(t)
	dir := t.TempDir()
	tiny := []string{"--policy", fx.PendulumPolicy, "--steps", "5", "--hidden", "8", "--batch", "16"}
	r := runCLI(t, dir, time.Minute, append([]string{"fqe", "--data", fx.Data, "--bootstrap", "0", "--json", "f.json"}, tiny...)...)
	ok(t, r)
	var rep map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "f.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep["undiscounted_low"] != nil || rep["undiscounted_high"] != nil || rep["undiscounted"] == nil {
		t.Errorf("--bootstrap 0: undiscounted %v [%v, %v], want a number and no interval (null)", rep["undiscounted"], rep["undiscounted_low"], rep["undiscounted_high"])
	}
	expectCLIError(t, runCLI(t, dir, time.Minute, append([]string{"fqe", "--data", fx.Data, "--env", "hopper"}, tiny...)...),
		`--env hopper: policy`, `was trained on "pendulum"`)
	expectCLIError(t, runCLI(t, dir, time.Minute, append([]string{"fqe", "--data", fx.Data, "--env", "bogus"}, tiny...)...),
		`--env "bogus": no reference returns`)
	// A file without timeouts needs --max-episode-steps, which fqe takes.
	noTimeouts := writeData(t, filepath.Join(dir, "v0.hdf5"), map[string]string{"env": "pendulum"}, nil)
	if out, err := exec.Command(debianPython, "-c", "import sys, h5py; del h5py.File(sys.argv[1], 'r+')['timeouts']", noTimeouts).CombinedOutput(); err != nil {
		t.Fatalf("h5py (Debian python3-h5py): %v\n%s", err, out)
	}
	expectCLIError(t, runCLI(t, dir, time.Minute, append([]string{"fqe", "--data", noTimeouts}, tiny...)...), "--max-episode-steps")
	ok(t, runCLI(t, dir, time.Minute, append([]string{"fqe", "--data", noTimeouts, "--max-episode-steps", "100"}, tiny...)...))
}
