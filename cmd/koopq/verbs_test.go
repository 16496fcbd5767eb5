package main

// Bad input for every verb: exit code 1, one "koopq: ..." line naming the
// flag, file or key, no panic trace, and nothing left behind in the working
// directory (where every relative output path of these cases points) or in
// the fixtures.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliCase is one invocation that must fail.
type cliCase struct {
	name string
	args []string
	want []string // substrings of the error line
}

// runFailures runs each case in its own empty working directory and checks
// the error line and that neither that directory nor the fixtures changed.
func runFailures(t *testing.T, cases []cliCase) {
	t.Helper()
	fx := fixtures(t)
	before := listTree(t, fx.Dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := runCLI(t, dir, 2*time.Minute, c.args...)
			expectCLIError(t, r, c.want...)
			if left := listTree(t, dir); len(left) > 0 {
				t.Errorf("koopq %s left files behind: %v", strings.Join(c.args, " "), left)
			}
		})
	}
	t.Cleanup(func() {
		if after := listTree(t, fx.Dir); !slices.Equal(before, after) {
			t.Errorf("fixtures changed: before %v, after %v", before, after)
		}
	})
}

// TestEvalRejectsMismatchedPolicy is issue item 1: a policy is checked
// against the env before any rollout (these used to panic or silently run).
func TestEvalRejectsMismatchedPolicy(t *testing.T) {
	fx := fixtures(t)
	runFailures(t, []cliCase{
		{"pendulum-policy-on-hopper", []string{"eval", "--policy", fx.PendulumPolicy, "--env", "hopper", "--episodes", "1"},
			[]string{fx.PendulumPolicy, `trained on "pendulum"`, `--env "hopper"`}},
		{"hopper-policy-on-pendulum", []string{"eval", "--policy", fx.HopperPolicy, "--env", "pendulum", "--episodes", "1"},
			[]string{fx.HopperPolicy, `trained on "hopper"`, `--env "pendulum"`}},
		{"3-input-policy-on-mountaincar", []string{"eval", "--policy", fx.NoEnvPolicy3, "--env", "mountaincar-continuous", "--episodes", "1"},
			[]string{fx.NoEnvPolicy3, "3-dimensional observations", "mountaincar-continuous has 2"}},
		{"policy-on-discrete-env", []string{"eval", "--policy", fx.NoEnvPolicy3, "--env", "cartpole", "--episodes", "1"},
			[]string{"3-dimensional observations", "cartpole has 4"}},
		{"action-bounds", []string{"eval", "--policy", fx.BoundsPolicy, "--env", "pendulum", "--episodes", "1"},
			[]string{fx.BoundsPolicy, "[-1, 1]", "[-2, 2]"}},
		{"no-env-anywhere", []string{"eval", "--policy", fx.NoEnvPolicy3}, []string{"--env is required", fx.NoEnvPolicy3}},
	})
}

func TestEvalBadInput(t *testing.T) {
	fx := fixtures(t)
	runFailures(t, []cliCase{
		{"policy-is-directory", []string{"eval", "--policy", fx.SubDir}, []string{"--policy", fx.SubDir, "is a directory"}},
		{"policy-symlink-loop", []string{"eval", "--policy", fx.Loop}, []string{"--policy", fx.Loop, "too many levels of symbolic links"}},
		{"policy-missing", []string{"eval", "--policy", "nope.safetensors"}, []string{"--policy", "nope.safetensors", "no such file"}},
		{"policy-not-safetensors", []string{"eval", "--policy", fx.NotHDF5}, []string{fx.NotHDF5}},
		{"policy-is-koopman-model", []string{"eval", "--policy", fx.Model}, []string{fx.Model, "not a koopq policy"}},
		{"episodes-0", []string{"eval", "--env", "pendulum", "--episodes", "0"}, []string{"--episodes 0"}},
		{"workers-0", []string{"eval", "--env", "pendulum", "--workers", "0"}, []string{"--workers 0"}},
		{"unknown-env", []string{"eval", "--env", "pendulun"}, []string{"--env", `"pendulun"`}},
		{"random-needs-env", []string{"eval", "--policy", "random"}, []string{"--env is required"}},
		{"policy-empty", []string{"eval", "--policy", ""}, []string{"--policy: empty; give a policy file, random or untrained"}},
		{"untrained-discrete", []string{"eval", "--policy", "untrained", "--env", "cartpole"}, []string{"cartpole", "discrete"}},
		{"json-dir-missing", []string{"eval", "--env", "pendulum", "--episodes", "1", "--json", "no/such/dir/r.json"}, []string{"--json", "no/such/dir"}},
		{"json-is-directory", []string{"eval", "--env", "pendulum", "--episodes", "1", "--json", fx.SubDir}, []string{"--json", "is a directory"}},
		{"episodes-not-a-number", []string{"eval", "--episodes", "ten"}, []string{"--episodes"}},
	})
}

