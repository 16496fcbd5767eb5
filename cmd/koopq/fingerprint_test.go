package main

// Issue 66 items 2, 4 and 5: a resumed run refuses changed data, a corrupt
// checkpoint or policy, and a changed GEMM backend or precision.

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/run"
)

func fileSHA256(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// results.json and inputs.json record the dataset's file and content
// sha256; replacing the file under a run makes --resume refuse by name.
func TestTrainResumeRefusesChangedDataset(t *testing.T) {
	tmp, data, dir := tinyRun(t)
	res := readResults(t, dir)
	d, err := dataset.ReadD4RL(data, dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inputs.Dataset.SHA256 != fileSHA256(t, data) || res.Inputs.Dataset.ContentSHA256 != d.ContentSHA256() ||
		res.Inputs.Dataset.Transitions != d.Len() {
		t.Fatalf("results.json inputs %+v, want the file's sha256 %s and content %s", res.Inputs, fileSHA256(t, data), d.ContentSHA256())
	}
	if _, err := os.Stat(filepath.Join(dir, "inputs.json")); err != nil {
		t.Fatal(err)
	}
	// Same data, new file (rewritten): the extension runs.
	writePendulumData(t, data, 300, 2)
	if r := runCLI(t, tmp, 2*time.Minute, "train", "--resume", dir, "--steps", "50"); r.Code != 0 {
		t.Fatalf("extending on the same data: %s", r.Stderr)
	}
	// Other data under the same name: refused, nothing changed.
	writePendulumData(t, data, 300, 9)
	cfgBefore, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	expectCLIError(t, runCLI(t, tmp, time.Minute, "train", "--resume", dir, "--steps", "60"), "dataset changed", "p.hdf5")
	if cfgAfter, _ := os.ReadFile(filepath.Join(dir, "config.json")); string(cfgAfter) != string(cfgBefore) {
		t.Error("a refused resume rewrote config.json")
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
		t.Error("a refused resume removed results.json")
	}
}

// One flipped byte in the checkpoint makes --resume fail; one in the
// policy makes eval fail.
func TestCorruptCheckpointAndPolicyAreRefused(t *testing.T) {
	tmp, _, dir := tinyRun(t)
	flip := func(p string) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-3] ^= 0x01 // a low mantissa bit of the last tensor: still a finite float
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := runCLI(t, tmp, time.Minute, "eval", "--policy", filepath.Join(dir, "policy.safetensors"), "--episodes", "1"); r.Code != 0 {
		t.Fatalf("eval of the intact policy: %s", r.Stderr)
	}
	flip(filepath.Join(dir, "policy.safetensors"))
	expectCLIError(t, runCLI(t, tmp, time.Minute, "eval", "--policy", filepath.Join(dir, "policy.safetensors"), "--episodes", "1"), "checksum mismatch")
	flip(filepath.Join(dir, "checkpoints", "latest.safetensors"))
	expectCLIError(t, runCLI(t, tmp, time.Minute, "train", "--resume", dir, "--steps", "60"), "checksum mismatch", "latest.safetensors")
}

// A resume under another GEMM backend is refused unless
// --allow-backend-change is given; the flag alone (no --resume) is an error.
// The backends are ones every CPU runs (not bf16, which needs AVX-512: the
// test failed on an AVX2-only machine when it asked for it).
func TestTrainResumeRefusesBackendChange(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 300, 2)
	out := filepath.Join(tmp, "runs")
	if r := runCLI(t, tmp, 2*time.Minute, append([]string{"--backend", "onednn", "--precision", "f32"}, tinyTrain(data, out, "r")...)...); r.Code != 0 {
		t.Fatalf("train: %s", r.Stderr)
	}
	dir := runDir(t, out)
	expectCLIError(t, runCLI(t, tmp, time.Minute, "--backend", "openblas", "train", "--resume", dir, "--steps", "50"), "allow-backend-change", "openblas")
	expectCLIError(t, runCLI(t, tmp, time.Minute, "--backend", "gonum", "train", "--resume", dir, "--steps", "50"), "allow-backend-change", "gonum")
	expectCLIError(t, runCLI(t, tmp, time.Minute, tinyTrain(data, out, "s", "--allow-backend-change")...), "--allow-backend-change only applies with --resume")
	r := runCLI(t, tmp, 2*time.Minute, "--backend", "openblas", "train", "--resume", dir, "--steps", "50", "--allow-backend-change")
	if r.Code != 0 {
		t.Fatalf("resume with --allow-backend-change: %s", r.Stderr)
	}
	res := readResults(t, dir)
	if n := len(res.Segments); n != 2 || res.Segments[0].Provenance.BLAS != "onednn" || res.Segments[1].Provenance.BLAS != "openblas" {
		t.Fatalf("segments %+v, want onednn then openblas", res.Segments)
	}
}

// `koopman train --resume` under another GEMM backend is refused unless
// --allow-backend-change is given.
func TestKoopmanTrainResumeRefusesBackendChange(t *testing.T) {
	fx := fixtures(t)
	dir := t.TempDir()
	args := []string{"koopman", "train", "--data", fx.Data, "--env", "pendulum", "--out", "m.safetensors", "--epochs", "4",
		"--hidden", "16,8", "--latent", "4", "--batch", "64", "--diag-n", "50", "--patience", "0"}
	cmd := exec.Command(koopqBin, append([]string{"--backend", "onednn", "--precision", "f32"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), run.CrashEnv+"=koopman-epoch:2:KILL")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the crash point did not stop the training:\n%s", out)
	}
	expectCLIError(t, runCLI(t, dir, time.Minute, append([]string{"--backend", "openblas"}, append(args, "--resume")...)...),
		"allow-backend-change", "openblas")
	if r := runCLI(t, dir, 2*time.Minute, append([]string{"--backend", "openblas"}, append(args, "--resume", "--allow-backend-change")...)...); r.Code != 0 {
		t.Fatalf("resume with --allow-backend-change: %s", r.Stderr)
	}
}
