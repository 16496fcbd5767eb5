// Package atomicfile writes files so that readers see either the old
// contents or the new, never a part: the data goes to a temporary file
// beside the target (".tmp-<name>-*", mode 0644), is synced, and is renamed
// over the target. A kill at any moment leaves at most a stale temporary
// file, which callers that care (run directories) clean up on resume.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data atomically. beforeRename, when non-nil,
// runs after the data is synced and before the rename; tests use it to
// simulate a kill at exactly that moment.
func Write(path string, data []byte, beforeRename func()) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; results are meant to be shared.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if beforeRename != nil {
		beforeRename()
	}
	return os.Rename(tmp.Name(), path)
}