func TestDatasetInfoBadInput(t *testing.T) {
	fx := fixtures(t)
	runFailures(t, []cliCase{
		{"missing", []string{"dataset", "info", "nope.hdf5"}, []string{"nope.hdf5", "no such file"}},
		{"symlink-loop", []string{"dataset", "info", fx.Loop}, []string{fx.Loop, "too many levels of symbolic links"}},
		{"directory-not-minari", []string{"dataset", "info", fx.SubDir}, []string{fx.SubDir, "main_data.hdf5"}},
		{"not-hdf5", []string{"dataset", "info", fx.NotHDF5}, []string{fx.NotHDF5, "not an HDF5 file"}},
		{"empty", []string{"dataset", "info", fx.Empty}, []string{fx.Empty, "empty"}},
		// Finite float64 rewards beyond float32's range are out of range, not "NaN or Inf".
		{"float64-beyond-float32", []string{"dataset", "info", fx.Huge}, []string{fx.Huge, `"rewards"`, "row 7", "1e+300", "out of float32 range"}},
		{"unknown-env", []string{"dataset", "info", fx.Data, "--env", "nosuch"}, []string{"--env", "nosuch"}},
		// A pendulum file's returns were normalized with hopper's references.
		{"other-env", []string{"dataset", "info", fx.Data, "--env", "hopper"}, []string{"--env hopper: the dataset was collected in env pendulum"}},
		{"no-file", []string{"dataset", "info"}, []string{"accepts 1 arg"}},
		{"negative-max-episode-steps", []string{"koopman", "train", "--data", fx.Data, "--out", "m.safetensors", "--max-episode-steps", "-1"}, []string{"--max-episode-steps -1"}},
	})
}

// TestDatasetInfoLockedFile: a file another process holds open for writing
// (libhdf5 takes a flock) is reported as locked, not as corrupted.
func TestDatasetInfoLockedFile(t *testing.T) {
	fx := fixtures(t)
	b, err := os.ReadFile(fx.Data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "locked.hdf5")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// What libhdf5 does for a writer (h5py.File(path, "a")): an exclusive flock.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", time.Minute, "dataset", "info", path)
	expectCLIError(t, r, path, "locked by another process", "HDF5_USE_FILE_LOCKING")
	if strings.Contains(r.Stderr, "corrupted") {
		t.Errorf("a locked file is reported as corrupted: %s", r.Stderr)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", time.Minute, "dataset", "info", path); r.Code != 0 {
		t.Errorf("after unlocking: code %d, stderr %s", r.Code, r.Stderr)
	}
}

