package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

// writePendulumData writes a small D4RL-layout file with Pendulum's shapes
// (3-D states, 1-D actions in [−2, 2]): episodes of 50 steps with
// time-limit flags, states on the circle.
func writePendulumData(t *testing.T, path string, n int, seed uint64) string {
	t.Helper()
	if err := dataset.WriteD4RL(path, pendulumData(n, seed)); err != nil {
		t.Fatal(err)
	}
	return path
}

// pendulumData is writePendulumData's transitions: n rows of 50-step
// episodes from seed.
func pendulumData(n int, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 3))
	d := &dataset.Dataset{ObsDim: 3, ActDim: 1}
	th, dth := 0.0, 0.0
	for i := 0; i < n; i++ {
		if i%50 == 0 {
			th, dth = rng.Float64()*2*math.Pi, rng.NormFloat64()
		}
		a := 4*rng.Float64() - 2
		nth, ndth := th+0.05*dth, dth+0.05*(a-10*math.Sin(th))
		d.Observations = append(d.Observations, float32(math.Cos(th)), float32(math.Sin(th)), float32(dth))
		d.NextObservations = append(d.NextObservations, float32(math.Cos(nth)), float32(math.Sin(nth)), float32(ndth))
		d.Actions = append(d.Actions, float32(a))
		d.Rewards = append(d.Rewards, float32(-(th*th + 0.1*dth*dth)))
		d.Terminals = append(d.Terminals, 0)
		to := float32(0)
		if i%50 == 49 {
			to = 1
		}
		d.Timeouts = append(d.Timeouts, to)
		th, dth = nth, ndth
	}
	return d
}

// tinyTrain returns train flags for a run of a few seconds.
func tinyTrain(data, out, name string, extra ...string) []string {
	args := []string{"train", "--data", data, "--env", "pendulum", "--hidden", "8,8", "--batch", "16",
		"--steps", "40", "--bc-steps", "10", "--eval-every", "20", "--eval-episodes", "1", "--log-every", "5",
		"--checkpoint-every", "10", "--augment", "gaussian", "--seed", "1", "--out", out, "--name", name}
	return append(args, extra...)
}

// tinyRun writes the pendulum test data (300 rows, seed 2) into a new
// temporary directory tmp as p.hdf5 and trains tinyTrain's run "r" on it
// under tmp/runs; it returns tmp, the data file and the run directory.
func tinyRun(t *testing.T) (tmp, data, dir string) {
	t.Helper()
	tmp = t.TempDir()
	data = writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 300, 2)
	out := filepath.Join(tmp, "runs")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "r")...); r.Code != 0 {
		t.Fatalf("train: %s", r.Stderr)
	}
	return tmp, data, runDir(t, out)
}

// runDir returns the single run directory under out.
func runDir(t *testing.T, out string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(m) != 1 {
		t.Fatalf("want one run directory under %s, got %v", out, m)
	}
	return m[0]
}

