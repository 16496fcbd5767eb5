// Package results holds the committed studies (run files, reports, logs) and
// the shell scripts that keep their long sweeps going across sessions. This
// file tests those scripts' decisions with stand-in binaries: which sweep runs
// next, which arguments reach it, what is moved aside. A wrong decision here
// costs hours of compute (a step that never starts, a run that starts twice),
// and nothing else exercises the scripts before a restart does.
package results

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeExec writes an executable script at path, making its directory.
func writeExec(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes a small file at path, making its directory.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyScript copies the committed script rel (relative to this directory's
// parent, the repository root) to the same place under root, executable.
func copyScript(t *testing.T, root, rel string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(root, rel), strings.TrimPrefix(string(b), "#!/bin/bash\n"))
}

// runScript runs cmd and returns its exit code and combined output; it fails
// the test when the script could not be run at all.
func runScript(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err == nil {
		return 0, string(out)
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("%s: %v\n%s", cmd.Path, err, out)
	}
	return ee.ExitCode(), string(out)
}

// standIn is a koopq stand-in: it appends its arguments as one line to
// $CALLS, prints $STATUS for `sweep status`, exits $RUN_RC for `sweep run`.
const standIn = `echo "$*" >> "$CALLS"
case "$1 $2" in
  "sweep status") echo "$STATUS" ;;
  "sweep run") exit "${RUN_RC:-0}" ;;
esac
`

// chainCase runs a copy of chain.sh with a stand-in binary, a data root that
// already holds everything prep.sh makes unless skip names a dataset, and
// the given dose-sweep status line and sweep exit code. It returns the exit
// code and the stand-in's calls, one per line.
func chainCase(t *testing.T, status string, runRC string, skip string, args ...string) (int, []string) {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "repo")
	copyScript(t, root, "results/study-magnitude/chain.sh")
	copyScript(t, root, "results/study-magnitude/prep.sh")
	data := filepath.Join(dir, "data")
	for _, ds := range []string{"hopper", "walker2d", "halfcheetah"} {
		if ds == skip {
			writeFile(t, filepath.Join(data, "models", ds+"-medium-koopman-400.safetensors.ckpt"), "ckpt")
			continue
		}
		writeFile(t, filepath.Join(data, "data", ds+"-medium-v2.hdf5"), "h5")
		writeFile(t, filepath.Join(data, "models", ds+"-medium-koopman-400.safetensors"), "model")
	}
	bin := filepath.Join(dir, "koopq")
	writeExec(t, bin, standIn)
	calls := filepath.Join(dir, "calls")
	cmd := exec.Command(filepath.Join(root, "results/study-magnitude/chain.sh"), args...)
	cmd.Env = append(os.Environ(), "KOOPQ_BIN="+bin, "STUDY_DATA="+data, "CALLS="+calls,
		"STATUS="+status, "RUN_RC="+runRC)
	code, _ := runScript(t, cmd)
	b, err := os.ReadFile(calls)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return code, lines
}

const (
	doseRun  = "sweep run examples/study-magnitude-dose.yaml --out results/study-magnitude/dose/runs --data-root "
	doseStat = "sweep status examples/study-magnitude-dose.yaml --out results/study-magnitude/dose/runs"
	mainRun  = "sweep run examples/study-magnitude-main.yaml --out results/study-magnitude/main/runs --data-root "
)

// hasCall reports whether one of calls starts with prefix and ends with suffix.
func hasCall(calls []string, prefix, suffix string) bool {
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) && strings.HasSuffix(c, suffix) {
			return true
		}
	}
	return false
}

func TestChainGoesOnToMainSweepWhenDoseComplete(t *testing.T) {
	code, calls := chainCase(t, "21 runs: 21 done, 0 running, 0 failed, 0 pending", "0", "", "--jobs", "2", "--threads", "1")
	if code != 0 {
		t.Fatalf("exit %d, calls %q", code, calls)
	}
	if len(calls) != 3 || !hasCall(calls[:1], doseRun, "--order seeds --jobs 2 --threads 1") ||
		calls[1] != doseStat || !hasCall(calls[2:], mainRun, "--order seeds --jobs 2 --threads 1") {
		t.Fatalf("calls %q: want the dose sweep, its status, then the main sweep, both with --jobs 2 --threads 1", calls)
	}
}

func TestChainStopsAfterDoseWhenARunFailed(t *testing.T) {
	code, calls := chainCase(t, "21 runs: 20 done, 0 running, 1 failed, 0 pending", "0", "")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if hasCall(calls, mainRun, "") {
		t.Fatalf("main sweep started though a dose run failed: %q", calls)
	}
}

