package run

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	_ "github.com/koopq/koopq/env/classic"
	"github.com/koopq/koopq/sac"
)

// pendulumLike makes a small random dataset with Pendulum's shapes.
func pendulumLike(n int, seed uint64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &dataset.Dataset{ObsDim: 3, ActDim: 1}
	for i := 0; i < n; i++ {
		th := rng.Float64() * 6.28
		d.Observations = append(d.Observations, float32(cosf(th)), float32(sinf(th)), float32(rng.NormFloat64()))
		d.NextObservations = append(d.NextObservations, float32(cosf(th+0.05)), float32(sinf(th+0.05)), float32(rng.NormFloat64()))
		d.Actions = append(d.Actions, float32(4*rng.Float64()-2))
		d.Rewards = append(d.Rewards, float32(-rng.Float64()*10))
		d.Terminals = append(d.Terminals, 0)
		d.Timeouts = append(d.Timeouts, 0)
	}
	return d
}

func tinyConfig() TrainConfig {
	cfg := DefaultTrainConfig()
	cfg.Env = "pendulum"
	cfg.Data = "in-memory"
	cfg.CQL.Net.Hidden = []int{16, 16}
	cfg.CQL.Batch = 32
	cfg.CQL.Steps = 40
	cfg.CQL.BCSteps = 10
	cfg.CQL.Seed = 9
	cfg.EvalEvery = 20
	cfg.EvalEpisodes = 2
	cfg.LogEvery = 5
	cfg.CheckpointEvery = 10
	cfg.Augment = "gaussian"
	return cfg
}

