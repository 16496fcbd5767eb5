package main

// The CLI test harness: TestMain builds the koopq binary once, and every CLI
// test runs it as a user would (a fresh process, its own working directory,
// no terminal), then checks exit code, output and the files left behind.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// koopqBin is the path of the binary built by TestMain.
var koopqBin string

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "koopq-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	koopqBin = filepath.Join(tmp, "koopq")
	// The binary is built from this checkout, which may have uncommitted
	// changes while a developer works: sweeps accept it (the refusal itself
	// is tested with its own binary in TestSweepRefusesDirtyBinary).
	os.Setenv("KOOPQ_ALLOW_DIRTY", "1")
	// -buildvcs=auto: stamped with the commit inside a git checkout, as
	// `make build` stamps it (this machine's GOFLAGS may turn stamping off).
	// -tags crashtest: with the crash hooks (run.CrashEnv) the kill and
	// signal tests stop the binary at exact points; releases have none.
	build := exec.Command("go", "build", "-buildvcs=auto", "-tags", "crashtest", "-o", koopqBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building koopq:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// cliResult is what one invocation of the binary produced.
type cliResult struct {
	Code           int
	Stdout, Stderr string
}

// runCLI runs koopq with args in dir (a fresh temporary directory when dir is
// ""), with a time limit, and returns its exit code and output. It fails the
// test when the binary could not be started or ran past the limit.
func runCLI(t *testing.T, dir string, limit time.Duration, args ...string) cliResult {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, koopqBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("koopq %s: ran past %v\nstderr:\n%s", strings.Join(args, " "), limit, errb.String())
	}
	res := cliResult{Stdout: out.String(), Stderr: errb.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("koopq %s: %v", strings.Join(args, " "), err)
		}
		res.Code = ee.ExitCode()
	}
	return res
}

// expectCLIError checks that a failed invocation exited with code 1, printed
// one "koopq: ..." error line containing every string in want, and no Go
// panic or stack trace.
func expectCLIError(t *testing.T, r cliResult, want ...string) {
	t.Helper()
	if r.Code != 1 {
		t.Errorf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, bad := range []string{"panic:", "goroutine ", "runtime error"} {
		if strings.Contains(r.Stderr, bad) || strings.Contains(r.Stdout, bad) {
			t.Errorf("output contains %q:\n%s%s", bad, r.Stdout, r.Stderr)
		}
	}
	var lines []string
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.HasPrefix(l, "koopq: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Errorf("want exactly one 'koopq: ' error line on stderr, got %d:\n%s", len(lines), r.Stderr)
		return
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("error line %q does not contain %q", lines[0], w)
		}
	}
}

// listTree returns the paths (relative, slash-separated, sorted) of every file
// and directory under root, for checking that a failed command left nothing.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestCLIHarnessSeesFailures checks the harness itself: an unknown verb is a
// one-line error with exit code 1, and --help succeeds.
func TestCLIHarnessSeesFailures(t *testing.T) {
	r := runCLI(t, "", time.Minute, "no-such-verb")
	expectCLIError(t, r, "no-such-verb")
	r = runCLI(t, "", time.Minute, "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "train") {
		t.Fatalf("--help: code %d, stdout %q", r.Code, r.Stdout)
	}
}
