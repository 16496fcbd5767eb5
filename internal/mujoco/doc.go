// Package mujoco is a thin cgo binding to the MuJoCo 2.2.2 physics library
// (Debian's libmujoco-dev): load an MJCF model from memory, make simulation
// data, step with a frame skip, and read or write the state arrays koopq's
// locomotion environments need, plus what a torque controller reads between
// the two halves of a step (Step1, Step2): site Jacobians, the joint-space
// inertia matrix, bias forces and the contact list.
//
// The binding replaces MuJoCo's default message handlers, which print to
// stdout, append to MUJOCO_LOG.TXT and, for errors, wait on stdin before
// exiting the process. Warnings are recorded silently; an error raised inside
// a call made through this package unwinds back to that call (setjmp/longjmp
// in C) and is returned as a Go error. MuJoCo's silent reset of the state when
// qpos, qvel or qacc become NaN, infinite or larger than 1e10 is detected
// through its warning counters and returned as an error as well.
//
// Build: the implementation needs cgo, gcc and libmujoco-dev at build time
// (libmujoco2.2.2 at run time) and links with -lmujoco. Building with
// `-tags nomujoco` (or with CGO_ENABLED=0) leaves this package empty so that
// the rest of koopq builds on machines without the library; env/mujoco then
// registers stub environments that return a clear error.
//
// Memory: C memory is freed by Close or, failing that, when the Go value is
// garbage collected. Slices returned by the view methods (QPos, QVel, ...)
// alias C memory and are valid only while their Data is reachable and not
// closed. A Model is read-only after loading and may be shared by several
// goroutines, each with its own Data; a Data is not safe for concurrent use.
package mujoco
