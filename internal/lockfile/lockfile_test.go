package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A second lock on the same file fails at once with ErrBusy and the
// holder's pid; after unlock it succeeds again.
func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	unlock, _, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	_, holder, err := TryLock(p)
	if !errors.Is(err, ErrBusy) || holder != strconv.Itoa(os.Getpid()) {
		t.Fatalf("second lock: %v, holder %q; want ErrBusy from pid %d", err, holder, os.Getpid())
	}
	unlock()
	again, _, err := TryLock(p)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	again()
	if _, _, err := TryLock(filepath.Join(t.TempDir(), "missing", ".lock")); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("lock in a missing directory: %v", err)
	}
}
