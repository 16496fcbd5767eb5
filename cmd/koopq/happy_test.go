package main

// Every verb's happy path at tiny scale (demo and collect excepted: they
// cannot be made small from the command line). Each checks the numbers it
// can check and the exact set of files written.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/stheader"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/run"
)

// readJSON decodes path into v, failing the test on error.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// expectFiles checks that dir holds exactly want (relative paths).
func expectFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := listTree(t, dir); !slices.Equal(got, want) {
		t.Errorf("files in %s: got %v, want %v", dir, got, want)
	}
}

func ok(t *testing.T, r cliResult) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestDatasetInfo(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	r := runCLI(t, dir, time.Minute, "dataset", "info", fx.Data)
	ok(t, r)
	for _, w := range []string{"pendulum", "400"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("dataset info output lacks %q:\n%s", w, r.Stdout)
		}
	}
	// --read-timeout bounds the child process that parses the file, and
	// the refusal names the flag that raises it.
	r = runCLI(t, dir, time.Minute, "dataset", "info", "--read-timeout", "1ns", fx.Data)
	expectCLIError(t, r, "did not finish parsing the file in time", "no answer within 1ns", "raise --read-timeout")
	r = runCLI(t, dir, time.Minute, "dataset", "info", "--read-timeout", "-1s", fx.Data)
	ok(t, r)
	r = runCLI(t, dir, time.Minute, "dataset", "info", "--json", fx.Data)
	ok(t, r)
	var in struct {
		Format     string `json:"format"`
		Rows       int    `json:"rows"`
		ObsDim     int    `json:"obs_dim"`
		ActDim     int    `json:"act_dim"`
		Timeouts   int    `json:"timeouts"`
		Conversion struct {
			Kept            int `json:"kept"`
			DroppedTimeouts int `json:"dropped_timeouts"`
		} `json:"conversion"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &in); err != nil {
		t.Fatalf("--json output: %v\n%s", err, r.Stdout)
	}
	// 400 rows in 4 episodes of 100 whose last step is a time-limit step:
	// d4rl drops those 4 (the last one is also the file's last row).
	if in.Format != "d4rl" || in.Rows != 400 || in.ObsDim != 3 || in.ActDim != 1 || in.Timeouts != 4 ||
		in.Conversion.Kept != 396 || in.Conversion.DroppedTimeouts != 3 {
		t.Errorf("dataset info --json: %+v", in)
	}
	expectFiles(t, dir)
}

// TestEvalJSONAbsolutePath is issue item 7: --json with an absolute path
// used to fail after the whole evaluation.
func TestEvalJSONAbsolutePath(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir, outDir := t.TempDir(), t.TempDir()
	out := filepath.Join(outDir, "eval.json")
	r := runCLI(t, dir, time.Minute, "eval", "--policy", fx.PendulumPolicy, "--episodes", "3", "--seed", "4", "--json", out)
	ok(t, r)
	var got struct {
		Result struct {
			Env      string    `json:"env"`
			Episodes int       `json:"episodes"`
			Seed     uint64    `json:"seed"`
			Mean     float64   `json:"mean_return"`
			Returns  []float64 `json:"returns"`
			Lengths  []int     `json:"lengths"`
		} `json:"result"`
		Policy     string `json:"policy"`
		Provenance struct {
			GoVersion string `json:"go_version"`
		} `json:"provenance"`
	}
	readJSON(t, out, &got)
	res := got.Result
	if res.Env != "pendulum" || res.Episodes != 3 || res.Seed != 4 || len(res.Returns) != 3 || got.Policy != fx.PendulumPolicy ||
		!strings.HasPrefix(got.Provenance.GoVersion, "go") {
		t.Errorf("eval.json: %+v", got)
	}
	var sum float64
	for i, ret := range res.Returns {
		sum += ret
		if res.Lengths[i] != 200 || ret > 0 || ret < -200*16.3 { // Pendulum: 200 steps, reward in [−16.27, 0]
			t.Errorf("episode %d: return %v, length %d", i, ret, res.Lengths[i])
		}
	}
	if d := sum/3 - res.Mean; d > 1e-9 || d < -1e-9 {
		t.Errorf("mean %v, returns %v", res.Mean, res.Returns)
	}
	expectFiles(t, dir)
	expectFiles(t, outDir, "eval.json")

	// A relative --json lands in the working directory; the numbers do not
	// depend on the worker count.
	r = runCLI(t, dir, time.Minute, "eval", "--policy", fx.PendulumPolicy, "--episodes", "3", "--seed", "4", "--workers", "1", "--json", "rel.json")
	ok(t, r)
	var rel struct {
		Result struct {
			Returns []float64 `json:"returns"`
		} `json:"result"`
	}
	readJSON(t, filepath.Join(dir, "rel.json"), &rel)
	if !slices.Equal(rel.Result.Returns, res.Returns) {
		t.Errorf("1 worker: returns %v, 2 workers: %v", rel.Result.Returns, res.Returns)
	}
	expectFiles(t, dir, "rel.json")

	// --policy may name a run directory, as for serve, export and fqe: its
	// policy.safetensors is evaluated, with the same numbers.
	runDir := t.TempDir()
	b, err := os.ReadFile(fx.PendulumPolicy)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runDir, "policy.safetensors"), b, 0o644)
	r = runCLI(t, dir, time.Minute, "eval", "--policy", runDir, "--episodes", "3", "--seed", "4", "--json", "dir.json")
	ok(t, r)
	readJSON(t, filepath.Join(dir, "dir.json"), &rel)
	if !slices.Equal(rel.Result.Returns, res.Returns) || !strings.Contains(r.Stdout, filepath.Join(runDir, "policy.safetensors")) {
		t.Errorf("--policy %s: returns %v (file: %v); output %s", runDir, rel.Result.Returns, res.Returns, r.Stdout)
	}
	r = runCLI(t, dir, time.Minute, "eval", "--policy", t.TempDir(), "--episodes", "1")
	expectCLIError(t, r, "is a directory without policy.safetensors")
}

func TestEvalRandomAndUntrained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{"random", "untrained"} {
		r := runCLI(t, dir, time.Minute, "eval", "--policy", p, "--env", "mountaincar-continuous", "--episodes", "1")
		ok(t, r)
		if !strings.Contains(r.Stdout, "mountaincar-continuous, policy "+p+", 1 episode (seed 0)") {
			t.Errorf("eval --policy %s: %s", p, r.Stdout)
		}
	}
	expectFiles(t, dir)
}

func TestReferencesTiny(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "refs.json") // absolute, as in item 7
	// 300 SAC steps are all warm-up (random actions): seconds, not minutes.
	r := runCLI(t, dir, 2*time.Minute, "references", "--env", "pendulum", "--sac-steps", "300", "--episodes", "2", "--hidden", "8,8", "--json", out)
	ok(t, r)
	var m struct {
		Env       string `json:"env"`
		SACSteps  int    `json:"sac_steps"`
		SACHidden []int  `json:"sac_hidden"`
		Random    struct {
			Episodes int `json:"episodes"`
		} `json:"random"`
		Expert struct {
			Episodes int `json:"episodes"`
		} `json:"expert"`
	}
	readJSON(t, out, &m)
	if m.Env != "pendulum" || m.SACSteps != 300 || !slices.Equal(m.SACHidden, []int{8, 8}) || m.Random.Episodes != 2 || m.Expert.Episodes != 2 {
		t.Errorf("refs.json: %+v", m)
	}
	expectFiles(t, dir)
}

func TestKoopmanTrainAndInspect(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	r := runCLI(t, dir, 2*time.Minute, "koopman", "train", "--data", fx.Data, "--env", "pendulum", "--out", "m.safetensors",
		"--epochs", "2", "--hidden", "16,8", "--latent", "4", "--batch", "64", "--diag-n", "50")
	ok(t, r)
	if !strings.Contains(r.Stdout, "hidden [16 8]") || !strings.Contains(r.Stdout, "epoch   2/2") {
		t.Errorf("koopman train output:\n%s", r.Stdout)
	}
	var sum struct {
		Transitions int    `json:"transitions"`
		DataContent string `json:"data_content_sha256"`
		ModelConfig struct {
			ObsDim int   `json:"obs_dim"`
			ActDim int   `json:"act_dim"`
			Latent int   `json:"latent"`
			Hidden []int `json:"hidden"`
		} `json:"model_config"`
		Provenance struct {
			Commit  string `json:"git_commit"`
			BLAS    string `json:"blas"`
			Threads int    `json:"gomaxprocs"`
		} `json:"provenance"`
	}
	readJSON(t, filepath.Join(dir, "m.safetensors.json"), &sum)
	// Provenance (commit, backend, machine) in the summary and the model's metadata.
	if p := sum.Provenance; p.Commit == "" || p.BLAS == "" || p.Threads == 0 {
		t.Errorf("m.safetensors.json provenance: %+v", p)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "m.safetensors")); err != nil || !strings.Contains(string(b[:min(len(b), 1<<16)]), `"provenance":"{\"version\"`) {
		t.Errorf("model metadata lacks the provenance (%v)", err)
	}
	// The data it was trained on, by content, in the summary and the metadata.
	d, err := run.ReadDataset(fx.Data, dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := stheader.Read(filepath.Join(dir, "m.safetensors"))
	if err != nil || sum.DataContent != d.ContentSHA256() || h.Meta[koopman.MetaDataContent] != d.ContentSHA256() {
		t.Errorf("data_content_sha256: summary %q, metadata %q (%v), want %s", sum.DataContent, h.Meta[koopman.MetaDataContent], err, d.ContentSHA256())
	}
	mc := sum.ModelConfig
	if sum.Transitions != 396 || mc.ObsDim != 3 || mc.ActDim != 1 || mc.Latent != 4 || !slices.Equal(mc.Hidden, []int{16, 8}) {
		t.Errorf("m.safetensors.json: %+v", sum)
	}
	expectFiles(t, dir, "m.safetensors", "m.safetensors.json")

	out := filepath.Join(t.TempDir(), "diag.json")
	r = runCLI(t, dir, time.Minute, "koopman", "inspect", "--model", "m.safetensors", "--data", fx.Data, "--n", "40", "--json", out)
	ok(t, r)
	if !strings.Contains(r.Stdout, "S=3 m=1 N=4 hidden [16 8]") {
		t.Errorf("koopman inspect output:\n%s", r.Stdout)
	}
	// What the shift is made of (issue 67 item 2).
	if !strings.Contains(r.Stdout, "model-error part mean ‖D(E(s)) − s‖") || !strings.Contains(r.Stdout, "symmetry part mean ‖D((1+σ)E(s)) − D(E(s))‖") {
		t.Errorf("koopman inspect does not split the shift into its parts:\n%s", r.Stdout)
	}
	var diag struct {
		Samples int `json:"samples"`
	}
	readJSON(t, out, &diag)
	if diag.Samples != 40 {
		t.Errorf("diag.json samples %d, want 40", diag.Samples)
	}
	expectFiles(t, dir, "m.safetensors", "m.safetensors.json")
}

