package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sac"
)

// customDataset writes a dataset no built-in env matches: 5-D states, 2-D
// actions in [−3, 0.5] × [10, 20], eps episodes of 25 steps (the last step
// of each a timeout, every third episode ending in a terminal instead), no
// env in its metadata.
func customDataset(t *testing.T, eps int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 2))
	d := &dataset.Dataset{ObsDim: 5, ActDim: 2, Meta: map[string]string{}}
	for e := 0; e < eps; e++ {
		s := make([]float64, 5)
		for j := range s {
			s[j] = rng.NormFloat64()
		}
		for k := 0; k < 25; k++ {
			a := []float64{-3 + 3.5*rng.Float64(), 10 + 10*rng.Float64()}
			next := make([]float64, 5)
			for j := range next {
				next[j] = 0.9*s[j] + 0.05*a[j%2] + 0.01*rng.NormFloat64()
			}
			last := k == 24
			d.Append(s, a, -s[0]*s[0]+0.1*a[0], next, last && e%3 == 0, last && e%3 != 0)
			s = next
		}
	}
	path := filepath.Join(t.TempDir(), "robot-logs.hdf5")
	if err := dataset.WriteD4RL(path, d); err != nil {
		t.Fatal(err)
	}
	return path
}

func offlineTrain(data, out, name, aug string, extra ...string) []string {
	args := []string{"train", "--data", data, "--hidden", "16,16", "--batch", "32",
		"--steps", "40", "--bc-steps", "10", "--eval-every", "20", "--log-every", "10",
		"--checkpoint-every", "20", "--augment", aug, "--seed", "3", "--out", out, "--name", name,
		"--koopman-epochs", "2", "--koopman-hidden", "16", "--koopman-latent", "4", "--koopman-batch", "64"}
	return append(args, extra...)
}

func finiteDiag(t *testing.T, where string, v map[string]any) {
	t.Helper()
	for _, k := range []string{"q_data", "td_error", "log_likelihood", "action_mse"} {
		x, ok := v[k].(float64)
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("%s: %s = %v, want a finite number", where, k, v[k])
		}
	}
	if n, _ := v["transitions"].(float64); n <= 0 {
		t.Errorf("%s: transitions %v", where, v["transitions"])
	}
}

