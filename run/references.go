package run

import (
	"context"
	"math/rand/v2"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/sac"
)

// ReferenceMeasurement is how koopq measures the normalized-score anchors of
// an environment without D4RL constants: the mean return of a uniform-random
// policy, and of a SAC expert trained online with default settings.
type ReferenceMeasurement struct {
	Env        string      `json:"env"`
	Random     eval.Result `json:"random"`
	Expert     eval.Result `json:"expert"`
	SACSteps   int         `json:"sac_steps"`
	SACHidden  []int       `json:"sac_hidden"`
	Seed       uint64      `json:"seed"`
	Provenance Provenance  `json:"provenance"`
}

// MeasureReferences evaluates a uniform-random policy and a SAC expert
// (trained for sacSteps env steps with sac.DefaultConfig and hidden layer
// widths hidden, nil for the default 256,256) over episodes deterministic
// episodes each.
func MeasureReferences(ctx context.Context, name string, sacSteps, episodes int, hidden []int, seed uint64) (*ReferenceMeasurement, error) {
	e, err := env.Make(name)
	if err != nil {
		return nil, err
	}
	cfg := sac.DefaultConfig(sacSteps)
	cfg.Seed = seed
	if hidden != nil {
		cfg.Net.Hidden = hidden
	}
	if err := cfg.Net.Validate(); err != nil {
		return nil, err
	}
	m := &ReferenceMeasurement{Env: name, SACSteps: sacSteps, SACHidden: cfg.Net.Hidden, Seed: seed, Provenance: CurrentProvenance()}
	space := e.ActionSpace()
	k := uint64(0)
	m.Random, err = eval.Evaluate(name, func() eval.Policy {
		k++
		return &eval.RandomPolicy{Space: space, Rng: rand.New(rand.NewPCG(seed, k))}
	}, episodes, seed, 1)
	if err != nil {
		return nil, err
	}
	ag, _, err := sac.Train(ctx, cfg, e, 0, nil)
	if err != nil {
		return nil, err
	}
	scale, _ := sac.Scale(e)
	pol := sac.NewPolicy(ag.Actor, nil, scale)
	m.Expert, err = eval.Evaluate(name, func() eval.Policy { return pol.Clone() }, episodes, seed+1, 2)
	return m, err
}
