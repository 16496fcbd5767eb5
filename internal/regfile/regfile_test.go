package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe is refused at once (opening it for reading would block until
// a writer comes); regular files and links to them open; directories give
// ErrDir.
func TestOpenRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "latest.safetensors")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	reg := filepath.Join(dir, "file")
	if err := os.WriteFile(reg, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("file", link); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	if err := os.Symlink("latest.safetensors", fifoLink); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, fifoLink} {
			if _, err := Open(p); err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") {
				t.Errorf("Open(%s) = %v", p, err)
			}
			if _, err := ReadFile(p); err == nil {
				t.Errorf("ReadFile(%s) accepted a FIFO", p)
			}
			if err := Check(p); err == nil {
				t.Errorf("Check(%s) accepted a FIFO", p)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
	for _, p := range []string{reg, link} {
		b, err := ReadFile(p)
		if err != nil || string(b) != "data" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	if _, err := Open(dir); !errors.Is(err, ErrDir) {
		t.Errorf("Open(dir) = %v, want ErrDir", err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v", err)
	}
}
