// Package atomicfile writes files so that readers see either the old
// contents or the new, never a part: the data goes to a temporary file
// beside the target (".tmp-<name>-*", mode 0644), is synced, and is renamed
// over the target; the directory is then synced so that the rename itself
// survives a power loss. A kill at any moment leaves at most a stale
// temporary file, which callers that care (run directories) clean up on
// resume by its ".tmp-" prefix.
//
// It is koopq's one atomic write: run files, sweep state, safetensors
// checkpoints and policies, SAC run files, HDF5 datasets and augmentation
// cache files all go through it, so they share the temporary-file pattern,
// the mode and the fsync discipline (a write that skips the sync can leave,
// after a crash, a renamed but empty file).
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// syncFile flushes f to stable storage; tests replace it to observe the
// order of sync and rename or to make the sync fail.
var syncFile = func(f *os.File) error { return f.Sync() }

// Write replaces path with data atomically. beforeRename, when non-nil,
// runs after the data is synced and before the rename; tests use it to
// simulate a kill at exactly that moment.
func Write(path string, data []byte, beforeRename func()) error {
	return WriteFunc(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}, beforeRename)
}

// WriteFunc replaces path atomically with what write writes to f, for
// callers that stream their data rather than hold it in one slice. f is a
// new, empty temporary file beside path, opened for writing and already
// mode 0644; write must not close it (WriteFunc syncs and closes it) and
// must flush any buffering of its own. When write fails, path is left as
// it was and the temporary file is removed. beforeRename is as in Write.
func WriteFunc(path string, write func(f *os.File) error, beforeRename func()) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	// CreateTemp makes the file 0600; results are meant to be shared.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := syncFile(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return commit(tmp.Name(), path, beforeRename)
}

// WithTempPath replaces path atomically with the file that write creates
// at tmp, for writers that open files by name (libhdf5). tmp is a fresh
// path beside path where an empty file exists, which write may overwrite
// or truncate; write must close what it opens before returning. The file
// is then made mode 0644, reopened and synced, and renamed over path. When
// write fails, path is left as it was and tmp is removed. beforeRename is
// as in Write.
func WithTempPath(path string, write func(tmp string) error, beforeRename func()) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly once renamed
	if err := f.Close(); err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		return err
	}
	f, err = os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	// After write, since a writer may have recreated the file 0600.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := syncFile(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return commit(tmp, path, beforeRename)
}

// commit runs beforeRename, renames the synced temporary file tmp over
// path and syncs their directory.
func commit(tmp, path string, beforeRename func()) error {
	if beforeRename != nil {
		beforeRename()
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir syncs the directory dir so that a rename in it is durable. File
// systems that cannot sync a directory (EINVAL, ENOTSUP) are accepted: the
// file itself is synced and in place, only the rename's durability is left
// to the file system. Any other error is returned; path then already holds
// the new contents.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" { // directories cannot be opened for syncing
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing directory: %w", err)
	}
	err = d.Sync()
	d.Close()
	if err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("syncing directory: %w", err)
	}
	return nil
}
