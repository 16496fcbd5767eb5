package main

// Issue 66 items 1 and 6 and issue 67 item 5 at the CLI: a sweep refuses to
// mix datasets in one cell, leaves runs of renamed methods out of its
// report, and refuses a koopq binary built from a modified tree.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
)

const integritySpec = `name: integrity
datasets:
  - {name: pendulum-medium, env: pendulum, data: data/pendulum-medium.hdf5}
methods:
  - {name: CQL, augment: none}
seeds: [0]
steps: 60
preset: paper
eval: {every: 30, episodes: 1}
flags: {hidden: [8, 8], batch: 16, bc-steps: 10, log-every: 10, checkpoint-every: 30}
threads: 1
`

func TestSweepRefusesMixedDataAndDropsRenamedRuns(t *testing.T) {
	work := t.TempDir()
	d1, d2 := filepath.Join(work, "D1"), filepath.Join(work, "D2")
	for i, d := range []string{d1, d2} {
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		writePendulumData(t, filepath.Join(d, "data", "pendulum-medium.hdf5"), 300, uint64(10+i))
	}
	spec := filepath.Join(writeSpec(t, integritySpec), "spec.yaml")
	out := filepath.Join(work, "O")
	if r := runCLI(t, work, 3*time.Minute, "sweep", "run", spec, "--out", out, "--data-root", d1); r.Code != 0 {
		t.Fatalf("first sweep: %s%s", r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(out, ".sweep", "inputs.json")); err != nil {
		t.Fatal(err)
	}
	// One more seed on other data: refused, and no run of it started.
	if err := os.WriteFile(spec, []byte(strings.Replace(integritySpec, "seeds: [0]", "seeds: [0, 1]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	expectCLIError(t, runCLI(t, work, time.Minute, "sweep", "run", spec, "--out", out, "--data-root", d2),
		"pendulum-medium", "one table cell must not mix datasets", filepath.Join(d2, "data", "pendulum-medium.hdf5"))
	if m, _ := filepath.Glob(filepath.Join(out, "pendulum-medium__cql__s1", "*")); len(m) != 0 {
		t.Fatalf("the refused sweep started seed 1: %v", m)
	}
	// The same data root: seed 1 runs.
	if r := runCLI(t, work, 3*time.Minute, "sweep", "run", spec, "--out", out, "--data-root", d1); r.Code != 0 {
		t.Fatalf("second seed on the same data: %s%s", r.Stdout, r.Stderr)
	}
	// A renamed method: its old slots are orphans, named by status and
	// left out of the report (which would otherwise count two methods).
	renamed := strings.Replace(strings.Replace(integritySpec, "seeds: [0]", "seeds: [0, 1]", 1), "name: CQL,", "name: CQL-fixed,", 1)
	if err := os.WriteFile(spec, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, work, 3*time.Minute, "sweep", "run", spec, "--out", out, "--data-root", d1, "--seeds", "0")
	if r.Code != 0 || !strings.Contains(r.Stderr, "pendulum-medium__cql__s0, pendulum-medium__cql__s1") {
		t.Fatalf("sweep with a renamed method: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, work, time.Minute, "sweep", "status", out)
	if r.Code != 0 || !strings.Contains(r.Stdout, "not in the spec") {
		t.Fatalf("status: %s%s", r.Stdout, r.Stderr)
	}
	r = runCLI(t, work, time.Minute, "report", out)
	if r.Code != 0 || !strings.Contains(r.Stderr, "left out") || !strings.Contains(r.Stdout, "1 finished run") || strings.Contains(r.Stdout, "2 methods") {
		t.Fatalf("report: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A sweep continued on a fresh machine (its .sweep state gone, its run
// files kept, as a study's are in git) checks the data it finds against
// what the runs recorded: other transitions are refused before any run
// starts; the same transitions regenerated into other bytes (here, another
// metadata entry, as another koopq version writes) are accepted.
func TestSweepContinuedElsewhereChecksRunsData(t *testing.T) {
	work := t.TempDir()
	roots := map[string]string{}
	for _, name := range []string{"orig", "other", "regen"} {
		roots[name] = filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Join(roots[name], "data"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := func(root string) string { return filepath.Join(roots[root], "data", "pendulum-medium.hdf5") }
	writePendulumData(t, path("orig"), 300, 10)
	writePendulumData(t, path("other"), 300, 11)
	regen := pendulumData(300, 10)
	regen.Meta = map[string]string{"koopq_note": "regenerated elsewhere"}
	if err := dataset.WriteD4RL(path("regen"), regen); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path("orig"))
	b, _ := os.ReadFile(path("regen"))
	if bytes.Equal(a, b) {
		t.Fatal("the regenerated file should differ in bytes")
	}
	spec := filepath.Join(writeSpec(t, integritySpec), "spec.yaml")
	out := filepath.Join(work, "O")
	if r := runCLI(t, work, 3*time.Minute, "sweep", "run", spec, "--out", out, "--data-root", roots["orig"]); r.Code != 0 {
		t.Fatalf("first sweep: %s%s", r.Stdout, r.Stderr)
	}
	if err := os.RemoveAll(filepath.Join(out, ".sweep")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, []byte(strings.Replace(integritySpec, "seeds: [0]", "seeds: [0, 1]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	expectCLIError(t, runCLI(t, work, time.Minute, "sweep", "run", spec, "--out", out, "--data-root", roots["other"]),
		"run pendulum-medium__cql__s0 trained on", "other transitions", "one table cell must not mix datasets")
	if m, _ := filepath.Glob(filepath.Join(out, "pendulum-medium__cql__s1", "*")); len(m) != 0 {
		t.Fatalf("the refused sweep started seed 1: %v", m)
	}
	if r := runCLI(t, work, 3*time.Minute, "sweep", "run", spec, "--out", out, "--data-root", roots["regen"]); r.Code != 0 {
		t.Fatalf("the same transitions in other bytes were refused: %s%s", r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "pendulum-medium__cql__s1")); err != nil {
		t.Fatalf("seed 1 did not run: %v", err)
	}
}

// A koopq binary whose VCS stamp says "modified tree" is refused by
// sweep run unless --allow-dirty is given.
func TestSweepRefusesDirtyBinary(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to build a stamped binary:", err)
	}
	src := t.TempDir()
	files := map[string]string{"go.mod": "module dirtytool\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.Stderr.WriteString(\"not koopq\\n\"); os.Exit(3) }\n"}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh := func(args ...string) {
		t.Helper()
		c := exec.Command(args[0], args[1:]...)
		c.Dir = src
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GOFLAGS=")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	sh("git", "init", "-q")
	sh("git", "add", ".")
	sh("git", "commit", "-qm", "x")
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(files["main.go"]+"\n// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(src, "dirty")
	sh("go", "build", "-buildvcs=true", "-o", bin, ".")
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writePendulumData(t, filepath.Join(work, "data", "pendulum-medium.hdf5"), 300, 1)
	spec := filepath.Join(work, "spec.yaml")
	if err := os.WriteFile(spec, []byte(integritySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "O")
	cmd := exec.Command(koopqBin, "sweep", "run", spec, "--out", out, "--koopq", bin)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "KOOPQ_ALLOW_DIRTY=")
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(b), "uncommitted changes") || !strings.Contains(string(b), "--allow-dirty") {
		t.Fatalf("dirty binary: %v\n%s", err, b)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the refused sweep made its directory")
	}
	cmd = exec.Command(koopqBin, "sweep", "run", spec, "--out", out, "--koopq", bin, "--allow-dirty")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "KOOPQ_ALLOW_DIRTY=")
	b, _ = cmd.CombinedOutput()
	if strings.Contains(string(b), "uncommitted changes") {
		t.Fatalf("--allow-dirty did not let the binary through:\n%s", b)
	}
	// A binary without a VCS stamp (this machine's go builds without one
	// unless asked) only drew a warning, and its runs recorded the commit of
	// the checkout they ran in: refused the same way now.
	unstamped := filepath.Join(src, "unstamped")
	sh("go", "build", "-buildvcs=false", "-o", unstamped, ".")
	out2 := filepath.Join(work, "O2")
	cmd = exec.Command(koopqBin, "sweep", "run", spec, "--out", out2, "--koopq", unstamped)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "KOOPQ_ALLOW_DIRTY=")
	b, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(b), "has no VCS stamp") || !strings.Contains(string(b), "--allow-dirty") {
		t.Fatalf("unstamped binary: %v\n%s", err, b)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Fatal("the refused sweep made its directory")
	}
}