func TestKoopmanBadInput(t *testing.T) {
	fx := fixtures(t)
	tr := func(extra ...string) []string {
		return append([]string{"koopman", "train", "--data", fx.Data, "--out", "m.safetensors", "--epochs", "1"}, extra...)
	}
	runFailures(t, []cliCase{
		{"train-no-data", []string{"koopman", "train", "--out", "m.safetensors"}, []string{"--data"}},
		{"train-no-out", []string{"koopman", "train", "--data", fx.Data}, []string{"--out"}},
		{"train-out-dir-missing", tr("--out", "no/dir/m.safetensors"), []string{"--out", "no/dir"}},
		{"train-data-missing", tr("--data", "nope.hdf5"), []string{"nope.hdf5", "no such file"}},
		{"train-data-float64-range", tr("--data", fx.Huge), []string{fx.Huge, `"rewards"`, "out of float32 range"}},
		{"train-hidden-0", tr("--hidden", "64,0"), []string{"--hidden 64,0"}},
		{"train-hidden-text", tr("--hidden", "wide"), []string{"--hidden"}},
		{"train-epochs-0", tr("--epochs", "0"), []string{"--max-epochs 0"}},
		{"train-latent-0", tr("--latent", "0"), []string{"--latent 0"}},
		{"train-batch-0", tr("--batch", "0"), []string{"--batch 0"}},
		{"train-lr-nan", tr("--lr", "NaN"), []string{"--lr NaN"}},
		{"train-lr-inf", tr("--lr", "+Inf"), []string{"--lr +Inf"}},
		{"train-noise-negative", tr("--noise", "-1"), []string{"--noise -1"}},
		{"train-val-fraction-1", tr("--val-fraction", "1"), []string{"--val-fraction 1"}},
		{"train-activation", tr("--enc-act", "sigmoid"), []string{"--enc-act", "sigmoid"}},
		{"train-env-typo", tr("--env", "hoper"), []string{"--env", "hoper"}},
		{"train-layers-gone", tr("--layers", "2"), []string{"--layers"}},
		{"train-resume-nothing", tr("--resume"), []string{"--resume", "m.safetensors.ckpt"}},
		{"inspect-no-model", []string{"koopman", "inspect", "--data", fx.Data}, []string{"--model"}},
		{"inspect-no-data", []string{"koopman", "inspect", "--model", fx.Model}, []string{"--data"}},
		{"inspect-model-is-dir", []string{"koopman", "inspect", "--model", fx.SubDir, "--data", fx.Data}, []string{"--model", fx.SubDir, "is a directory"}},
		{"inspect-model-is-policy", []string{"koopman", "inspect", "--model", fx.PendulumPolicy, "--data", fx.Data}, []string{"--model", fx.PendulumPolicy}},
		{"inspect-dims", []string{"koopman", "inspect", "--model", fx.Model42, "--data", fx.Data}, []string{fx.Model42, fx.Data, "states 4 / actions 2", "has 3 / 1"}},
		{"inspect-json-dir-missing", []string{"koopman", "inspect", "--model", fx.Model, "--data", fx.Data, "--json", "no/dir/d.json"}, []string{"--json", "no/dir"}},
	})
}

func TestSymcheckBadInput(t *testing.T) {
	fx := fixtures(t)
	sc := func(extra ...string) []string {
		return append([]string{"symcheck", "--data", fx.Data, "--model", fx.Model, "--n", "10"}, extra...)
	}
	runFailures(t, []cliCase{
		{"no-data", []string{"symcheck"}, []string{"--data"}},
		{"env-typo", sc("--env", "pendulm"), []string{"--env", "pendulm"}},
		{"env-dims", sc("--env", "hopper"), []string{"hopper", "11"}},
		{"no-env-known", []string{"symcheck", "--data", fx.Data42, "--model", fx.Model42}, []string{"--env is required"}},
		// The default output directory symcheck-pendulum must not be made for a model that does not fit.
		{"model-dims", sc("--model", fx.Model42), []string{"--model", fx.Model42, "states 4 / actions 2", "has 3 / 1"}},
		{"model-missing", sc("--model", "nope.safetensors"), []string{"--model", "nope.safetensors"}},
		{"out-is-file", sc("--out", fx.NotHDF5), []string{"--out", fx.NotHDF5, "not a directory"}},
		{"n-0", sc("--n", "0"), []string{"--n 0"}},
		{"shift-sigma-negative", sc("--shift-sigma", "-1"), []string{"--shift-sigma -1"}},
		{"train-hidden-0", sc("--train-hidden", "0"), []string{"--train-hidden 0"}},
		{"train-epochs-0", sc("--train-epochs", "0"), []string{"--train-epochs 0"}},
	})
}