func readResults(t *testing.T, dir string) run.TrainResult {
	t.Helper()
	var r run.TrainResult
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTrainHappyPath(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 1)
	out := filepath.Join(tmp, "runs")
	r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "r")...)
	if r.Code != 0 {
		t.Fatalf("train failed: %d\n%s", r.Code, r.Stderr)
	}
	dir := runDir(t, out)
	got := listTree(t, dir)
	want := []string{".lock", "checkpoints", "checkpoints/latest.safetensors", "config.json", "history.json", "inputs.json", "metrics.csv",
		"metrics.jsonl", "policy.safetensors", "results.json"}
	if !slices.Equal(got, want) {
		t.Errorf("run directory holds %v, want %v", got, want)
	}
	res := readResults(t, dir)
	if res.Steps != 40 || res.Phases.BC != 10 || res.Phases.CQL != 30 || res.FinalPhase != "cql" {
		t.Errorf("results: steps %d phases %+v final phase %q", res.Steps, res.Phases, res.FinalPhase)
	}
	if len(res.History) != 2 || res.History[0].Step != 20 || res.History[1].Step != 40 {
		t.Errorf("history %+v, want evaluations at 20 and 40", res.History)
	}
	// stderr is not a terminal here: plain lines, one per phase with its own total, no \r.
	if strings.Contains(r.Stderr, "\r") {
		t.Errorf("\\r in non-terminal progress output:\n%q", r.Stderr)
	}
	for _, w := range []string{"bc 10/10 (100%)", "cql 30/30 (100%)"} {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("progress lacks %q:\n%s", w, r.Stderr)
		}
	}
	if !strings.Contains(r.Stdout, "10 behaviour cloning, 30 CQL") {
		t.Errorf("summary lacks the phase split:\n%s", r.Stdout)
	}
	// config.json is accepted by --config-file and gives the same settings.
	out2 := filepath.Join(tmp, "runs2")
	r = runCLI(t, tmp, 2*time.Minute, "train", "--config-file", filepath.Join(dir, "config.json"), "--out", out2, "--name", "again", "--quiet")
	if r.Code != 0 {
		t.Fatalf("train --config-file config.json: %d\n%s", r.Code, r.Stderr)
	}
	if r.Stderr != "" {
		t.Errorf("--quiet printed to stderr:\n%s", r.Stderr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	b, _ := os.ReadFile(filepath.Join(runDir(t, out2), "config.json"))
	if !bytes.Equal(a, b) {
		t.Errorf("config.json fed back differs:\n%s\nvs\n%s", a, b)
	}
	if ra, rb := readResults(t, dir), readResults(t, runDir(t, out2)); ra.Final.Mean != rb.Final.Mean || ra.LastStats != rb.LastStats {
		t.Errorf("same config, different numbers: %v vs %v", ra.Final.Mean, rb.Final.Mean)
	}
	// Flags override the file, the file overrides the preset.
	yml := filepath.Join(tmp, "c.yaml")
	os.WriteFile(yml, []byte("preset: corl\neval_episodes: 2\ncql:\n  steps: 30\n  lr_critic: 0.001\n"), 0o644)
	out3 := filepath.Join(tmp, "runs3")
	r = runCLI(t, tmp, 2*time.Minute, "train", "--config-file", yml, "--data", data, "--env", "pendulum", "--hidden", "8,8",
		"--batch", "16", "--steps", "25", "--eval-every", "0", "--checkpoint-every", "0", "--out", out3, "--quiet")
	if r.Code != 0 {
		t.Fatalf("train --config-file c.yaml: %s", r.Stderr)
	}
	c := readResults(t, runDir(t, out3)).Config
	if c.Preset != "corl" || c.CQL.Steps != 25 || c.EvalEpisodes != 2 || c.CQL.LRCritic != 1e-3 || c.CQL.LRActor != 3e-5 || c.CQL.Net.Init != "orthogonal" {
		t.Errorf("preset < file < flags: got %+v", c)
	}
}

// Bad input is rejected before any side effect: one error line naming the
// flag/file/key, exit code 1, no run directory, no progress output.
func TestTrainBadInputs(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 200, 1)
	yml := func(name, body string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown augment", []string{"--augment", "kfc+++"}, []string{"--augment", "kfc+++"}},
		{"env typo", []string{"--env", "pendulm"}, []string{"--env", "pendulm"}},
		{"dimension mismatch", []string{"--env", "mountaincar-continuous"}, []string{"mountaincar-continuous", "observations"}},
		{"NaN float", []string{"--lr-actor", "NaN"}, []string{"--lr-actor", "NaN"}},
		{"Inf float", []string{"--gamma", "Inf"}, []string{"--gamma", "+Inf"}},
		{"negative float", []string{"--gaussian-sigma", "-1"}, []string{"--gaussian-sigma", "-1"}},
		{"negative count", []string{"--batch", "-3"}, []string{"--batch", "-3"}},
		{"zero episodes", []string{"--eval-episodes", "0"}, []string{"--eval-episodes"}},
		{"bad hidden", []string{"--hidden", "8,0"}, []string{"--hidden"}},
		{"pure behaviour cloning", []string{"--steps", "10", "--bc-steps", "10"}, []string{"--steps", "--bc-steps", "behaviour cloning"}},
		{"missing file", []string{"--data", filepath.Join(tmp, "nope.hdf5")}, []string{"nope.hdf5"}},
		{"old --config spelling", []string{"--config", "corl"}, []string{"--config", "--preset"}},
		{"unknown preset", []string{"--preset", "papr"}, []string{"--preset", "papr"}},
		{"bool with a value", []string{"--lagrange", "true"}, []string{"true", "--lagrange=false"}},
		{"config key typo", []string{"--config-file", yml("typo.yaml", "cql:\n  lr_actr: 1e-4\n")}, []string{"typo.yaml", "lr_actr"}},
		{"config NaN", []string{"--config-file", yml("nan.yaml", "cql:\n  tau: .nan\n")}, []string{"--tau", "cql.tau", "NaN"}},
		{"config not YAML", []string{"--config-file", yml("bad.yaml", "cql: [1,\n")}, []string{"bad.yaml"}},
		{"missing koopman model", []string{"--augment", "kfc++", "--koopman", filepath.Join(tmp, "none.safetensors")}, []string{"--koopman", "none.safetensors"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(tmp, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			r := runCLI(t, tmp, time.Minute, tinyTrain(data, out, "x", c.args...)...)
			expectCLIError(t, r, c.want...)
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed train left %s: %v", out, listTree(t, out))
			}
			if strings.Contains(r.Stderr, "%") {
				t.Errorf("progress printed before the error:\n%s", r.Stderr)
			}
		})
	}
	r := runCLI(t, tmp, time.Minute, "train", "--env", "pendulum", "--out", filepath.Join(tmp, "o"))
	expectCLIError(t, r, "--data")
}

