package sac

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	_ "github.com/koopq/koopq/env/mujoco"
)

// tinyRun is a small hopper run: 3000 env steps with 32×32 networks,
// snapshots every 1000 steps, checkpoints every 250.
func tinyRun() RunConfig {
	c := DefaultRunConfig("hopper", 40)
	c.SAC.TotalSteps = 3000
	c.SAC.StartSteps = 500
	c.SAC.Batch = 64
	c.SAC.Net.Hidden = []int{32, 32}
	c.SAC.Seed = 11
	c.SnapshotEvery = 1000
	c.CheckpointEvery = 250
	c.EvalEpisodes = 1
	return c
}

// runFiles are the files whose bytes must not depend on interruptions.
var runFiles = []string{runCheckpointFile, runReplayFile, RunExpertFile, RunResultFile, runSnapshotsFile,
	RunMediumFile, "snapshots/actor-0001000.safetensors", "snapshots/actor-0003000.safetensors"}

// TestHelperSACRun is not a test: TestRunResumeAfterKill runs it in a child
// process (KOOPQ_SAC_RUN_DIR set) and kills it.
func TestHelperSACRun(t *testing.T) {
	dir := os.Getenv("KOOPQ_SAC_RUN_DIR")
	if dir == "" {
		return
	}
	if _, err := Run(context.Background(), dir, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRunResumeAfterKill: a run killed with SIGKILL at a random moment and
// resumed ends with exactly the bytes of an uninterrupted run (networks,
// optimizers, replay buffer, snapshots, medium/expert policies, result).
//
// It runs under -short too (three tiny hopper runs, about 4 s): it is what
// reaches most of the online run's code, and `make mutate` runs -short.
func TestRunResumeAfterKill(t *testing.T) {
	cfg := tinyRun()
	ref := t.TempDir()
	if _, err := StartRun(context.Background(), cfg, ref, nil); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for trial := 0; trial < 2; trial++ {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "snapshots"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeJSONAtomic(filepath.Join(dir, runConfigFile), cfg); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSACRun$")
		cmd.Env = append(os.Environ(), "KOOPQ_SAC_RUN_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill at a random point: after a random number of replay rows
		// (0..2000 of 3000) reached the disk, plus a random extra delay of up
		// to 50 ms (far less than the remaining 1000+ steps take).
		target := int64(rng.IntN(2001)) * 41 * 4 // hopper rows are 41 float32 values
		deadline := time.Now().Add(2 * time.Minute)
		for {
			st, err := os.Stat(filepath.Join(dir, runReplayFile))
			if err == nil && st.Size() >= target {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("trial %d: the child wrote no %d replay bytes in 2 minutes", trial, target)
			}
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if _, err := os.Stat(filepath.Join(dir, RunResultFile)); err == nil {
			t.Fatalf("trial %d: the child finished before it was killed; the test did not interrupt anything", trial)
		}
		res, err := Run(context.Background(), dir, nil)
		if err != nil {
			t.Fatalf("trial %d: resume: %v", trial, err)
		}
		if res.Expert.Step != cfg.SAC.TotalSteps {
			t.Fatalf("trial %d: expert at step %d", trial, res.Expert.Step)
		}
		for _, f := range runFiles {
			a, err1 := os.ReadFile(filepath.Join(ref, f))
			b, err2 := os.ReadFile(filepath.Join(dir, f))
			if err1 != nil || err2 != nil {
				t.Fatalf("trial %d: %s: %v / %v", trial, f, err1, err2)
			}
			if !bytes.Equal(a, b) {
				t.Fatalf("trial %d: %s differs from the uninterrupted run", trial, f)
			}
		}
	}
}

// TestStartRunRefusesExistingRun: a second StartRun in the same directory
// fails before touching anything.
func TestStartRunRefusesExistingRun(t *testing.T) {
	dir := t.TempDir()
	cfg := tinyRun()
	if err := writeJSONAtomic(filepath.Join(dir, runConfigFile), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := StartRun(context.Background(), cfg, dir, nil); err == nil {
		t.Fatal("StartRun into a run directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, runReplayFile)); err == nil {
		t.Fatal("refused StartRun still created a replay file")
	}
}

// TestRunCancelCheckpointsAndKernelCheck: a cancelled run checkpoints
// where it stopped; resuming it under another BLAS kernel is refused
// (the continuation would not be bit-identical).
func TestRunCancelCheckpointsAndKernelCheck(t *testing.T) {
	cfg := tinyRun()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	_, err := StartRun(ctx, cfg, dir, func(p RunStats) {
		if p.Step == 1000 {
			cancel()
		}
	})
	if err != context.Canceled {
		t.Fatalf("cancelled run returned %v", err)
	}
	ckpt := filepath.Join(dir, runCheckpointFile)
	ag := NewAgent(cfg.SAC, 11, 3, rand.New(rand.NewPCG(0, 0)))
	var st runState
	if err := loadCheckpoint(ckpt, ag, &st); err != nil {
		t.Fatal(err)
	}
	if st.Step != 1000 || st.ReplayLen != 1000 || st.BLAS == "" {
		t.Fatalf("checkpoint at step %d, replay %d, blas %q; want 1000, 1000, the kernel", st.Step, st.ReplayLen, st.BLAS)
	}
	st.BLAS = "someblas other-kernel"
	if err := saveCheckpoint(ckpt, ag, &st); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), dir, nil); err == nil || !strings.Contains(err.Error(), "other-kernel") {
		t.Fatalf("resume under another kernel: %v", err)
	}
	// Accepting the change continues the run and records both kernels,
	// and a resumed run, cancelled or finished, closes the replay file it
	// reopened. The collector is off while the files are counted: an
	// unreachable *os.File is closed by its finalizer at the next
	// collection, which would hide a missing Close.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	fds := openFiles(t)
	ctx2, cancel2 := context.WithCancel(context.Background())
	_, err = Resume(ctx2, dir, ResumeOptions{AllowBLASChange: true}, func(p RunStats) {
		if p.Step == 2000 {
			cancel2()
		}
	})
	if err != context.Canceled {
		t.Fatalf("cancelled resume returned %v", err)
	}
	if n := openFiles(t); n != fds {
		t.Errorf("%d files open after a cancelled resume, %d before", n, fds)
	}
	res, err := Resume(context.Background(), dir, ResumeOptions{AllowBLASChange: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := openFiles(t); n != fds {
		t.Errorf("%d files open after the resumed run, %d before", n, fds)
	}
	kernel := blasKernel()
	want := []BLASSpan{{0, "someblas other-kernel"}, {1000, kernel}}
	if !reflect.DeepEqual(res.BLASHistory, want) || res.BLAS != kernel || res.Expert.Step != cfg.SAC.TotalSteps {
		t.Fatalf("resumed across kernels: history %v, blas %q, expert step %d; want %v, %q, %d",
			res.BLASHistory, res.BLAS, res.Expert.Step, want, kernel, cfg.SAC.TotalSteps)
	}
	_, m, err := ReadPolicy(filepath.Join(dir, RunExpertFile))
	if err != nil {
		t.Fatal(err)
	}
	if m["blas"] != kernel || !strings.Contains(m["blas_history"], "other-kernel") {
		t.Fatalf("expert policy metadata %v lacks the kernels", m)
	}
}

// TestPickMedium: the deterministic rule takes the first snapshot at or
// above the level, the stochastic rule the first inside the band.
func TestPickMedium(t *testing.T) {
	snaps := []RunSnapshot{{Return: 900, StochReturn: 700}, {Return: 2900, StochReturn: 2000},
		{Return: 1400, StochReturn: 1300}, {Return: 1500, StochReturn: 1450}}
	c := RunConfig{MediumReturn: 1400}
	if i := c.PickMedium(snaps); i != 1 {
		t.Fatalf("deterministic rule picked %d, want 1", i)
	}
	c.MediumBy, c.MediumBand = "stochastic", 120
	if i := c.PickMedium(snaps); i != 2 {
		t.Fatalf("stochastic rule picked %d, want 2", i)
	}
	c.MediumBand = 10
	if i := c.PickMedium(snaps); i != -1 {
		t.Fatalf("narrow band picked %d, want none", i)
	}
}

// TestRunRefusesNonFiniteWeights: a run whose networks diverge (a target
// critic weight of 3e38 makes the Bellman targets infinite, then every
// network NaN) stops with an error and saves nothing: the last checkpoint
// stays as it was and no snapshot is written. (Checkpoint files with NaN
// are refused on load, so the divergence is started with a finite value.)
func TestRunRefusesNonFiniteWeights(t *testing.T) {
	cfg := tinyRun()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := StartRun(ctx, cfg, dir, func(p RunStats) {
		if p.Step == 1000 {
			cancel()
		}
	}); err != context.Canceled {
		t.Fatalf("cancelled run returned %v", err)
	}
	ckpt := filepath.Join(dir, runCheckpointFile)
	ag := NewAgent(cfg.SAC, 11, 3, rand.New(rand.NewPCG(0, 0)))
	var st runState
	if err := loadCheckpoint(ckpt, ag, &st); err != nil {
		t.Fatal(err)
	}
	for i := range ag.QT[1].Params()[0].Data {
		ag.QT[1].Params()[0].Data[i] = 3e38
	}
	if err := saveCheckpoint(ckpt, ag, &st); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(ckpt)
	_, err := Run(context.Background(), dir, nil)
	if err == nil {
		t.Fatal("a diverging run finished")
	}
	t.Logf("diverging run: %v", err)
	after, _ := os.ReadFile(ckpt)
	if !bytes.Equal(before, after) {
		t.Fatal("the checkpoint changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "snapshots", "actor-0002000.safetensors")); err == nil {
		t.Fatal("a snapshot was written from non-finite networks")
	}
}

// TestWriteJSONAtomicSynced: a run's JSON files (config, snapshots, speed,
// result) are replaced through internal/atomicfile: when the rename is
// reached the new contents sit synced in a ".tmp-<name>-*" temporary file
// beside the target (the pattern that run-directory cleanup removes), the
// target still holds the old contents, and afterwards the target holds the
// new contents, mode 0644, with no temporary file left. A write that
// renamed an unsynced file could leave an empty result.json after a crash.
func TestWriteJSONAtomicSynced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RunResultFile)
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	v := map[string]int{"step": 3000}
	want := "{\n  \"step\": 3000\n}\n"
	calls := 0
	beforeRename = func(p string) {
		calls++
		if p != path {
			t.Errorf("hook for %s, want %s", p, path)
		}
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("before the rename the target holds %q, want the old contents", b)
		}
		tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-"+RunResultFile+"-*"))
		if len(tmps) != 1 {
			t.Fatalf("before the rename: temporary files %v, want one .tmp-%s-*", tmps, RunResultFile)
		}
		if b, _ := os.ReadFile(tmps[0]); string(b) != want {
			t.Errorf("temporary file holds %q, want %q", b, want)
		}
	}
	t.Cleanup(func() { beforeRename = nil })
	if err := writeJSONAtomic(path, v); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("the synced-rename point was reached %d times, want 1: writeJSONAtomic does not write through internal/atomicfile", calls)
	}
	b, err := os.ReadFile(path)
	st, _ := os.Stat(path)
	if err != nil || string(b) != want || st.Mode().Perm() != 0o644 {
		t.Errorf("after: %q, mode %v, err %v", b, st.Mode().Perm(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestMediumRuleBoundaries: the stochastic medium rule accepts a snapshot
// whose stochastic return lies within the band, edges included, and the
// deterministic rule one whose return reaches the level.
func TestMediumRuleBoundaries(t *testing.T) {
	st := RunConfig{MediumBy: "stochastic", MediumReturn: 100, MediumBand: 5}
	for ret, want := range map[float64]bool{105: true, 95: true, 100: true, 105.5: false, 94.5: false} {
		if got := st.isMedium(RunSnapshot{StochReturn: ret, Return: 1e9}); got != want {
			t.Errorf("stochastic rule, return %v: %v, want %v", ret, got, want)
		}
	}
	det := RunConfig{MediumBy: "deterministic", MediumReturn: 100}
	for ret, want := range map[float64]bool{100: true, 101: true, 99.9: false} {
		if got := det.isMedium(RunSnapshot{Return: ret, StochReturn: 100}); got != want {
			t.Errorf("deterministic rule, return %v: %v, want %v", ret, got, want)
		}
	}
}

// TestRunPicksTheFirstMediumSnapshot: a run whose medium level every
// policy reaches picks its first snapshot as the medium policy (a new run
// starts with none picked), and one whose level no policy reaches has none.
func TestRunPicksTheFirstMediumSnapshot(t *testing.T) {
	cfg := tinyRun()
	cfg.SAC.TotalSteps, cfg.SAC.StartSteps, cfg.SnapshotEvery, cfg.CheckpointEvery = 2000, 200, 1000, 1000
	cfg.MediumReturn = -1e9
	res, err := StartRun(context.Background(), cfg, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Medium == nil || res.Medium.Step != 1000 {
		t.Fatalf("medium snapshot %+v, want the first one (step 1000)", res.Medium)
	}
	// The last snapshot is of the final step, so the expert is that
	// snapshot, not a second one.
	if len(res.Snapshots) != 2 || res.Snapshots[0].Step != 1000 || res.Snapshots[1].Step != 2000 || res.Expert.Step != 2000 {
		t.Fatalf("snapshots %+v, expert %+v: want snapshots at 1000 and 2000, the expert the second", res.Snapshots, res.Expert)
	}
	cfg.MediumReturn = 1e9
	if res, err = StartRun(context.Background(), cfg, t.TempDir(), nil); err != nil || res.Medium != nil {
		t.Fatalf("unreachable medium level: medium %+v, err %v", res.Medium, err)
	}
}

// openFiles counts this process's open file descriptors (Linux /proc).
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}