// A bad --shift-l2 is refused before anything is written (runFailures
// checks that the directory stays empty).
func TestSymcheckShiftL2BadInput(t *testing.T) {
	fx := fixtures(t)
	sc := func(extra ...string) []string {
		return append([]string{"symcheck", "--data", fx.Data, "--model", fx.Model, "--n", "10", "--residual"}, extra...)
	}
	runFailures(t, []cliCase{
		{"negative", sc("--shift-l2=-1e-3"), []string{"--shift-l2", "-0.001", "> 0"}},
		{"nan", sc("--shift-l2", "NaN"), []string{"--shift-l2", "NaN"}},
		{"zero-in-list", sc("--shift-l2", "2.6e-4,0,1e-2"), []string{"--shift-l2", "value 2 of 3 is 0"}},
		{"empty", sc("--shift-l2", ""), []string{"--shift-l2"}},
		{"text", sc("--shift-l2", "tiny"), []string{"--shift-l2"}},
		// Direct decoding cannot go below the untrained model's reconstruction error.
		{"below-floor", []string{"symcheck", "--data", fx.Data, "--model", fx.Model, "--n", "10", "--shift-l2", "1e-4"}, []string{"--shift-l2", "--residual"}},
	})
}

func TestOtherVerbsBadInput(t *testing.T) {
	fx := fixtures(t)
	runFailures(t, []cliCase{
		{"references-env", []string{"references", "--env", "nosuch"}, []string{"--env", "nosuch"}},
		{"references-sac-steps-0", []string{"references", "--sac-steps", "0"}, []string{"--sac-steps 0"}},
		{"references-episodes-0", []string{"references", "--episodes", "0"}, []string{"--episodes 0"}},
		{"references-hidden-0", []string{"references", "--hidden", "0"}, []string{"--hidden 0"}},
		{"references-json-dir-missing", []string{"references", "--json", "no/dir/r.json"}, []string{"--json", "no/dir"}},
		{"symmetries-episodes-0", []string{"symmetries", "cartpole", "--episodes", "0"}, []string{"--episodes 0"}},
		{"symmetries-steps-0", []string{"symmetries", "cartpole", "--steps", "0"}, []string{"--steps 0"}},
		{"symmetries-eps-nan", []string{"symmetries", "cartpole", "--eps", "NaN"}, []string{"--eps NaN"}},
		{"symmetries-out-dir-missing", []string{"symmetries", "cartpole", "--out", "no/dir/c.json"}, []string{"--out", "no/dir"}},
		{"symmetries-unknown-example", []string{"symmetries", "pendulum"}, []string{`"pendulum"`, "cartpole"}},
		{"dataset-unknown-subcommand", []string{"dataset", "show", fx.Data}, []string{`"show"`, "info"}},
		{"koopman-unknown-subcommand", []string{"koopman", "fit"}, []string{`"fit"`, "train", "inspect"}},
		{"demo-seeds-0", []string{"demo", "--seeds", "0"}, []string{"--seeds 0"}},
		{"demo-steps-negative", []string{"demo", "--steps", "-5"}, []string{"--steps -5"}},
		{"demo-out-is-file", []string{"demo", "--out", fx.NotHDF5}, []string{"--out", fx.NotHDF5}},
		{"demo-out-not-empty", []string{"demo", "--out", fx.Dir}, []string{"--out", fx.Dir, "not empty"}},
		{"collect-hidden-zero", []string{"collect", "--env", "pendulum", "--hidden", "0"}, []string{"--hidden"}},
		{"collect-allow-backend-change-without-resume", []string{"collect", "--env", "pendulum", "--allow-backend-change"}, []string{"--allow-backend-change", "--resume"}},
		{"collect-expert-by-without-export", []string{"collect", "--env", "pendulum", "--expert-by", "best"}, []string{"--expert-by", "--export-policies"}},
		{"collect-unknown-env", []string{"collect", "--env", "nosuch"}, []string{"--env", "nosuch"}},
		{"collect-zero-transitions", []string{"collect", "--env", "pendulum", "--transitions", "0"}, []string{"--transitions"}},
		{"collect-medium-level", []string{"collect", "--env", "pendulum", "--medium-level", "2"}, []string{"--medium-level"}},
		{"collect-too-few-sac-steps", []string{"collect", "--env", "pendulum", "--sac-steps", "10"}, []string{"--sac-steps", "--snapshot-every"}},
		{"collect-zero-snapshot-every", []string{"collect", "--env", "pendulum", "--snapshot-every", "0"}, []string{"--snapshot-every"}},
		{"collect-negative-band", []string{"collect", "--env", "pendulum", "--medium-band", "-1"}, []string{"--medium-band"}},
		{"collect-out-is-file", []string{"collect", "--out", fx.NotHDF5, "--sac-steps", "1000", "--snapshot-every", "500", "--transitions", "100"}, []string{fx.NotHDF5}},
		// An --out no file can be made in (/proc, even for root) is refused before the rollouts.
		{"collect-d4rl-out-unwritable", []string{"collect", "hopper-random-v2", "--out", "/proc", "--transitions", "100"}, []string{"--out /proc: cannot write files there"}},
		{"collect-out-unwritable", []string{"collect", "--out", "/proc", "--sac-steps", "1000", "--snapshot-every", "500", "--transitions", "100"}, []string{"--out /proc: cannot write files there"}},
		{"unknown-verb", []string{"trian"}, []string{"trian"}},
		{"unknown-flag", []string{"eval", "--episode", "3"}, []string{"--episode"}},
	})
}

