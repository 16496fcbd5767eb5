package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/koopq/koopq/internal/lockfile"
	"github.com/koopq/koopq/rundir"
)

// ExecOptions says how one run is executed.
type ExecOptions struct {
	// Koopq is the koopq binary the trainer subprocess runs.
	Koopq string
	// DataRoot is the directory relative dataset paths are resolved against.
	DataRoot string
	// Threads is the thread count of the trainer (GOMAXPROCS,
	// OPENBLAS_NUM_THREADS, OMP_NUM_THREADS); 0 leaves the environment alone.
	Threads int
	// AugmentCache is the trainer's KOOPQ_AUGMENT_CACHE, the directory of
	// the Koopman precompute cache files its runs share (see
	// AugmentCacheDir); empty turns the files off.
	AugmentCache string
	// Executor labels the marker (local, slurm job id, k8s pod).
	Executor string
	// RetryFailed executes runs whose last attempt failed (otherwise they are
	// reported and skipped).
	RetryFailed bool
	// TakeOver executes a run even when its marker says another process is
	// running it (Slurm and Kubernetes guarantee one task per index; a
	// requeued task finds its own stale marker from another node).
	TakeOver bool
	// StopGrace is how long a trainer gets to checkpoint and exit after
	// SIGINT before it is killed; 0 means 2 minutes.
	StopGrace time.Duration
	// CheckBinary, when set, checks Koopq before each run's trainer starts
	// (e.g. that it is not built from a modified tree: a binary replaced
	// in the middle of a sweep, or on a Slurm requeue, is caught at the run
	// it would train); an error leaves the run pending.
	CheckBinary func(bin string) error
}

// ErrSkipped is returned (wrapped) by Execute for runs it did not execute:
// already done, running elsewhere, or failed without RetryFailed.
var ErrSkipped = errors.New("skipped")

// compareIdentity checks that the slot's sweep-run.json (if any) describes
// run r: a spec edited under a sweep directory must not silently mix
// different settings in one run directory. Steps may grow (the run is
// extended). It reports whether sweep-run.json needs (re)writing.
func compareIdentity(slot string, r Run) (write bool, err error) {
	p := filepath.Join(slot, rundir.SweepRunFile)
	var old Run
	if err := readJSON(p, &old); err != nil {
		if os.IsNotExist(err) {
			return true, nil
		}
		return false, fmt.Errorf("run %s: %s: %w", r.Name, p, err)
	}
	a, b := old, r
	a.Index, b.Index, a.Steps, b.Steps = 0, 0, 0, 0
	if a.Prep == "" { // recorded before koopq kept the digest of the collect:/koopman: blocks
		b.Prep = ""
	}
	if !reflect.DeepEqual(a, b) {
		return false, fmt.Errorf("run %s: the spec changed since this run started (was %s, now %s); use a new --out directory",
			r.Name, describe(old), describe(r))
	}
	if r.Steps < old.Steps {
		return false, fmt.Errorf("run %s: spec asks for %d steps, the run was started with %d; use a new --out directory", r.Name, r.Steps, old.Steps)
	}
	return r.Steps != old.Steps || r.Index != old.Index, nil
}

// CheckIdentities checks every run of a spec against the sweep directory out
// before anything is written (see compareIdentity); all mismatches are
// reported.
func CheckIdentities(out string, runs []Run) error {
	var p problems
	for _, r := range runs {
		if _, err := compareIdentity(SlotDir(out, r), r); err != nil {
			p.add("%v", err)
		}
	}
	return p.err()
}

// checkIdentity compares and then writes sweep-run.json when needed.
func checkIdentity(slot string, r Run) error {
	write, err := compareIdentity(slot, r)
	if err != nil || !write {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(slot, rundir.SweepRunFile), append(b, '\n'))
}

func describe(r Run) string {
	parts := []string{"augment=" + r.Augment, "env=" + r.Env, "data=" + r.Data}
	if r.Preset != "" {
		parts = append(parts, "preset="+r.Preset)
	}
	if r.Prep != "" {
		parts = append(parts, "collect/koopman blocks="+r.Prep)
	}
	for _, f := range r.Flags {
		parts = append(parts, f.Name+"="+f.Value)
	}
	return strings.Join(parts, " ")
}

