package mujoco

import (
	"math"
	"sort"
)

// MaxEpisodeSteps is the Gym/D4RL time limit of every environment here.
const MaxEpisodeSteps = 1000

// task holds the Gym v3 (= v2 at default kwargs) semantics of one env.
type task struct {
	name      string
	robot     func() Robot
	skipPos   int     // leading qpos entries left out of the observation (x, or x and y)
	clipVel   float64 // clip qvel to ±clipVel in observations (0: no clipping)
	cfrcObs   bool    // append clip(cfrc_ext, ±1) to observations (Ant)
	ctrlCost  float64 // weight of ‖a‖²
	healthy   float64 // healthy reward, paid on every step (terminate_when_unhealthy)
	contact   float64 // weight of ‖clip(cfrc_ext, ±1)‖²
	xBody     string  // body whose xpos x measures progress ("" → qpos[0])
	isHealthy func(qpos, qvel []float64) bool
	qposNoise float64 // qpos += U(-qposNoise, qposNoise)
	qvelNoise float64 // qvel += U(-qvelNoise, qvelNoise), or qvelNoise·N(0,1) when qvelNormal
	qvelNorm  bool
	// maze, when set, makes this an AntMaze task (D4RL's goal_reaching_env
	// with eval=True and sparse reward): reward 1 and termination once the
	// torso's x-y is within GoalRadius of the episode's goal; no forward,
	// control, contact or healthy terms.
	maze *Maze
	// goalDisk > 0 makes this the open-floor goal-reaching ant that steers
	// AntMaze data collection: each episode draws a goal uniformly on a disk
	// of this radius around the start, the observation ends with the goal's
	// offset from the torso (g − xy), and the reward is −‖g − xy‖.
	goalDisk float64
}

// AntGoalName is the registry name of the open-floor goal-reaching ant
// (D4RL's GoalReachingAntEnv with the disk goal sampler of radius 10 and
// dense reward): the task the low-level policy of AntMaze data collection
// is trained on. Its robot is the AntMaze ant without walls; episodes last
// AntGoalEpisodeSteps and, as in D4RL's env, never end early: with a
// reward that is negative at every step, ending the episode when the ant
// is "unhealthy" (torso height outside [0.2, 1]) would pay the policy for
// jumping or flipping over to stop the penalty.
const AntGoalName = "antgoal"

// AntGoalEpisodeSteps is the time limit of AntGoalName (50 s of 0.1 s steps).
const AntGoalEpisodeSteps = 500

// hasGoal reports whether the task carries a goal in its state.
func (t *task) hasGoal() bool { return t.maze != nil || t.goalDisk > 0 }

// GoalRadius is the distance (metres) from the goal within which an AntMaze
// step earns reward 1 and ends the episode (D4RL: 0.5).
const GoalRadius = 0.5

// maxSteps is the time limit: 1000, or the maze's (700 for the U-maze).
func (t *task) maxSteps() int {
	if t.maze != nil {
		return t.maze.MaxEpisodeSteps
	}
	if t.goalDisk > 0 {
		return AntGoalEpisodeSteps
	}
	return MaxEpisodeSteps
}

func (t *task) obsDim(nq, nv, nbody int) int {
	d := nq - t.skipPos + nv
	if t.cfrcObs {
		d += 6 * nbody
	}
	if t.goalDisk > 0 {
		d += 2
	}
	return d
}

// reward is Gym's reward for one env step: forward velocity
// (xAfter-xBefore)/dt, plus the healthy reward, minus control and contact
// costs. action is the (clipped) action the simulator received.
func (t *task) reward(xBefore, xAfter, dt float64, action, cfrc []float64) float64 {
	var a2 float64
	for _, a := range action {
		a2 += a * a
	}
	r := (xAfter-xBefore)/dt + t.healthy - t.ctrlCost*a2
	if t.contact != 0 {
		var c2 float64
		for _, c := range cfrc {
			c = math.Max(-1, math.Min(1, c))
			c2 += c * c
		}
		r -= t.contact * c2
	}
	return r
}

func allIn(lo, hi float64, xs ...[]float64) bool {
	for _, x := range xs {
		for _, v := range x {
			if !(lo < v && v < hi) {
				return false
			}
		}
	}
	return true
}

// hopperHealthy: every element of qpos[2:] and qvel strictly inside
// (-100, 100), height qpos[1] > 0.7 and angle qpos[2] in (-0.2, 0.2).
func hopperHealthy(qpos, qvel []float64) bool {
	z, ang := qpos[1], qpos[2]
	return allIn(-100, 100, qpos[2:], qvel) && z > 0.7 && !math.IsInf(z, 1) && -0.2 < ang && ang < 0.2
}

// walkerHealthy: height in (0.8, 2.0) and angle in (-1, 1), strictly.
func walkerHealthy(qpos, _ []float64) bool {
	z, ang := qpos[1], qpos[2]
	return 0.8 < z && z < 2.0 && -1 < ang && ang < 1
}

// antHealthy: finite state and torso height qpos[2] in [0.2, 1.0].
func antHealthy(qpos, qvel []float64) bool {
	for _, x := range [][]float64{qpos, qvel} {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return 0.2 <= qpos[2] && qpos[2] <= 1.0
}

var tasks = withMazes(map[string]*task{
	"hopper": {name: "hopper", robot: Hopper, skipPos: 1, clipVel: 10, ctrlCost: 1e-3, healthy: 1,
		isHealthy: hopperHealthy, qposNoise: 5e-3, qvelNoise: 5e-3},
	"walker2d": {name: "walker2d", robot: Walker2d, skipPos: 1, clipVel: 10, ctrlCost: 1e-3, healthy: 1,
		isHealthy: walkerHealthy, qposNoise: 5e-3, qvelNoise: 5e-3},
	"halfcheetah": {name: "halfcheetah", robot: HalfCheetah, skipPos: 1, ctrlCost: 0.1,
		qposNoise: 0.1, qvelNoise: 0.1, qvelNorm: true},
	"ant": {name: "ant", robot: Ant, skipPos: 2, cfrcObs: true, ctrlCost: 0.5, healthy: 1, contact: 5e-4,
		xBody: "torso", isHealthy: antHealthy, qposNoise: 0.1, qvelNoise: 0.1, qvelNorm: true},
})

// withMazes adds one AntMaze task per entry of Mazes to ts. Reset noise is
// the Ant's (qpos + U(−0.1, 0.1), qvel = 0.1·N(0, 1)), as D4RL's AntEnv.
func withMazes(ts map[string]*task) map[string]*task {
	for name, m := range Mazes {
		ts[name] = &task{name: name, robot: func() Robot { return AntMazeRobot(m) }, maze: m,
			qposNoise: 0.1, qvelNoise: 0.1, qvelNorm: true}
	}
	open := Maze{Name: "open"}
	ts[AntGoalName] = &task{name: AntGoalName, robot: func() Robot { return AntMazeRobot(&open) }, skipPos: 2,
		goalDisk: 10, qposNoise: 0.1, qvelNoise: 0.1, qvelNorm: true}
	return ts
}

// Names lists the locomotion environments this package registers: ant,
// halfcheetah, hopper, walker2d. AntMazeNames lists the AntMaze envs, and
// AntGoalName is the remaining one.
func Names() []string { return taskNames(func(t *task) bool { return !t.hasGoal() }) }

// AntMazeNames lists the AntMaze environment names this package registers
// (the keys of Mazes), sorted.
func AntMazeNames() []string { return taskNames(func(t *task) bool { return t.maze != nil }) }

func taskNames(keep func(*task) bool) []string {
	var out []string
	for n, t := range tasks {
		if keep(t) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
