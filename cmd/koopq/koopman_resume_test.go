package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

// `koopq koopman train` stopped by SIGTERM (exit 75, resumable) or killed
// with SIGKILL after its second epoch writes no model, keeps a checkpoint,
// refuses to start over it without --resume, and with --resume ends with
// the same weights as an uninterrupted training; the checkpoint is then
// removed.
func TestKoopmanTrainResumes(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	args := func(out string, extra ...string) []string {
		return append([]string{"koopman", "train", "--data", fx.Data, "--env", "pendulum", "--out", out, "--epochs", "5",
			"--hidden", "16,8", "--latent", "4", "--batch", "64", "--diag-n", "50", "--patience", "0"}, extra...)
	}
	if r := runCLI(t, dir, 2*time.Minute, args("ref.safetensors")...); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	ref, _, err := nn.LoadSafetensors(filepath.Join(dir, "ref.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{"TERM", "KILL"} {
		out := "m-" + sig + ".safetensors"
		cmd := exec.Command(koopqBin, args(out)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), run.CrashEnv+"=koopman-epoch:2:"+sig)
		stderr, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		switch {
		case !ok:
			t.Fatalf("SIG%s: %v, want the process stopped\n%s", sig, err, stderr)
		case sig == "TERM" && (ee.ExitCode() != sweep.ExitInterrupted || !strings.Contains(string(stderr), "--resume")):
			t.Fatalf("SIGTERM: exit %d, want %d with a --resume hint\n%s", ee.ExitCode(), sweep.ExitInterrupted, stderr)
		}
		for _, f := range []string{out, out + ".json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Fatalf("SIG%s: %s written by an interrupted training", sig, f)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, out+".ckpt")); err != nil {
			t.Fatalf("SIG%s: no checkpoint: %v", sig, err)
		}
		expectCLIError(t, runCLI(t, dir, time.Minute, args(out)...), out+".ckpt", "--resume")
		r := runCLI(t, dir, 2*time.Minute, args(out, "--resume")...)
		if r.Code != 0 {
			t.Fatalf("SIG%s resume: %s", sig, r.Stderr)
		}
		if strings.Contains(r.Stdout, "epoch   1/5") || !strings.Contains(r.Stdout, "epoch   3/5") {
			t.Errorf("SIG%s resume did not continue at epoch 3:\n%s", sig, r.Stdout)
		}
		got, _, err := nn.LoadSafetensors(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(ref) {
			t.Fatalf("SIG%s: %d tensors, want %d", sig, len(got), len(ref))
		}
		for name, a := range ref {
			b := got[name]
			for i := range a.Data {
				if i >= len(b.Data) || a.Data[i] != b.Data[i] {
					t.Fatalf("SIG%s: resumed model differs from the uninterrupted one at %s[%d]", sig, name, i)
				}
			}
		}
		if _, err := os.Stat(filepath.Join(dir, out+".ckpt")); err == nil {
			t.Errorf("SIG%s: checkpoint left after the model was written", sig)
		}
	}
}