// AugmentCacheEnv is the environment variable naming the directory where
// `koopq train` keeps the Koopman precompute cache files (its
// --augment-cache default).
const AugmentCacheEnv = "KOOPQ_AUGMENT_CACHE"

// AugmentCacheDir is the precompute cache directory of a sweep's trainers:
// $KOOPQ_AUGMENT_CACHE when set (set but empty: no cache files), else
// <dataRoot>/augment-cache, beside the datasets and Koopman models the
// runs share, so that a sweep's seeds precompute each model's cache once.
func AugmentCacheDir(dataRoot string) string {
	if v, ok := os.LookupEnv(AugmentCacheEnv); ok {
		return v
	}
	return filepath.Join(dataRoot, "augment-cache")
}

// TrainEnv returns the environment of a trainer with threads threads (0:
// the current thread settings) and KOOPQ_AUGMENT_CACHE=augmentCache.
func TrainEnv(threads int, augmentCache string) []string {
	t := strconv.Itoa(threads)
	var out []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if k == AugmentCacheEnv || threads > 0 && (k == "GOMAXPROCS" || k == "OPENBLAS_NUM_THREADS" || k == "OMP_NUM_THREADS") {
			continue
		}
		out = append(out, e)
	}
	out = append(out, AugmentCacheEnv+"="+augmentCache)
	if threads <= 0 {
		return out
	}
	return append(out, "GOMAXPROCS="+t, "OPENBLAS_NUM_THREADS="+t, "OMP_NUM_THREADS="+t)
}

