package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// recordSync replaces syncFile for the test, recording the name of each
// file synced in *log, and fails with err when it is non-nil.
func recordSync(t *testing.T, log *[]string, err error) {
	orig := syncFile
	t.Cleanup(func() { syncFile = orig })
	syncFile = func(f *os.File) error {
		*log = append(*log, "sync "+filepath.Base(f.Name()))
		if err != nil {
			return err
		}
		return orig(f)
	}
}

// checkAtomic runs one replacement of path (holding "old") by "new" via
// do, which receives the beforeRename hook. It checks that the temporary
// file was synced before the hook ran, that the target held the old
// contents and one temporary file existed at that moment, and that
// afterwards the target holds the new contents, mode 0644, with no
// temporary file left.
func checkAtomic(t *testing.T, do func(path string, beforeRename func()) error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.bin")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log []string
	recordSync(t, &log, nil)
	var sawOld bool
	var tmps []string
	err := do(path, func() {
		log = append(log, "beforeRename")
		b, _ := os.ReadFile(path)
		sawOld = string(b) == "old"
		tmps, _ = filepath.Glob(filepath.Join(dir, ".tmp-x.bin-*"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || !strings.HasPrefix(log[0], "sync .tmp-x.bin-") || log[1] != "beforeRename" {
		t.Errorf("events %q, want the temporary file synced, then beforeRename", log)
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
}

// checkFailure runs do against path holding "old" and checks that it
// fails with want, leaving the old contents and no temporary file, and
// that beforeRename never ran.
func checkFailure(t *testing.T, want error, do func(path string, beforeRename func()) error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.bin")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	renamed := false
	if err := do(path, func() { renamed = true }); !errors.Is(err, want) {
		t.Errorf("error %v, want %v", err, want)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" || renamed {
		t.Errorf("after a failed write: %q (err %v), beforeRename ran %v; want the old contents untouched", b, err, renamed)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

var errWrite = errors.New("write failed")

// TestWriteFunc: a streamed write is synced before the rename and replaces
// the target whole; a failing write func or sync leaves the old file.
func TestWriteFunc(t *testing.T) {
	checkAtomic(t, func(path string, beforeRename func()) error {
		return WriteFunc(path, func(f *os.File) error {
			for _, s := range []string{"n", "e", "w"} {
				if _, err := f.WriteString(s); err != nil {
					return err
				}
			}
			return nil
		}, beforeRename)
	})
	checkFailure(t, errWrite, func(path string, beforeRename func()) error {
		return WriteFunc(path, func(f *os.File) error {
			f.WriteString("partial")
			return errWrite
		}, beforeRename)
	})
	var log []string
	recordSync(t, &log, errWrite)
	checkFailure(t, errWrite, func(path string, beforeRename func()) error {
		return WriteFunc(path, func(f *os.File) error { _, err := f.WriteString("new"); return err }, beforeRename)
	})
}

// TestWriteSyncs: Write syncs before the rename.
func TestWriteSyncs(t *testing.T) {
	checkAtomic(t, func(path string, beforeRename func()) error {
		return Write(path, []byte("new"), beforeRename)
	})
}

// TestWithTempPath: a writer that opens the temporary file by name (and
// may recreate it 0600, as a library creating a file does) gets it synced
// and renamed; a failing writer or sync leaves the old file.
func TestWithTempPath(t *testing.T) {
	checkAtomic(t, func(path string, beforeRename func()) error {
		return WithTempPath(path, func(tmp string) error {
			if filepath.Dir(tmp) != filepath.Dir(path) {
				t.Errorf("temporary path %s is not beside %s", tmp, path)
			}
			if err := os.Remove(tmp); err != nil {
				return err
			}
			return os.WriteFile(tmp, []byte("new"), 0o600)
		}, beforeRename)
	})
	checkFailure(t, errWrite, func(path string, beforeRename func()) error {
		return WithTempPath(path, func(tmp string) error {
			if err := os.WriteFile(tmp, []byte("partial"), 0o600); err != nil {
				return err
			}
			return errWrite
		}, beforeRename)
	})
	var log []string
	recordSync(t, &log, errWrite)
	checkFailure(t, errWrite, func(path string, beforeRename func()) error {
		return WithTempPath(path, func(tmp string) error { return os.WriteFile(tmp, []byte("new"), 0o600) }, beforeRename)
	})
	if err := WithTempPath(filepath.Join(t.TempDir(), "no", "such", "dir"), func(string) error { return nil }, nil); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
