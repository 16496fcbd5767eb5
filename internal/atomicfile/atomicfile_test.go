package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Before the rename the target still holds the old contents and a
// temporary file exists; afterwards the target holds the new contents with
// mode 0644 and no temporary file is left.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var sawOld bool
	var tmps []string
	err := Write(path, []byte("new"), func() {
		b, _ := os.ReadFile(path)
		sawOld = string(b) == "old"
		tmps, _ = filepath.Glob(filepath.Join(dir, ".tmp-x.json-*"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawOld || len(tmps) != 1 {
		t.Errorf("before the rename: old contents %v, temporary files %v", sawOld, tmps)
	}
	b, err := os.ReadFile(path)
	st, _ := os.Stat(path)
	if err != nil || string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("after: %q, mode %v, err %v", b, st.Mode().Perm(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := Write(filepath.Join(dir, "no", "such", "dir"), []byte("x"), nil); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
