package sac

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/nn"
)

// TestReadPolicyRoundTripAndBadMetadata: a written policy reads back and
// acts as the original; a file whose recorded dimensions are zero,
// negative or not numbers is refused as "bad dimensions" (not later, by a
// shape error), and so is one of another kind or with a mismatched action
// scale.
func TestReadPolicyRoundTripAndBadMetadata(t *testing.T) {
	dir := t.TempDir()
	cfg := NetConfig{Hidden: []int{8}, Init: "xavier"}
	actor := NewActor(cfg, 3, 2, rand.New(rand.NewPCG(1, 1)))
	scale := ActionScale{Low: []float32{-1, 0}, High: []float32{1, 2}}
	good := filepath.Join(dir, "p.safetensors")
	if err := WritePolicy(good, actor, cfg, scale, "test", nil); err != nil {
		t.Fatal(err)
	}
	p, meta, err := ReadPolicy(good)
	if err != nil {
		t.Fatal(err)
	}
	if meta["obs_dim"] != "3" || meta["act_dim"] != "2" || p.Actor.In() != 3 || p.Actor.Out() != 4 {
		t.Fatalf("read back: meta %v, actor %d→%d", meta, p.Actor.In(), p.Actor.Out())
	}
	_, base, err := nn.LoadSafetensors(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, value, want string
	}{
		{"obs_dim", "0", "bad dimensions"}, {"act_dim", "0", "bad dimensions"}, {"obs_dim", "-3", "bad dimensions"},
		{"act_dim", "two", "bad dimensions"}, {"koopq.kind", "koopman", "not a koopq policy"},
		{"scale", `{"low":[-1],"high":[1]}`, "action scale has 1 dims"},
	} {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		m[c.key] = c.value
		path := filepath.Join(dir, c.key+c.value+".safetensors")
		if err := nn.SaveSafetensors(path, actor.Params(), m); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadPolicy(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: err = %v, want one saying %q", c.key, c.value, err, c.want)
		}
	}
}

// TestReadPolicyBytesNamesTheFile: a policy read from memory that turns out
// bad is reported under the name the caller gave (the file the user named),
// not the temporary file it passed through.
func TestReadPolicyBytesNamesTheFile(t *testing.T) {
	for _, b := range [][]byte{[]byte("hello\n"), {}, make([]byte, 64)} {
		_, _, err := ReadPolicyBytes("/some/dir/mine.safetensors", b)
		if err == nil {
			t.Fatalf("%q read as a policy", b)
		}
		if msg := err.Error(); !strings.Contains(msg, "/some/dir/mine.safetensors") || strings.Contains(msg, "koopq-policy-") {
			t.Errorf("%q: error %q should name /some/dir/mine.safetensors and not the temporary file", b, msg)
		}
	}
}
