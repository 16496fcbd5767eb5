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

// WritePolicy saves actor as a deployable policy file (safetensors: actor
// weights; metadata koopq.kind=policy, net, normalizer, scale, env, obs_dim,
// act_dim, plus extra), the format `koopq eval --policy` reads. SAC actors
// see raw observations, so the normalizer written is the identity. The file
// is written atomically.
func WritePolicy(path string, actor *nn.MLP, net NetConfig, scale ActionScale, envName string, extra map[string]string) error {
	nc, _ := json.Marshal(net)
	nm, _ := json.Marshal(dataset.Identity(actor.In()))
	sc, _ := json.Marshal(scale)
	meta := map[string]string{"koopq.kind": "policy", "net": string(nc), "normalizer": string(nm), "scale": string(sc),
		"env": envName, "obs_dim": strconv.Itoa(actor.In()), "act_dim": strconv.Itoa(actor.Out() / 2)}
	for k, v := range extra {
		meta[k] = v
	}
	return nn.SaveSafetensors(path, actor.Params(), meta)
}

// ReadPolicy loads a policy file written by WritePolicy (or koopq's
// run.SavePolicy) and returns the policy and the file's metadata.
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
