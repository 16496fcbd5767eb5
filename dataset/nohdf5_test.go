//go:build !cgo

package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A binary built without cgo has no libhdf5: reading a dataset said
// "cannot open as HDF5 (truncated or corrupted?)" of a valid file. The
// error now says what is missing and does not blame the file.
func TestReadWithoutHDF5(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.hdf5")
	// An HDF5 signature: the file could be fine; only the build lacks libhdf5.
	if err := os.WriteFile(path, append([]byte("\x89HDF\r\n\x1a\n"), make([]byte, 2040)...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(path, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "built without HDF5 support") || strings.Contains(err.Error(), "corrupted") {
		t.Errorf("Read without libhdf5: %v, want an error that names the missing HDF5 support and not the file", err)
	}
}
