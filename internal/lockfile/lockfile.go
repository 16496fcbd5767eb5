// Package lockfile takes exclusive flock(2) locks on files: non-blocking
// (TryLock) is how koopq keeps two processes off one run directory
// (run.Dir.Lock) and two sweep processes off one run's slot (sweep.Execute);
// blocking (Lock) serializes short read-modify-write updates of a file that
// several processes share (koopq collect's collect-d4rl.json). The kernel drops a
// lock when its holder dies, kill -9 included, so a lock is never stale.
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrBusy is returned (wrapped) by TryLock when another open file
// description, in this process or another, holds the lock.
var ErrBusy = errors.New("locked by another process")

// TryLock takes an exclusive lock on path (created if missing) without
// waiting, and writes this process's pid into the file. It returns the
// function that releases the lock (and empties the file). When the lock is
// held elsewhere the error wraps ErrBusy and holder is the pid written by
// the holder ("" when unknown); other failures wrap the system error (e.g.
// ENOLCK on a filesystem without flock).
func TryLock(path string) (unlock func(), holder string, err error) {
	_, unlock, holder, err = lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
	return unlock, holder, err
}

// TryLockFile is TryLock that also returns the open lock file, so that the
// lock can be handed to a child process (exec.Cmd.ExtraFiles): flock(2)
// belongs to the open file, so the lock then lasts until every process
// holding it has closed it or died, and a child (or its descendant) that
// outlives its parent keeps others off what it works on. Accordingly,
// release only closes this process's copy: the lock ends with the last
// holder. SetHolder records who holds it.
func TryLockFile(path string) (f *os.File, release func(), holder string, err error) {
	f, _, holder, err = lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		return nil, nil, holder, err
	}
	return f, func() { f.Close() }, "", nil
}

// SetHolder writes pid into the lock file f (of TryLockFile) as the holder
// that a refused TryLock reports, e.g. the child process the lock was handed
// to.
func SetHolder(f *os.File, pid int) {
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0)
	}
}

// Lock takes an exclusive lock on path (created if missing), waiting for
// as long as another holder keeps it, and writes this process's pid into
// the file. It returns the function that releases the lock. Meant for
// updates that hold the lock for milliseconds; errors wrap the system error.
func Lock(path string) (unlock func(), err error) {
	_, unlock, _, err = lock(path, syscall.LOCK_EX)
	return unlock, err
}

func lock(path string, how int) (f *os.File, unlock func(), holder string, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, "", err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil, strings.TrimSpace(string(b)), fmt.Errorf("%s: %w", path, ErrBusy)
		}
		return nil, nil, "", fmt.Errorf("flock %s: %w", path, err)
	}
	SetHolder(f, os.Getpid())
	return f, func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, "", nil
}
