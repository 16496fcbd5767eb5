package sweep

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Slots of runs the spec no longer has (a renamed method) are orphans;
// the spec's own slots and directories that are not slots are not.
func TestOrphans(t *testing.T) {
	out := t.TempDir()
	runs := []Run{{Name: "d__CQL__s0"}, {Name: "d__KFC__s0"}}
	for _, n := range []string{"d__CQL__s0", "d__KFC__s0", "d__OldName__s0", "d__OldName__s1"} {
		if err := os.MkdirAll(filepath.Join(out, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, n, "sweep-run.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(out, "report"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := Orphans(out, runs), []string{"d__OldName__s0", "d__OldName__s1"}; !slices.Equal(got, want) {
		t.Fatalf("Orphans = %v, want %v", got, want)
	}
	if got := Orphans(filepath.Join(out, "missing"), runs); got != nil {
		t.Fatalf("missing dir: %v", got)
	}
}
