package sac

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/nn"
)

// boxEnv is a deterministic test environment for the online run's
// bookkeeping: a 3-D state, an asymmetric 2-D action box [−3, 1] × [0.5, 2]
// (so a warm-up action drawn from the wrong range, or a uniform log-density
// of the wrong width, shows), 40-step episodes that terminate early when
// the first state coordinate passes 1.5. Every instance counts its Reset
// calls in boxResets. failAt > 0 makes the instance's failAt-th Step fail.
type boxEnv struct {
	s      [3]float64
	t      int
	steps  int
	failAt int
}

// boxResets counts Reset calls of every boxEnv (the tests using it do not
// run in parallel).
var boxResets atomic.Int64

var boxLow, boxHigh = []float64{-3, 0.5}, []float64{1, 2}

func init() {
	env.Register("sac-test-box", func() (env.Env, error) { return &boxEnv{}, nil })
	env.Register("sac-test-box-fails", func() (env.Env, error) { return &boxEnv{failAt: 7}, nil })
}

func (e *boxEnv) Name() string { return "sac-test-box" }
func (e *boxEnv) ObservationSpace() env.Space {
	inf := math.Inf(1)
	return env.Space{Low: []float64{-inf, -inf, -inf}, High: []float64{inf, inf, inf}}
}
func (e *boxEnv) ActionSpace() env.Space {
	return env.Space{Low: append([]float64(nil), boxLow...), High: append([]float64(nil), boxHigh...)}
}
func (e *boxEnv) MaxEpisodeSteps() int { return 40 }

func (e *boxEnv) Reset(rng *rand.Rand) []float64 {
	boxResets.Add(1)
	for i := range e.s {
		e.s[i] = 0.2*rng.Float64() - 0.1
	}
	e.t = 0
	return e.obs()
}

func (e *boxEnv) obs() []float64 { return []float64{e.s[0], e.s[1], e.s[2]} }

func (e *boxEnv) Step(a []float64) ([]float64, float64, bool, bool, error) {
	e.steps++
	if e.failAt > 0 && e.steps == e.failAt {
		return nil, 0, false, false, errors.New("simulated simulator failure")
	}
	a0 := min(max(a[0], boxLow[0]), boxHigh[0])
	a1 := min(max(a[1], boxLow[1]), boxHigh[1])
	e.s[0] = 0.9*e.s[0] + 0.25*a0
	e.s[1] = 0.8*e.s[1] + 0.1*e.s[0]
	e.s[2] = 0.5*e.s[2] + 0.1*a1
	e.t++
	r := -(e.s[0]-1)*(e.s[0]-1) - 0.1*(a1-1)*(a1-1)
	term := e.s[0] > 1.5
	return e.obs(), r, term, !term && e.t >= 40, nil
}

func (e *boxEnv) State() []float64 { return []float64{e.s[0], e.s[1], e.s[2], float64(e.t)} }

func (e *boxEnv) SetState(s []float64) error {
	if len(s) != 4 {
		return fmt.Errorf("box env: state of %d values, want 4", len(s))
	}
	copy(e.s[:], s[:3])
	e.t = int(s[3])
	return nil
}

// boxRun is a run on boxEnv whose schedule the test works out by hand:
// 1100 steps, 200 of warm-up, two updates per step; snapshots at 400 and
// 800 (and 1100 at the end), checkpoints at 150, 300, …, 1050; stats at
// 400, 800 (snapshots) and 1000. The medium return is so low that the
// first snapshot is medium, so its stochastic evaluation takes
// MediumEpisodes (3) episodes and the later ones EvalEpisodes (1).
func boxRun() RunConfig {
	c := DefaultRunConfig("sac-test-box", -1e9)
	c.SAC.TotalSteps = 1100
	c.SAC.StartSteps = 200
	c.SAC.UpdatesPerEnv = 2
	c.SAC.Batch = 16
	c.SAC.Net.Hidden = []int{8, 8}
	c.SAC.Seed = 5
	c.SnapshotEvery = 400
	c.CheckpointEvery = 150
	c.EvalEpisodes = 1
	c.MediumEpisodes = 3
	return c
}

