package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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

// Lock waits while another holder has the lock: it never returns while the
// first lock is held, and returns once it is released.
func TestLockWaits(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	unlock, _, err := TryLock(p)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	release := make(chan struct{})
	go func() {
		u, err := Lock(p)
		done <- err
		if err == nil {
			<-release
			u()
		}
	}()
	select {
	case err := <-done:
		t.Fatalf("Lock returned (%v) while another holder had the lock", err)
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	if _, _, err := TryLock(p); !errors.Is(err, ErrBusy) {
		t.Errorf("TryLock while Lock's holder has it: %v, want ErrBusy", err)
	}
	close(release)
	if _, err := Lock(filepath.Join(t.TempDir(), "missing", ".lock")); err == nil {
		t.Error("Lock in a missing directory: no error")
	}
}
