package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/sweep"
)

// writeSpec writes text as spec.yaml in a fresh directory and returns it.
func writeSpec(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Bad specs and flags are one-line errors naming the key, before anything is
// written.
func TestSweepRejectsBadSpecsWithoutSideEffects(t *testing.T) {
	cases := []struct {
		name, old, new string
		args           []string
		want           []string
	}{
		{"unknown key", "steps: 5000", "stepz: 5000", nil, []string{"field stepz not found"}},
		{"train flag typo", "batch: 32", "bacth: 32", nil, []string{`flags: flag "bacth": not a 'koopq train' flag`}},
		{"bad flag value", "batch: 32", "batch: many", nil, []string{`flag "batch": --batch many: want a whole number`}},
		// Values are checked against the setting's range, as on the command line.
		{"flag value out of range", "batch: 32", "batch: 0", nil, []string{`flag "batch": --batch (cql.batch) = 0: must be a positive number`}},
		{"method flag out of range", "augment: gaussian}", "augment: gaussian, flags: {shift-l2: -1}}", nil,
			[]string{`methods[1] (S4RL-N).flags: flag "shift-l2": --shift-l2 (augment_params.shift_l2) = -1: must be a non-negative number`}},
		{"collect flag out of range", "data: data/pendulum-medium.hdf5}", "data: data/pendulum-medium.hdf5, collect: {sac-steps: 0}}", nil,
			[]string{`collect: flag "sac-steps": --sac-steps 0: must be a positive number`}},
		// Rules across settings are checked on every run's whole command line.
		{"steps not above bc-steps", "bc-steps: 100", "bc-steps: 6000", nil,
			[]string{"run pendulum-medium__cql__s0 and 3 more: koopq train would refuse the settings: --steps (cql.steps) 5000 is not above --bc-steps (cql.bc_steps) 6000"}},
		{"shift-l2 on plain CQL", "augment: none}", "augment: none, flags: {shift-l2: 1e-3}}", nil,
			[]string{"run pendulum-medium__cql__s0 and 1 more: koopq train would refuse the settings: --shift-l2 (augment_params.shift_l2) 0.001 with --augment cql"}},
		{"koopman flag out of range", "data: data/pendulum-medium.hdf5}", "data: data/pendulum-medium.hdf5, koopman: {model: m.safetensors, max-epochs: -3}}", nil,
			[]string{`koopman: flag "max-epochs": --max-epochs -3: must be a positive number`}},
		{"unknown env", "env: pendulum", "env: pendulumm", nil, []string{`datasets[0] (pendulum-medium): env: unknown env "pendulumm"`}},
		{"unknown augment", "augment: gaussian", "augment: gauss", nil, []string{`methods[1] (S4RL-N): augment: unknown augment "gauss"`}},
		{"missing data", "", "", nil, []string{"dataset pendulum-medium: data", "pendulum-medium.hdf5", "koopq collect"}},
		{"collect flag typo", "data: data/pendulum-medium.hdf5}", "data: data/pendulum-medium.hdf5, collect: {sac-stepz: 10}}", nil,
			[]string{`datasets[0] (pendulum-medium): collect: flag "sac-stepz": not a 'koopq collect' flag`}},
		{"koopman flag typo", "data: data/pendulum-medium.hdf5}", "data: data/pendulum-medium.hdf5, koopman: {model: m.safetensors, epochz: 3}}", nil,
			[]string{`datasets[0] (pendulum-medium): koopman: flag "epochz": not a 'koopq koopman train' flag (see koopq koopman train --help)`}},
		{"collect dataset of another env", "data: data/pendulum-medium.hdf5}", "data: data/hopper-medium-v2.hdf5, collect: {dataset: hopper-medium-v2}}", nil,
			[]string{"collect: dataset hopper-medium-v2 is not a dataset of env pendulum"}},
		{"collect file name", "data: data/pendulum-medium.hdf5}", "data: data/medium.hdf5, collect: {sac-steps: 10}}", nil,
			[]string{"collect: data must be named pendulum-<random|medium|expert|medium-replay|medium-expert>.hdf5"}},
		{"bad executor", "", "", []string{"--executor", "pbs"}, []string{`--executor "pbs"`}},
		{"negative jobs", "", "", []string{"--jobs", "-1"}, []string{"--jobs -1"}},
		{"missing koopq binary", "", "", []string{"--koopq", "/nonexistent/koopq"}, []string{"--koopq /nonexistent/koopq: no such file or directory"}},
		{"koopq binary not executable", "", "", []string{"--koopq", "spec.yaml"}, []string{"--koopq spec.yaml: not executable"}},
		{"k8s without image", "", "", []string{"--executor", "k8s"}, []string{"kubernetes.image: missing"}},
		{"zero time limit", "", "", []string{"--time-limit", "0s"}, []string{"--time-limit 0s: want a positive duration"}},
		{"time limit on slurm", "", "", []string{"--time-limit", "1h", "--executor", "slurm"}, []string{"with --executor local"}},
		{"speed without time limit", "", "", []string{"--steps-per-sec", "5"}, []string{"--steps-per-sec 5", "with --time-limit"}},
		{"negative speed", "", "", []string{"--time-limit", "1h", "--steps-per-sec", "-2"}, []string{"--steps-per-sec -2: want a positive number of steps/s"}},
		{"speed of an unknown method", "", "", []string{"--time-limit", "1h", "--steps-per-sec", "SAC=3"},
			[]string{`--steps-per-sec SAC=3: the spec has no method or ablation "SAC" (it has CQL, S4RL-N)`}},
		// Floats are not truncated into integer keys.
		{"fraction seed", "seeds: [0, 1]", "seeds: [0, 0.5]", nil, []string{"seeds[1]: 0.5 is not a whole number"}},
		{"seed 2^64", "seeds: [0, 1]", "seeds: [18446744073709551616]", nil,
			[]string{"seeds[0]: 18446744073709551616 is out of range (0 to 18446744073709551615)"}},
		{"fraction steps", "steps: 5000", "steps: 300.7", nil, []string{"steps: 300.7 is not a whole number"}},
		{"fraction episodes", "episodes: 2}", "episodes: 1.9}", nil, []string{"eval.episodes: 1.9 is not a whole number"}},
		{"threads", "threads: 1", "threads: 100000", nil, []string{"threads: must be 0 to 256 (got 100000)"}},
		{"threads flag", "", "", []string{"--threads", "5000"}, []string{"--threads 5000: must be 0 to 256"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(tinySweepSpec, c.old, c.new, 1)
			dir := writeSpec(t, text)
			args := append([]string{"sweep", "run", "spec.yaml", "--out", "out"}, c.args...)
			r := runCLI(t, dir, time.Minute, args...)
			expectCLIError(t, r, c.want...)
			if got := listTree(t, dir); len(got) != 1 || got[0] != "spec.yaml" {
				t.Errorf("left behind: %v", got)
			}
			if c.old != "" {
				expectCLIError(t, runCLI(t, dir, time.Minute, "sweep", "plan", "spec.yaml"), c.want...)
			}
		})
	}
	r := runCLI(t, "", time.Minute, "sweep", "status", "nowhere")
	expectCLIError(t, r, "not a sweep directory")
	expectCLIError(t, runCLI(t, "", time.Minute, "sweep", "status", "--out", "nowhere"), "not a sweep directory")
	expectCLIError(t, runCLI(t, "", time.Minute, "sweep", "status"), "which sweep?")
	dir := writeSpec(t, tinySweepSpec)
	expectCLIError(t, runCLI(t, dir, time.Minute, "sweep", "status", "spec.yaml", "--out", "nowhere"), "--out nowhere: not a directory")
	expectCLIError(t, runCLI(t, dir, time.Minute, "sweep", "status", ".", "--out", "."), "give the sweep directory once")
	expectCLIError(t, runCLI(t, dir, time.Minute, "sweep", "status", "a", "b"), "accepts between 0 and 1 arg")
	r = runCLI(t, "", time.Minute, "report", "nowhere")
	expectCLIError(t, r, "nowhere")
}

func TestSweepPlanAndKubernetes(t *testing.T) {
	dir := writeSpec(t, tinySweepSpec+"steps_per_second: 100\nkubernetes: {image: example.org/koopq:dev}\n")
	r := runCLI(t, dir, time.Minute, "sweep", "plan", "spec.yaml")
	// 4 runs × 5000 steps at 100 steps/s, 1 thread = 200 s = 0.06 CPU-hours.
	if r.Code != 0 || !strings.Contains(r.Stdout, "4 runs (1 dataset × 2 methods × 2 seeds + 0 ablation runs), 20000 gradient steps") ||
		!strings.Contains(r.Stdout, "estimate for these runs: 0.1 CPU-hours") ||
		!strings.Contains(r.Stdout, "  pendulum-medium CQL: 100.0 steps/s (the spec's steps_per_second)") ||
		!strings.Contains(r.Stdout, "pendulum-medium__s4rl-n__s1") {
		t.Errorf("plan: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The examples in the repository are valid specs of the promised size.
	for spec, want := range map[string]string{
		"smoke.yaml":                               "6 runs (1 dataset × 3 methods × 2 seeds + 0 ablation runs)",
		"paper-table1-gym.yaml":                    "225 runs (9 datasets × 5 methods × 5 seeds + 0 ablation runs), 225000000 gradient steps",
		"study-locomotion.yaml":                    "60 runs (3 datasets × 5 methods × 3 seeds + 15 ablation runs), 6000000 gradient steps",
		"study-locomotion-alpha.yaml":              "9 runs (1 dataset × 3 methods × 3 seeds + 0 ablation runs), 900000 gradient steps",
		"study-locomotion-walker2d-diagnosis.yaml": "3 runs (1 dataset × 3 methods × 1 seed + 0 ablation runs), 180000 gradient steps",
		"study-locomotion-halfcheetah-tau.yaml":    "1 run (1 dataset × 1 method × 1 seed + 0 ablation runs), 30000 gradient steps",
		"study-locomotion-w10.yaml":                "30 runs (2 datasets × 5 methods × 3 seeds + 0 ablation runs), 3000000 gradient steps",
		"study-locomotion-w10-clean.yaml":          "6 runs (2 datasets × 1 method × 3 seeds + 0 ablation runs), 600000 gradient steps",
	} {
		p, _ := filepath.Abs(filepath.Join("..", "..", "examples", spec))
		r := runCLI(t, dir, time.Minute, "sweep", "plan", p)
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("plan %s: %d\n%s%s", spec, r.Code, r.Stdout, r.Stderr)
		}
	}
	r = runCLI(t, dir, time.Minute, "sweep", "run", "spec.yaml", "--out", "k", "--executor", "k8s")
	if r.Code != 0 {
		t.Fatalf("k8s: %d %s", r.Code, r.Stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "k", ".sweep", "k8s", "slurmtest.yaml"))
	if err != nil || !strings.Contains(string(b), "completions: 4") || !strings.Contains(string(b), "image: example.org/koopq:dev") {
		t.Errorf("manifest: %v\n%s", err, b)
	}
	// Seed-first order: every run of seed 1 before seed 0's, S4RL-N before CQL as listed.
	r = runCLI(t, dir, time.Minute, "sweep", "plan", "spec.yaml", "--order", "seeds", "--seeds", "1,0", "--methods", "S4RL-N,CQL")
	if i, j, k := strings.Index(r.Stdout, "s4rl-n__s1"), strings.Index(r.Stdout, "cql__s1"), strings.Index(r.Stdout, "s4rl-n__s0"); r.Code != 0 || i < 0 || !(i < j && j < k) {
		t.Errorf("plan --order seeds: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A selection of runs: planned alone; refused (before any file) where it cannot apply.
	r = runCLI(t, dir, time.Minute, "sweep", "plan", "spec.yaml", "--seeds", "1", "--methods", "S4RL-N")
	if r.Code != 0 || !strings.Contains(r.Stdout, "1 of the spec's 4 runs (--methods S4RL-N --seeds 1), 5000 gradient steps") ||
		strings.Contains(r.Stdout, "__s0") {
		t.Errorf("plan --seeds 1: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{
		{"--seeds", "5", "--out", "sel"},
		{"--datasets", "pendulum-random", "--out", "sel"},
		{"--seeds", "0", "--executor", "k8s", "--out", "sel"},
		{"--order", "random", "--out", "sel"},
	} {
		r = runCLI(t, dir, time.Minute, append([]string{"sweep", "run", "spec.yaml"}, args...)...)
		if r.Code == 0 || !strings.Contains(r.Stderr, args[0]) {
			t.Errorf("sweep run %v: %d\n%s", args, r.Code, r.Stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "sel")); err == nil {
			t.Errorf("sweep run %v made its --out directory", args)
		}
	}
}

// A local sweep stopped with Ctrl-C (SIGINT) and started again finishes only
// what was missing; status and report read the result.
func TestSweepLocalInterruptResumeReport(t *testing.T) {
	// The dataset is made by the sweep itself (datasets[].collect).
	work := t.TempDir()
	spec := strings.Replace(tinySweepSpec, "seeds: [0, 1]", "seeds: [0]", 1)
	spec = strings.Replace(spec, "data: data/pendulum-medium.hdf5}",
		"data: data/pendulum-medium.hdf5, collect: {sac-steps: 600, transitions: 2000, snapshot-every: 200, hidden: [16, 16]}}", 1)
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "sw")
	// The plan names what the sweep makes first, where, and the wall time of what is left.
	r := runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml", "--out", out, "--jobs", "2", "--steps-per-sec", "10")
	if r.Code != 0 || !strings.Contains(r.Stdout, "in "+out+": 0 of these runs done, 2 left") ||
		!strings.Contains(r.Stdout, "first: collect pendulum-medium → "+filepath.Join(work, "data", "pendulum-medium.hdf5")) ||
		// 2 runs × 5000 steps at 10 steps/s = 1000 s = 0.28 CPU-hours, 2 at once: 0.14 h.
		!strings.Contains(r.Stdout, "estimate for the runs left: 0.3 CPU-hours, 0.1 hours of wall time at 2 runs at once") ||
		!strings.Contains(r.Stdout, "  pendulum-medium S4RL-N: 10.0 steps/s (--steps-per-sec)") {
		t.Errorf("plan before the sweep: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	elsewhere := t.TempDir()
	r = runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml", "--data-root", elsewhere)
	if r.Code != 0 || !strings.Contains(r.Stdout, "first: collect pendulum-medium → "+filepath.Join(elsewhere, "data", "pendulum-medium.hdf5")) {
		t.Errorf("plan --data-root: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	expectCLIError(t, runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml", "--jobs", "-2"), "--jobs -2")
	cmd := exec.Command(koopqBin, "sweep", "run", "spec.yaml", "--out", out, "--jobs", "1", "--progress-every", "1s")
	cmd.Dir = work
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt while the first run is training (it has a checkpoint, no results).
	first := filepath.Join(out, "pendulum-medium__cql__s0")
	waitFor(t, "first checkpoint", 2*time.Minute, func() (bool, string) {
		m, _ := filepath.Glob(filepath.Join(first, "*", "checkpoints", "latest.safetensors"))
		return len(m) > 0, stdout.String()
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != sweep.ExitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("interrupted sweep: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*", "*", "results.json")); len(m) != 0 {
		t.Fatalf("Ctrl-C came too late (runs finished: %v)", m)
	}
	if !strings.Contains(stdout.String(), "collect pendulum-medium: ") {
		t.Errorf("the sweep did not collect its dataset:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(work, "data", "pendulum-medium-replay.hdf5")); err != nil {
		t.Errorf("collect's files: %v", err)
	}
	r = runCLI(t, work, time.Minute, "sweep", "status", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "2 runs: 0 done, 0 running, 0 failed, 2 pending") || !strings.Contains(r.Stdout, "partial") {
		t.Errorf("status after Ctrl-C:\n%s%s", r.Stdout, r.Stderr)
	}
	// Written as 'sweep run' is, status says the same.
	for _, args := range [][]string{{"--out", out}, {"spec.yaml", "--out", out}} {
		if r2 := runCLI(t, work, time.Minute, append([]string{"sweep", "status"}, args...)...); r2.Code != 0 || r2.Stdout != r.Stdout {
			t.Errorf("sweep status %v:\n%s%s\nwant\n%s", args, r2.Stdout, r2.Stderr, r.Stdout)
		}
	}

	r = runCLI(t, work, 3*time.Minute, "sweep", "run", "spec.yaml", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "2 done, 0 skipped, 0 failed, 0 interrupted") {
		t.Fatalf("second sweep: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	b, _ := os.ReadFile(filepath.Join(first, "train.log"))
	if strings.Count(string(b), "=== koopq sweep: attempt") != 2 || !strings.Contains(string(b), "train --resume") {
		t.Errorf("the interrupted run did not resume:\n%s", b)
	}
	r = runCLI(t, work, 3*time.Minute, "sweep", "run", "spec.yaml", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "0 done, 2 skipped") {
		t.Errorf("third sweep ran something: %s", r.Stdout)
	}
	r = runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "2 of these runs done, 0 left") || !strings.Contains(r.Stdout, "estimate: nothing left to run") ||
		strings.Contains(r.Stdout, "first: collect") {
		t.Errorf("plan of a finished sweep: %s%s", r.Stdout, r.Stderr)
	}
	// A second seed is estimated at the speed each method's finished run measured.
	if err := os.WriteFile(filepath.Join(work, "spec2.yaml"), []byte(strings.Replace(spec, "seeds: [0]", "seeds: [0, 1]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, work, time.Minute, "sweep", "plan", "spec2.yaml", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "2 of these runs done, 2 left") ||
		!strings.Contains(r.Stdout, "steps/s (median of 1 finished CQL run on pendulum-medium)") ||
		!strings.Contains(r.Stdout, "steps/s (median of 1 finished S4RL-N run on pendulum-medium)") {
		t.Errorf("plan with measured speeds: %s%s", r.Stdout, r.Stderr)
	}

	// What a Kubernetes pod runs: the completion index picks the run.
	r = runCLIEnv(t, work, []string{"JOB_COMPLETION_INDEX=1"}, time.Minute, "sweep", "exec", "--spec", "spec.yaml", "--out", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "run pendulum-medium__s4rl-n__s0: already done") {
		t.Errorf("exec of a done run: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLIEnv(t, work, []string{"JOB_COMPLETION_INDEX=7"}, time.Minute, "sweep", "exec", "--spec", "spec.yaml", "--out", out)
	expectCLIError(t, r, "--index 7", "runs 0..1")

	// An edited spec is refused before anything changes in the sweep directory.
	before, _ := os.ReadFile(filepath.Join(out, ".sweep", "spec.yaml"))
	edited := strings.Replace(spec, "batch: 32", "batch: 64", 1)
	if err := os.WriteFile(filepath.Join(work, "edited.yaml"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, work, time.Minute, "sweep", "run", "edited.yaml", "--out", out)
	if r.Code != 1 || !strings.Contains(r.Stderr, "the spec changed since this run started") || !strings.Contains(r.Stderr, "batch=32") {
		t.Errorf("edited spec: %d\n%s", r.Code, r.Stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(out, ".sweep", "spec.yaml")); string(after) != string(before) {
		t.Error("the refused spec replaced the sweep's spec copy")
	}

	r = runCLI(t, work, 2*time.Minute, "report", out, "--reps", "200")
	if r.Code != 0 || !strings.Contains(r.Stdout, "| dataset | CQL | S4RL-N |") || !strings.Contains(r.Stdout, "P(method > CQL)") {
		t.Fatalf("report: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, f := range []string{"table.md", "table.tex", "table.csv", "report.json", "iqm.svg", "performance-profiles.png", "curves-pendulum-medium.svg"} {
		if _, err := os.Stat(filepath.Join(out, "report", f)); err != nil {
			t.Errorf("report file %s: %v", f, err)
		}
	}
}

// A sweep trains each dataset's shared Koopman model once and hands it to the
// runs that need one; a dataset that cannot be made (here a D4RL name
// collect does not know, as walker2d-medium-v2 is before its behaviour
// policy is committed) leaves only its own runs pending, and the exit
// status says so. The report reads the result with extra comparisons and
// reference scores.
func TestSweepSharedKoopmanAndUnpreparedDataset(t *testing.T) {
	work := t.TempDir()
	makeTinyData(t, work)
	spec := `name: prep
datasets:
  - name: pendulum-medium
    env: pendulum
    data: data/pendulum-medium.hdf5
    koopman: {model: models/pendulum-koopman.safetensors, seed: 0, epochs: 1, hidden: [8, 8], latent: 4}
  - name: hopper-mediocre
    env: hopper
    data: data/hopper-mediocre-v2.hdf5
    collect: {dataset: hopper-mediocre-v2, transitions: 100}
methods:
  - {name: CQL, augment: none}
  - {name: KFC++, augment: kfc++}
seeds: [0]
steps: 400
preset: paper
eval: {every: 200, episodes: 2}
flags: {hidden: [16, 16], batch: 32, bc-steps: 100, log-every: 100, checkpoint-every: 200}
threads: 1
`
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "sw")
	r := runCLI(t, work, 5*time.Minute, "sweep", "run", "spec.yaml", "--out", out, "--jobs", "1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "1 dataset could not be prepared; its runs stay pending") ||
		!strings.Contains(r.Stderr, "dataset hopper-mediocre: koopq collect hopper-mediocre-v2") ||
		!strings.Contains(r.Stdout, "2 done, 0 skipped, 0 failed") {
		t.Fatalf("sweep: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	model := filepath.Join(work, "models", "pendulum-koopman.safetensors")
	if _, err := os.Stat(model); err != nil {
		t.Fatalf("shared model: %v", err)
	}
	kfc, _ := os.ReadFile(filepath.Join(out, "pendulum-medium__kfcpp__s0", "train.log"))
	cql, _ := os.ReadFile(filepath.Join(out, "pendulum-medium__cql__s0", "train.log"))
	if !strings.Contains(string(kfc), "--koopman "+model) || strings.Contains(string(cql), "--koopman") {
		t.Errorf("--koopman given to the wrong runs:\nKFC++: %s\nCQL: %s", kfc, cql)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "pendulum-medium__kfcpp__s0", "*", "koopman.safetensors")); len(m) != 0 {
		t.Errorf("the KFC++ run trained its own model: %v", m)
	}
	// The KFC++ run kept its precompute cache beside the data (the spec's
	// directory is the data root) and results.json names that file.
	if !strings.Contains(r.Stdout, "Koopman precompute caches are kept in "+filepath.Join(work, "augment-cache")) {
		t.Errorf("sweep output does not say where the precompute caches go:\n%s", r.Stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(work, "augment-cache", "koopman-kfcpp-*.cache")); len(m) != 1 {
		t.Errorf("precompute cache files: %v, want one", m)
	} else if res, _ := filepath.Glob(filepath.Join(out, "pendulum-medium__kfcpp__s0", "*", "results.json")); len(res) != 1 {
		t.Errorf("KFC++ results: %v", res)
	} else if b, _ := os.ReadFile(res[0]); !strings.Contains(string(b), `"file": "`+m[0]+`"`) {
		t.Errorf("results.json does not name the cache file %s", m[0])
	}
	if _, err := os.Stat(filepath.Join(out, "hopper-mediocre__cql__s0")); err == nil {
		t.Error("a run of the unprepared dataset was started")
	}
	// Rerunning trains nothing again and still reports the dataset.
	r = runCLI(t, work, 2*time.Minute, "sweep", "run", "spec.yaml", "--out", out)
	if r.Code != 1 || strings.Contains(r.Stdout, "koopman pendulum-medium:") || !strings.Contains(r.Stdout, "0 done, 2 skipped") {
		t.Errorf("second sweep: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	ref := filepath.Join(work, "ref.yaml")
	os.WriteFile(ref, []byte("label: paper\nsource: Table 1\nscores: {pendulum-medium: {CQL: 1.5}}\n"), 0o644)
	r = runCLI(t, work, 2*time.Minute, "report", out, "--reps", "100", "--compare", "KFC++:CQL", "--reference", ref, "--out", "rep")
	if r.Code != 0 || !strings.Contains(r.Stdout, "| P(KFC++ > CQL) | 1 vs 1 |") || !strings.Contains(r.Stdout, "| CQL paper |") ||
		!strings.Contains(r.Stdout, "2 finished runs, 1 dataset, 2 methods") {
		t.Errorf("report: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "rep", "table-vs-reference.md")); err != nil {
		t.Error(err)
	}
	r = runCLI(t, work, time.Minute, "report", out, "--compare", "KFC++")
	expectCLIError(t, r, "--compare", "METHOD:OVER")
	r = runCLI(t, work, time.Minute, "report", out, "--reference", filepath.Join(work, "none.yaml"))
	expectCLIError(t, r, "--reference", "none.yaml")
	r = runCLI(t, work, time.Minute, "report", out, "--last", "0", "--out", "rep0")
	expectCLIError(t, r, "--last 0", "at least 1")
	r = runCLI(t, work, time.Minute, "report", out, "--last", "1000", "--out", "rep1000")
	expectCLIError(t, r, "--last 1000", "evaluations")
	for _, d := range []string{"rep0", "rep1000"} {
		if _, err := os.Stat(filepath.Join(work, d)); err == nil {
			t.Errorf("a rejected report made %s", d)
		}
	}
}

// --time-limit holds runs that cannot finish in time (nothing of them is
// made) and, at the limit, stops the active trainers with a checkpoint.
func TestSweepRunTimeLimit(t *testing.T) {
	work := t.TempDir()
	makeTinyData(t, work)
	spec := strings.Replace(tinySweepSpec, "seeds: [0, 1]", "seeds: [0]", 1)
	spec = strings.Replace(spec, "steps: 5000", "steps: 200000", 1)
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "sw")
	// 200k steps at 20 (CQL) and 30 (S4RL-N) steps/s need 2.8 h and 1.9 h: neither fits in one hour.
	r := runCLI(t, work, time.Minute, "sweep", "run", "spec.yaml", "--out", out, "--jobs", "2", "--time-limit", "1h",
		"--steps-per-sec", "CQL=20", "--steps-per-sec", "S4RL-N=30")
	expectCLIError(t, r, "2 runs not started")
	if !strings.Contains(r.Stdout, "hold    pendulum-medium__cql__s0: needs about 2h47m at 20.0 steps/s") ||
		!strings.Contains(r.Stdout, "hold    pendulum-medium__s4rl-n__s0: needs about 1h51m at 30.0 steps/s") ||
		!strings.Contains(r.Stdout, "  pendulum-medium S4RL-N: 30.0 steps/s (--steps-per-sec S4RL-N=…)") ||
		!strings.Contains(r.Stdout, "2 held by the time limit") || strings.Contains(r.Stdout, "\nstart ") {
		t.Errorf("held sweep:\n%s", r.Stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*", "*", "config.json")); len(m) != 0 {
		t.Errorf("held runs made run directories: %v", m)
	}
	// plan --time-limit predicts it, with the same flags.
	r = runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml", "--out", out, "--jobs", "2", "--threads", "1", "--time-limit", "1h",
		"--steps-per-sec", "CQL=20", "--steps-per-sec", "S4RL-N=30")
	if r.Code != 0 || !strings.Contains(r.Stdout, "hold         pendulum-medium__cql__s0: needs about 2h47m at 20.0 steps/s from 0:00") ||
		!strings.Contains(r.Stdout, "0 runs start and finish within 1h, 2 held by the time limit") {
		t.Errorf("plan --time-limit: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml", "--time-limit", "-1h")
	expectCLIError(t, r, "--time-limit -1h0m0s")
	r = runCLI(t, work, time.Minute, "sweep", "plan", "spec.yaml", "--threads", "-2")
	expectCLIError(t, r, "--threads -2")
	// No speed given or measured: both start, and the limit stops them with a checkpoint.
	r = runCLI(t, work, 2*time.Minute, "sweep", "run", "spec.yaml", "--out", out, "--jobs", "2", "--time-limit", "3s")
	expectCLIError(t, r, "2 runs interrupted")
	if !strings.Contains(r.Stdout, "  pendulum-medium CQL: steps/s unknown") || !strings.Contains(r.Stdout, "time limit 3s reached") {
		t.Errorf("stopped sweep:\n%s", r.Stdout)
	}
	// A trainer stopped after its first step checkpoints it; one the limit
	// stopped while it was still starting (a loaded machine) has nothing to
	// keep. On a quiet machine both reach training within the limit.
	stopped := regexp.MustCompile(`stopped run (\S+): interrupted at step (\d+)`).FindAllStringSubmatch(r.Stdout, -1)
	trained := 0
	for _, m := range stopped {
		ckpt, _ := filepath.Glob(filepath.Join(out, m[1], "*", "checkpoints", "latest.safetensors"))
		if m[2] != "0" {
			trained++
			if len(ckpt) != 1 {
				t.Errorf("run %s stopped at step %s without a checkpoint: %v\n%s", m[1], m[2], ckpt, r.Stdout)
			}
		}
	}
	if len(stopped) != 2 || trained == 0 {
		t.Errorf("want both runs stopped by the limit, at least one after training began:\n%s", r.Stdout)
	}
	r = runCLI(t, work, time.Minute, "sweep", "status", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "2 pending") {
		t.Errorf("status after the limit: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A speed so slow that a run's time overflows a time.Duration holds the
// runs: 'sweep plan' printed "-2562047:-47" and "4 runs start and finish
// within 10m", and 'sweep run' started them.
func TestSweepTimeLimitWithTinySpeeds(t *testing.T) {
	spec := strings.Replace(tinySweepSpec, "data: data/pendulum-medium.hdf5", "data: "+fixtures(t).Data, 1)
	spec = strings.Replace(spec, "steps: 5000", "steps: 1000000", 1)
	dir := writeSpec(t, spec)
	r := runCLI(t, dir, time.Minute, "sweep", "plan", "spec.yaml", "--time-limit", "10m", "--steps-per-sec", "0.0001")
	if r.Code != 0 || strings.Contains(r.Stdout, ":-") || !strings.Contains(r.Stdout, "0 runs start and finish within 10m, 4 held by the time limit") ||
		!strings.Contains(r.Stdout, "needs more than 290 years") {
		t.Errorf("plan: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, dir, time.Minute, "sweep", "run", "spec.yaml", "--out", "out", "--time-limit", "10m", "--steps-per-sec", "1e-300")
	expectCLIError(t, r, "4 runs not started")
	if m, _ := filepath.Glob(filepath.Join(dir, "out", "*", "*", "config.json")); len(m) != 0 {
		t.Errorf("held runs made run directories: %v\n%s", m, r.Stdout)
	}
	expectCLIError(t, runCLI(t, dir, time.Minute, "sweep", "plan", "spec.yaml", "--time-limit", "10m", "--steps-per-sec", "NaN"),
		"--steps-per-sec NaN: want a positive number")
}