// Resume rules (bugs 3 and 5): a finished run is a no-op that says so and
// changes no file; changed settings are errors naming them; a larger
// --steps extends the run to exactly what an uninterrupted longer run gives.
func TestTrainResumeRules(t *testing.T) {
	tmp, data, dir := tinyRun(t)
	snapshot := func() map[string]string {
		m := map[string]string{}
		for _, f := range []string{"results.json", "history.json", "metrics.csv", "metrics.jsonl", "policy.safetensors", "checkpoints/latest.safetensors", "config.json"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			m[f] = string(b)
		}
		return m
	}
	before := snapshot()
	for i := 0; i < 2; i++ {
		r := runCLI(t, tmp, time.Minute, "train", "--resume", dir)
		if r.Code != 0 || !strings.Contains(r.Stdout, "already finished") {
			t.Fatalf("resuming a finished run: code %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	}
	after := snapshot()
	for f := range before {
		if before[f] != after[f] {
			t.Errorf("resuming a finished run changed %s", f)
		}
	}
	// A second process on the run (here: the test holding its lock) makes
	// --resume fail at once.
	lf, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	expectCLIError(t, runCLI(t, tmp, time.Minute, "train", "--resume", dir), "in use by another koopq process")
	lf.Close()
	other := writePendulumData(t, filepath.Join(tmp, "q.hdf5"), 300, 3)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--augment", "none"}, []string{"augment", "gaussian", "none"}},
		{[]string{"--data", other}, []string{"data", "q.hdf5"}},
		{[]string{"--koopman", "m.safetensors"}, []string{"koopman_model"}},
		{[]string{"--lr-critic", "1e-3"}, []string{"cql.lr_critic"}},
		{[]string{"--steps", "30"}, []string{"--steps 30"}},
		{[]string{"--out", "x"}, []string{"--out", "--resume"}},
		{[]string{"--preset", "corl"}, []string{"--preset", "--resume"}},
	} {
		r := runCLI(t, tmp, time.Minute, append([]string{"train", "--resume", dir}, c.args...)...)
		expectCLIError(t, r, c.want...)
	}
	if after := snapshot(); after["config.json"] != before["config.json"] || after["results.json"] != before["results.json"] {
		t.Error("a refused resume changed the run")
	}
	// Same flags as recorded are fine; a larger --steps extends.
	if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", dir, "--steps", "60", "--augment", "gaussian"); r.Code != 0 {
		t.Fatalf("extending: %s", r.Stderr)
	}
	out2 := filepath.Join(tmp, "runs60")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out2, "r", "--steps", "60")...); r.Code != 0 {
		t.Fatalf("train 60: %s", r.Stderr)
	}
	compareRuns(t, runDir(t, out2), dir)
}

