package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyPath: a file stays itself, a finished run directory gives its
// policy file, and a missing path or a directory without one is an error
// naming the argument.
func TestPolicyPath(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	unfinished := filepath.Join(dir, "unfinished")
	os.MkdirAll(run, 0o755)
	os.MkdirAll(filepath.Join(unfinished, CheckpointsDir), 0o755)
	pol := filepath.Join(run, PolicyFile)
	os.WriteFile(pol, []byte("x"), 0o644)
	for arg, want := range map[string]string{pol: pol, run: pol} {
		if got, err := PolicyPath(arg); err != nil || got != want {
			t.Errorf("PolicyPath(%s) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for arg, want := range map[string]string{
		unfinished:                      unfinished + " is a directory without policy.safetensors",
		filepath.Join(dir, "nope"):      filepath.Join(dir, "nope") + ": no such file or directory",
		filepath.Join(dir, "nope", "x"): "nope/x: no such file",
	} {
		if _, err := PolicyPath(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PolicyPath(%s): err %v, want one containing %q", arg, err, want)
		}
	}
}
