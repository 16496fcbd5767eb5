package run

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/sac"
)

// TestCheckPolicyEnv: a saved policy is accepted by the env it was trained
// on and refused, with the reason, by any env whose name, observation or
// action size or action bounds differ (these used to panic in Act or run
// with garbage inputs).
func TestCheckPolicyEnv(t *testing.T) {
	net := sac.NetConfig{Hidden: []int{4}, Init: "xavier"}
	save := func(name, envName string, obs, act int, scale sac.ActionScale) string {
		p := filepath.Join(t.TempDir(), name)
		actor := sac.NewActor(net, obs, act, rand.New(rand.NewPCG(1, 2)))
		if err := sac.SavePolicy(p, sac.NewPolicy(actor, dataset.Identity(obs), scale), net, envName, nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pend, err := env.Make("pendulum")
	if err != nil {
		t.Fatal(err)
	}
	scale, err := sac.Scale(pend)
	if err != nil {
		t.Fatal(err)
	}
	unit := sac.ActionScale{Low: []float32{-1}, High: []float32{1}}
	for _, c := range []struct {
		name, recorded string
		obs, act       int
		scale          sac.ActionScale
		env            string
		want           string // "" = accepted
	}{
		{"fits", "pendulum", 3, 1, scale, "pendulum", ""},
		{"fits-unrecorded", "", 3, 1, scale, "pendulum", ""},
		{"other-env", "pendulum", 3, 1, scale, "mountaincar-continuous", `trained on "pendulum"`},
		{"obs-dim", "", 3, 1, scale, "mountaincar-continuous", "3-dimensional observations"},
		{"act-dim", "", 3, 2, sac.ActionScale{Low: []float32{-2, -2}, High: []float32{2, 2}}, "pendulum", "2-dimensional actions"},
		{"bounds", "", 3, 1, unit, "pendulum", "[-1, 1]"},
		{"discrete", "", 4, 1, unit, "cartpole", "discrete"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := save(c.name+".safetensors", c.recorded, c.obs, c.act, c.scale)
			p, meta, err := sac.ReadPolicy(path)
			recorded := meta["env"]
			if err != nil {
				t.Fatal(err)
			}
			e, err := env.Make(c.env)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckPolicyEnv(path, p, recorded, c.env, e)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path)):
				t.Errorf("got %v, want an error naming %s and containing %q", err, path, c.want)
			}
		})
	}
}