// compareRuns checks that two run directories hold the same policy,
// checkpoint, metrics and results, timing fields aside.
func compareRuns(t *testing.T, want, got string) {
	t.Helper()
	for _, f := range []string{"policy.safetensors", "history.json"} {
		a, err1 := os.ReadFile(filepath.Join(want, f))
		b, err2 := os.ReadFile(filepath.Join(got, f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs (%v, %v)", f, err1, err2)
		}
	}
	sameCheckpoint(t, filepath.Join(want, "checkpoints", "latest.safetensors"), filepath.Join(got, "checkpoints", "latest.safetensors"))
	checkSegments(t, got)
	if a, b := csvNoTiming(t, filepath.Join(want, "metrics.csv")), csvNoTiming(t, filepath.Join(got, "metrics.csv")); a != b {
		t.Errorf("metrics.csv differs:\n%s\nvs\n%s", a, b)
	}
	if a, b := resultsNoTiming(t, want), resultsNoTiming(t, got); a != b {
		t.Errorf("results.json differs:\n%s\nvs\n%s", a, b)
	}
}

// sameCheckpoint fails unless two checkpoints hold bit-identical tensors
// and the same metadata apart from "segments", which records the
// processes that trained the run (more of them after resumes).
func sameCheckpoint(t *testing.T, want, got string) {
	t.Helper()
	ta, ma, err1 := nn.LoadSafetensors(want)
	tb, mb, err2 := nn.LoadSafetensors(got)
	if err1 != nil || err2 != nil {
		t.Errorf("checkpoints: %v, %v", err1, err2)
		return
	}
	if len(ta) != len(tb) {
		t.Errorf("checkpoint %s: %d tensors, want %d", got, len(tb), len(ta))
	}
	for name, a := range ta {
		b, ok := tb[name]
		if !ok || !slices.Equal(a.Shape, b.Shape) || len(a.Data) != len(b.Data) {
			t.Errorf("checkpoint %s: tensor %s missing or of another shape", got, name)
			continue
		}
		for i := range a.Data {
			if math.Float32bits(a.Data[i]) != math.Float32bits(b.Data[i]) {
				t.Errorf("checkpoint %s: tensor %s differs at %d: %v vs %v", got, name, i, a.Data[i], b.Data[i])
				break
			}
		}
	}
	if _, ok := mb["segments"]; !ok {
		t.Errorf("checkpoint %s records no segments", got)
	}
	delete(ma, "segments")
	delete(mb, "segments")
	if !maps.Equal(ma, mb) {
		t.Errorf("checkpoint %s: metadata differs:\n%v\nvs\n%v", got, ma, mb)
	}
}

// checkSegments fails unless the segments in dir's results.json tile the
// run's steps 0..steps, each with its process's provenance.
func checkSegments(t *testing.T, dir string) {
	t.Helper()
	var res run.TrainResult
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil {
		t.Errorf("results.json: %v", err)
		return
	}
	at := 0
	for i, g := range res.Segments {
		if g.FromStep != at || g.ToStep < g.FromStep || g.Provenance == nil || g.Provenance.GoVersion == "" {
			t.Errorf("%s: segment %d %+v after step %d", dir, i, g, at)
		}
		at = g.ToStep
	}
	if len(res.Segments) == 0 || at != res.Steps {
		t.Errorf("%s: segments %+v do not end at step %d", dir, res.Segments, res.Steps)
	}
}

// csvNoTiming returns metrics.csv without its wall_seconds column.
func csvNoTiming(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	col := slices.Index(strings.Split(lines[0], ","), "wall_seconds")
	if col < 0 {
		t.Fatalf("%s: no wall_seconds column in header %q", path, lines[0])
	}
	for i, l := range lines {
		if l == "" {
			continue
		}
		f := strings.Split(l, ",")
		lines[i] = strings.Join(slices.Delete(f, col, col+1), ",")
	}
	return strings.Join(lines, "\n")
}

// resultsNoTiming returns results.json without the fields that describe the
// finishing process rather than the run: wall time, rate, start time and
// command line.
func resultsNoTiming(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "wall_seconds")
	delete(m, "steps_per_second")
	delete(m, "segments") // one per process; checkSegments checks them
	prov := m["provenance"].(map[string]any)
	delete(prov, "started")
	delete(prov, "command_line")
	cfg := m["config"].(map[string]any)
	delete(cfg, "data") // both runs read the same file; the names are fixed by the test
	out, _ := json.MarshalIndent(m, "", " ")
	return string(out)
}

