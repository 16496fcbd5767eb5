package run

import (
	"fmt"

	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/sac"
)

// CheckPolicyEnv reports, before any rollout, whether the policy p loaded
// from path (whose file records it was trained on recorded, "" if unknown)
// can act in e, made from the registry name envName: the recorded env must
// be envName (unless the policy was trained without a simulator, EnvNone), the actor's input width must be e's observation dimension,
// and e must have a continuous action space of the policy's action
// dimension with the bounds the policy scales its actions to. A policy
// that passes cannot index out of range in Act.
func CheckPolicyEnv(path string, p *sac.Policy, recorded, envName string, e env.Env) error {
	if recorded != "" && recorded != EnvNone && recorded != envName {
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
