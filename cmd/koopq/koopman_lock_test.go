package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/run"
)

// A `koopq koopman train --resume` while the training runs is refused
// naming the training's pid (two processes never write one checkpoint);
// once it is gone the resume finishes the model, and a --resume of the
// finished model exits 0 saying so, as 'train --resume' of a finished run
// does.
func TestKoopmanTrainLockAndFinishedResume(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"koopman", "train", "--data", fx.Data, "--env", "pendulum", "--out", "m.safetensors", "--max-epochs", "3",
			"--hidden", "16,8", "--latent", "4", "--batch", "64", "--diag-n", "50", "--patience", "0"}, extra...)
	}
	// The first training freezes (SIGSTOP) after its first epoch's checkpoint.
	first := exec.Command(koopqBin, args()...)
	first.Dir = dir
	first.Env = append(os.Environ(), run.CrashEnv+"=koopman-epoch:1:STOP")
	var out bytes.Buffer
	first.Stdout, first.Stderr = &out, &out
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Process.Kill(); _ = first.Wait() }()
	waitStopped(t, first.Process.Pid)
	r := runCLI(t, dir, time.Minute, args("--resume")...)
	expectCLIError(t, r, "m.safetensors", fmt.Sprintf("pid %d", first.Process.Pid), "is training this model")
	if _, err := os.Stat(filepath.Join(dir, "m.safetensors.ckpt")); err != nil {
		t.Fatalf("the refused resume touched the checkpoint: %v", err)
	}
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()

	r = runCLI(t, dir, 2*time.Minute, args("--resume")...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "epoch   2/3") {
		t.Fatalf("resume after the holder died: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, dir, time.Minute, args("--resume")...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "already finished") || r.Stderr != "" {
		t.Errorf("--resume of a finished model: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