// TestTrainWithoutSimulator trains on a custom-dimension dataset with
// --env none (and with no --env: the data records none) for the gaussian
// and kfc++ augmenters, and checks the offline diagnostics in history.json
// and results.json, the held-out split by episode and the action bounds
// taken from the data.
func TestTrainWithoutSimulator(t *testing.T) {
	data := customDataset(t, 40)
	for _, c := range []struct{ name, aug string }{{"gaussian", "gaussian"}, {"kfcpp", "kfc++"}, {"noenv", "none"}} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := offlineTrain(data, out, c.name, c.aug, "--holdout-fraction", "0.1")
			if c.name != "noenv" {
				args = append(args, "--env", "none")
			}
			r := runCLI(t, "", 5*time.Minute, args...)
			if r.Code != 0 {
				t.Fatalf("train: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "no simulator") || !strings.Contains(r.Stdout, "4 episodes held out") {
				t.Errorf("summary: %s", r.Stdout)
			}
			dir := runDir(t, out)
			var res map[string]any
			b, err := os.ReadFile(filepath.Join(dir, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if env := res["config"].(map[string]any)["env"]; env != "none" {
				t.Errorf("config env %v, want none", env)
			}
			off, ok := res["offline"].(map[string]any)
			if !ok {
				t.Fatalf("results.json has no offline diagnostics: %s", b)
			}
			finiteDiag(t, "results.json", off)
			if off["holdout_episodes"] != 4.0 || off["train_episodes"] != 36.0 {
				t.Errorf("split: %v held-out episodes, %v trained on; want 4 and 36", off["holdout_episodes"], off["train_episodes"])
			}
			all, err := run.ReadDataset(data, dataset.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h, tr := off["transitions"].(float64), res["transitions"].(float64); h+tr != float64(all.Len()) || h < 4*24 || h > 4*25 {
				t.Errorf("%v held-out + %v trained-on transitions, want 4 episodes' worth and %d in all", h, tr, all.Len())
			}
			if fe := res["final_eval"].(map[string]any); fe["normalized_score"] != nil {
				t.Errorf("final normalized score %v, want null", fe["normalized_score"])
			}
			var hist []map[string]any
			b, err = os.ReadFile(filepath.Join(dir, "history.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &hist); err != nil {
				t.Fatal(err)
			}
			if len(hist) != 2 || hist[0]["step"] != 20.0 || hist[1]["step"] != 40.0 {
				t.Fatalf("history: %s, want evaluations at steps 20 and 40", b)
			}
			for _, h := range hist {
				o, ok := h["offline"].(map[string]any)
				if !ok {
					t.Fatalf("history point without offline diagnostics: %v", h)
				}
				finiteDiag(t, "history.json", o)
			}
			p, meta, err := sac.ReadPolicy(filepath.Join(dir, "policy.safetensors"))
			envName := meta["env"]
			if err != nil {
				t.Fatal(err)
			}
			if envName != "none" || p.Actor.In() != 5 || p.ActDim != 2 {
				t.Errorf("policy: env %q, %d → %d", envName, p.Actor.In(), p.ActDim)
			}
			if p.Scale.Low[0] < -3 || p.Scale.Low[0] > -2.8 || p.Scale.High[1] > 20 || p.Scale.High[1] < 19.8 {
				t.Errorf("action bounds %v–%v, want the data's min/max ≈ [−3, 10]–[0.5, 20]", p.Scale.Low, p.Scale.High)
			}
			rep := runCLI(t, "", time.Minute, "report", out)
			if strings.Contains(rep.Stderr, "panic") || !strings.Contains(rep.Stdout+rep.Stderr, "without a simulator") {
				t.Errorf("report on an offline run: exit %d\n%s%s", rep.Code, rep.Stdout, rep.Stderr)
			}
		})
	}
}

// TestTrainWithoutSimulatorBadInput: bounds of the wrong length, bounds
// that exclude the data, bounds with a simulator, a single episode and a
// holdout fraction of 1 are errors before any run directory exists.
func TestTrainWithoutSimulatorBadInput(t *testing.T) {
	data := customDataset(t, 10)
	one := customDataset(t, 1)
	cases := []struct {
		name  string
		extra []string
		want  []string
	}{
		{"short bounds", []string{"--env", "none", "--action-low", "-3", "--action-high", "1,20"}, []string{"1/2 values", "2-dimensional actions"}},
		{"bounds exclude data", []string{"--env", "none", "--action-low", "-1,10", "--action-high", "1,20"}, []string{"outside"}},
		{"inverted bounds", []string{"--env", "none", "--action-low", "1,20", "--action-high", "-3,10"}, []string{"low must be below high"}},
		{"bounds with env", []string{"--env", "pendulum", "--action-low", "-3,10", "--action-high", "1,20"}, []string{"only with --env none"}},
		{"obs size with env", []string{"--env", "pendulum"}, []string{"pendulum"}},
		{"holdout 1", []string{"--env", "none", "--holdout-fraction", "1"}, []string{"--holdout-fraction"}},
		// Bounds beyond float32 made the first step's Q loss NaN, in a run directory.
		{"bounds beyond float32", []string{"--env", "none", "--action-low", "-1e39,-1e39", "--action-high", "1e39,1e39"}, []string{"float32", "within 3.4"}},
		{"span beyond float32", []string{"--env", "none", "--action-low", "-3e38,-3e38", "--action-high", "3e38,3e38"}, []string{"high − low must stay within"}},
		// A name with a path in it made the run directory outside --out.
		{"name escapes --out", []string{"--env", "none", "--name", "../escaped"}, []string{`--name "../escaped": want one path element`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			r := runCLI(t, "", time.Minute, append(offlineTrain(data, out, "x", "none"), c.extra...)...)
			expectCLIError(t, r, c.want...)
			if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) != 0 {
				t.Errorf("run directory created: %v", m)
			}
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "escaped*")); len(m) != 0 {
				t.Errorf("run directory created outside --out: %v", m)
			}
		})
	}
	t.Run("one episode", func(t *testing.T) {
		r := runCLI(t, "", time.Minute, append(offlineTrain(one, t.TempDir(), "x", "none"), "--env", "none")...)
		expectCLIError(t, r, "whole episodes", "1 episode")
	})
}

