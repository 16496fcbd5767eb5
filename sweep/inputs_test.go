package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/rundir"
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

// foundData writes prepSpec's dataset file under root as if made by hand
// (no record of the sweep's making) and returns its path.
func foundData(t *testing.T, root string) string {
	t.Helper()
	data := filepath.Join(root, "data", "pendulum-medium.hdf5")
	if err := os.MkdirAll(filepath.Dir(data), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// A prepared file records the block that made it; a changed block, or a
// file changed since, is refused by name; a file found without a record is
// adopted, and the sweep says so (it adopted silently, and a later change
// was called a change "since the sweep made it").
func TestCheckPreparedFiles(t *testing.T) {
	root := t.TempDir()
	s, runs := parsePrep(t, prepSpec)
	data := foundData(t, root)
	var said strings.Builder
	if f := checkPrepared(s, runs, root, nil, &said); len(f) != 0 {
		t.Fatalf("adopting: %v", f)
	}
	if !strings.Contains(said.String(), "adopt   dataset pm: "+data+" was already there, not made by this sweep") {
		t.Errorf("adoption not announced: %q", said.String())
	}
	said.Reset()
	if f := checkPrepared(s, runs, root, nil, &said); len(f) != 0 || said.Len() != 0 {
		t.Errorf("second check: %v, said %q; want silence", f, said.String())
	}
	var m Made
	if err := readJSON(data+MadeSuffix, &m); err != nil || !m.Adopted || m.Block != madeBlock(s.Datasets[0], PrepCollect) {
		t.Fatalf("record %+v, %v", m, err)
	}
	s2, runs2 := parsePrep(t, strings.Replace(prepSpec, "transitions: 2000", "transitions: 4000", 1))
	if f := checkPrepared(s2, runs2, root, nil, nil); f["pm"] == nil || !strings.Contains(f["pm"].Error(), "collect: block changed") {
		t.Fatalf("changed block: %v", f)
	}
	if err := os.WriteFile(data, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkPrepared(s, runs, root, nil, nil); f["pm"] == nil || !strings.Contains(f["pm"].Error(), "changed since the sweep first used it (it was there already") {
		t.Fatalf("changed file: %v", f)
	}
}

// startRun writes the inputs.json and config.json that a run of r started
// on data (file sha256 fileSHA, transitions content) would have written.
func startRun(t *testing.T, out string, r Run, data, fileSHA, content string, model *fingerprint.File) {
	t.Helper()
	dir := filepath.Join(SlotDir(out, r), "run-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := rundir.Inputs{Dataset: rundir.DatasetInput{Path: data, SHA256: fileSHA, ContentSHA256: content, Transitions: 2000},
		KoopmanModel: model}
	for name, v := range map[string]any{rundir.InputsFile: in, rundir.ConfigFile: map[string]any{
		"data": data, "read_options": map[string]any{"drop_invalid": false}}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A sweep continued where its .sweep record is gone (another machine, run
// files from git) still checks its data against what its started runs
// recorded: other transitions are refused by run; the same transitions in
// other bytes pass, the file read once; a changed shared model is refused.
func TestCheckInputsAgainstStartedRuns(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	_, runs := parsePrep(t, prepSpec)
	data, model := filepath.Join(root, "data", "pendulum-medium.hdf5"), filepath.Join(root, "models", "pm.safetensors")
	for p, text := range map[string]string{data: "the bytes the runs read", model: "model v1"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := fingerprint.Of(data)
	if err != nil {
		t.Fatal(err)
	}
	m, err := fingerprint.Of(model)
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, out, runs[0], data, f.SHA256, "content-A", nil)
	startRun(t, out, runs[1], data, f.SHA256, "content-A", &m)
	reads := 0
	content := map[string]string{}
	read := func(path string, ro json.RawMessage) (string, error) {
		reads++
		if !strings.Contains(string(ro), "drop_invalid") {
			t.Errorf("read options not passed: %s", ro)
		}
		return content[path], nil
	}
	selected := runs
	check := func() error {
		t.Helper()
		failed, err := CheckInputs(out, selected, runs, root, read)
		if err != nil {
			t.Fatal(err)
		}
		return failed["pm"]
	}
	// The same bytes: no read.
	if err := check(); err != nil || reads != 0 {
		t.Fatalf("same file: %v after %d reads", err, reads)
	}
	if err := os.RemoveAll(filepath.Join(out, ".sweep")); err != nil {
		t.Fatal(err)
	}
	// Other bytes, the same transitions: read once for both runs, passes.
	if err := os.WriteFile(data, []byte("regenerated by another koopq"), 0o644); err != nil {
		t.Fatal(err)
	}
	content[data] = "content-A"
	if err := check(); err != nil || reads != 1 {
		t.Fatalf("same transitions in other bytes: %v after %d reads, want nil after 1", err, reads)
	}
	// Other transitions: refused, naming the run, also with the record gone
	// and when the run that started on other data is not selected now.
	content[data] = "content-B"
	selected = runs[1:]
	for _, drop := range []bool{false, true} {
		if drop {
			if err := os.RemoveAll(filepath.Join(out, ".sweep")); err != nil {
				t.Fatal(err)
			}
		}
		err := check()
		if err == nil || !strings.Contains(err.Error(), "run pm__cql__s0 trained on") || !strings.Contains(err.Error(), "other transitions") {
			t.Fatalf("other transitions (record dropped %v): %v", drop, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, ".sweep", InputsFile)); !os.IsNotExist(err) {
		t.Fatalf("a refused check wrote the record: %v", err)
	}
	// The model the KFC++ run used was replaced: refused by run.
	content[data], selected = "content-A", runs
	if err := os.WriteFile(model, []byte("model v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := check(); err == nil || !strings.Contains(err.Error(), "run pm__kfcpp__s0 used the Koopman model") {
		t.Fatalf("replaced model: %v", err)
	}
}

// A file found without a record is adopted only when the AdoptCheck finds
// it is what the block makes: a refused file gets no record (the next
// sweep checks it again) and its dataset fails; an accepted one is
// announced with what was checked.
func TestCheckPreparedAsksTheAdoptCheck(t *testing.T) {
	root := t.TempDir()
	s, runs := parsePrep(t, prepSpec)
	data := foundData(t, root)
	var asked []string
	refuse := func(kind string, d Dataset, file, dataPath string) (string, error) {
		asked = append(asked, kind+" "+d.Name+" "+file+" "+dataPath)
		return "", fmt.Errorf("--seed 1 in the file, 0 from the block")
	}
	var said strings.Builder
	f := checkPrepared(s, runs, root, refuse, &said)
	want := "dataset pm: " + data + " was already there, not made by this sweep, and is not what the spec's collect: block makes: --seed 1 in the file, 0 from the block"
	if f["pm"] == nil || !strings.Contains(f["pm"].Error(), want) || said.Len() != 0 {
		t.Fatalf("refused: %v, said %q; want %q", f, said.String(), want)
	}
	if len(asked) != 1 || asked[0] != PrepCollect+" pm "+data+" "+data {
		t.Errorf("asked %q", asked)
	}
	if _, err := os.Stat(data + MadeSuffix); err == nil {
		t.Fatal("a refused file was recorded as adopted")
	}
	accept := func(string, Dataset, string, string) (string, error) { return "dataset name, seed", nil }
	if f := checkPrepared(s, runs, root, accept, &said); len(f) != 0 ||
		!strings.Contains(said.String(), "would make, checked against it: dataset name, seed;") {
		t.Fatalf("accepted: %v, said %q", f, said.String())
	}
	if f := checkPrepared(s, runs, root, refuse, nil); len(f) != 0 {
		t.Errorf("a recorded file was checked again: %v", f)
	}
}

// A model found before its dataset was made was adopted without checking
// its training data (the data did not exist yet); now it waits for the
// collect step and is checked with the data there.
func TestPrepareChecksAFoundModelOnceItsDataIsMade(t *testing.T) {
	root := t.TempDir()
	s, runs := parsePrep(t, prepSpec)
	model := filepath.Join(root, "models", "pm.safetensors")
	if err := os.MkdirAll(filepath.Dir(model), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, []byte("found"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stand-in for koopq collect: writes the dataset into --out.
	fake := filepath.Join(root, "koopq")
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then : > \"$2/pendulum-medium.hdf5\"; fi; shift; done\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var asked []string
	fits := func(kind string, d Dataset, file, data string) (string, error) {
		_, err := os.Stat(data)
		asked = append(asked, fmt.Sprintf("%s data there: %v", kind, err == nil))
		return "", fmt.Errorf("trained on other transitions")
	}
	failed := Prepare(context.Background(), s, runs, root, fake, fits, nil)
	if f := failed["pm"]; f == nil || !strings.Contains(f.Error(), "is not what the spec's koopman: block makes: trained on other transitions") {
		t.Fatalf("prepare: %v", failed)
	}
	if want := []string{PrepKoopman + " data there: true"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if _, err := os.Stat(model + MadeSuffix); err == nil {
		t.Error("the refused model was recorded")
	}
}

// A file the check cannot read is said to be unreadable, not to differ
// from its block.
func TestCheckPreparedUnreadable(t *testing.T) {
	root := t.TempDir()
	s, runs := parsePrep(t, prepSpec)
	data := foundData(t, root)
	unreadable := func(string, Dataset, string, string) (string, error) {
		return "", &UnreadableError{Err: fmt.Errorf("checksum mismatch")}
	}
	f := checkPrepared(s, runs, root, unreadable, nil)
	if f["pm"] == nil || !strings.Contains(f["pm"].Error(), data+" was already there, not made by this sweep, and cannot be read: checksum mismatch") {
		t.Fatalf("unreadable: %v", f)
	}
}
