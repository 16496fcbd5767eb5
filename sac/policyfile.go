package sac

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
)

// SavePolicy writes p as a deployable policy file, atomically: safetensors
// holding the actor's weights, with metadata koopq.kind=policy, net (the
// network config), normalizer (p's state normalizer), scale (p's action
// bounds), env, obs_dim, act_dim, plus extra. It is the format `koopq eval
// --policy`, `serve`, `export` and `fqe` read (docs/policy-format.md).
func SavePolicy(path string, p *Policy, net NetConfig, envName string, extra map[string]string) error {
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

// WritePolicy is SavePolicy for a SAC actor: SAC actors see raw
// observations, so the normalizer written is the identity.
func WritePolicy(path string, actor *nn.MLP, net NetConfig, scale ActionScale, envName string, extra map[string]string) error {
	return SavePolicy(path, NewPolicy(actor, dataset.Identity(actor.In()), scale), net, envName, extra)
}

// ReadPolicy loads a policy file written by SavePolicy and returns the
// policy and the file's metadata (meta["env"] is the env it was trained
// for, "" if unknown). A malformed file is an error naming what is wrong.
func ReadPolicy(path string) (*Policy, map[string]string, error) {
	ts, meta, err := nn.LoadSafetensors(path)
	if err != nil {
		return nil, nil, err
	}
	if meta["koopq.kind"] != "policy" {
		return nil, nil, fmt.Errorf("%s is not a koopq policy file (kind %q)", path, meta["koopq.kind"])
	}
	var net NetConfig
	var scale ActionScale
	norm := &dataset.Normalizer{}
	if err := json.Unmarshal([]byte(meta["net"]), &net); err != nil {
		return nil, nil, fmt.Errorf("%s: bad net config: %w", path, err)
	}
	if err := json.Unmarshal([]byte(meta["scale"]), &scale); err != nil {
		return nil, nil, fmt.Errorf("%s: bad action scale: %w", path, err)
	}
	if err := json.Unmarshal([]byte(meta["normalizer"]), norm); err != nil {
		return nil, nil, fmt.Errorf("%s: bad normalizer: %w", path, err)
	}
	obs, err1 := strconv.Atoi(meta["obs_dim"])
	act, err2 := strconv.Atoi(meta["act_dim"])
	if err1 != nil || err2 != nil || obs <= 0 || act <= 0 {
		return nil, nil, fmt.Errorf("%s: bad dimensions %q/%q", path, meta["obs_dim"], meta["act_dim"])
	}
	if err := net.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := norm.Validate(obs); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(scale.Low) != act || len(scale.High) != act {
		return nil, nil, fmt.Errorf("%s: action scale has %d dims, actor %d", path, len(scale.Low), act)
	}
	actor := NewActor(net, obs, act, rand.New(rand.NewPCG(0, 0)))
	if err := nn.AssignParams(actor.Params(), ts); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return NewPolicy(actor, norm, scale), meta, nil
}

// ReadPolicyBytes is ReadPolicy for a file held in memory (an embedded
// policy, or one read once to fingerprint it): it is written to a temporary
// file, read and removed. Errors name the file as name, never the temporary
// file.
func ReadPolicyBytes(name string, b []byte) (*Policy, map[string]string, error) {
	f, err := os.CreateTemp("", "koopq-policy-*.safetensors")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := f.Close(); err != nil {
		return nil, nil, err
	}
	p, meta, err := ReadPolicy(f.Name())
	if err != nil {
		return nil, nil, errors.New(strings.ReplaceAll(err.Error(), f.Name(), name))
	}
	return p, meta, nil
}