func TestSymmetriesCartPoleTiny(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runCLI(t, dir, time.Minute, "symmetries", "cartpole", "--episodes", "4", "--steps", "100", "--out", "cart.json")
	ok(t, r)
	var res struct {
		Config struct {
			Episodes, Steps int
		} `json:"config"`
		Sigma0    [2][]float64 `json:"sigma0"`
		CommResid [2]float64   `json:"commutator_residual"`
	}
	readJSON(t, filepath.Join(dir, "cart.json"), &res)
	if res.Config.Episodes != 4 || res.Config.Steps != 100 {
		t.Errorf("cart.json config %+v, want 4 episodes × 100 steps", res.Config)
	}
	for a := range 2 {
		// The generator is normalized to σ0[0,0] = −1 and commutes with K to round-off.
		if len(res.Sigma0[a]) != 16 || res.Sigma0[a][0] != -1 || !(res.CommResid[a] < 1e-10) {
			t.Errorf("action %d: σ0 %v, commutator residual %v", a, res.Sigma0[a], res.CommResid[a])
		}
	}
	expectFiles(t, dir, "cart.json")
}

func TestSymcheckTiny(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	r := runCLI(t, dir, 2*time.Minute, "symcheck", "--data", fx.Data, "--model", fx.Model, "--n", "20")
	ok(t, r)
	// The env comes from the dataset's metadata, the output directory from the env.
	expectFiles(t, dir, "symcheck-pendulum", "symcheck-pendulum/samples.csv", "symcheck-pendulum/summary.txt",
		"symcheck-pendulum/symcheck.json", "symcheck-pendulum/symcheck.png")
	var res map[string]any
	readJSON(t, filepath.Join(dir, "symcheck-pendulum", "symcheck.json"), &res)
	if len(res) == 0 {
		t.Errorf("symcheck.json is empty")
	}

	// Without --model a small model is trained first (--train-hidden is a width list).
	r = runCLI(t, dir, 2*time.Minute, "symcheck", "--data", fx.Data, "--n", "20", "--out", "own",
		"--train-epochs", "1", "--train-hidden", "8,8", "--train-latent", "4")
	ok(t, r)
	if !strings.Contains(r.Stdout, "hidden [8 8]") {
		t.Errorf("symcheck output:\n%s", r.Stdout)
	}
	got := listTree(t, filepath.Join(dir, "own"))
	if !slices.Contains(got, "koopman.safetensors") || !slices.Contains(got, "symcheck.json") {
		t.Errorf("symcheck --out own: %v", got)
	}
}

