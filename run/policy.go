package run

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// SavePolicy writes a deployable policy (actor weights, network config,
// state normalizer, action scale, env name) atomically to path.
func SavePolicy(path string, p *sac.Policy, net sac.NetConfig, envName string, extra map[string]string) error {
	nc, _ := json.Marshal(net)
	nm, _ := json.Marshal(p.Norm)
	sc, _ := json.Marshal(p.Scale)
	meta := map[string]string{"koopq.kind": "policy", "net": string(nc), "normalizer": string(nm), "scale": string(sc),
		"env": envName, "obs_dim": strconv.Itoa(p.Actor.In()), "act_dim": strconv.Itoa(p.ActDim)}
	for k, v := range extra {
		meta[k] = v
	}
	return nn.SaveSafetensors(path, p.Actor.Params(), meta)
}

// LoadPolicy reads a policy written by SavePolicy and returns it with its
// env name.
func LoadPolicy(path string) (*sac.Policy, string, error) {
	ts, meta, err := nn.LoadSafetensors(path)
	if err != nil {
		return nil, "", err
	}
	if meta["koopq.kind"] != "policy" {
		return nil, "", fmt.Errorf("%s is not a koopq policy file (kind %q)", path, meta["koopq.kind"])
	}
	var net sac.NetConfig
	var scale sac.ActionScale
	norm := &dataset.Normalizer{}
	if err := json.Unmarshal([]byte(meta["net"]), &net); err != nil {
		return nil, "", fmt.Errorf("%s: bad net config: %w", path, err)
	}
	if err := json.Unmarshal([]byte(meta["scale"]), &scale); err != nil {
		return nil, "", fmt.Errorf("%s: bad action scale: %w", path, err)
	}
	if err := json.Unmarshal([]byte(meta["normalizer"]), norm); err != nil {
		return nil, "", fmt.Errorf("%s: bad normalizer: %w", path, err)
	}
	obs, err1 := strconv.Atoi(meta["obs_dim"])
	act, err2 := strconv.Atoi(meta["act_dim"])
	if err1 != nil || err2 != nil || obs <= 0 || act <= 0 {
		return nil, "", fmt.Errorf("%s: bad dimensions %q/%q", path, meta["obs_dim"], meta["act_dim"])
	}
	if err := net.Validate(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if err := norm.Validate(obs); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if len(scale.Low) != act || len(scale.High) != act {
		return nil, "", fmt.Errorf("%s: action scale has %d dims, actor %d", path, len(scale.Low), act)
	}
	actor := sac.NewActor(net, obs, act, rand.New(rand.NewPCG(0, 0)))
	if err := nn.AssignParams(actor.Params(), ts); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return sac.NewPolicy(actor, norm, scale), meta["env"], nil
}

// CheckPolicyEnv reports, before any rollout, whether the policy p loaded
// from path (whose file records it was trained on recorded, "" if unknown)
// can act in e, made from the registry name envName: the recorded env must
// be envName, the actor's input width must be e's observation dimension,
// and e must have a continuous action space of the policy's action
// dimension with the bounds the policy scales its actions to. A policy
// that passes cannot index out of range in Act.
func CheckPolicyEnv(path string, p *sac.Policy, recorded, envName string, e env.Env) error {
	if recorded != "" && recorded != envName {
		return fmt.Errorf("policy %s was trained on %q, not on --env %q (omit --env to use the recorded one)", path, recorded, envName)
	}
	obs := e.ObservationSpace().Dim()
	if p.Actor.In() != obs {
		return fmt.Errorf("policy %s takes %d-dimensional observations, env %s has %d", path, p.Actor.In(), envName, obs)
	}
	sp := e.ActionSpace()
	if sp.Discrete > 0 {
		return fmt.Errorf("env %s has a discrete action space; policy %s outputs %d continuous actions", envName, path, p.ActDim)
	}
	if p.ActDim != sp.Dim() {
		return fmt.Errorf("policy %s outputs %d-dimensional actions, env %s takes %d", path, p.ActDim, envName, sp.Dim())
	}
	want, err := sac.Scale(e)
	if err != nil {
		return err
	}
	for i := range want.Low {
		if p.Scale.Low[i] != want.Low[i] || p.Scale.High[i] != want.High[i] {
			return fmt.Errorf("policy %s scales action %d to [%g, %g], env %s's bounds are [%g, %g]",
				path, i, p.Scale.Low[i], p.Scale.High[i], envName, want.Low[i], want.High[i])
		}
	}
	return nil
}
