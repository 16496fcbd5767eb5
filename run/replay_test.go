package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFindFinishedRuns(t *testing.T) {
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
	a := mk("sweep/a__s0/run-1", true)
	mk("sweep/a__s0/run-0", false) // an abandoned attempt without results.json
	b := mk("sweep/b__s0/run-5", true)
	mk("sweep/c__s0/run-2", false) // still training
	for _, c := range []struct {
		path string
		want []string
	}{
		{a, []string{a}}, // a run
		{filepath.Join(root, "sweep", "a__s0"), []string{a}}, // a slot
		{filepath.Join(root, "sweep"), []string{a, b}},       // a sweep directory
	} {
		got, err := FindFinishedRuns(c.path)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("FindFinishedRuns(%s) = %v, %v; want %v", c.path, got, err, c.want)
		}
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(root, "sweep", "c__s0"), "holds no finished run"},
		{filepath.Join(root, "absent"), "does not exist"},
		{filepath.Join(a, "results.json"), "is not a directory"},
		{root, "holds no finished run"}, // runs three levels down are not looked for
	} {
		if _, err := FindFinishedRuns(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FindFinishedRuns(%s): %v, want %q", c.path, err, c.want)
		}
	}
}
