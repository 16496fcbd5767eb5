package sweep

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A run directory an earlier attempt left without config.json (a trainer
// that could not write it on a full disk: only .lock and an empty
// checkpoints/) is cleaned before the run starts afresh, so the slot ends
// with one run directory, not a second beside the broken one.
func TestExecuteCleansDirectoryWithoutConfig(t *testing.T) {
	bin, _ := setupFake(t)
	_, runs := mustParse(t, testSpec, Checker{})
	out := t.TempDir()
	r := runs[0]
	left := filepath.Join(SlotDir(out, r), "run-20250101-000000")
	if err := os.MkdirAll(filepath.Join(left, "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, ".lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if state, err := Execute(context.Background(), out, r, ExecOptions{Koopq: bin, RetryFailed: true}); state != Done || err != nil {
		t.Fatalf("Execute: %v %v", state, err)
	}
	dirs, _ := filepath.Glob(filepath.Join(SlotDir(out, r), "run-*"))
	if len(dirs) != 1 || filepath.Base(dirs[0]) != "run-20260101-000000" {
		t.Errorf("run directories in the slot: %v", dirs)
	}
}
