package run

import (
	"strings"
	"testing"

	"github.com/koopq/koopq/internal/fingerprint"
)

// A moved dataset or model is accepted only where the run recorded what it
// read: without a recorded content sha256 (a run from before inputs.json)
// or model fingerprint the move cannot be checked and is refused.
func TestRelocationsNeedRecordedFingerprints(t *testing.T) {
	rec := TrainConfig{Data: "/a/d.hdf5", KoopmanModel: "/a/m.safetensors", Augment: "kfc++"}
	next := rec
	next.Data, next.KoopmanModel = "/b/d.hdf5", "/b/m.safetensors"
	model := &fingerprint.File{Path: "/b/m.safetensors", SHA256: strings.Repeat("ab", 32)}
	now := Inputs{Dataset: DatasetInput{Path: "/b/d.hdf5", ContentSHA256: strings.Repeat("cd", 32), Transitions: 7}, KoopmanModel: model}
	if m, err := Relocations(rec, rec, nil, now); err != nil || len(m) != 0 {
		t.Fatalf("nothing moved: %v, %v", m, err)
	}
	if _, err := Relocations(rec, next, nil, now); err == nil || !strings.Contains(err.Error(), "recorded no content sha256") {
		t.Fatalf("no inputs.json: %v", err)
	}
	withData := &Inputs{Dataset: now.Dataset}
	if _, err := Relocations(rec, next, withData, now); err == nil || !strings.Contains(err.Error(), "recorded no sha256 of the Koopman model") {
		t.Fatalf("no model fingerprint: %v", err)
	}
	full := &Inputs{Dataset: now.Dataset, KoopmanModel: model}
	m, err := Relocations(rec, next, full, now)
	if err != nil || len(m) != 2 || m[0] != "dataset moved: /a/d.hdf5 → /b/d.hdf5 (the same 7 transitions, content sha256 "+strings.Repeat("cd", 6)+")" {
		t.Fatalf("verifiable move: %q, %v", m, err)
	}
	otherData := *full
	otherData.Dataset.ContentSHA256 = strings.Repeat("ef", 32)
	if _, err := Relocations(rec, next, &otherData, now); err == nil || !strings.Contains(err.Error(), "--data /b/d.hdf5 holds other transitions than the run read at /a/d.hdf5") {
		t.Fatalf("other transitions at the new path: %v", err)
	}
	otherModel := *full
	otherModel.KoopmanModel = &fingerprint.File{SHA256: strings.Repeat("01", 32)}
	if _, err := Relocations(rec, next, &otherModel, now); err == nil || !strings.Contains(err.Error(), "--koopman /b/m.safetensors is another model") {
		t.Fatalf("another model at the new path: %v", err)
	}
	unused := rec
	unused.Augment = "none"
	unusedNext := next
	unusedNext.Augment = "none"
	if m, err := Relocations(unused, unusedNext, withData, now); err != nil || len(m) != 1 {
		t.Fatalf("an unused model's move: %q, %v", m, err)
	}
	// A run that trained its own model and is now given one is a
	// settings change, not a move.
	own := rec
	own.KoopmanModel = ""
	if err := CheckResume(own, next); err == nil || !strings.Contains(err.Error(), "koopman_model") {
		t.Fatalf("given a model instead of its own: %v", err)
	}
	if err := CheckResume(rec, next); err != nil {
		t.Fatalf("moved paths: %v", err)
	}
}