func TestChainStopsAfterDoseWithTimeLimit(t *testing.T) {
	for _, args := range [][]string{{"--time-limit", "2h40m"}, {"--time-limit=2h40m"}} {
		code, calls := chainCase(t, "21 runs: 21 done, 0 running, 0 failed, 0 pending", "0", "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d", args, code)
		}
		if len(calls) != 1 || !hasCall(calls, doseRun, strings.Join(args, " ")) {
			t.Fatalf("%q: calls %q, want the dose sweep alone with the time limit", args, calls)
		}
	}
}

func TestChainStopsWhenDoseSweepFails(t *testing.T) {
	code, calls := chainCase(t, "21 runs: 21 done, 0 running, 0 failed, 0 pending", "1", "")
	if code != 1 || len(calls) != 1 {
		t.Fatalf("exit %d, calls %q: want exit 1 after the dose sweep alone", code, calls)
	}
}

func TestChainPrepMakesWhatIsMissing(t *testing.T) {
	code, calls := chainCase(t, "21 runs: 3 done, 0 running, 0 failed, 18 pending", "0", "walker2d")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (step 2 incomplete)", code)
	}
	want := []string{
		"collect walker2d-medium-v2 --seed 0 --out data",
		"koopman train --data data/walker2d-medium-v2.hdf5 --env walker2d --seed 0 --max-epochs 400 " +
			"--out models/walker2d-medium-koopman-400.safetensors --resume",
	}
	if len(calls) < 2 || calls[0] != want[0] || calls[1] != want[1] {
		t.Fatalf("calls %q: want first %q", calls, want)
	}
	for _, c := range calls {
		if strings.Contains(c, "hopper") || strings.Contains(c, "halfcheetah") {
			t.Fatalf("prep remade a dataset or model that exists: %q", c)
		}
	}
}

// restartCase runs a copy of restart-studies.sh --dry-run in a fresh git
// repository laid out as this one, with stand-in study binaries. running is
// a substring: the stand-in pgrep finds a process when its pattern contains
// it (empty: nothing runs). manStatus is the manipulation sweep's status line.
// tracked adds files before the repository's first commit, untracked after it.
// The stand-in CPU has AVX-512 (restartCaseOnCPU sets the flags).
func restartCase(t *testing.T, running, manStatus string, tracked, untracked func(repo string)) (int, string) {
	t.Helper()
	return restartCaseOnCPU(t, "fpu sse4_2 avx2 fma avx512f avx512bw avx512_bf16", running, manStatus, tracked, untracked)
}

// restartCaseOnCPU is restartCase on a stand-in CPU with these flags (the
// flags line of /proc/cpuinfo).
func restartCaseOnCPU(t *testing.T, flags, running, manStatus string, tracked, untracked func(repo string)) (int, string) {
	t.Helper()
	dir := t.TempDir()
	cpuinfo := filepath.Join(dir, "cpuinfo")
	writeFile(t, cpuinfo, "processor\t: 0\nflags\t\t: "+flags+"\n\nprocessor\t: 1\nflags\t\t: "+flags+"\n")
	repo := filepath.Join(dir, "repo")
	copyScript(t, repo, "results/restart-studies.sh")
	for _, s := range []string{"study-magnitude", "study-manipulation"} {
		writeFile(t, filepath.Join(repo, "results", s, "models", "m.safetensors"), "model")
		writeFile(t, filepath.Join(repo, "results", s, "models", "m.safetensors.json"), "{}")
	}
	if tracked != nil {
		tracked(repo)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "fake")
	if untracked != nil {
		untracked(repo)
	}
	work := filepath.Join(dir, "work")
	bin := filepath.Join(work, "study-bin")
	for _, c := range []string{"f4a5d7c", "71107bf", "7a18de5"} {
		writeExec(t, filepath.Join(bin, "koopq-"+c), standIn)
	}
	pgrep := filepath.Join(dir, "pgrep")
	writeExec(t, pgrep, `[ -n "$RUNNING" ] && [[ "$2" == *"$RUNNING"* ]]`+"\n")
	cmd := exec.Command(filepath.Join(repo, "results/restart-studies.sh"), "--dry-run")
	cmd.Env = append(os.Environ(), "STUDY_WORK="+work, "STUDY_BIN="+bin, "STUDY_PGREP="+pgrep, "STUDY_CPUINFO="+cpuinfo, "RUNNING="+running,
		"STATUS="+manStatus, "CALLS="+filepath.Join(dir, "calls"))
	return runScript(t, cmd)
}

