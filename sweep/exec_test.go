package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeTrainer is a stand-in for `koopq train` with the same run-directory
// contract: a fresh run makes <out>/<name>-<time>/ with config.json and a
// checkpoint, then results.json; --resume DIR finishes DIR. FAKE_FAIL makes it
// fail, FAKE_BLOCK makes it wait for SIGINT (after checkpointing). Every call
// is appended to $FAKE_LOG.
const fakeTrainer = `#!/bin/bash
echo "$*" >> "$FAKE_LOG"
echo "threads=$GOMAXPROCS/$OPENBLAS_NUM_THREADS cache=$KOOPQ_AUGMENT_CACHE" >> "$FAKE_LOG"
if [ "$1" != train ]; then exit 2; fi
shift
dir=""; out=""; name=""; steps=0
while [ $# -gt 0 ]; do
  case "$1" in
    --resume) dir="$2"; shift 2;;
    --out) out="$2"; shift 2;;
    --name) name="$2"; shift 2;;
    --steps) steps="$2"; shift 2;;
    *) shift;;
  esac
done
if [ -z "$dir" ]; then
  dir="$out/$name-20260101-000000"
  mkdir -p "$dir/checkpoints"
  echo '{}' > "$dir/config.json"
fi
echo ckpt > "$dir/checkpoints/latest.safetensors"
if [ -n "$FAKE_SIGNALLED" ]; then echo "koopq: interrupted at step 10 (checkpoint saved)" >&2; exit 75; fi
if [ -n "$FAKE_FAIL" ]; then echo "progress 10%"; echo "koopq: boom: diverged" >&2; exit 3; fi
if [ -n "$FAKE_BLOCK" ]; then
  trap 'echo "got SIGINT" >> "$FAKE_LOG"; exit 130' INT
  touch "$FAKE_BLOCK"
  while true; do sleep 0.05; done
fi
[ "$steps" = 0 ] && steps=$FAKE_STEPS
echo "{\"steps\": $steps, \"steps_per_second\": 50, \"final_eval\": {\"normalized_score\": 42.5}}" > "$dir/results.json"
`

