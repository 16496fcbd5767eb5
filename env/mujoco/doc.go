// Package mujoco provides the MuJoCo locomotion environments Hopper, Walker2d,
// HalfCheetah and Ant with the semantics of Gym v3 at default settings, which
// equal those of the Gym v2 classes that D4RL's "-v2" datasets were recorded
// with: observations without the x position, forward-velocity rewards,
// healthy-state termination, reset noise and a 1000-step time limit. Actions
// are clipped to [-1, 1] before use (as D4RL's wrapper does), and the Ant's
// contact-force observations are zero (mj_rnePostConstraint is not called,
// as under mujoco-py), unless Options.ContactForces is set.
//
// The robots are Go parameter tables (Hopper, Walker2d, HalfCheetah, Ant)
// that generate MJCF. By default capsule masses and inertias follow MuJoCo
// <= 2.1.0 (mujoco-py, D4RL) rather than MuJoCo 2.2.2's exact formula; see
// ModelOptions.ExactCapsuleInertia.
//
// Importing the package registers "hopper", "walker2d", "halfcheetah" and
// "ant" with env.Register.
//
// # Build
//
// The environments need cgo and MuJoCo 2.2.2 (Debian: apt-get install
// libmujoco-dev) and build by default. Build with -tags nomujoco (or with
// CGO_ENABLED=0) on machines without the library: the same names are then
// registered, but their factories return an error ("koopq was built without
// MuJoCo: install libmujoco-dev and rebuild without -tags nomujoco",
// ErrNoMuJoCo). New fails the same way, and Env is an inert placeholder with
// the same methods, so code using the concrete type needs no build tags. The
// robot tables and MJCF generator are pure Go and available in both builds.
package mujoco