func TestRestartStartsBothStudies(t *testing.T) {
	code, out := restartCase(t, "", "54 runs: 40 done, 0 running, 0 failed, 14 pending", nil, nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"+ chain.sh (log ", "+ manipulation sweep (log ", "+ cp "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--jobs 2") || strings.Contains(out, "git clone") {
		t.Errorf("two magnitude runs at once, or a rebuild, while the manipulation sweep has work:\n%s", out)
	}
}

func TestRestartGivesManipulationCoreToMagnitudeWhenDone(t *testing.T) {
	code, out := restartCase(t, "", "54 runs: 54 done, 0 running, 0 failed, 0 pending", nil, nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "+ chain.sh --jobs 2 --threads 1 (log ") || !strings.Contains(out, "study-manipulation: all runs done") ||
		strings.Contains(out, "+ manipulation sweep") {
		t.Fatalf("want chain.sh with --jobs 2 --threads 1 and no manipulation sweep:\n%s", out)
	}
	// Without AVX-512 (OpenBLAS): one magnitude run of two threads.
	code, out = restartCaseOnCPU(t, "fpu sse4_2 avx2 fma", "", "54 runs: 54 done, 0 running, 0 failed, 0 pending", nil, nil)
	if code != 0 || !strings.Contains(out, "+ chain.sh --jobs 1 --threads 2 (log ") {
		t.Fatalf("exit %d; want chain.sh with --jobs 1 --threads 2 on a CPU without AVX-512:\n%s", code, out)
	}
	// A failed run is not done: the manipulation sweep is started again to retry it.
	_, out = restartCase(t, "", "54 runs: 53 done, 0 running, 1 failed, 0 pending", nil, nil)
	if strings.Contains(out, "--jobs 2") || !strings.Contains(out, "+ manipulation sweep") {
		t.Fatalf("53 done + 1 failed counted as complete:\n%s", out)
	}
}

func TestRestartLeavesRunningStudiesAlone(t *testing.T) {
	_, out := restartCase(t, "chain.sh", "54 runs: 40 done, 0 running, 0 failed, 14 pending", nil, nil)
	if !strings.Contains(out, "study-magnitude: running") || strings.Contains(out, "+ chain.sh") {
		t.Fatalf("a running chain started again:\n%s", out)
	}
	_, out = restartCase(t, "study-manipulation.yaml", "54 runs: 40 done, 0 running, 0 failed, 14 pending", nil, nil)
	if !strings.Contains(out, "study-manipulation: running") || strings.Contains(out, "+ manipulation sweep") {
		t.Fatalf("a running manipulation sweep started again:\n%s", out)
	}
}

func TestRestartMovesAsideOnlyUnresumableUntrackedRuns(t *testing.T) {
	slot := func(repo, name string) string {
		return filepath.Join(repo, "results/study-manipulation/runs", name, "run-20261205-000000")
	}
	_, out := restartCase(t, "busy__cql__s2", "54 runs: 40 done, 0 running, 0 failed, 14 pending", func(repo string) {
		writeFile(t, filepath.Join(slot(repo, "tracked__cql__s0"), "metrics.csv"), "step\n")
	}, func(repo string) {
		writeFile(t, filepath.Join(slot(repo, "lost__cql__s2"), "metrics.csv"), "step\n")
		writeFile(t, filepath.Join(slot(repo, "ckpt__cql__s2"), "checkpoints", "latest.safetensors"), "w")
		writeFile(t, filepath.Join(slot(repo, "done__cql__s2"), "results.json"), "{}")
		writeFile(t, filepath.Join(slot(repo, "busy__cql__s2"), "metrics.csv"), "step\n") // its trainer runs
	})
	var moved []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "+ mv ") {
			moved = append(moved, l)
		}
	}
	if len(moved) != 1 || !strings.Contains(moved[0], "/runs/lost__cql__s2/") {
		t.Fatalf("moved %q: want lost__cql__s2 alone (no results, no checkpoint, untracked, no trainer)\n%s", moved, out)
	}
}

func TestRestartRejectsUnknownArgument(t *testing.T) {
	code, out := runScript(t, exec.Command("bash", "restart-studies.sh", "--dryrun"))
	if code != 2 || !strings.Contains(out, "usage:") {
		t.Fatalf("exit %d, output %q: want exit 2 with usage", code, out)
	}
}