// symcheck --shift-l2 writes one table per magnitude (with the s4rl-n row)
// and the magnitudes into symcheck.json.
func TestSymcheckShiftL2Tiny(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	r := runCLI(t, dir, 2*time.Minute, "symcheck", "--data", fx.Data, "--model", fx.Model, "--n", "40", "--residual",
		"--shift-l2", "2.6e-4,1e-2", "--out", "mag")
	ok(t, r)
	for _, want := range []string{"== shift-l2 0.00026", "== shift-l2 0.01", "s4rl-n", "ΔE/data"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}
	expectFiles(t, dir, "mag", "mag/samples-l2-0.00026.csv", "mag/samples-l2-0.01.csv", "mag/summary.txt",
		"mag/symcheck-l2-0.00026.png", "mag/symcheck-l2-0.01.png", "mag/symcheck.json")
	var res struct {
		Magnitudes []struct {
			ShiftL2 float64 `json:"shift_l2"`
			Rows    []struct {
				Name string `json:"name"`
			} `json:"rows"`
		} `json:"magnitudes"`
	}
	readJSON(t, filepath.Join(dir, "mag", "symcheck.json"), &res)
	if len(res.Magnitudes) != 2 || len(res.Magnitudes[1].Rows) != 6 || res.Magnitudes[1].Rows[5].Name != "s4rl-n" {
		t.Errorf("symcheck.json magnitudes: %+v", res.Magnitudes)
	}
}