// Execute runs (or resumes) run r in the sweep directory out: a `koopq train`
// subprocess whose output goes to the slot's train.log. A finished run is
// skipped; a partial one resumes from its checkpoint. Cancelling ctx sends
// the trainer SIGINT so it can checkpoint, and the run stays pending. It
// returns the run's state afterwards; the error says why it is not done.
func Execute(ctx context.Context, out string, r Run, o ExecOptions) (State, error) {
	slot := SlotDir(out, r)
	if err := os.MkdirAll(slot, 0o755); err != nil {
		return Pending, err
	}
	lockF, unlock, holder, err := lockSlot(slot)
	if errors.Is(err, errSlotBusy) {
		return Running, fmt.Errorf("run %s: running elsewhere (%s holds %s): %w", r.Name, pidText(holder), filepath.Join(slot, slotLock), ErrSkipped)
	} else if err != nil {
		return Pending, fmt.Errorf("run %s: %w", r.Name, err)
	}
	defer unlock()
	if err := checkIdentity(slot, r); err != nil {
		return Failed, err
	}
	st := RunStatus(out, r)
	if st.TrainDir != "" && st.State != Done {
		// A trainer still at work on the run directory (one a killed
		// sweep left behind, or a 'koopq train --resume' started by hand)
		// holds its lock: starting another would fail on it.
		if held, holder := trainDirHeld(st.TrainDir); held {
			return Running, fmt.Errorf("run %s: running elsewhere (%s holds %s): %w", r.Name, pidText(holder), filepath.Join(st.TrainDir, ".lock"), ErrSkipped)
		}
	}
	switch {
	case st.State == Done:
		return Done, fmt.Errorf("run %s: already done: %w", r.Name, ErrSkipped)
	case st.State == Running && !o.TakeOver:
		return Running, fmt.Errorf("run %s: running elsewhere: %w", r.Name, ErrSkipped)
	case st.State == Failed && !o.RetryFailed:
		return Failed, fmt.Errorf("run %s: failed before (%s; --retry-failed runs it again): %w", r.Name, firstLine(st.Message), ErrSkipped)
	}
	if o.CheckBinary != nil {
		if err := o.CheckBinary(o.Koopq); err != nil {
			return Pending, fmt.Errorf("run %s: %w", r.Name, err)
		}
	}
	var args []string
	if st.TrainDir == "" {
		cleanOrphans(slot) // a directory an earlier attempt left without config.json
		if r.KoopmanDefault {
			// Where no `sweep run` prepared it (Kubernetes pods), the first
			// run trains the default model; the others wait for it.
			if _, err := os.Stat(resolve(o.DataRoot, r.Koopman)); err != nil {
				if err := prepareStep(ctx, r.KoopmanStep(o.DataRoot), o.Koopq, nil); err != nil {
					return Pending, fmt.Errorf("run %s: training the shared Koopman model %s: %w", r.Name, resolve(o.DataRoot, r.Koopman), err)
				}
			}
		}
		if r.Koopman != "" {
			if _, err := os.Stat(resolve(o.DataRoot, r.Koopman)); err != nil {
				return Pending, fmt.Errorf("run %s: Koopman model %s missing ('koopq sweep run' trains it before the runs): %w",
					r.Name, resolve(o.DataRoot, r.Koopman), err)
			}
		}
		args = r.TrainArgs(o.DataRoot, slot, "run")
	} else {
		// The dataset and model at the spec's paths: where the data root
		// moved (another machine, another --data-root), train checks that
		// they hold what the run read and follows them.
		args = []string{"train", "--resume", st.TrainDir, "--data", r.ResolveData(o.DataRoot)}
		if r.Koopman != "" {
			args = append(args, "--koopman", resolve(o.DataRoot, r.Koopman))
		}
		if _, err := os.Stat(filepath.Join(st.TrainDir, rundir.ResultsFile)); err == nil {
			args = append(args, "--steps", strconv.Itoa(r.Steps)) // extend a finished shorter run
		}
	}
	old, _ := readMarker(slot)
	host, _ := os.Hostname()
	m := Marker{State: "running", Host: host, PID: os.Getpid(), Executor: o.Executor, Started: time.Now().UTC(), Attempt: old.Attempt + 1}
	if err := writeMarker(slot, m); err != nil {
		return Pending, err
	}
	logf, err := os.OpenFile(filepath.Join(slot, "train.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return Pending, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== koopq sweep: attempt %d on %s (%s) at %s\n=== %s %s\n", m.Attempt, host, o.Executor,
		m.Started.Format(time.RFC3339), o.Koopq, strings.Join(args, " "))

	cmd := exec.CommandContext(ctx, o.Koopq, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = TrainEnv(o.Threads, o.AugmentCache)
	// Own process group: a terminal's Ctrl-C reaches the sweep only, which
	// forwards one SIGINT so the trainer can checkpoint.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = o.StopGrace
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = 2 * time.Minute
	}
	runErr := runChild(cmd, lockF)
	m.Ended = time.Now().UTC()
	after := RunStatus(out, r)
	switch {
	case after.State == Done:
		m.State, m.Error = "done", ""
		if err := writeMarker(slot, m); err != nil {
			return Done, err
		}
		return Done, nil
	case ctx.Err() != nil:
		m.State, m.Error = "interrupted", "stopped by a signal"
		_ = writeMarker(slot, m)
		return Pending, fmt.Errorf("run %s: interrupted at step %d: %w", r.Name, interruptedAt(after), ctx.Err())
	case exitCode(runErr) == ExitInterrupted:
		// The trainer itself got the signal (a batch system signals every
		// process of a job, and it may exit before this process sees its
		// own): it checkpointed, so the run is resumable, not failed.
		m.State, m.Error = "interrupted", "the trainer was stopped by a signal"
		_ = writeMarker(slot, m)
		return Pending, fmt.Errorf("run %s: trainer interrupted at step %d (it resumes on the next run)", r.Name, interruptedAt(after))
	}
	m.State = "failed"
	cleanOrphans(slot)
	if ee, ok := runErr.(*exec.ExitError); ok {
		m.ExitCode = ee.ExitCode()
	} else if runErr == nil {
		runErr = errors.New("trainer exited without writing results.json")
		if _, err := os.Stat(filepath.Join(after.TrainDir, rundir.ResultsFile)); after.TrainDir != "" && err == nil {
			runErr = fmt.Errorf("trainer stopped at step %d of %d (it did not extend the finished run)", after.Step, r.Steps)
		}
	}
	m.Error = fmt.Sprintf("%v: %s", runErr, logTail(filepath.Join(slot, "train.log")))
	_ = writeMarker(slot, m)
	return Failed, fmt.Errorf("run %s failed: %s (log %s)", r.Name, m.Error, filepath.Join(slot, "train.log"))
}

// slotLock is the file in a run's slot that the process executing the run
// holds an exclusive flock(2) on for as long as it runs (internal/lockfile).
const slotLock = ".lock"

// errSlotBusy says another process holds a slot's lock.
var errSlotBusy = errors.New("slot locked")

// lockSlot takes the slot's lock without waiting, so that two sweep
// processes on one directory (a command started twice, two allocations)
// never execute the same run: checking the run's state and writing its
// marker are two steps another process could come between. It returns
// errSlotBusy when another process (or another execution in this one)
// holds it, with the holder's pid as the lock file records it, else the
// lock file (handed on to the trainer, see runChild) and the function that
// releases it. On a filesystem without flock it takes no lock (nil file)
// and leaves the guarding to the marker.
func lockSlot(slot string) (f *os.File, unlock func(), holder string, err error) {
	f, unlock, holder, err = lockfile.TryLockFile(filepath.Join(slot, slotLock))
	switch {
	case errors.Is(err, lockfile.ErrBusy):
		return nil, nil, holder, errSlotBusy
	case errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS):
		// A filesystem without flock (some network and FUSE mounts): the
		// state marker alone guards the run, as before the lock.
		return nil, func() {}, "", nil
	}
	return f, unlock, "", err
}

