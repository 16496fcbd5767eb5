package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindFinishedRun(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, finished bool) string {
		d := filepath.Join(root, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if finished {
			if err := os.WriteFile(filepath.Join(d, "results.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	run := mk("slot/run-1", true)
	mk("slot/run-0", false) // an abandoned attempt without results.json
	for _, p := range []string{run, filepath.Join(root, "slot")} {
		if got, err := FindFinishedRun(p); err != nil || got != run {
			t.Errorf("FindFinishedRun(%s) = %q, %v; want %s", p, got, err, run)
		}
	}
	mk("slot/run-2", true)
	if _, err := FindFinishedRun(filepath.Join(root, "slot")); err == nil || !strings.Contains(err.Error(), "holds 2 finished runs; name one") {
		t.Errorf("two finished runs: %v", err)
	}
	if _, err := FindFinishedRun(mk("empty", false)); err == nil || !strings.Contains(err.Error(), "holds no finished run") {
		t.Errorf("empty: %v", err)
	}
	if _, err := FindFinishedRun(filepath.Join(root, "absent")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("absent: %v", err)
	}
}
