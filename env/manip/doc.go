// Package manip provides table-top manipulation environments in the style
// of MetaWorld v2: a Sawyer-like 7-DoF arm whose hand is dragged by a mocap
// body through a weld constraint, a two-finger gripper, a table, and task
// objects. The tasks are "metaworld-push-v2" (push a puck to a goal),
// "metaworld-door-close-v2" (swing an open hinged door shut),
// "metaworld-drawer-close-v2" (push a pulled-out drawer shut) and
// "metaworld-drawer-open-v2" (pull a closed drawer fully open). Each task
// supplies its scene fragment, reset placement, first object slot, dense
// reward and success test (objects.go); each has a scripted controller
// (ScriptedPolicy).
//
// What matches MetaWorld v2 (see docs/manipulation.md for sources): the
// 4-D action in [-1, 1] (hand position delta of action[:3]·ActionScale
// metres per step, clipped to the task's hand bounds, and a gripper command
// applied as position-actuator targets (+a, −a) on the two finger slides);
// the 39-D observation (hand position, normalised finger distance, two
// object slots of position + quaternion, the previous frame's copy of those
// 18 numbers, and the goal); the simulation settings (timestep 0.0025 s,
// frame skip 5, Newton solver, elliptic cones); the table, puck and finger
// geometry; push-v2's object and goal ranges, dense reward and success
// test; the door's and drawer's joints, collision shapes and masses, their
// tasks' object ranges, goal offsets, handle observations, rewards and
// success tests; and the 500-step episodes that never terminate early.
//
// What is simplified: the arm links carry the published Sawyer link offsets,
// joint axes, ranges and masses but no collision or visual geometry, and
// their inertias are diagonal in the link frame; meshes are replaced by
// boxes and cylinders; the previous-frame copy equals the current frame
// right after Reset (as in current MetaWorld); a fixture's base (the safe,
// the drawer case) is a mocap body that Reset places, its moving part does
// not collide with its own case, the door handle is observed where its
// geom is declared (the mesh's centroid shift is unknown), and visual
// meshes are dropped. docs/manipulation.md lists every departure.
//
// Importing the package registers the environments with env.Register.
//
// # Build
//
// Like env/mujoco, the environments need cgo and MuJoCo 2.2.2 and build by
// default. With -tags nomujoco (or CGO_ENABLED=0) the same names are
// registered but their factories return ErrNoMuJoCo; New fails the same
// way and Env is an inert placeholder. The arm table, the MJCF generator and
// the reward functions are pure Go and available in both builds.
package manip