// trainDirHeld reports whether another process holds the lock of the train
// run directory dir (run.Dir.Lock), and the holder's pid as recorded.
func trainDirHeld(dir string) (bool, string) {
	unlock, holder, err := lockfile.TryLock(filepath.Join(dir, ".lock"))
	if errors.Is(err, lockfile.ErrBusy) {
		return true, holder
	}
	if err == nil {
		unlock()
	}
	return false, ""
}

// pidText names a lock holder: "pid N", or "another process" when the lock
// file records none.
func pidText(holder string) string {
	if holder == "" {
		return "another process"
	}
	return "pid " + holder
}

// ExitInterrupted is the exit status of `koopq train` when a signal
// (SIGINT, SIGTERM) stopped it after a complete step and checkpoint:
// sysexits' EX_TEMPFAIL, "try again". Execute records such a run as
// interrupted (pending, resumed next time), not failed.
const ExitInterrupted = 75

// exitCode is err's process exit status, or −1 when err is not an exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// cleanOrphans removes run directories that a failed trainer created but
// left empty (no config.json; nothing inside but empty directories, the
// .lock no process holds and temporary files, as a trainer that could not
// write its config.json on a full disk leaves them), so retries do not pile
// them up in the slot.
func cleanOrphans(slot string) {
	entries, err := os.ReadDir(slot)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(slot, e.Name())
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(p, rundir.ConfigFile)); err == nil {
			continue
		}
		empty := true
		_ = filepath.WalkDir(p, func(_ string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() && d.Name() != slotLock && !strings.HasPrefix(d.Name(), ".tmp-") {
				empty = false
			}
			return nil
		})
		if !empty {
			continue
		}
		if held, _ := trainDirHeld(p); !held {
			_ = os.RemoveAll(p)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// logTail returns the last meaningful line of a trainer log (progress bars
// rewrite a line with \r; only the text after the last \r counts).
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "===") {
			return l
		}
	}
	return ""
}

// interruptedAt is the step an interrupted trainer stopped at: on a signal it
// checkpoints the step it is at, which is past its last logged one (st.Step,
// a multiple of --log-every); without that checkpoint, the last logged step.
func interruptedAt(st Status) int { return max(st.Step, st.Checkpoint) }
