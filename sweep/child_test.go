package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/internal/lockfile"
)

// A run whose train directory is locked by a live process (a trainer a
// killed sweep left behind, or a 'koopq train --resume' started by hand) is
// running elsewhere: Execute starts no second trainer and does not mark the
// run failed, and RunLocal counts it as running.
func TestExecuteLeavesLockedRunDirectoryAlone(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, Checker{})
	out := t.TempDir()
	r := runs[0]
	dir := filepath.Join(SlotDir(out, r), "run-20260101-000000")
	if err := os.MkdirAll(filepath.Join(dir, "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.json", "checkpoints/latest.safetensors"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unlock, _, err := lockfile.TryLock(filepath.Join(dir, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	o := ExecOptions{Koopq: bin, RetryFailed: true}
	state, err := Execute(context.Background(), out, r, o)
	want := fmt.Sprintf("running elsewhere (pid %d holds %s)", os.Getpid(), filepath.Join(dir, ".lock"))
	if state != Running || !errors.Is(err, ErrSkipped) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Execute on a locked run directory: %v, %v; want running, %q", state, err, want)
	}
	sum := RunLocal(context.Background(), out, runs[:1], LocalOptions{ExecOptions: o, Jobs: 1})
	if sum.Running != 1 || sum.Failed != 0 || sum.Err() != nil {
		t.Errorf("RunLocal: %+v", sum)
	}
	if c := calls(t, logp); c != "" {
		t.Errorf("a trainer was started on the locked run:\n%s", c)
	}
	if st := RunStatus(out, r); st.State == Failed {
		t.Errorf("status %+v", st)
	}
	// Once the holder is gone, the run resumes.
	unlock()
	if state, err := Execute(context.Background(), out, r, o); state != Done || err != nil {
		t.Errorf("after the holder ended: %v %v", state, err)
	}
	if !strings.Contains(calls(t, logp), "train --resume "+dir) {
		t.Errorf("trainer calls:\n%s", calls(t, logp))
	}
}

// A child's descendant that outlives it (as an orphaned collect outlives a
// killed sweep where there is no parent-death signal) keeps the lock the
// child inherited: a second sweep waits for it, naming its pid, instead of
// starting a second collect into the same directory.
func TestOrphanKeepsPrepareLock(t *testing.T) {
	root := t.TempDir()
	pidFile := filepath.Join(root, "orphan.pid")
	fake := filepath.Join(root, "koopq")
	// The stand-in leaves a background process that inherits every open
	// file (the lock included) and exits without making its file.
	script := "#!/bin/sh\nsleep 60 &\necho $! > " + pidFile + "\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	st := PrepStep{Kind: PrepCollect, Datasets: []string{"d"}, Path: filepath.Join(root, "data", "d.hdf5"), Args: []string{"collect"},
		Log: filepath.Join(root, "data", "collect.log")}
	if err := prepareStep(context.Background(), st, fake, nil); err == nil || !strings.Contains(err.Error(), "did not write") {
		t.Fatalf("first prepare: %v", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	orphan := strings.TrimSpace(string(b))
	ctx, cancel := context.WithCancel(context.Background())
	var progress lockedBuilder
	done := make(chan error, 1)
	go func() { done <- prepareStep(ctx, st, fake, &progress) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(progress.String(), "waiting for another process") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("second prepare with the orphan alive: %v\n%s", err, progress.String())
	}
	// The lock file names the child that was given it (the shell, whose
	// background job holds it now): not this process.
	if p := progress.String(); !strings.Contains(p, "waiting for another process (pid ") || strings.Contains(p, fmt.Sprintf("(pid %d)", os.Getpid())) {
		t.Errorf("progress:\n%s (orphan %s)", p, orphan)
	}
}

// lockedBuilder is a strings.Builder safe for one writer and one reader.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The dirty-binary check ran once, when a sweep started: a binary replaced
// by a build from a modified tree in the middle of a sweep (or before a
// Slurm requeue) trained the runs after it. Execute now asks CheckBinary
// before each trainer starts; a refusal leaves the run pending, untouched.
func TestExecuteChecksTheBinaryBeforeEachRun(t *testing.T) {
	bin, logp := setupFake(t)
	_, runs := mustParse(t, testSpec, Checker{})
	out := t.TempDir()
	var checked []string
	o := ExecOptions{Koopq: bin, RetryFailed: true, CheckBinary: func(b string) error {
		checked = append(checked, b)
		return errors.New("built from a tree with uncommitted changes")
	}}
	state, err := Execute(context.Background(), out, runs[0], o)
	if state != Pending || err == nil || !strings.Contains(err.Error(), "uncommitted changes") || !strings.Contains(err.Error(), runs[0].Name) {
		t.Fatalf("Execute with a refused binary: %v, %v; want pending and the refusal", state, err)
	}
	if len(checked) != 1 || checked[0] != bin {
		t.Errorf("CheckBinary calls %v, want one with %s", checked, bin)
	}
	if c := calls(t, logp); c != "" {
		t.Errorf("a trainer was started with a refused binary:\n%s", c)
	}
	if st := RunStatus(out, runs[0]); st.State == Failed || st.TrainDir != "" {
		t.Errorf("status after the refusal: %+v", st)
	}
	o.CheckBinary = func(string) error { return nil }
	if state, err := Execute(context.Background(), out, runs[0], o); state != Done || err != nil {
		t.Errorf("with the binary accepted: %v %v", state, err)
	}
}