// fakeClock makes the run's clock read t0 at its first reading (the
// process's start) and t0 + 10 s at every later one, so the speed figures
// are exact: steps this process / 10.
func fakeClock(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	calls := 0
	old := now
	now = func() time.Time {
		calls++
		if calls == 1 {
			return t0
		}
		return t0.Add(10 * time.Second)
	}
	t.Cleanup(func() { now = old })
}

// seenStats is what the stats callback saw: the report and the replay
// file's size on disk at that moment.
type seenStats struct {
	RunStats
	replayBytes int64
}

func recordStats(t *testing.T, dir string, out *[]seenStats, then func(RunStats)) func(RunStats) {
	return func(s RunStats) {
		fi, err := os.Stat(filepath.Join(dir, runReplayFile))
		if err != nil {
			t.Error(err)
			return
		}
		*out = append(*out, seenStats{s, fi.Size()})
		if then != nil {
			then(s)
		}
	}
}

// replayRow is one transition of replay.f32 for boxEnv (no qpos/qvel).
type replayRow struct {
	act       [2]float32
	term, end bool
	logp      float32
}

func readBoxReplay(t *testing.T, dir string) []replayRow {
	b, err := os.ReadFile(filepath.Join(dir, runReplayFile))
	if err != nil {
		t.Fatal(err)
	}
	const row = 2*3 + 2 + 4 // s (0–2) | a (3–4) | r | s' (6–8) | terminal (9) | timeout (10) | logp (11)
	if len(b)%(row*4) != 0 {
		t.Fatalf("replay file of %d bytes is not whole %d-float rows", len(b), row)
	}
	f := func(i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }
	var out []replayRow
	for base := 0; base < len(b)/4; base += row {
		r := replayRow{act: [2]float32{f(base + 3), f(base + 4)}, logp: f(base + row - 1)}
		r.term = f(base+9) != 0
		r.end = r.term || f(base+10) != 0
		out = append(out, r)
	}
	return out
}

