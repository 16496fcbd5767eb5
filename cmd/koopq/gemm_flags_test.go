package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad --backend / --precision values (or environment variables) are errors
// naming the flag, reported before a verb writes anything.
func TestGEMMFlagsRejectBadValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "mkl", "train", "--data", "x.hdf5"}, "--backend"},
		{[]string{"train", "--precision", "fp8", "--data", "x.hdf5"}, "--precision"},
		{[]string{"--backend", "openblas", "--precision", "bf16", "train", "--data", "x.hdf5"}, "backend openblas has no bf16 GEMM (bf16 needs"},
	} {
		dir := t.TempDir()
		r := runCLI(t, dir, time.Minute, tc.args...)
		expectCLIError(t, r, tc.want)
		if files := listTree(t, dir); len(files) != 0 {
			t.Errorf("%v wrote %v before failing", tc.args, files)
		}
	}
}

// --cpuprofile writes a gzip-compressed pprof profile of the verb, also when
// the verb fails; a path that cannot be created is an error before the verb
// runs.
func TestCPUProfileFlag(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, dir, time.Minute, "--cpuprofile", "cpu.prof", "eval", "--env", "pendulum", "--policy", "random", "--episodes", "2")
	if r.Code != 0 {
		t.Fatalf("eval with --cpuprofile: %d\n%s", r.Code, r.Stderr)
	}
	checkProfile(t, filepath.Join(dir, "cpu.prof"))
	r = runCLI(t, dir, time.Minute, "--cpuprofile", "failed.prof", "eval", "--env", "pendulum", "--policy", "no-such-file.safetensors")
	expectCLIError(t, r, "no-such-file.safetensors")
	checkProfile(t, filepath.Join(dir, "failed.prof"))

	r = runCLI(t, dir, time.Minute, "--cpuprofile", filepath.Join(dir, "missing", "cpu.prof"), "eval", "--env", "pendulum", "--episodes", "1")
	expectCLIError(t, r, "--cpuprofile: open "+filepath.Join(dir, "missing", "cpu.prof"))
	if strings.Contains(r.Stdout, "return") {
		t.Errorf("the verb ran after the profile failed:\n%s", r.Stdout)
	}
}

// checkProfile asserts that path is a complete gzip stream with content (a
// pprof profile is a gzip-compressed protocol buffer).
func checkProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n == 0 {
		t.Errorf("%s: %d bytes, %v", path, n, err)
	}
}