// SIGINT stops training with a checkpoint and a message saying how to
// resume; resuming finishes with the numbers of an uninterrupted run.
func TestTrainSignalCheckpointsAndResumes(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 300, 4)
	args := func(out string) []string {
		// No periodic checkpoint before the end (1000 > 400 steps): a
		// checkpoint in the middle can only come from the signal handler.
		return tinyTrain(data, out, "r", "--steps", "400", "--checkpoint-every", "1000", "--eval-every", "0")
	}
	ref := filepath.Join(tmp, "ref")
	if r := runCLI(t, tmp, 2*time.Minute, args(ref)...); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	for _, sig := range []string{"INT", "TERM"} {
		out := filepath.Join(tmp, "sig-"+sig)
		cmd := exec.Command(koopqBin, append(args(out), "--quiet")...)
		var stderr bytes.Buffer
		cmd.Stderr, cmd.Dir = &stderr, tmp
		// The process sends itself the signal after step 120
		// (run.CrashEnv), as a user's Ctrl-C or a batch system would.
		cmd.Env = append(os.Environ(), run.CrashEnv+"=step:120:"+sig)
		err := cmd.Run()
		dir := runDir(t, out)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != sweep.ExitInterrupted {
			t.Fatalf("after SIG%s: %v, want exit code %d (resumable)\n%s", sig, err, sweep.ExitInterrupted, stderr.String())
		}
		var step int
		if _, err := fmt.Sscanf(stderr.String()[strings.Index(stderr.String(), "interrupted at step"):], "interrupted at step %d", &step); err != nil ||
			!strings.Contains(stderr.String(), "koopq train --resume "+dir) {
			t.Fatalf("SIG%s message:\n%s", sig, stderr.String())
		}
		// The checkpoint holds exactly the step the message names, which lies
		// between the signal (after step 120) and the end. The signal reaches
		// the training loop asynchronously, so the step is not fixed.
		_, meta, err := nn.LoadSafetensors(filepath.Join(dir, "checkpoints", "latest.safetensors"))
		if err != nil {
			t.Fatalf("no checkpoint after SIG%s: %v", sig, err)
		}
		var st struct{ Steps int }
		if json.Unmarshal([]byte(meta["state"]), &st); st.Steps != step || step < 120 || step >= 400 {
			t.Fatalf("SIG%s: checkpoint at step %d, message says %d", sig, st.Steps, step)
		}
		if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", dir); r.Code != 0 {
			t.Fatal(r.Stderr)
		}
		compareRuns(t, runDir(t, ref), dir)
	}
}

// writeOddData writes, with h5py, a Minari dataset directory and a
// D4RL-layout file without a timeouts key and with one NaN reward, all with
// Pendulum's shapes.
func writeOddData(t *testing.T, dir string) (minari, d4rl string) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatal("these tests need /usr/bin/python3 with h5py and numpy (make deps)")
	}
	minari = filepath.Join(dir, "pendulum", "medium-v0")
	d4rl = filepath.Join(dir, "odd.hdf5")
	script := `
import sys, json, os, h5py, numpy as np
mdir, d4 = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
def ep(T):
    th = rng.uniform(0, 6.28, T + 1)
    return np.stack([np.cos(th), np.sin(th), rng.normal(size=T + 1)], 1)
os.makedirs(mdir + "/data")
with h5py.File(mdir + "/data/main_data.hdf5", "w") as f:
    f.attrs["total_episodes"] = 4
    f.attrs["total_steps"] = 240
    for i in range(4):
        g = f.create_group("episode_%d" % i)
        g.attrs["id"] = i
        g.attrs["total_steps"] = 60
        g.create_dataset("observations", data=ep(60))
        g.create_dataset("actions", data=rng.uniform(-2, 2, (60, 1)).astype(np.float32))
        g.create_dataset("rewards", data=-rng.uniform(0, 10, 60))
        g.create_dataset("terminations", data=np.zeros(60, bool))
        tr = np.zeros(60, bool); tr[-1] = True
        g.create_dataset("truncations", data=tr)
        g.create_group("infos")
json.dump({"dataset_id": "pendulum/medium-v0", "total_episodes": 4, "total_steps": 240, "data_format": "hdf5",
           "env_spec": {"id": "Pendulum-v1", "max_episode_steps": 60}}, open(mdir + "/metadata.json", "w"))
n = 300
with h5py.File(d4, "w") as f:
    o = ep(n - 1)
    f.create_dataset("observations", data=o.astype(np.float32))
    f.create_dataset("actions", data=rng.uniform(-2, 2, (n, 1)).astype(np.float32))
    r = -rng.uniform(0, 10, n).astype(np.float32); r[7] = np.nan
    f.create_dataset("rewards", data=r)
    f.create_dataset("terminals", data=np.zeros(n, bool))
`
	cmd := exec.Command("/usr/bin/python3", "-c", script, minari, d4rl)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, b)
	}
	return minari, d4rl
}

