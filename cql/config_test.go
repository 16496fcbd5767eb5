package cql

import (
	"math"
	"strings"
	"testing"
)

// Validate rejects each bad field with an error naming it and accepts the
// edge values that are allowed (γ = 0, τ = 1, zero steps, BC and reward
// episode steps, every actor_init spelling).
func TestConfigValidateEdges(t *testing.T) {
	ok := []func(*Config){
		func(c *Config) { c.Gamma = 0 },
		func(c *Config) { c.Tau = 1 },
		func(c *Config) { c.Steps, c.BCSteps, c.RewardEpisodeSteps = 0, 0, 0 },
		func(c *Config) { c.Batch, c.NumActions = 1, 1 },
		func(c *Config) { c.ActorInit = "" },
		func(c *Config) { c.ActorInit = "net" },
		func(c *Config) { c.ActorInit = "torch" },
		func(c *Config) { c.LogStdOffset = -1 },
	}
	for i, f := range ok {
		c := smallConfig(1)
		f(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("valid config %d rejected: %v", i, err)
		}
	}
	bad := []struct {
		want string
		f    func(*Config)
	}{
		{"batch", func(c *Config) { c.Batch = 0 }},
		{"num_actions", func(c *Config) { c.NumActions = 0 }},
		{"gamma", func(c *Config) { c.Gamma = -0.01 }},
		{"gamma", func(c *Config) { c.Gamma = 1 }},
		{"tau", func(c *Config) { c.Tau = 0 }},
		{"tau", func(c *Config) { c.Tau = 1.01 }},
		{"learning rates", func(c *Config) { c.LRActor = 0 }},
		{"learning rates", func(c *Config) { c.LRCritic = 0 }},
		{"learning rates", func(c *Config) { c.LRAlphaPrime = 0 }},
		{"temp", func(c *Config) { c.Temp = 0 }},
		{"alpha", func(c *Config) { c.Alpha = 0 }},
		{"steps", func(c *Config) { c.Steps = -1 }},
		{"steps", func(c *Config) { c.BCSteps = -1 }},
		{"actor_init", func(c *Config) { c.ActorInit = "xavier" }},
		{"log_std_offset", func(c *Config) { c.LogStdOffset = math.NaN() }},
		{"log_std_offset", func(c *Config) { c.LogStdOffset = math.Inf(-1) }},
		{"reward_episode_steps", func(c *Config) { c.RewardEpisodeSteps = -1 }},
		{"hidden", func(c *Config) { c.Net.Hidden = nil }},
	}
	for _, b := range bad {
		c := smallConfig(1)
		b.f(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("config with bad %s: error %v", b.want, err)
		}
	}
}