func setupFake(t *testing.T) (bin, logPath string) {
	t.Helper()
	d := t.TempDir()
	bin = filepath.Join(d, "koopq")
	if err := os.WriteFile(bin, []byte(fakeTrainer), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath = filepath.Join(d, "calls.log")
	t.Setenv("FAKE_LOG", logPath)
	t.Setenv("FAKE_STEPS", "1000")
	t.Setenv("FAKE_FAIL", "")
	t.Setenv("FAKE_BLOCK", "")
	t.Setenv("FAKE_SIGNALLED", "")
	return bin, logPath
}

// waitStarted waits (up to 20 s) for the blocking fake trainer to create
// its FAKE_BLOCK file.
func waitStarted(t *testing.T, started string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("fake trainer never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func calls(t *testing.T, p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func TestExecuteSkipResumeFailRetry(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	out := t.TempDir()
	r := runs[0]
	o := ExecOptions{Koopq: bin, DataRoot: "/data", Threads: 2, AugmentCache: "/data/augment-cache"}

	if st := RunStatus(out, r); st.State != Pending || st.Partial {
		t.Fatalf("fresh status %+v", st)
	}
	state, err := Execute(context.Background(), out, r, o)
	if err != nil || state != Done {
		t.Fatalf("first execute: %v %v\n%s", state, err, calls(t, logp))
	}
	log := calls(t, logp)
	if !strings.Contains(log, "train --data /data/data/hopper-medium.hdf5 --env hopper --augment none --seed 3 --steps 1000") ||
		!strings.Contains(log, "--out "+SlotDir(out, r)+" --name run") || !strings.Contains(log, "threads=2/2 cache=/data/augment-cache") {
		t.Errorf("trainer calls:\n%s", log)
	}
	st := RunStatus(out, r)
	if st.State != Done || st.LastScore != 42.5 || st.StepsPerSec != 50 {
		t.Errorf("status after run: %+v", st)
	}
	// Done: skipped without calling the trainer.
	before := calls(t, logp)
	state, err = Execute(context.Background(), out, r, o)
	if state != Done || !errors.Is(err, ErrSkipped) || calls(t, logp) != before {
		t.Errorf("second execute: %v %v", state, err)
	}

	// A failure is recorded with the trainer's last line, then skipped
	// until RetryFailed.
	r2 := runs[1]
	t.Setenv("FAKE_FAIL", "1")
	state, err = Execute(context.Background(), out, r2, o)
	if state != Failed || err == nil || !strings.Contains(err.Error(), "koopq: boom: diverged") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("failing run: %v %v", state, err)
	}
	st = RunStatus(out, r2)
	if st.State != Failed || !st.Partial || !strings.Contains(st.Message, "boom") {
		t.Errorf("failed status %+v", st)
	}
	t.Setenv("FAKE_FAIL", "")
	if _, err := Execute(context.Background(), out, r2, o); !errors.Is(err, ErrSkipped) || !strings.Contains(err.Error(), "--retry-failed") {
		t.Errorf("failed run without retry: %v", err)
	}
	o.RetryFailed = true
	state, err = Execute(context.Background(), out, r2, o)
	if err != nil || state != Done {
		t.Fatalf("retry: %v %v", state, err)
	}
	// The retry resumed the existing run directory instead of starting over.
	if !strings.Contains(calls(t, logp), "train --resume "+filepath.Join(SlotDir(out, r2), "run-20260101-000000")) {
		t.Errorf("retry did not resume:\n%s", calls(t, logp))
	}
	entries, _ := filepath.Glob(filepath.Join(SlotDir(out, r2), "run-*"))
	if len(entries) != 1 {
		t.Errorf("run directories in the slot: %v", entries)
	}

	// More steps in the spec extend a finished run.
	r.Steps = 2000
	state, err = Execute(context.Background(), out, r, o)
	if err != nil || state != Done || !strings.Contains(calls(t, logp), "--resume "+filepath.Join(SlotDir(out, r), "run-20260101-000000")+" --data "+r.ResolveData(o.DataRoot)+" --steps 2000") {
		t.Errorf("extend: %v %v\n%s", state, err, calls(t, logp))
	}
	// A changed setting is refused.
	r.Augment = "gaussian"
	if _, err := Execute(context.Background(), out, r, o); err == nil || !strings.Contains(err.Error(), "the spec changed") {
		t.Errorf("changed augment: %v", err)
	}
}

func TestExecuteInterruptForwardsSIGINT(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	out := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	t.Setenv("FAKE_BLOCK", started)
	ctx, cancel := context.WithCancel(context.Background())
	type res struct {
		s   State
		err error
	}
	done := make(chan res)
	go func() {
		s, err := Execute(ctx, out, runs[0], ExecOptions{Koopq: bin, StopGrace: 20 * time.Second})
		done <- res{s, err}
	}()
	waitStarted(t, started)
	if st := RunStatus(out, runs[0]); st.State != Running {
		t.Errorf("status while running: %+v", st)
	}
	cancel()
	r := <-done
	if r.s != Pending || !errors.Is(r.err, context.Canceled) {
		t.Errorf("interrupted execute: %v %v", r.s, r.err)
	}
	if !strings.Contains(calls(t, logp), "got SIGINT") {
		t.Errorf("trainer did not get SIGINT:\n%s", calls(t, logp))
	}
	st := RunStatus(out, runs[0])
	if st.State != Pending || !st.Partial || st.Message != "interrupted" {
		t.Errorf("status after interrupt: %+v", st)
	}
	// The next execution resumes it.
	t.Setenv("FAKE_BLOCK", "")
	if s, err := Execute(context.Background(), out, runs[0], ExecOptions{Koopq: bin}); s != Done || err != nil {
		t.Errorf("resume after interrupt: %v %v", s, err)
	}
}

// TestExecuteTrainerSignalledIsInterrupted: a trainer that got the signal
// itself (a batch system signals every process of a job) and exited with
// ExitInterrupted before the sweep process noticed leaves its run pending
// and resumable, not failed (a Slurm scancel raced into "failed" before).
func TestExecuteTrainerSignalledIsInterrupted(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	out := t.TempDir()
	t.Setenv("FAKE_SIGNALLED", "1")
	s, err := Execute(context.Background(), out, runs[0], ExecOptions{Koopq: bin})
	if s != Pending || err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("signalled trainer: %v %v", s, err)
	}
	st := RunStatus(out, runs[0])
	if st.State != Pending || !st.Partial || st.Message != "interrupted" {
		t.Fatalf("status after a signalled trainer: %+v", st)
	}
	t.Setenv("FAKE_SIGNALLED", "")
	if s, err := Execute(context.Background(), out, runs[0], ExecOptions{Koopq: bin}); s != Done || err != nil {
		t.Fatalf("resume after a signalled trainer: %v %v", s, err)
	}
	if !strings.Contains(calls(t, logp), "--resume") {
		t.Fatalf("the second execution did not resume:\n%s", calls(t, logp))
	}
}

