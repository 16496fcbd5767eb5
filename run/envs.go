package run

// The simulators register themselves with env on import; run resolves env
// names (EnvOfLabel, the evaluation envs of Train and Demo), so it imports
// both families for every program that uses it.
import (
	_ "github.com/koopq/koopq/env/classic" // registers pendulum etc.
	_ "github.com/koopq/koopq/env/mujoco"  // registers hopper etc.
)