// trainInterrupted starts a new run of cfg on d in dir and cancels it once
// progress reaches step at, as SIGINT does (the trainer checkpoints where it
// is and stops); it fails the test unless training stopped by that.
func trainInterrupted(t *testing.T, cfg TrainConfig, dir *Dir, d *dataset.Dataset, at int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Train(ctx, cfg, dir, d, false, func(done, _ int, _ string) {
		if done >= at {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancellation, got %v", err)
	}
}

// trainFinished trains tinyConfig on pendulumLike(300, seed) to its end in
// a new run directory and returns the three.
func trainFinished(t *testing.T, seed uint64) (*dataset.Dataset, TrainConfig, *Dir) {
	t.Helper()
	d, cfg := pendulumLike(300, seed), tinyConfig()
	dir, _ := NewDir(t.TempDir(), "a")
	if _, err := Train(context.Background(), cfg, dir, d, false, nil); err != nil {
		t.Fatal(err)
	}
	return d, cfg, dir
}

// fileContents reads the named files of a run directory, failing the test
// when one cannot be read; changedFiles names those whose content now
// differs from such a snapshot.
func fileContents(t *testing.T, dir *Dir, names ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, f := range names {
		b, err := os.ReadFile(dir.File(f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = string(b)
	}
	return m
}

func changedFiles(dir *Dir, before map[string]string) []string {
	var changed []string
	for f, want := range before {
		if b, err := os.ReadFile(dir.File(f)); err != nil || string(b) != want {
			changed = append(changed, f)
		}
	}
	sort.Strings(changed)
	return changed
}

// metricRows reads a run's metrics.jsonl.
func metricRows(t *testing.T, dir *Dir) []map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(dir.File("metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r map[string]float64
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("metrics.jsonl line %q: %v", line, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// A run killed mid-way (context cancelled) and resumed with --resume ends
// with exactly the numbers of an uninterrupted run, and its metric log has
// each step once.
func TestTrainResumeAfterKill(t *testing.T) {
	d := pendulumLike(300, 1)
	cfg := tinyConfig()
	dirA, _ := NewDir(t.TempDir(), "a")
	resA, err := Train(context.Background(), cfg, dirA, d, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirB, _ := NewDir(t.TempDir(), "b")
	trainInterrupted(t, cfg, dirB, d, 27)
	dirB2, err := OpenDir(dirB.Path)
	if err != nil {
		t.Fatal(err)
	}
	resB, err := Train(context.Background(), cfg, dirB2, d, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resA.Final.Mean != resB.Final.Mean || resA.LastStats != resB.LastStats {
		t.Fatalf("resumed run differs: %v vs %v; %+v vs %+v", resA.Final.Mean, resB.Final.Mean, resA.LastStats, resB.LastStats)
	}
	a, _ := os.ReadFile(dirA.File("metrics.jsonl"))
	b, _ := os.ReadFile(dirB.File("metrics.jsonl"))
	if string(a) != strings.ReplaceAll(string(b), "", "") {
		// wall_seconds differs between runs; compare steps and losses only.
		la, lb := strings.Split(strings.TrimSpace(string(a)), "\n"), strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(la) != len(lb) {
			t.Fatalf("metric rows: uninterrupted %d, resumed %d", len(la), len(lb))
		}
		for i := range la {
			var ra, rb map[string]float64
			json.Unmarshal([]byte(la[i]), &ra)
			json.Unmarshal([]byte(lb[i]), &rb)
			delete(ra, "wall_seconds")
			delete(rb, "wall_seconds")
			for k, v := range ra {
				if rb[k] != v {
					t.Fatalf("row %d %s: %v vs %v", i, k, v, rb[k])
				}
			}
		}
	}
	if len(resB.History) != len(resA.History) {
		t.Fatalf("history %d vs %d evaluations", len(resB.History), len(resA.History))
	}
	// results.json records provenance and config.
	var res TrainResult
	if err := dirB.ReadJSON("results.json", &res); err != nil {
		t.Fatal(err)
	}
	if res.Provenance.GoVersion == "" || res.Config.CQL.Seed != 9 || res.Provenance.BLAS == "" {
		t.Fatalf("results.json lacks provenance/config: %+v", res.Provenance)
	}
	// It also records both processes: 0..k (the killed one, to its
	// checkpoint) and k..40 (the one that finished); the uninterrupted run
	// has one segment.
	if g := resA.Segments; len(g) != 1 || g[0].FromStep != 0 || g[0].ToStep != 40 || g[0].Provenance == nil {
		t.Fatalf("uninterrupted run: segments %+v", g)
	}
	g := res.Segments
	if len(g) != 2 || g[0].FromStep != 0 || g[0].ToStep < 27 || g[0].ToStep >= 40 || g[1].FromStep != g[0].ToStep || g[1].ToStep != 40 {
		t.Fatalf("resumed run: segments %+v", g)
	}
	for i, s := range g {
		if s.Provenance == nil || s.Provenance.BLAS == "" || s.WallSeconds <= 0 {
			t.Fatalf("segment %d lacks provenance or wall time: %+v", i, s)
		}
	}
	// The saved policy reloads and acts like the trained one.
	p, meta, err := sac.ReadPolicy(dirB.File("policy.safetensors"))
	if err != nil || meta["env"] != "pendulum" {
		t.Fatalf("ReadPolicy: %v %q", err, meta["env"])
	}
	act := make([]float64, 1)
	p.Act([]float64{1, 0, 0}, act)
	if act[0] < -2 || act[0] > 2 {
		t.Fatalf("action %v outside pendulum bounds", act[0])
	}
}

// TrainWith reads config.json under the run's lock and checks the resume
// against that read; a Recorded copy the caller read before the lock must
// equal it, so a run changed in between by another process (here: extended
// to 60 steps) is refused instead of resumed on a stale view.
func TestTrainResumeChecksRecordedConfig(t *testing.T) {
	d := pendulumLike(300, 1)
	dir, _ := NewDir(t.TempDir(), "r")
	if _, err := Train(context.Background(), tinyConfig(), dir, d, false, nil); err != nil {
		t.Fatal(err)
	}
	var recorded, next TrainConfig
	if err := dir.ReadJSONCopies("config.json", &recorded, &next); err != nil {
		t.Fatal(err)
	}
	if &recorded.CQL.Net.Hidden[0] == &next.CQL.Net.Hidden[0] {
		t.Fatal("ReadJSONCopies: the copies share a slice")
	}
	next.CQL.Steps = 50 // extend the finished 40-step run
	resume := func(cfg TrainConfig, rec *TrainConfig) (*TrainResult, error) {
		return TrainWith(context.Background(), cfg, dir, d, TrainOptions{Resume: true, Recorded: rec})
	}
	other := next
	other.CQL.Seed++
	want := CheckResume(recorded, other)
	if _, err := resume(other, &recorded); want == nil || err == nil || err.Error() != want.Error() {
		t.Fatalf("another seed: got %v, want CheckResume's %v", err, want)
	}
	// Another process extends the run to 60 steps after our read.
	moved := recorded
	moved.CQL.Steps = 60
	if err := dir.WriteJSON("config.json", moved); err != nil {
		t.Fatal(err)
	}
	if _, err := resume(next, &recorded); err == nil || !strings.Contains(err.Error(), "changed while this command started") {
		t.Fatalf("config.json changed after the caller's read: want a refusal, got %v", err)
	}
	if err := dir.WriteJSON("config.json", recorded); err != nil {
		t.Fatal(err)
	}
	res, err := resume(next, &recorded)
	if err != nil {
		t.Fatalf("with Recorded: %v", err)
	}
	var now TrainConfig
	if err := dir.ReadJSON("config.json", &now); err != nil || res.Steps != 50 || now.CQL.Steps != 50 {
		t.Fatalf("extended run: %d steps, config.json %d steps (%v)", res.Steps, now.CQL.Steps, err)
	}
}

func TestTrainRejectsMismatchedEnv(t *testing.T) {
	d := pendulumLike(50, 1)
	cfg := tinyConfig()
	cfg.Env = "mountaincar-continuous" // 2-D observations
	dir, _ := NewDir(t.TempDir(), "x")
	if _, err := Train(context.Background(), cfg, dir, d, false, nil); err == nil || !strings.Contains(err.Error(), "observations") {
		t.Fatalf("want an observation-dimension error, got %v", err)
	}
	cfg.Env = "no-such-env"
	if _, err := Train(context.Background(), cfg, dir, d, false, nil); err == nil {
		t.Fatal("unknown env accepted")
	}
}

func TestLoadPolicyRejectsOtherFiles(t *testing.T) {
	p := t.TempDir() + "/x.safetensors"
	os.WriteFile(p, []byte("not a checkpoint"), 0o644)
	if _, _, err := sac.ReadPolicy(p); err == nil {
		t.Fatal("garbage accepted as a policy")
	}
	if _, err := OpenDir(t.TempDir()); err == nil {
		t.Fatal("directory without config.json accepted as a run")
	}
}

// Checkpoints record the segments of the processes that trained a run;
// a checkpoint from before segments stands for one of unknown provenance,
// and segments that do not tile 0..step are rejected, not trusted.
func TestResumedSegments(t *testing.T) {
	g, err := resumedSegments(map[string]string{}, 300)
	if err != nil || len(g) != 1 || !reflect.DeepEqual(g[0], Segment{FromStep: 0, ToStep: 300}) {
		t.Fatalf("old checkpoint: %+v, %v", g, err)
	}
	ok := `[{"from_step":0,"to_step":100,"wall_seconds":5,"provenance":null},{"from_step":100,"to_step":300,"wall_seconds":9,"provenance":{"blas":"openblas"}}]`
	g, err = resumedSegments(map[string]string{"segments": ok}, 300)
	if err != nil || len(g) != 2 || g[1].Provenance == nil || g[1].Provenance.BLAS != "openblas" {
		t.Fatalf("recorded segments: %+v, %v", g, err)
	}
	for name, bad := range map[string]string{
		"gap":        `[{"from_step":0,"to_step":100},{"from_step":120,"to_step":300}]`,
		"short":      `[{"from_step":0,"to_step":200}]`,
		"backwards":  `[{"from_step":0,"to_step":300},{"from_step":300,"to_step":250}]`,
		"not json":   `{`,
		"late start": `[{"from_step":5,"to_step":300}]`,
	} {
		if _, err := resumedSegments(map[string]string{"segments": bad}, 300); err == nil || !strings.Contains(err.Error(), "bad segments") {
			t.Errorf("%s: want a bad-segments error, got %v", name, err)
		}
	}
}

// Every metrics row says how far the augmenter moved the states: 0 without
// augmentation, σ·E‖z‖ (z ~ N(0, I₃): 2√(2/π) ≈ 1.596) for S4RL-N noise of
// standard deviation σ on Pendulum's 3-dimensional states.
func TestMetricsRecordAugmentationShift(t *testing.T) {
	d := pendulumLike(300, 1)
	for _, c := range []struct {
		augment string
		sigma   float64
		want    float64
	}{{"none", 0.1, 0}, {"gaussian", 0.1, 0.1 * 2 * math.Sqrt(2/math.Pi)}} {
		cfg := tinyConfig()
		cfg.Augment, cfg.GaussianSigma, cfg.EvalEvery = c.augment, c.sigma, 0
		dir, _ := NewDir(t.TempDir(), c.augment)
		if _, err := Train(context.Background(), cfg, dir, d, false, nil); err != nil {
			t.Fatal(err)
		}
		var sum [2]float64
		rows := metricRows(t, dir)
		for _, row := range rows {
			for k, key := range []string{"shift_l2", "shift_next_l2"} {
				v, ok := row[key]
				if !ok {
					t.Fatalf("%s: row %v has no %s", c.augment, row, key)
				}
				sum[k] += v
			}
		}
		for k, key := range []string{"shift_l2", "shift_next_l2"} {
			got := sum[k] / float64(len(rows))
			if math.Abs(got-c.want) > 0.1*c.want || (c.want == 0 && got != 0) {
				t.Errorf("%s: mean %s %.4g over %d rows, want %.4g", c.augment, key, got, len(rows), c.want)
			}
		}
	}
}

// killedRun trains cfg on d in a new run directory and cancels it after
// step 27 (its checkpoint is at step 20).
func killedRun(t *testing.T, cfg TrainConfig, d *dataset.Dataset) *Dir {
	t.Helper()
	dir, err := NewDir(t.TempDir(), "k")
	if err != nil {
		t.Fatal(err)
	}
	trainInterrupted(t, cfg, dir, d, 27)
	return dir
}

// A resume went on from a checkpoint whatever config.json and inputs.json
// said: a hand-edited seed or CQL weight, a checkpoint copied from another
// run, or other data once inputs.json was removed were all credited to the
// run. The checkpoint now records its settings and inputs, and a resume
// refuses what differs from them.
func TestResumeRefusesWhatTheCheckpointWasNotTrainedWith(t *testing.T) {
	d := pendulumLike(300, 1)
	cfg := tinyConfig()
	resume := func(dir *Dir, c TrainConfig, data *dataset.Dataset) error {
		_, err := Train(context.Background(), c, dir, data, true, nil)
		return err
	}
	// config.json edited by hand: another seed and CQL weight.
	dir := killedRun(t, cfg, d)
	edited := cfg
	edited.CQL.Seed, edited.CQL.MinQWeight = 5, 50
	if err := dir.WriteJSON("config.json", edited); err != nil {
		t.Fatal(err)
	}
	err := resume(dir, edited, d)
	if err == nil || !strings.Contains(err.Error(), "was trained with other settings") || !strings.Contains(err.Error(), "cql.seed (9 → 5)") ||
		!strings.Contains(err.Error(), "cql.min_q_weight") {
		t.Errorf("edited config.json: %v", err)
	}
	// Fewer steps than the checkpoint's run, by hand.
	short := cfg
	short.CQL.Steps = 15
	if err := dir.WriteJSON("config.json", short); err != nil {
		t.Fatal(err)
	}
	if err := resume(dir, short, d); err == nil || !strings.Contains(err.Error(), "cql.steps") {
		t.Errorf("config.json with fewer steps: %v", err)
	}
	// Restored, it resumes.
	if err := dir.WriteJSON("config.json", cfg); err != nil {
		t.Fatal(err)
	}
	if err := resume(dir, cfg, d); err != nil {
		t.Fatalf("restored config.json: %v", err)
	}

	// A checkpoint of another run (seed 11) copied in.
	dir = killedRun(t, cfg, d)
	other := cfg
	other.CQL.Seed = 11
	b, err := os.ReadFile(killedRun(t, other, d).File(checkpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir.File(checkpointFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := resume(dir, cfg, d); err == nil || !strings.Contains(err.Error(), "cql.seed (11 → 9)") {
		t.Errorf("another run's checkpoint: %v", err)
	}

	// The checksum key removed from the checkpoint (a tampered weight
	// would then load unverified).
	dir = killedRun(t, cfg, d)
	b, err = os.ReadFile(dir.File(checkpointFile))
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`,?"koopq\.sha256":"[0-9a-f]{64}",?`)
	loc := key.FindIndex(b[:8+int(binary.LittleEndian.Uint64(b[:8]))])
	if loc == nil {
		t.Fatal("no checksum key in the checkpoint's header")
	}
	blank := bytes.Repeat([]byte(" "), loc[1]-loc[0])
	if m := b[loc[0]:loc[1]]; m[0] == ',' && m[len(m)-1] == ',' {
		blank[0] = ',' // between two other keys
	}
	copy(b[loc[0]:], blank)
	if err := os.WriteFile(dir.File(checkpointFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := resume(dir, cfg, d); err == nil || !strings.Contains(err.Error(), "has no checksum") {
		t.Errorf("checkpoint without its checksum: %v", err)
	}

	// inputs.json removed, other data.
	dir = killedRun(t, cfg, d)
	if err := os.Remove(dir.File(InputsFile)); err != nil {
		t.Fatal(err)
	}
	if err := resume(dir, cfg, pendulumLike(300, 2)); err == nil || !strings.Contains(err.Error(), "the dataset changed since this run started") {
		t.Errorf("other data without inputs.json: %v", err)
	}
}

// A policy.safetensors put in a run's place was re-evaluated as the run's
// own (only the replay, by its numbers, could tell). results.json now
// records the policy's fingerprint, and both re-evaluation and replay
// refuse another file.
func TestReevaluationRefusesAnotherPolicy(t *testing.T) {
	d := pendulumLike(300, 1)
	cfg := tinyConfig()
	dirA, _ := NewDir(t.TempDir(), "a")
	resA, err := Train(context.Background(), cfg, dirA, d, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resA.Policy == nil || resA.Policy.SHA256 == "" {
		t.Fatalf("results record no policy fingerprint: %+v", resA.Policy)
	}
	if _, err := ReevaluateFinal(dirA.Path, 1, 3, 1); err != nil {
		t.Fatalf("re-evaluating the run's own policy: %v", err)
	}
	other := cfg
	other.CQL.Seed = 4
	dirB, _ := NewDir(t.TempDir(), "b")
	if _, err := Train(context.Background(), other, dirB, d, false, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(dirB.File("policy.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dirA.File("policy.safetensors"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReevaluateFinal(dirA.Path, 1, 3, 1); err == nil || !strings.Contains(err.Error(), "is not the policy this run wrote") {
		t.Errorf("re-evaluation of another run's policy: %v", err)
	}
	if _, err := ReplayFinalEval(dirA.Path, 1); err == nil || !strings.Contains(err.Error(), "is not the policy this run wrote") {
		t.Errorf("replay of another run's policy: %v", err)
	}
}

// With a CQL weight of 1e30 an Adam second moment overflowed to +Inf while
// every weight stayed finite: the per-step check passed, and the run ended
// in "refusing to write checkpoint … non-finite weight +Inf in adam…",
// which a resume repeated without saying the run had diverged. The
// checkpoint now checks the whole state first and reports divergence,
// keeping the last good checkpoint.
func TestAdamOverflowIsDivergence(t *testing.T) {
	d := pendulumLike(300, 1)
	cfg := tinyConfig()
	cfg.CQL.MinQWeight, cfg.CQL.Lagrange, cfg.CQL.Steps, cfg.CheckpointEvery = 1e30, false, 200, 10
	dir, _ := NewDir(t.TempDir(), "a")
	_, err := Train(context.Background(), cfg, dir, d, false, nil)
	if err == nil || !strings.Contains(err.Error(), "training diverged at step") || !strings.Contains(err.Error(), "adam.") ||
		!strings.Contains(err.Error(), "--min-q-weight") {
		t.Fatalf("Adam overflow: %v, want a divergence naming the Adam moment", err)
	}
}