func TestRunLocalConcurrency(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	out := t.TempDir()
	var progress strings.Builder
	sum := RunLocal(context.Background(), out, runs, LocalOptions{ExecOptions: ExecOptions{Koopq: bin, Threads: 1}, Jobs: 3, Progress: &progress})
	if sum.Done != len(runs) || sum.Failed != 0 || sum.Err() != nil {
		t.Fatalf("summary %+v\n%s", sum, progress.String())
	}
	if c := Counts(Statuses(out, runs)); c[Done] != len(runs) {
		t.Errorf("counts %v", c)
	}
	n := strings.Count(calls(t, logp), "train --data")
	sum = RunLocal(context.Background(), out, runs, LocalOptions{ExecOptions: ExecOptions{Koopq: bin}, Jobs: 2})
	if sum.Skipped != len(runs) || strings.Count(calls(t, logp), "train --data") != n {
		t.Errorf("second sweep ran something: %+v", sum)
	}
	if !strings.Contains(FormatStatus(Statuses(out, runs)), "9 runs: 9 done, 0 running, 0 failed, 0 pending") {
		t.Errorf("status table:\n%s", FormatStatus(Statuses(out, runs)))
	}
}

// Two sweeps on one directory at once train every run exactly once
// between them, and what one skips because the other took it counts as
// running elsewhere.
func TestTwoSweepsShareADirectory(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	for round := 0; round < 3; round++ {
		out := t.TempDir()
		os.WriteFile(logp, nil, 0o644)
		sums := make(chan Summary, 2)
		for i := 0; i < 2; i++ {
			go func() {
				sums <- RunLocal(context.Background(), out, runs, LocalOptions{ExecOptions: ExecOptions{Koopq: bin}, Jobs: 2})
			}()
		}
		a, b := <-sums, <-sums
		if n := strings.Count(calls(t, logp), "train --data"); n != len(runs) {
			t.Fatalf("round %d: %d trainers for %d runs:\n%s", round, n, len(runs), calls(t, logp))
		}
		if a.Done+b.Done != len(runs) || a.Failed+b.Failed != 0 || a.Err() != nil || b.Err() != nil {
			t.Errorf("round %d: summaries %+v and %+v", round, a, b)
		}
	}
}