func readSpeed(t *testing.T, dir string) map[string]float64 {
	b, err := os.ReadFile(filepath.Join(dir, runSpeedFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunRecordsWhatItDid checks an online run's bookkeeping against a
// schedule worked out by hand (boxRun): when it snapshots, checkpoints and
// reports; how many episodes each evaluation plays; the uniform warm-up
// actions and their log-density; the episode count; the number of
// gradient updates; the speed figures (under a fake clock); and that a run
// cancelled at step 400 and resumed ends with the uninterrupted run's bytes
// and reports its own process's speed.
func TestRunRecordsWhatItDid(t *testing.T) {
	cfg := boxRun()
	const rowBytes = 12 * 4

	fakeClock(t)
	ref := t.TempDir()
	var seen []seenStats
	boxResets.Store(0)
	res, err := StartRun(context.Background(), cfg, ref, recordStats(t, ref, &seen, nil))
	if err != nil {
		t.Fatal(err)
	}

	// Stats at the snapshots (400, 800) and every 1000 steps, each after the
	// checkpoint due at that step: the replay file then holds the rows of
	// the last multiple of 150.
	var steps []int
	for _, s := range seen {
		steps = append(steps, s.Step)
	}
	if !reflect.DeepEqual(steps, []int{400, 800, 1000}) {
		t.Fatalf("stats reported at steps %v, want [400 800 1000]", steps)
	}
	for i, wantRows := range []int64{300, 750, 900} {
		s := seen[i]
		if s.replayBytes != wantRows*rowBytes {
			t.Errorf("at step %d the replay file holds %d bytes, want %d rows (%d bytes): checkpoints every 150 steps",
				s.Step, s.replayBytes, wantRows, wantRows*rowBytes)
		}
		if want := float64(s.Step) / 10; s.StepsPerSec != want {
			t.Errorf("at step %d: %v steps/s, want %v (the fake clock says 10 s)", s.Step, s.StepsPerSec, want)
		}
		if (s.Snapshot != nil) != (s.Step%400 == 0) || (s.Snapshot != nil && s.Snapshot.Step != s.Step) {
			t.Errorf("at step %d: snapshot %+v", s.Step, s.Snapshot)
		}
		if s.Total != cfg.SAC.TotalSteps {
			t.Errorf("at step %d: total %d", s.Step, s.Total)
		}
	}

	// Snapshots at 400, 800 and the final step; the first is medium.
	var snapSteps []int
	for _, s := range res.Snapshots {
		snapSteps = append(snapSteps, s.Step)
	}
	if !reflect.DeepEqual(snapSteps, []int{400, 800, 1100}) {
		t.Fatalf("snapshots at %v, want [400 800 1100]", snapSteps)
	}
	if res.Medium == nil || res.Medium.Step != 400 || res.Medium.File != RunMediumFile {
		t.Fatalf("medium %+v, want the snapshot of step 400 (the first, index 0)", res.Medium)
	}
	if res.Expert.Step != 1100 || res.Expert.File != RunExpertFile {
		t.Fatalf("expert %+v", res.Expert)
	}

	// The replay buffer: uniform warm-up actions over the whole box with
	// the uniform density's log, then the actor's.
	rows := readBoxReplay(t, ref)
	if len(rows) != cfg.SAC.TotalSteps {
		t.Fatalf("%d replay rows, want %d", len(rows), cfg.SAC.TotalSteps)
	}
	uniform := float32(-math.Log(4) - math.Log(1.5))
	for d := 0; d < 2; d++ {
		lo, hi, w := boxLow[d], boxHigh[d], boxHigh[d]-boxLow[d]
		mn, mx := math.Inf(1), math.Inf(-1)
		for i := 0; i < cfg.SAC.StartSteps; i++ {
			a := float64(rows[i].act[d])
			if a < float64(float32(lo)) || a > float64(float32(hi)) {
				t.Fatalf("warm-up row %d: action %d = %v outside [%v, %v]", i, d, a, lo, hi)
			}
			mn, mx = min(mn, a), max(mx, a)
		}
		if mn > lo+0.05*w || mx < hi-0.05*w {
			t.Errorf("warm-up actions of dimension %d span [%v, %v]: not uniform over [%v, %v]", d, mn, mx, lo, hi)
		}
	}
	for i := 0; i < cfg.SAC.StartSteps; i++ {
		if rows[i].logp != uniform {
			t.Fatalf("warm-up row %d: log-density %v, want −log(4·1.5) = %v", i, rows[i].logp, uniform)
		}
	}
	for i := cfg.SAC.StartSteps; i < len(rows); i++ {
		if rows[i].logp == uniform || math.IsNaN(float64(rows[i].logp)) || math.IsInf(float64(rows[i].logp), 0) {
			t.Fatalf("row %d (after the warm-up): log-density %v, want the actor's", i, rows[i].logp)
		}
	}

	// The episode count reported at step 1000 is the number of episode
	// ends among the first 1000 rows.
	ends := 0
	for _, r := range rows[:1000] {
		if r.end {
			ends++
		}
	}
	if seen[2].Episodes != ends || ends == 0 {
		t.Errorf("at step 1000: %d episodes reported, the replay rows end %d", seen[2].Episodes, ends)
	}

	// Every gradient update: two per step after the warm-up, for the
	// critics and the actor alike.
	ag := NewAgent(cfg.SAC, 3, 2, rand.New(rand.NewPCG(1, 1)))
	var st runState
	if err := loadCheckpoint(filepath.Join(ref, runCheckpointFile), ag, &st); err != nil {
		t.Fatal(err)
	}
	want := 2 * (cfg.SAC.TotalSteps - cfg.SAC.StartSteps)
	if st.AdamT != [3]int{want, want, want} {
		t.Errorf("Adam steps %v, want %d each (2 updates × %d steps after the warm-up)", st.AdamT, want, cfg.SAC.TotalSteps-cfg.SAC.StartSteps)
	}

	// Evaluation episodes: 1 deterministic + 3 stochastic at the first
	// snapshot (no medium yet), then 1 + 1 at the other two. Every other
	// reset is the training env's: its first, and one per finished episode.
	allEnds := 0
	for _, r := range rows {
		if r.end {
			allEnds++
		}
	}
	if st.Episodes != allEnds {
		t.Errorf("checkpoint counts %d episodes, the replay rows end %d", st.Episodes, allEnds)
	}
	if got, want := boxResets.Load()-int64(allEnds+1), int64(4+2+2); got != want {
		t.Errorf("the evaluations reset the env %d times, want %d", got, want)
	}

	// speed.json of the finished run: all 1100 steps in this process's 10 s.
	sp := readSpeed(t, ref)
	wantSpeed := map[string]float64{"step": 1100, "steps_this_process": 1100, "seconds_this_process": 10, "env_steps_per_second": 110}
	if !reflect.DeepEqual(sp, wantSpeed) {
		t.Errorf("speed.json %v, want %v", sp, wantSpeed)
	}

	// Policy metadata: no BLAS history when the kernel never changed.
	_, meta, err := nn.LoadSafetensors(filepath.Join(ref, RunExpertFile))
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := meta["blas_history"]; ok {
		t.Errorf("expert metadata has blas_history %q, but the kernel never changed", h)
	}

	// Cancelled at the stats of step 400, then resumed: the same bytes as
	// the uninterrupted run, and speed figures of the second process.
	fakeClock(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first []seenStats
	_, err = StartRun(ctx, cfg, dir, recordStats(t, dir, &first, func(RunStats) { cancel() }))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	sp = readSpeed(t, dir)
	if wantSpeed := map[string]float64{"step": 400, "steps_this_process": 400, "seconds_this_process": 10,
		"env_steps_per_second": 40}; !reflect.DeepEqual(sp, wantSpeed) {
		t.Errorf("speed.json of the cancelled run %v, want %v", sp, wantSpeed)
	}
	fakeClock(t)
	var second []seenStats
	if _, err := Run(context.Background(), dir, recordStats(t, dir, &second, nil)); err != nil {
		t.Fatal(err)
	}
	if len(second) != 2 || second[0].Step != 800 || second[1].Step != 1000 {
		t.Fatalf("resumed run reported %+v, want steps 800 and 1000", second)
	}
	for _, s := range second {
		if want := float64(s.Step-400) / 10; s.StepsPerSec != want {
			t.Errorf("resumed, at step %d: %v steps/s, want %v (steps since the resume / 10 s)", s.Step, s.StepsPerSec, want)
		}
	}
	sp = readSpeed(t, dir)
	if wantSpeed := map[string]float64{"step": 1100, "steps_this_process": 700, "seconds_this_process": 10,
		"env_steps_per_second": 70}; !reflect.DeepEqual(sp, wantSpeed) {
		t.Errorf("speed.json of the resumed run %v, want %v", sp, wantSpeed)
	}
	for _, f := range []string{runCheckpointFile, runReplayFile, RunExpertFile, RunMediumFile, RunResultFile, runSnapshotsFile,
		"snapshots/actor-0000400.safetensors", "snapshots/actor-0000800.safetensors", "snapshots/actor-0001100.safetensors"} {
		a, err1 := os.ReadFile(filepath.Join(ref, f))
		b, err2 := os.ReadFile(filepath.Join(dir, f))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v / %v", f, err1, err2)
		}
		if string(a) != string(b) {
			t.Errorf("%s of the cancelled and resumed run differs from the uninterrupted run's", f)
		}
	}
}

// TestRunNamesTheFailingEnvStep: a simulator failure stops the run with an
// error that names the env step (1-based) that failed.
func TestRunNamesTheFailingEnvStep(t *testing.T) {
	cfg := boxRun()
	cfg.Env = "sac-test-box-fails"
	_, err := StartRun(context.Background(), cfg, t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "env step 7:") || !strings.Contains(err.Error(), "simulated simulator failure") {
		t.Fatalf("got %v, want the failure of env step 7", err)
	}
}

// TestRunFailsWhenMediumCannotBeWritten: a medium policy that cannot be
// written (its path is a directory) stops the run with the error instead
// of a run without its medium policy.
func TestRunFailsWhenMediumCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, RunMediumFile, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := StartRun(context.Background(), boxRun(), dir, nil)
	if err == nil || !strings.Contains(err.Error(), RunMediumFile) {
		t.Fatalf("got %v, want an error naming %s", err, RunMediumFile)
	}
}

// TestTrainRecordsWhatItDid: the in-memory Train on the asymmetric box:
// stats every 50 steps until the callback says stop (at 200), the replay
// holding exactly the steps taken, uniform warm-up actions over the whole
// box, the actor's after, episode count = episode ends in the replay, and
// updates (α moves) only after the warm-up.
func TestTrainRecordsWhatItDid(t *testing.T) {
	cfg := boxRun().SAC
	cfg.TotalSteps, cfg.StartSteps, cfg.UpdatesPerEnv = 300, 100, 1
	e, err := env.Make("sac-test-box")
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	var alphas []float64
	var last TrainStats
	ag, d, err := Train(context.Background(), cfg, e, 50, func(a *Agent, s TrainStats) bool {
		steps, alphas, last = append(steps, s.Step), append(alphas, a.LogAlpha), s
		return s.Step < 200
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(steps, []int{50, 100, 150, 200}) || d.Len() != 200 || ag == nil {
		t.Fatalf("stats at %v, %d replay rows; want 50..200 and 200 rows (stopped by the callback)", steps, d.Len())
	}
	if alphas[0] != alphas[1] || alphas[1] == alphas[2] {
		t.Errorf("log α at 50, 100, 150: %v; want no update during the 100-step warm-up, updates after", alphas[:3])
	}
	ends := 0
	for i := range d.Len() {
		if d.Terminals[i] != 0 || d.Timeouts[i] != 0 {
			ends++
		}
	}
	if last.Episodes != ends || ends == 0 {
		t.Errorf("%d episodes reported, the replay rows end %d", last.Episodes, ends)
	}
	// every = 0: no stats, no division by zero.
	cfg0 := cfg
	cfg0.TotalSteps = 20
	if _, d0, err := Train(context.Background(), cfg0, e, 0, func(*Agent, TrainStats) bool {
		t.Error("stats with every = 0")
		return true
	}); err != nil || d0.Len() != 20 {
		t.Errorf("every = 0: %v, %d rows", err, d0.Len())
	}
	for j := range 2 {
		lo, hi, w := boxLow[j], boxHigh[j], boxHigh[j]-boxLow[j]
		mn, mx := math.Inf(1), math.Inf(-1)
		for i := range cfg.StartSteps {
			a := float64(d.Actions[i*2+j])
			if a < float64(float32(lo)) || a > float64(float32(hi)) {
				t.Fatalf("warm-up row %d: action %d = %v outside [%v, %v]", i, j, a, lo, hi)
			}
			mn, mx = min(mn, a), max(mx, a)
		}
		if mn > lo+0.1*w || mx < hi-0.1*w {
			t.Errorf("warm-up actions of dimension %d span [%v, %v], not [%v, %v]", j, mn, mx, lo, hi)
		}
	}
}

// TestTrainWarmUpIsUniform replays Train's random stream: each of the
// StartSteps warm-up actions is one uniform draw per dimension over the
// action box, taken after the agent's initialisation and the first reset,
// with a reset after every finished episode; the policy acts only after the
// last warm-up step (a policy sample there draws normals instead).
func TestTrainWarmUpIsUniform(t *testing.T) {
	cfg := boxRun().SAC
	cfg.TotalSteps, cfg.StartSteps = 90, 90
	e, err := env.Make("sac-test-box")
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := Train(context.Background(), cfg, e, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, trainStream))
	NewAgent(cfg, 3, 2, rng)
	replay := &boxEnv{}
	replay.Reset(rng)
	resets := 0
	for i := range d.Len() {
		for j := range 2 {
			want := float32(boxLow[j] + rng.Float64()*(boxHigh[j]-boxLow[j]))
			if got := d.Actions[i*2+j]; got != want {
				t.Fatalf("warm-up row %d (step %d), action %d: %v, want the uniform draw %v", i, i+1, j, got, want)
			}
		}
		if d.Terminals[i] != 0 || d.Timeouts[i] != 0 {
			replay.Reset(rng)
			resets++
		}
	}
	if d.Len() != 90 || resets < 2 {
		t.Fatalf("%d rows, %d episode ends; want 90 rows across at least two resets", d.Len(), resets)
	}
}

// TestPolicyReturnIsTheMean: policyReturn's figure is the mean over its
// episodes of each episode's summed reward, the episodes played one after
// another from one random stream (recomputed here step by step, acting
// deterministically and stochastically).
func TestPolicyReturnIsTheMean(t *testing.T) {
	cfg := boxRun().SAC
	ag := NewAgent(cfg, 3, 2, rand.New(rand.NewPCG(1, 2)))
	scale, err := Scale(&boxEnv{})
	if err != nil {
		t.Fatal(err)
	}
	p := NewPolicy(ag.Actor, nil, scale)
	for _, stochastic := range []bool{false, true} {
		got, err := policyReturn(&boxEnv{}, p, 3, rand.New(rand.NewPCG(7, 7)), stochastic)
		if err != nil {
			t.Fatal(err)
		}
		e, rng, act := &boxEnv{}, rand.New(rand.NewPCG(7, 7)), make([]float64, 2)
		var returns [3]float64
		for ep := range returns {
			obs := e.Reset(rng)
			for {
				if stochastic {
					p.Sample(obs, rng, act)
				} else {
					p.Act(obs, act)
				}
				next, r, term, trunc, _ := e.Step(act)
				returns[ep] += r
				if obs = next; term || trunc {
					break
				}
			}
		}
		want := (returns[0] + returns[1] + returns[2]) / 3
		if !(math.Abs(got-want) <= 1e-12*math.Abs(want)) {
			t.Errorf("stochastic %v: return %v, want the mean %v of %v", stochastic, got, want, returns)
		}
	}
}

// TestBLASKernelNamesSubnormals: a run's kernel name ends in ", subnormals
// flushed" exactly when GEMMs flush subnormals (a name without it is what
// runs recorded before the setting existed, which kept them).
func TestBLASKernelNamesSubnormals(t *testing.T) {
	defer blas.SetFlushSubnormals(blas.FlushSubnormals())
	for _, flush := range []bool{false, true} {
		blas.SetFlushSubnormals(flush)
		k := blasKernel()
		if strings.HasSuffix(k, ", subnormals flushed") != (blas.Subnormals() == "flushed") || !strings.HasPrefix(k, blas.Backend()+" ") {
			t.Errorf("flush %v (subnormals %s): kernel name %q", flush, blas.Subnormals(), k)
		}
	}
}

// TestTrainUpdateSchedule: Train makes max(UpdatesPerEnv, 1) updates after
// every step past the warm-up once the buffer holds a batch (counted by
// the actor's optimizer steps), and a cancelled context stops it before
// its next step with the context's error.
func TestTrainUpdateSchedule(t *testing.T) {
	for _, c := range []struct {
		start, batch, total, per, want int
	}{
		{start: 20, batch: 16, total: 27, per: 3, want: 7 * 3},
		{start: 20, batch: 16, total: 27, per: 0, want: 7},
		{start: 10, batch: 16, total: 20, per: 2, want: 5 * 2}, // steps 16 … 20: the buffer holds a batch from step 16
	} {
		cfg := boxRun().SAC
		cfg.StartSteps, cfg.Batch, cfg.TotalSteps, cfg.UpdatesPerEnv = c.start, c.batch, c.total, c.per
		ag, d, err := Train(context.Background(), cfg, &boxEnv{}, 0, nil)
		if err != nil || d.Len() != c.total {
			t.Fatalf("%+v: %v, %d rows", c, err, d.Len())
		}
		if ag.alpha.T != c.want {
			t.Errorf("%+v: %d updates, want %d", c, ag.alpha.T, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, d, err := Train(ctx, boxRun().SAC, &boxEnv{}, 0, nil); err != context.Canceled || d.Len() != 0 {
		t.Errorf("cancelled before the first step: %v, %d rows; want context.Canceled and none", err, d.Len())
	}
}
