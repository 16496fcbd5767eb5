// Package panda provides table-top manipulation environments in the style
// of RoboSuite v1: a Franka Emika Panda-like 7-DoF arm with a parallel
// two-finger gripper on a table, its joints driven by torques from an
// operational-space controller. The tasks are "robosuite-lift"
// (RoboSuite's Lift: pick up a cube; OSC_POSITION, 4-D actions, the
// gripper held pointing down) and "robosuite-door" (RoboSuite's Door with
// latch: turn the handle and pull the door open; OSC_POSE, RoboSuite's
// default controller, 7-D actions that also rotate the gripper; see
// docs/robosuite.md §6).
//
// What matches RoboSuite (see docs/robosuite.md for every source): the
// arm's link frames, joint ranges, masses and inertias (panda/robot.xml,
// Franka's published ranges and torque limits), the initial joints and
// their Gaussian noise, the robot's place at the table, the table and cube
// sizes, the cube's placement range, the actions (Lift's 4-D: end-effector
// goal displacement of up to OutputMax = 0.05 m per step and a gripper
// command; Door's 7-D adds an axis-angle rotation of up to OutputMaxRot =
// 0.5 rad applied to the current orientation; the gripper command's
// normalised finger targets move 0.01 per 2 ms substep, so closing from
// fully open takes 8 steps), the
// controller (stiffness 150, critical damping, decoupled position and
// orientation Λ, gravity compensation, nullspace posture control with
// stiffness 10, torques recomputed every substep), 20 Hz control over a
// 0.002 s timestep with RoboSuite's contact options (impratio 20,
// elliptic cones), the dense Lift reward (reward_scale 1), the 0.04 m
// success threshold, and the observation keys and their order.
//
// What is simplified: the arm links carry no geometry (they neither
// collide nor render); the hand and fingers are boxes instead of meshes;
// the cube's half size is fixed at 0.021 m instead of drawn from [0.020,
// 0.022] at every reset; the horizon is 500 steps (RoboSuite's default is
// 1000); the Λ inverses fall back to a regularised inverse instead of a
// pseudo-inverse at singular poses. docs/robosuite.md lists every
// departure.
//
// Importing the package registers the environments with env.Register.
//
// # Build
//
// Like env/mujoco, the environments need cgo and MuJoCo 2.2.2 and build by
// default. With -tags nomujoco (or CGO_ENABLED=0) the same names are
// registered but their factories return ErrNoMuJoCo; New fails the same
// way and Env is an inert placeholder. The arm table, the MJCF generator,
// the controller's mathematics, the reward and the scripted controller are
// pure Go and available in both builds.
package panda
