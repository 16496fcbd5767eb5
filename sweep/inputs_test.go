package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const prepSpec = `name: prep
datasets:
  - {name: pm, env: pendulum, data: data/pendulum-medium.hdf5, collect: {sac-steps: 600, transitions: 2000},
     koopman: {model: models/pm.safetensors, epochs: 5}}
methods:
  - {name: CQL, augment: none}
  - {name: KFC++, augment: kfc++}
seeds: [0]
steps: 100
`

func parsePrep(t *testing.T, text string) (*Spec, []Run) {
	t.Helper()
	s, runs, err := Parse([]byte(text), Checker{})
	if err != nil {
		t.Fatal(err)
	}
	return s, runs
}

// Editing a dataset's collect: or koopman: block changes the identity of
// the runs that depend on it, so a sweep directory refuses them as a
// changed spec instead of keeping them "done" on stale data.
func TestEditedPrepBlocksChangeRunIdentity(t *testing.T) {
	out := t.TempDir()
	_, runs := parsePrep(t, prepSpec)
	for _, r := range runs {
		if r.Prep == "" {
			t.Fatalf("run %s has no prep digest", r.Name)
		}
		if err := os.MkdirAll(SlotDir(out, r), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := checkIdentity(SlotDir(out, r), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckIdentities(out, runs); err != nil {
		t.Fatalf("unchanged spec refused: %v", err)
	}
	_, more := parsePrep(t, strings.Replace(prepSpec, "transitions: 2000", "transitions: 4000", 1))
	err := CheckIdentities(out, more)
	if err == nil || !strings.Contains(err.Error(), "pm__cql__s0") || !strings.Contains(err.Error(), "pm__kfcpp__s0") {
		t.Fatalf("changed collect block: %v, want both runs refused", err)
	}
	_, epochs := parsePrep(t, strings.Replace(prepSpec, "epochs: 5", "epochs: 400", 1))
	err = CheckIdentities(out, epochs)
	if err == nil || strings.Contains(err.Error(), "pm__cql__s0") || !strings.Contains(err.Error(), "pm__kfcpp__s0") {
		t.Fatalf("changed koopman block: %v, want only the run using the model refused", err)
	}
	// A sweep-run.json from before the digest existed is not compared on it.
	old := runs[0]
	old.Prep = ""
	slot := filepath.Join(out, "legacy")
	if err := os.MkdirAll(slot, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkIdentity(slot, old); err != nil {
		t.Fatal(err)
	}
	if _, err := compareIdentity(slot, more[0]); err != nil {
		t.Fatalf("legacy record refused for the digest: %v", err)
	}
}

// A prepared file records the block that made it; a changed block, or a
// file changed since, is refused by name; a file found without a record is
// adopted.
func TestCheckPreparedFiles(t *testing.T) {
	root := t.TempDir()
	s, runs := parsePrep(t, prepSpec)
	data := filepath.Join(root, "data", "pendulum-medium.hdf5")
	if err := os.MkdirAll(filepath.Dir(data), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkPrepared(s, runs, root); len(f) != 0 {
		t.Fatalf("adopting: %v", f)
	}
	var m Made
	if err := readJSON(data+MadeSuffix, &m); err != nil || !m.Adopted || m.Block != madeBlock(s.Datasets[0], PrepCollect) {
		t.Fatalf("record %+v, %v", m, err)
	}
	s2, runs2 := parsePrep(t, strings.Replace(prepSpec, "transitions: 2000", "transitions: 4000", 1))
	if f := checkPrepared(s2, runs2, root); f["pm"] == nil || !strings.Contains(f["pm"].Error(), "collect: block changed") {
		t.Fatalf("changed block: %v", f)
	}
	if err := os.WriteFile(data, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkPrepared(s, runs, root); f["pm"] == nil || !strings.Contains(f["pm"].Error(), "changed since the sweep made it") {
		t.Fatalf("changed file: %v", f)
	}
}
