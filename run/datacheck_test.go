package run

import "testing"

// Labels recorded by koopq, D4RL, Gym and Minari map to koopq's env names;
// longer names win over their prefixes; unknown labels map to "".
func TestEnvOfLabel(t *testing.T) {
	for label, want := range map[string]string{
		"hopper": "hopper", "Hopper-v3": "hopper", "hopper-medium-v2": "hopper", "mujoco/hopper/medium-v0": "hopper",
		"halfcheetah_medium_replay": "halfcheetah", "cartpole-continuous-v0": "cartpole-continuous", "cartpole": "cartpole",
		"antmaze-umaze-diverse-v2": "antmaze-umaze-diverse-v2", "ant-medium-v2": "ant", "Pendulum-v1": "pendulum",
		"gym_foo": "", "": "", "antmaze-umaze-v0": "",
	} {
		if got := EnvOfLabel(label); got != want {
			t.Errorf("EnvOfLabel(%q) = %q, want %q", label, got, want)
		}
	}
}