func TestRunLocalFailuresAndOrphans(t *testing.T) {
	bin, _ := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	runs = runs[:2]
	out := t.TempDir()
	t.Setenv("FAKE_FAIL", "1")
	sum := RunLocal(context.Background(), out, runs, LocalOptions{ExecOptions: ExecOptions{Koopq: bin}, Jobs: 2})
	if sum.Failed != 2 || sum.Err() == nil || !strings.Contains(sum.Err().Error(), "2 runs failed") {
		t.Fatalf("first sweep %+v", sum)
	}
	// Without --retry-failed the failures are left alone, and still an error.
	sum = RunLocal(context.Background(), out, runs, LocalOptions{ExecOptions: ExecOptions{Koopq: bin}, Jobs: 2})
	if sum.NotRetried != 2 || sum.Failed != 0 || sum.Err() == nil || !strings.Contains(sum.Err().Error(), "not retried") {
		t.Errorf("second sweep %+v", sum)
	}
	t.Setenv("FAKE_FAIL", "")
	sum = RunLocal(context.Background(), out, runs, LocalOptions{ExecOptions: ExecOptions{Koopq: bin, RetryFailed: true}, Jobs: 2})
	if sum.Done != 2 || sum.Err() != nil {
		t.Errorf("retry %+v", sum)
	}

	slot := t.TempDir()
	for _, d := range []string{"run-1/checkpoints", "run-2", "run-3"} {
		os.MkdirAll(filepath.Join(slot, d), 0o755)
	}
	os.WriteFile(filepath.Join(slot, "run-2", "config.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(slot, "run-3", "notes.txt"), []byte("x"), 0o644)
	cleanOrphans(slot)
	got, _ := filepath.Glob(filepath.Join(slot, "run-*"))
	if len(got) != 2 || filepath.Base(got[0]) != "run-2" || filepath.Base(got[1]) != "run-3" {
		t.Errorf("after cleanOrphans: %v", got)
	}
}

// Under a time limit the speed a method's runs reached in this sweep (on
// this machine, at this concurrency) replaces the given one: the fake
// trainer reports 50 steps/s, so after the first CQL run the second (1000
// steps: 20 s) no longer fits in 10 s, although 1000 steps/s were given;
// the KFC++ run, with no measurement of its own, keeps the given speed.
func TestRunLocalTimeLimitUsesMeasuredSpeed(t *testing.T) {
	bin, _ := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	runs = runs[:3]
	if runs[0].Method != "CQL" || runs[1].Method != "CQL" || runs[2].Method != "KFC++" {
		t.Fatalf("test spec order changed: %s %s %s", runs[0].Name, runs[1].Name, runs[2].Name)
	}
	var progress strings.Builder
	o := LocalOptions{ExecOptions: ExecOptions{Koopq: bin}, Jobs: 1, Progress: &progress,
		Deadline: time.Now().Add(10 * time.Second), Speeds: NewSpeeds(nil, "", nil, map[string]float64{"": 1000})}
	out := t.TempDir()
	sum := RunLocal(context.Background(), out, runs, o)
	if sum.Done != 2 || sum.Held != 1 {
		t.Fatalf("summary %+v\n%s", sum, progress.String())
	}
	want := regexp.MustCompile(`hold    ` + regexp.QuoteMeta(runs[1].Name) + `: needs about \S+ at 50\.0 steps/s \(measured in this sweep: 1 CQL run on `)
	if !want.MatchString(progress.String()) {
		t.Errorf("progress lacks %q:\n%s", want, progress.String())
	}
	if c := Counts(Statuses(out, runs)); c[Done] != 2 || c[Pending] != 1 || RunStatus(out, runs[1]).State != Pending {
		t.Errorf("states %v", c)
	}
}

// With a time limit, runs whose steps left would end after it are held
// (never started, left pending, an error); the rest run.
func TestRunLocalTimeLimitHoldsRunsThatCannotFinish(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	runs = runs[:3]
	out := t.TempDir()
	// 1000 steps at 0.1 steps/s need 2.8 h: none fits in one hour.
	var progress strings.Builder
	o := LocalOptions{ExecOptions: ExecOptions{Koopq: bin}, Jobs: 2, Progress: &progress,
		Deadline: time.Now().Add(time.Hour), Speeds: NewSpeeds(nil, "", nil, map[string]float64{"": 0.1})}
	sum := RunLocal(context.Background(), out, runs, o)
	if sum.Held != 3 || sum.Done != 0 || sum.Err() == nil || !strings.Contains(sum.Err().Error(), "3 runs not started") {
		t.Fatalf("summary %+v (err %v)\n%s", sum, sum.Err(), progress.String())
	}
	if strings.Contains(calls(t, logp), "train") || strings.Contains(progress.String(), "start ") ||
		!strings.Contains(progress.String(), "hold    "+runs[0].Name+": needs about 2h47m at 0.1 steps/s") {
		t.Errorf("held runs were started or not reported:\n%s\ncalls:\n%s", progress.String(), calls(t, logp))
	}
	if c := Counts(Statuses(out, runs)); c[Pending] != 3 {
		t.Errorf("held runs are not pending: %v", c)
	}
	// At 1 steps/s (17 min each) they fit; without a speed nothing is held.
	for _, given := range []map[string]float64{{"": 1}, nil} {
		o.Speeds = NewSpeeds(nil, "", nil, given)
		os.RemoveAll(out)
		if sum := RunLocal(context.Background(), out, runs, o); sum.Done != 3 || sum.Held != 0 || sum.Err() != nil {
			t.Errorf("at %v steps/s: %+v", given, sum)
		}
	}
	// Speeds per method: the two CQL runs fit at 1 steps/s, the KFC++ run
	// at 0.1 steps/s does not.
	if runs[0].Method != "CQL" || runs[1].Method != "CQL" || runs[2].Method != "KFC++" {
		t.Fatalf("test spec order changed: %s %s %s", runs[0].Name, runs[1].Name, runs[2].Name)
	}
	o.Speeds = NewSpeeds(nil, "", nil, map[string]float64{"CQL": 1, "KFC++": 0.1})
	os.RemoveAll(out)
	progress.Reset()
	if sum := RunLocal(context.Background(), out, runs, o); sum.Done != 2 || sum.Held != 1 ||
		!strings.Contains(progress.String(), "hold    "+runs[2].Name+": needs about 2h47m at 0.1 steps/s") {
		t.Errorf("per-method speeds: %+v\n%s", sum, progress.String())
	}
	// 'sweep plan --time-limit' predicts the same.
	if p := Schedule("", runs, o.Speeds, 2, time.Hour, false); p[0].Held || p[1].Held || !p[2].Held {
		t.Errorf("Schedule disagrees with RunLocal: %+v", p)
	}
}

// A sweep's trainers share <data-root>/augment-cache unless
// KOOPQ_AUGMENT_CACHE says otherwise (set but empty: no files), and
// TrainEnv passes exactly one KOOPQ_AUGMENT_CACHE.
func TestAugmentCacheDir(t *testing.T) {
	t.Setenv(AugmentCacheEnv, "/elsewhere")
	if d := AugmentCacheDir("/data"); d != "/elsewhere" {
		t.Errorf("with the variable set: %q", d)
	}
	t.Setenv(AugmentCacheEnv, "")
	if d := AugmentCacheDir("/data"); d != "" {
		t.Errorf("with the variable empty: %q, want no cache files", d)
	}
	os.Unsetenv(AugmentCacheEnv)
	if d := AugmentCacheDir("/data"); d != filepath.Join("/data", "augment-cache") {
		t.Errorf("without the variable: %q", d)
	}
	t.Setenv(AugmentCacheEnv, "/old")
	for _, threads := range []int{0, 3} {
		var got []string
		for _, e := range TrainEnv(threads, "/new") {
			if strings.HasPrefix(e, AugmentCacheEnv+"=") {
				got = append(got, e)
			}
		}
		if len(got) != 1 || got[0] != AugmentCacheEnv+"=/new" {
			t.Errorf("threads %d: %v", threads, got)
		}
	}
}

// A run stopped half way (a checkpoint, marker "interrupted") starts before
// runs that come earlier in the order but have not begun, in 'sweep run'
// and in the schedule 'sweep plan' predicts; the others keep their order.
func TestRunLocalResumesPartialRunsFirst(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, noModels)
	out := t.TempDir()
	late := runs[len(runs)-2]
	t.Setenv("FAKE_SIGNALLED", "1")
	if s, _ := Execute(context.Background(), out, late, ExecOptions{Koopq: bin}); s != Pending || !RunStatus(out, late).Partial {
		t.Fatalf("setup: %s is not partial", late.Name)
	}
	t.Setenv("FAKE_SIGNALLED", "")
	before := len(strings.Split(strings.TrimSpace(calls(t, logp)), "\n"))

	want := append([]Run{late}, runs[:len(runs)-2]...)
	want = append(want, runs[len(runs)-1])
	if got, n := ResumeFirst(out, runs); len(got) != len(want) || n != 1 {
		t.Fatalf("ResumeFirst: %d runs, %d moved; want %d, 1", len(got), n, len(want))
	} else {
		for i := range want {
			if got[i].Name != want[i].Name {
				t.Errorf("ResumeFirst[%d] = %s, want %s", i, got[i].Name, want[i].Name)
			}
		}
	}
	sp := NewSpeeds(nil, "", nil, nil)
	if p := Schedule(out, runs, sp, 1, 0, false); p[0].Run.Name != late.Name || p[1].Run.Name != runs[0].Name {
		t.Errorf("schedule starts %s, %s; want %s first", p[0].Run.Name, p[1].Run.Name, late.Name)
	}

	var progress strings.Builder
	sum := RunLocal(context.Background(), out, runs, LocalOptions{ExecOptions: ExecOptions{Koopq: bin}, Jobs: 1, Progress: &progress})
	if sum.Done != len(runs) || sum.Err() != nil {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.HasPrefix(progress.String(), "1 run with a checkpoint resumes before the others\nstart   "+late.Name+"\n") {
		t.Errorf("progress:\n%s", progress.String())
	}
	var trains []string
	for _, l := range strings.Split(strings.TrimSpace(calls(t, logp)), "\n")[before:] {
		if strings.HasPrefix(l, "train ") {
			trains = append(trains, l)
		}
	}
	if len(trains) != len(runs) || !strings.Contains(trains[0], "--resume") || !strings.Contains(trains[0], late.Name) {
		t.Fatalf("first trainer call must resume %s:\n%s", late.Name, strings.Join(trains, "\n"))
	}
	if !strings.Contains(trains[1], string(filepath.Separator)+runs[0].Name+" ") {
		t.Errorf("second call should start %s:\n%s", runs[0].Name, trains[1])
	}
}

// Summary.Err names one run in the singular: a sweep of one run, or the one
// run a session stopped, used to read "1 runs interrupted (they resume from
// their checkpoints ...)".
func TestSummaryErrCountsAgree(t *testing.T) {
	for _, c := range []struct {
		sum  Summary
		want string
	}{
		{Summary{Interrupted: 1}, "stopped: 1 run interrupted (it resumes from its checkpoint on the next"},
		{Summary{Interrupted: 2}, "stopped: 2 runs interrupted (they resume from their checkpoints on the next"},
		{Summary{Failed: 1, Errors: []string{"x"}}, "1 run failed (see"},
		{Summary{Held: 1}, "1 run not started: at the expected speed it would not finish before the time limit (it starts on"},
		{Summary{Held: 4}, "4 runs not started: at the expected speed they would not finish before the time limit (they start on"},
		{Summary{NotRetried: 1}, "1 run failed in an earlier attempt and was not retried (see 'koopq sweep status'; --retry-failed runs it again)"},
		{Summary{NotRetried: 3}, "3 runs failed in an earlier attempt and were not retried (see 'koopq sweep status'; --retry-failed runs them again)"},
	} {
		err := c.sum.Err()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want prefix %q", c.sum, err, c.want)
		}
	}
}

// Two sweep processes on one directory (a command started twice, two batch
// allocations) must never train the same run at once: of many executions
// of one pending run released together, exactly one starts a trainer and
// the others skip it as running elsewhere. Before the slot lock they could
// all read "pending" before any wrote its marker, and several trained it.
func TestConcurrentExecutesStartOneTrainer(t *testing.T) {
	_, runs := mustParse(t, testSpec, noModels)
	for round := 0; round < 5; round++ { // the race is timing-dependent: several rounds
		concurrentRound(t, runs[0])
	}
}

func concurrentRound(t *testing.T, run Run) {
	bin, logp := setupFake(t)
	out := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	t.Setenv("FAKE_BLOCK", started)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 16
	type res struct {
		s   State
		err error
	}
	done := make(chan res, n)
	gate := make(chan struct{})
	for i := 0; i < n; i++ {
		go func() {
			<-gate
			s, err := Execute(ctx, out, run, ExecOptions{Koopq: bin, StopGrace: 20 * time.Second})
			done <- res{s, err}
		}()
	}
	close(gate)
	// n−1 executions return at once (skipped); the one that runs blocks.
	for i := 0; i < n-1; i++ {
		select {
		case r := <-done:
			if r.s != Running || !errors.Is(r.err, ErrSkipped) || !strings.Contains(r.err.Error(), "running elsewhere") {
				t.Errorf("execution %d: %v %v, want skipped as running elsewhere", i, r.s, r.err)
			}
		case <-time.After(20 * time.Second):
			cancel()
			t.Fatalf("only %d of %d executions returned: more than one trainer runs\n%s", i, n-1, calls(t, logp))
		}
	}
	waitStarted(t, started)
	cancel()
	if r := <-done; r.s != Pending || !errors.Is(r.err, context.Canceled) {
		t.Errorf("the running execution: %v %v", r.s, r.err)
	}
	if c := strings.Count("\n"+calls(t, logp), "\ntrain "); c != 1 {
		t.Errorf("%d trainers started, want 1:\n%s", c, calls(t, logp))
	}
}

// noModels parses the executor tests' specs as if no augmentation used a
// Koopman model: the fake trainer cannot train the default shared models
// (TestDefaultSharedKoopmanModel covers those).
var noModels = Checker{NeedsKoopman: func(string) bool { return false }}

// Where no `sweep run` prepared it (Kubernetes pods run `sweep exec`
// only), the first run that needs its dataset's default shared Koopman
// model trains it; the next run finds it and trains none.
func TestExecuteTrainsDefaultSharedModel(t *testing.T) {
	bin, logp := setupFake(t)
	script := strings.Replace(fakeTrainer, `if [ "$1" != train ]; then exit 2; fi`,
		`if [ "$1" = koopman ]; then while [ $# -gt 0 ]; do if [ "$1" = --out ]; then : > "$2"; fi; shift; done; exit 0; fi
if [ "$1" != train ]; then exit 2; fi`, 1)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, runs := mustParse(t, testSpec, Checker{NeedsKoopman: func(a string) bool { return a == "kfc++" }})
	root, out := t.TempDir(), t.TempDir()
	var kfc []Run
	for _, r := range runs {
		if r.Dataset == "hopper-medium" && r.Augment == "kfc++" && !r.Ablation {
			kfc = append(kfc, r)
		}
	}
	if len(kfc) != 2 || !kfc[0].KoopmanDefault || kfc[0].Koopman != kfc[1].Koopman {
		t.Fatalf("runs %+v", kfc)
	}
	for _, r := range kfc {
		if st, err := Execute(context.Background(), out, r, ExecOptions{Koopq: bin, DataRoot: root}); st != Done {
			t.Fatalf("run %s: %s %v", r.Name, st, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, kfc[0].Koopman)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(calls(t, logp), "koopman train --data "+filepath.Join(root, "data/hopper-medium.hdf5")); n != 1 {
		t.Errorf("%d Koopman trainings, want 1:\n%s", n, calls(t, logp))
	}
}