// TestVersion: koopq --version names the commit, the Go version and the
// GEMM backend with its precision, ISA, threads and kernel.
func TestVersion(t *testing.T) {
	r := runCLI(t, "", time.Minute, "--version")
	if r.Code != 0 {
		t.Fatalf("code %d, stderr %s", r.Code, r.Stderr)
	}
	for _, re := range []string{`(?m)^koopq \S+$`, `(?m)^commit: +(unknown|[0-9a-f]{40})`, `(?m)^go: +go1\.\d+`, `(?m)^gemm: +(onednn|openblas|gonum) (f32|bf16), ISA \S+, \d+ thread\(s\) per GEMM, subnormals (flushed|kept); kernel \S+`} {
		if !regexp.MustCompile(re).MatchString(r.Stdout) {
			t.Errorf("--version output does not match %s:\n%s", re, r.Stdout)
		}
	}
}

// TestUnstampedBinary: a binary without a VCS stamp says so in --version
// and in sweep run's warning (its commit is the checkout's HEAD, which need
// not be its code); the CLI binary that TestMain builds with -buildvcs=auto
// inside the checkout is stamped and says neither.
func TestUnstampedBinary(t *testing.T) {
	exe, err := os.Executable() // the test binary: go test never stamps it
	if err != nil {
		t.Fatal(err)
	}
	if w := unstampedWarning(exe); !strings.Contains(w, "no VCS stamp") || !strings.Contains(w, "make build") {
		t.Errorf("unstampedWarning(test binary) = %q", w)
	}
	if v := versionText(); !strings.Contains(v, "no VCS stamp in this binary") {
		t.Errorf("versionText() in the unstamped test binary, inside the checkout:\n%s", v)
	}
	if exec.Command("git", "rev-parse", "HEAD").Run() != nil {
		return // not a git checkout: TestMain's binary is unstamped too
	}
	if w := unstampedWarning(koopqBin); w != "" {
		t.Errorf("the go-built CLI binary: %s", w)
	}
	r := runCLI(t, "", time.Minute, "--version")
	if r.Code != 0 || strings.Contains(r.Stdout, "no VCS stamp") || !regexp.MustCompile(`(?m)^commit: +[0-9a-f]{40}`).MatchString(r.Stdout) {
		t.Errorf("--version of the stamped binary: code %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestHelpTexts: every verb has --help, without stray backticks (pflag
// turns a backticked word in a flag's usage into its value placeholder),
// and network sizes are spelled --hidden 64,64 style everywhere.
func TestHelpTexts(t *testing.T) {
	verbs := [][]string{{"collect"}, {"dataset", "info"}, {"demo"}, {"eval"}, {"koopman", "train"}, {"koopman", "inspect"},
		{"references"}, {"symcheck"}, {"symmetries", "cartpole"}, {"train"}}
	sizes := regexp.MustCompile(`--[a-z-]*hidden (int|ints|string)\b`)
	for _, v := range verbs {
		r := runCLI(t, "", time.Minute, append(v, "--help")...)
		name := strings.Join(v, " ")
		if r.Code != 0 || !strings.Contains(r.Stdout, "Usage:") {
			t.Errorf("%s --help: code %d\n%s%s", name, r.Code, r.Stdout, r.Stderr)
			continue
		}
		if strings.Contains(r.Stdout, "`") {
			t.Errorf("%s --help contains a backtick:\n%s", name, r.Stdout)
		}
		if m := sizes.FindString(r.Stdout); m != "" && !strings.HasSuffix(m, "ints") {
			t.Errorf("%s --help: %q: network sizes are a list of widths (--hidden 64,64)", name, m)
		}
	}
}

// TestREADMESelfContained: the README points at nothing outside the
// repository, and every relative link or image it has exists.
func TestREADMESelfContained(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, bad := range []string{"../", "/work/", "issue"} {
		if i := strings.Index(strings.ToLower(s), bad); i >= 0 {
			t.Errorf("README mentions %q: ...%s...", bad, s[max(0, i-40):min(len(s), i+40)])
		}
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#][^)]*)\)`).FindAllStringSubmatch(s, -1) {
		link, _, _ := strings.Cut(m[1], "#") // anchors: TestDocLinks
		if strings.Contains(link, "://") {
			continue
		}
		if _, err := os.Stat(filepath.Join("../..", link)); err != nil {
			t.Errorf("README links to %s, which does not exist", link)
		}
	}
}

// TestVersionFollowsBackendFlag: --version reports the GEMM backend that
// --backend selects (it used to print the default whatever the flag said),
// and a bad --backend is an error there too.
func TestVersionFollowsBackendFlag(t *testing.T) {
	r := runCLI(t, "", time.Minute, "--backend", "gonum", "--version")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^gemm: +gonum f32, `).MatchString(r.Stdout) {
		t.Errorf("--backend gonum --version: code %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", time.Minute, "--backend", "mkl", "--version")
	expectCLIError(t, r, `--backend: unknown or unavailable GEMM backend "mkl"`)
	// A bad GEMM variable is reported once, on the gemm line and as the
	// error (it used to escape as a panic inside cobra's version template).
	for _, env := range []string{"KOOPQ_BACKEND=mkl", "KOOPQ_SUBNORMALS=flsh"} {
		r = runCLIEnv(t, "", []string{env}, time.Minute, "--version")
		name, _, _ := strings.Cut(env, "=")
		if r.Code != 1 || !regexp.MustCompile(`(?m)^gemm: +`+name).MatchString(r.Stdout) || strings.Contains(r.Stdout+r.Stderr, "template") {
			t.Errorf("%s --version: code %d\n%s%s", env, r.Code, r.Stdout, r.Stderr)
		}
		expectCLIError(t, r, name)
	}
	r = runCLIEnv(t, "", []string{"KOOPQ_SUBNORMALS=keep"}, time.Minute, "--version")
	if r.Code != 0 || !strings.Contains(r.Stdout, "subnormals kept") {
		t.Errorf("KOOPQ_SUBNORMALS=keep --version: code %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
