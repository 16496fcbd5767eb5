package policies

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLookupChecksHash(t *testing.T) {
	body := []byte("weights")
	sum := sha256.Sum256(body)
	good := hex.EncodeToString(sum[:])
	fsys := fstest.MapFS{
		"data/manifest.json": {Data: []byte(`[{"env":"hopper","role":"medium","file":"hopper-medium.safetensors","sha256":"` + good + `"},
			{"env":"hopper","role":"expert","file":"hopper-expert.safetensors","sha256":"00"}]`)},
		"data/hopper-medium.safetensors": {Data: body},
		"data/hopper-expert.safetensors": {Data: body},
	}
	if _, b, err := lookupIn(fsys, "hopper", "medium"); err != nil || string(b) != "weights" {
		t.Fatalf("medium: %q, %v", b, err)
	}
	if _, _, err := lookupIn(fsys, "hopper", "expert"); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("a file with the wrong hash was accepted: %v", err)
	}
	if _, _, err := lookupIn(fsys, "walker2d", "medium"); err == nil || !strings.Contains(err.Error(), "hopper-medium") {
		t.Fatalf("missing policy: %v (want the list of committed ones)", err)
	}
}

// Every committed policy matches its manifest hash.
func TestCommittedPolicies(t *testing.T) {
	es, err := Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if _, _, err := Lookup(e.Env, e.Role); err != nil {
			t.Error(err)
		}
		if e.SACSteps <= 0 || e.SHA256 == "" || e.Made == "" {
			t.Errorf("%s-%s: incomplete manifest entry %+v", e.Env, e.Role, e)
		}
	}
}