// TestMinariDataset: a Minari dataset directory is read by dataset info,
// koopman inspect and symcheck (README: "Minari datasets are read ...").
func TestMinariDataset(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	r := runCLI(t, dir, time.Minute, "dataset", "info", "--json", fx.Minari)
	ok(t, r)
	var in struct {
		Format     string `json:"format"`
		Rows       int    `json:"rows"`
		ObsDim     int    `json:"obs_dim"`
		Terminals  int    `json:"terminals"`
		Timeouts   int    `json:"timeouts"`
		Conversion struct {
			Kept int `json:"kept"`
		} `json:"conversion"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &in); err != nil {
		t.Fatalf("--json output: %v\n%s", err, r.Stdout)
	}
	if in.Format != "minari" || in.Rows != 150 || in.ObsDim != 3 || in.Terminals != 1 || in.Timeouts != 2 || in.Conversion.Kept != 150 {
		t.Errorf("dataset info --json on Minari: %+v", in)
	}
	r = runCLI(t, dir, time.Minute, "koopman", "inspect", "--model", fx.Model, "--data", fx.Minari, "--n", "30")
	ok(t, r)
	if !strings.Contains(r.Stdout, "over 30 transitions") {
		t.Errorf("koopman inspect on Minari:\n%s", r.Stdout)
	}
	// A Minari file under a name of the user's is still Minari.
	b, err := os.ReadFile(filepath.Join(fx.Minari, "data", "main_data.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "arm_logs.hdf5"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, dir, time.Minute, "koopman", "inspect", "--model", fx.Model, "--data", "arm_logs.hdf5", "--n", "30")
	ok(t, r)
	if !strings.Contains(r.Stdout, "over 30 transitions") {
		t.Errorf("koopman inspect on a renamed Minari file:\n%s", r.Stdout)
	}
	r = runCLI(t, dir, 2*time.Minute, "symcheck", "--data", filepath.Join(fx.Minari, "data", "main_data.hdf5"), "--env", "pendulum",
		"--model", fx.Model, "--n", "20", "--out", "sc")
	ok(t, r)
	if got := listTree(t, filepath.Join(dir, "sc")); !slices.Contains(got, "symcheck.json") {
		t.Errorf("symcheck on Minari wrote %v", got)
	}
}

// eval --run replays finished runs' final evaluations from their policies
// and compares them with results.json episode by episode: identical for a
// fresh run (given as the run, or as the directory of runs above it), exit
// 1 naming the run and episode when the record was changed, and refused
// flags leave no file.
func TestEvalReplaysRun(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	for _, seed := range []string{"5", "6"} {
		r := runCLI(t, dir, 3*time.Minute, "train", "--data", fx.Data, "--env", "pendulum", "--hidden", "32,32", "--batch", "32",
			"--steps", "200", "--bc-steps", "50", "--eval-every", "100", "--eval-episodes", "3", "--seed", seed, "--out", "runs")
		ok(t, r)
	}
	found, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "results.json"))
	if len(found) != 2 {
		t.Fatalf("results %v", found)
	}
	first, second := filepath.Dir(found[0]), filepath.Dir(found[1])
	type replays struct {
		Replays []struct {
			Run       string `json:"run"`
			Identical bool   `json:"identical"`
			Replayed  struct {
				Returns []float64 `json:"returns"`
			} `json:"replayed"`
			Difference string `json:"difference"`
		} `json:"replays"`
		NoPolicy []string `json:"no_policy"`
	}
	for _, c := range []struct {
		args []string
		runs []string
	}{
		{[]string{"--run", first}, []string{first}},
		{[]string{"--run", filepath.Join(dir, "runs")}, []string{first, second}},
		{[]string{"--run", second, "--run", filepath.Join(dir, "runs")}, []string{second, first}}, // each run once
	} {
		r := runCLI(t, dir, time.Minute, append(append([]string{"eval"}, c.args...), "--json", "replay.json")...)
		ok(t, r)
		if strings.Count(r.Stdout, ": identical\n") != len(c.runs) || !strings.Contains(r.Stdout, "pendulum, 3 episodes (seed ") {
			t.Errorf("eval %v:\n%s", c.args, r.Stdout)
		}
		if len(c.runs) > 1 && !strings.Contains(r.Stdout, "2 runs replayed: 2 identical, 0 differ") {
			t.Errorf("eval %v: no summary\n%s", c.args, r.Stdout)
		}
		var rep replays
		readJSON(t, filepath.Join(dir, "replay.json"), &rep)
		if len(rep.Replays) != len(c.runs) {
			t.Fatalf("eval %v: replay.json %+v", c.args, rep)
		}
		for i, want := range c.runs {
			if got := rep.Replays[i]; !got.Identical || got.Run != want || len(got.Replayed.Returns) != 3 {
				t.Errorf("eval %v: replay %d %+v, want run %s", c.args, i, got, want)
			}
		}
	}

	// With --episodes and --seed the final policies are evaluated on fresh
	// episodes: the same returns as 'eval --policy' with those flags, beside
	// the recorded score.
	r := runCLI(t, dir, time.Minute, "eval", "--run", filepath.Join(dir, "runs"), "--episodes", "4", "--seed", "9", "--json", "re.json")
	ok(t, r)
	if strings.Count(r.Stdout, "(4 episodes, seed 9): ") != 2 || !strings.Contains(r.Stdout, "2 runs re-evaluated: difference (re-evaluated − recorded) mean ") {
		t.Errorf("eval --run --episodes --seed:\n%s", r.Stdout)
	}
	var re struct {
		Episodes      int    `json:"episodes"`
		Seed          uint64 `json:"seed"`
		Reevaluations []struct {
			Run         string      `json:"run"`
			Recorded    eval.Result `json:"recorded"`
			Reevaluated eval.Result `json:"reevaluated"`
		} `json:"reevaluations"`
	}
	readJSON(t, filepath.Join(dir, "re.json"), &re)
	if re.Episodes != 4 || re.Seed != 9 || len(re.Reevaluations) != 2 {
		t.Fatalf("re.json %+v", re)
	}
	for i, want := range []string{first, second} {
		got := re.Reevaluations[i]
		ok(t, runCLI(t, dir, time.Minute, "eval", "--policy", filepath.Join(want, "policy.safetensors"), "--episodes", "4", "--seed", "9", "--json", "one.json"))
		var one struct {
			Result eval.Result `json:"result"`
		}
		readJSON(t, filepath.Join(dir, "one.json"), &one)
		var res run.TrainResult
		readJSON(t, filepath.Join(want, "results.json"), &res)
		if got.Run != want || !slices.Equal(got.Reevaluated.Returns, one.Result.Returns) || len(got.Reevaluated.Returns) != 4 ||
			!slices.Equal(got.Recorded.Returns, res.Final.Returns) {
			t.Errorf("re-evaluation %d: %+v\nwant run %s, returns %v, recorded %v", i, got, want, one.Result.Returns, res.Final.Returns)
		}
		then, now := float64(res.Final.Normalized), float64(one.Result.Normalized)
		if math.IsNaN(then) {
			then, now = res.Final.Mean, one.Result.Mean
		}
		if line := fmt.Sprintf("recorded %.2f (3 episodes, seed %d), re-evaluated %.2f ± ", then, res.Final.Seed, now); !strings.Contains(r.Stdout, want+": pendulum ") ||
			!strings.Contains(r.Stdout, line) || !strings.Contains(r.Stdout, fmt.Sprintf("seed 9): %+.2f\n", now-then)) {
			t.Errorf("no line %q with its difference for %s:\n%s", line, want, r.Stdout)
		}
	}

	// Change the record of the first run's episode 1: the replay must notice.
	var res map[string]any
	readJSON(t, found[0], &res)
	rets := res["final_eval"].(map[string]any)["returns"].([]any)
	rets[1] = rets[1].(float64) + 1e-9
	b, _ := json.Marshal(res)
	if err := os.WriteFile(found[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, dir, time.Minute, "eval", "--run", filepath.Join(dir, "runs"), "--json", "differs.json")
	expectCLIError(t, r, "1 replay of 2 differs from its record")
	if !strings.Contains(r.Stderr, "\n  "+first+": episode 1: recorded return") {
		t.Errorf("the error does not name the run and episode:\n%s", r.Stderr)
	}
	var rep replays
	readJSON(t, filepath.Join(dir, "differs.json"), &rep)
	if len(rep.Replays) != 2 || rep.Replays[0].Identical || !strings.HasPrefix(rep.Replays[0].Difference, "episode 1:") || !rep.Replays[1].Identical {
		t.Errorf("differs.json %+v", rep)
	}

	// Bad uses are refused before anything is written.
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--run", first, "--seed", "3"}, "give both"},
		{[]string{"--run", first, "--episodes", "30"}, "give both"},
		{[]string{"--run", first, "--episodes", "0", "--seed", "3"}, "--episodes"},
		{[]string{"--run", first, "--env", "pendulum"}, "--env cannot be given with it"},
		{[]string{"--run", first, "--policy", "random"}, "--policy cannot be given with it"},
		{[]string{"--run", filepath.Join(dir, "nowhere")}, "does not exist"},
		{[]string{"--run", first, "--run", empty}, "holds no finished run"},
		{[]string{"--run", found[0]}, "is not a directory"},
		{[]string{"--run", ""}, "--run: empty directory name"},
	} {
		r := runCLI(t, dir, time.Minute, append(append([]string{"eval"}, c.args...), "--json", "refused.json")...)
		expectCLIError(t, r, c.want)
		if _, err := os.Stat(filepath.Join(dir, "refused.json")); err == nil {
			t.Errorf("%v wrote refused.json", c.args)
		}
	}

	// A run without its policy is listed and skipped; alone, it is an error.
	if err := os.Remove(filepath.Join(second, "policy.safetensors")); err != nil {
		t.Fatal(err)
	}
	expectCLIError(t, runCLI(t, dir, time.Minute, "eval", "--run", second), "no run could be replayed: 1 finished run without a policy or a simulator")
	expectCLIError(t, runCLI(t, dir, time.Minute, "eval", "--run", second, "--episodes", "2", "--seed", "1"),
		"no run could be re-evaluated: 1 finished run without a policy or a simulator")
	if err := os.WriteFile(found[0], nil, 0o644); err != nil { // unreadable record: an error, not a skip
		t.Fatal(err)
	}
	expectCLIError(t, runCLI(t, dir, time.Minute, "eval", "--run", first), "results.json")
}
