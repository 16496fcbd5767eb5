package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A file's fingerprint is its plain sha256 (what sha256sum prints), checked
// against the coreutils tool when present and against crypto/sha256.
func TestOfFileIsSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.hdf5")
	content := []byte(strings.Repeat("koopq data ", 10000))
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Of(p)
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(content)
	if f.SHA256 != hex.EncodeToString(want[:]) || f.Bytes != int64(len(content)) || f.Path != p {
		t.Fatalf("got %+v", f)
	}
	if out, err := exec.Command("sha256sum", p).Output(); err == nil {
		if got := strings.Fields(string(out))[0]; got != f.SHA256 {
			t.Fatalf("sha256sum says %s, Of %s", got, f.SHA256)
		}
	}
	if f.Short() != f.SHA256[:12] {
		t.Fatal("Short")
	}
}

// A directory's fingerprint changes with any file's content or name and not
// with the order files were written in.
func TestOfDirectory(t *testing.T) {
	mk := func(files map[string]string, order []string) string {
		d := t.TempDir()
		for _, n := range order {
			p := filepath.Join(d, n)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f, err := Of(d)
		if err != nil {
			t.Fatal(err)
		}
		return f.SHA256
	}
	base := map[string]string{"data/main_data.hdf5": "abc", "metadata.json": "{}"}
	a := mk(base, []string{"data/main_data.hdf5", "metadata.json"})
	if b := mk(base, []string{"metadata.json", "data/main_data.hdf5"}); a != b {
		t.Fatal("order of writing changed the fingerprint")
	}
	if b := mk(map[string]string{"data/main_data.hdf5": "abd", "metadata.json": "{}"}, []string{"data/main_data.hdf5", "metadata.json"}); a == b {
		t.Fatal("changed content, same fingerprint")
	}
	if b := mk(map[string]string{"data/main_data2.hdf5": "abc", "metadata.json": "{}"}, []string{"data/main_data2.hdf5", "metadata.json"}); a == b {
		t.Fatal("renamed file, same fingerprint")
	}
}

// A FIFO is refused at once instead of blocking the reader forever.
func TestOfRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal("mkfifo:", err)
	}
	if _, err := Of(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Of(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file fingerprinted")
	}
}
