package run

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A new run whose config.json cannot be written (a full disk) leaves no run
// directory behind: one without config.json could be neither resumed nor
// reported, and a retry would make a second one beside it.
func TestConfigWriteFailureLeavesNoRunDirectory(t *testing.T) {
	old := writeConfig
	t.Cleanup(func() { writeConfig = old })
	writeConfig = func(*Dir, TrainConfig) error {
		return &os.PathError{Op: "write", Path: "config.json", Err: syscall.ENOSPC}
	}
	dir, err := NewDir(t.TempDir(), "a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Train(context.Background(), tinyConfig(), dir, pendulumLike(300, 1), false, nil)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), "run directory was removed") {
		t.Fatalf("Train with a failing config.json: %v", err)
	}
	if _, err := os.Stat(dir.Path); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", dir.Path, err)
	}
}

// A run that diverges before its first checkpoint says that starting over
// loses nothing, and --resume restarts it from step 0 (the same divergence,
// not a refusal).
func TestDivergenceBeforeFirstCheckpointIsRestartable(t *testing.T) {
	d := pendulumLike(300, 3)
	cfg := tinyConfig()
	cfg.CQL.MinQWeight = 1e300
	cfg.CheckpointEvery = 1000
	dir, _ := NewDir(t.TempDir(), "a")
	_, err := Train(context.Background(), cfg, dir, d, false, nil)
	if err == nil || !strings.Contains(err.Error(), "diverged") || !strings.Contains(err.Error(), "nothing is lost by starting over") {
		t.Fatalf("first divergence: %v", err)
	}
	_, err2 := Train(context.Background(), cfg, dir, d, true, nil)
	if err2 == nil || err2.Error() != err.Error() {
		t.Errorf("--resume: %v, want the same divergence from step 0: %v", err2, err)
	}
}
