package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/run"
)

// resumeFixture is a run directory committed in the repository: a KFC++
// run (its own small Koopman model, paired streams) stopped by SIGTERM at
// step 25 of 60, with its data file and the digests its uninterrupted twin
// ended with. It was written by an earlier koopq; a later koopq must resume
// it and end bit-identical to that twin, so a change to the run-directory
// format, the checkpoint layout or the training numerics that breaks old
// runs fails here. Regenerate it (only when such a break is intended, and
// say so in the commit) with
//
//	KOOPQ_REGEN_RESUME_FIXTURE=1 go test ./cmd/koopq -run TestCommittedRunResumes
const resumeFixture = "testdata/resume-fixture"

// fixtureExpect is resumeFixture's expected.json.
type fixtureExpect struct {
	// Data is the absolute path the run's config.json records for its
	// dataset; the test points it at its copy of data.hdf5.
	Data string `json:"data"`
	// Policy and History are the sha256 of the uninterrupted twin's
	// policy.safetensors and history.json.
	Policy  string `json:"policy_sha256"`
	History string `json:"history_sha256"`
	// Commit is the koopq commit that wrote the fixture.
	Commit string `json:"commit"`
}

// fixtureArgs are the fixture run's train flags. The pure-Go GEMM backend
// makes its numbers the same on every machine.
func fixtureArgs(data, out string) []string {
	return []string{"--backend", "gonum", "train", "--data", data, "--env", "pendulum", "--hidden", "8,8", "--batch", "16",
		"--steps", "60", "--bc-steps", "10", "--eval-every", "20", "--eval-episodes", "1", "--log-every", "5",
		"--checkpoint-every", "5", "--augment", "kfc++", "--seed", "4", "--out", out, "--name", "fixture",
		"--koopman-epochs", "2", "--koopman-hidden", "16", "--koopman-latent", "4", "--koopman-batch", "64", "--quiet"}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestCommittedRunResumesBitIdentically resumes the committed fixture run
// (a copy, with its data path pointed at the copy of its data) and checks
// that it ends byte-identical to the uninterrupted run the fixture's
// koopq made.
func TestCommittedRunResumesBitIdentically(t *testing.T) {
	if os.Getenv("KOOPQ_REGEN_RESUME_FIXTURE") == "1" {
		regenResumeFixture(t)
	}
	var want fixtureExpect
	b, err := os.ReadFile(filepath.Join(resumeFixture, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(resumeFixture)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	cfgPath := filepath.Join(dir, "config.json")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(want.Data)
	repl, _ := json.Marshal(filepath.Join(tmp, "data.hdf5"))
	if !bytes.Contains(cfg, old) {
		t.Fatalf("config.json does not record the data path %s", old)
	}
	if err := os.WriteFile(cfgPath, bytes.ReplaceAll(cfg, old, repl), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
		t.Fatal("the fixture run is finished; it must stop before its last step")
	}
	r := runCLI(t, tmp, 3*time.Minute, "--backend", "gonum", "train", "--resume", dir, "--quiet")
	if r.Code != 0 {
		t.Fatalf("resume of the committed fixture (written by %s): exit %d\n%s%s", want.Commit, r.Code, r.Stdout, r.Stderr)
	}
	if got := sha256File(t, filepath.Join(dir, "policy.safetensors")); got != want.Policy {
		t.Errorf("policy.safetensors sha256 %s, the uninterrupted run's %s", got, want.Policy)
	}
	if got := sha256File(t, filepath.Join(dir, "history.json")); got != want.History {
		t.Errorf("history.json sha256 %s, the uninterrupted run's %s", got, want.History)
	}
	var res struct {
		Segments []json.RawMessage `json:"segments"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Segments) != 2 {
		t.Errorf("results.json segments %d (err %v), want 2: the fixture's process and the resume", len(res.Segments), err)
	}
}

// regenResumeFixture rewrites resumeFixture with the current koopq: data,
// an uninterrupted twin (for the digests, not kept) and the run stopped by
// SIGTERM after step 25.
func regenResumeFixture(t *testing.T) {
	if err := os.RemoveAll(resumeFixture); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(resumeFixture, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(resumeFixture)
	if err != nil {
		t.Fatal(err)
	}
	data := writePendulumData(t, filepath.Join(abs, "data.hdf5"), 300, 17)
	tmp := t.TempDir()
	if r := runCLI(t, tmp, 3*time.Minute, fixtureArgs(data, filepath.Join(tmp, "twin"))...); r.Code != 0 {
		t.Fatalf("uninterrupted twin: exit %d\n%s", r.Code, r.Stderr)
	}
	twin := runDir(t, filepath.Join(tmp, "twin"))
	out := filepath.Join(tmp, "stopped")
	cmd := exec.Command(koopqBin, fixtureArgs(data, out)...)
	cmd.Env = append(os.Environ(), run.CrashEnv+"=step:25:TERM")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 75 {
		t.Fatalf("stopped run: %v (want exit 75)\n%s", err, stderr.String())
	}
	stopped := runDir(t, out)
	if err := os.CopyFS(filepath.Join(resumeFixture, "run"), os.DirFS(stopped)); err != nil {
		t.Fatal(err)
	}
	// Lock files and stale temporaries belong to the process, not the run.
	filepath.WalkDir(filepath.Join(resumeFixture, "run"), func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && (strings.HasSuffix(e.Name(), ".lock") || strings.HasPrefix(e.Name(), ".tmp-")) {
			os.Remove(p)
		}
		return nil
	})
	exp := fixtureExpect{Data: data, Policy: sha256File(t, filepath.Join(twin, "policy.safetensors")),
		History: sha256File(t, filepath.Join(twin, "history.json"))}
	if c, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		exp.Commit = strings.TrimSpace(string(c))
	}
	b, _ := json.MarshalIndent(exp, "", "  ")
	if err := os.WriteFile(filepath.Join(resumeFixture, "expected.json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (commit %s)", resumeFixture, exp.Commit)
}