// TestReportRanksOfflineRunsByFQE: runs trained without a simulator have no
// score; `koopq report` ranks them by the FQE estimate each run's fqe.json
// holds (best first, runs without one last and named), and refuses an
// estimate of another policy (a stale fqe.json) or estimates on different
// data.
func TestReportRanksOfflineRunsByFQE(t *testing.T) {
	data := customDataset(t, 20)
	out := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		r := runCLI(t, "", 5*time.Minute, offlineTrain(data, out, name, "none", "--env", "none", "--seed", map[string]string{"a": "1", "b": "2", "c": "3"}[name])...)
		if r.Code != 0 {
			t.Fatalf("train %s: exit %d\n%s%s", name, r.Code, r.Stdout, r.Stderr)
		}
	}
	dirs := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		m, _ := filepath.Glob(filepath.Join(out, name+"*", "results.json"))
		if len(m) != 1 {
			t.Fatalf("run %s: results.json %v", name, m)
		}
		dirs[name] = filepath.Dir(m[0])
	}
	values := map[string]float64{}
	fqe := func(name, dataPath string) {
		t.Helper()
		r := runCLI(t, "", 2*time.Minute, "fqe", "--policy", dirs[name], "--data", dataPath, "--steps", "100", "--hidden", "8",
			"--batch", "32", "--bootstrap", "50", "--fits", "2", "--json", filepath.Join(dirs[name], "fqe.json"))
		if r.Code != 0 {
			t.Fatalf("fqe %s: exit %d\n%s%s", name, r.Code, r.Stdout, r.Stderr)
		}
		var f struct {
			Result struct {
				Value     float64   `json:"value"`
				FitValues []float64 `json:"fit_values"`
			} `json:"result"`
		}
		b, _ := os.ReadFile(filepath.Join(dirs[name], "fqe.json"))
		if err := json.Unmarshal(b, &f); err != nil || len(f.Result.FitValues) != 2 {
			t.Fatalf("fqe.json of %s: %s (err %v)", name, b, err)
		}
		values[name] = f.Result.Value
	}
	fqe("a", data)
	fqe("b", data)
	rep := runCLI(t, "", time.Minute, "report", out, "--out", filepath.Join(out, "rep"))
	if rep.Code != 0 {
		t.Fatalf("report: exit %d\n%s%s", rep.Code, rep.Stdout, rep.Stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "rep", "offline.md"))
	if err != nil {
		t.Fatal(err)
	}
	best, second := "a", "b"
	if values["b"] > values["a"] {
		best, second = "b", "a"
	}
	lines := strings.Split(string(md), "\n")
	row := func(name string) int {
		for i, l := range lines {
			if strings.HasSuffix(l, dirs[name]+" |") {
				return i
			}
		}
		t.Fatalf("no row for run %s in offline.md:\n%s", name, md)
		return -1
	}
	if !(row(best) < row(second) && row(second) < row("c")) || !strings.HasPrefix(lines[row(best)], "| 1 |") ||
		!strings.Contains(lines[row("c")], "no fqe.json") || !strings.Contains(rep.Stdout, "1 run without an estimate") {
		t.Errorf("ranking (FQE %v): want %s, %s, then c unranked:\n%s\nstdout:\n%s", values, best, second, md, rep.Stdout)
	}

	// Estimates on other data are not ranked together.
	other := customDataset(t, 21)
	fqe("c", other)
	bad := runCLI(t, "", time.Minute, "report", out, "--out", filepath.Join(out, "rep2"))
	expectCLIError(t, bad, "not comparable")

	// A policy changed after its estimate makes the estimate stale.
	fqe("c", data)
	pol := filepath.Join(dirs["a"], "policy.safetensors")
	b, err := os.ReadFile(pol)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dirs["b"], "policy.safetensors")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stale := runCLI(t, "", time.Minute, "report", out, "--out", filepath.Join(out, "rep3"))
	expectCLIError(t, stale, "stale")
}

// A policy trained without a simulator: eval --policy RUN asked for an
// env with "--env: unknown environment "none"" although no --env was
// given, eval --policy RUN --env pendulum refused it as trained on
// "none", and eval --run over a directory holding it failed at it. Now
// the first names what to give, the second evaluates, and --run skips it
// as it skips runs without a policy.
func TestEvalOfflineRun(t *testing.T) {
	fx := fixtures(t)
	out := t.TempDir()
	ok(t, runCLI(t, "", time.Minute, tinyTrain(fx.Data, out, "offline", "--env", "none", "--action-low", "-2", "--action-high", "2")...))
	ok(t, runCLI(t, "", time.Minute, tinyTrain(fx.Data, out, "sim")...))
	offline, _ := filepath.Glob(filepath.Join(out, "offline-*"))
	if len(offline) != 1 {
		t.Fatalf("offline runs %v", offline)
	}
	r := runCLI(t, "", time.Minute, "eval", "--policy", offline[0], "--episodes", "1")
	expectCLIError(t, r, "--env is required", "trained without a simulator")
	ok(t, runCLI(t, "", time.Minute, "eval", "--policy", offline[0], "--env", "pendulum", "--episodes", "1"))
	r = runCLI(t, "", time.Minute, "eval", "--run", out)
	ok(t, r)
	if !strings.Contains(r.Stdout, "trained without a simulator") || !strings.Contains(r.Stdout, "1 run without a policy or a simulator not replayed") {
		t.Errorf("eval --run over an offline and a simulator run:\n%s", r.Stdout)
	}
}

// Settings that have no effect on the run (--holdout-fraction with a
// simulator, --koopman with an augmentation that uses no model) were
// accepted and recorded without a word; they are warned about now.
func TestTrainWarnsUnusedSettings(t *testing.T) {
	fx := fixtures(t)
	r := runCLI(t, "", time.Minute, tinyTrain(fx.Data, t.TempDir(), "w", "--holdout-fraction", "0.5", "--koopman", fx.Model, "--augment", "cql")...)
	ok(t, r)
	for _, want := range []string{"warning: --holdout-fraction (holdout_fraction) 0.5 has no effect with --env pendulum",
		"warning: --koopman (koopman_model) " + fx.Model + " has no effect with --augment cql"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}