// train reads what 'dataset info' and 'koopman train' read: Minari
// datasets, and D4RL files that need --max-episode-steps and --drop-invalid.
func TestTrainReadOptionsAndMinari(t *testing.T) {
	tmp := t.TempDir()
	minari, odd := writeOddData(t, tmp)
	out := filepath.Join(tmp, "minari")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(minari, out, "m")...); r.Code != 0 {
		t.Fatalf("train on a Minari dataset: %s", r.Stderr)
	}
	if res := readResults(t, runDir(t, out)); res.Transitions != 240 {
		t.Errorf("Minari dataset gave %d transitions, want 240", res.Transitions)
	}
	r := runCLI(t, tmp, time.Minute, tinyTrain(odd, filepath.Join(tmp, "o1"), "o")...)
	expectCLIError(t, r, "timeouts", "odd.hdf5")
	r = runCLI(t, tmp, time.Minute, tinyTrain(odd, filepath.Join(tmp, "o2"), "o", "--max-episode-steps", "50")...)
	expectCLIError(t, r, "NaN", "--drop-invalid")
	for _, o := range []string{"o1", "o2"} {
		if _, err := os.Stat(filepath.Join(tmp, o)); !os.IsNotExist(err) {
			t.Errorf("failed read left %s", o)
		}
	}
	out = filepath.Join(tmp, "o3")
	r = runCLI(t, tmp, 2*time.Minute, tinyTrain(odd, out, "o", "--max-episode-steps", "50", "--drop-invalid")...)
	if r.Code != 0 {
		t.Fatalf("--max-episode-steps --drop-invalid: %s", r.Stderr)
	}
	res := readResults(t, runDir(t, out))
	if !res.Config.ReadOptions.DropInvalid || res.Config.ReadOptions.MaxEpisodeSteps != 50 || res.Transitions >= 299 || res.Transitions < 280 {
		t.Errorf("read options %+v, %d transitions", res.Config.ReadOptions, res.Transitions)
	}
}

// Issue 66 item 9: with metrics.jsonl truncated and metrics.csv intact,
// `train --resume` rebuilt the CSV from the JSONL and the rows vanished
// from both. Now the resumed run's logs are those of an uninterrupted run.
func TestTrainResumeKeepsMetricRowsOfTruncatedJSONL(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 300, 2)
	out := filepath.Join(tmp, "runs")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out, "r", "--steps", "20")...); r.Code != 0 {
		t.Fatalf("train: %s", r.Stderr)
	}
	dir := runDir(t, out)
	jp := filepath.Join(dir, "metrics.jsonl")
	b, err := os.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jp, []byte(strings.SplitAfter(string(b), "\n")[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", dir, "--steps", "40"); r.Code != 0 {
		t.Fatalf("resume: %s", r.Stderr)
	}
	out2 := filepath.Join(tmp, "runs40")
	if r := runCLI(t, tmp, 2*time.Minute, tinyTrain(data, out2, "r")...); r.Code != 0 {
		t.Fatalf("train 40: %s", r.Stderr)
	}
	want := runDir(t, out2)
	if a, b := jsonlNoTiming(t, filepath.Join(want, "metrics.jsonl")), jsonlNoTiming(t, jp); a != b {
		t.Errorf("metrics.jsonl after resume:\n%s\nwant\n%s", b, a)
	}
	if a, b := csvNoTiming(t, filepath.Join(want, "metrics.csv")), csvNoTiming(t, filepath.Join(dir, "metrics.csv")); a != b {
		t.Errorf("metrics.csv after resume:\n%s\nwant\n%s", b, a)
	}
}
