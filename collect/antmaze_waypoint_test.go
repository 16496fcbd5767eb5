package collect

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/koopq/koopq/env/mujoco"
)

// discAgent is an idealized walker for the waypoint controller: a disc of
// radius Radius (metres) on the floor that moves Speed metres per env step
// straight toward the point it is sent to; where that would overlap one of
// the maze's wall boxes (Maze.Walls, the geoms the AntMaze model is built
// from) it slides along the wall (keeps the free axis of the move), and
// stops if neither axis is free.
type discAgent struct {
	m             *mujoco.Maze
	walls         []mujoco.Geom
	Radius, Speed float64
}

// hits reports whether a disc at (x, y) overlaps a wall box (in x-y).
func (a *discAgent) hits(x, y float64) bool {
	for _, w := range a.walls {
		dx := math.Max(math.Abs(x-w.Pos[0])-w.Size[0], 0)
		dy := math.Max(math.Abs(y-w.Pos[1])-w.Size[1], 0)
		if dx*dx+dy*dy < a.Radius*a.Radius {
			return true
		}
	}
	return false
}

// run steers the agent from (x, y) to the goal with SteerTarget for at most
// steps env steps. It returns the steps taken to come within
// mujoco.GoalRadius of the goal (−1: never), and how many steps a wall
// blocked.
func (a *discAgent) run(x, y, gx, gy float64, steps int, rng *rand.Rand) (reached, blocked int) {
	for t := 1; t <= steps; t++ {
		wx, wy := SteerTarget(a.m, x, y, gx, gy, rng)
		dx, dy := wx-x, wy-y
		if l := math.Hypot(dx, dy); l > a.Speed {
			dx, dy = dx/l*a.Speed, dy/l*a.Speed
		}
		switch {
		case !a.hits(x+dx, y+dy):
			x, y = x+dx, y+dy
		case !a.hits(x+dx, y): // slide along a wall (the walls are axis-aligned)
			x, blocked = x+dx, blocked+1
		case !a.hits(x, y+dy):
			y, blocked = y+dy, blocked+1
		default:
			blocked++
		}
		if math.Hypot(x-gx, y-gy) <= mujoco.GoalRadius {
			return t, blocked
		}
	}
	return -1, blocked
}

// A scripted waypoint controller reaches the goal in the large maze (and
// the U and medium mazes): the planner (Maze.Waypoint's breadth-first
// search over the map) with the jittered waypoints of data collection
// (SteerTarget, the code AntMazeDataset steers the ant with) drives a disc
// of the ant's size (radius 0.75 m: torso 0.25 m plus most of a leg's
// reach) at 1 m/s (0.1 m per 0.1 s env step, a walking ant's speed) from
// every free cell of the map, with D4RL's start noise, to the maze's
// evaluation goal (drawn as the env draws it) within the env's episode
// limit (1000 steps), sliding along a wall on at most 10% of its steps
// (measured: at most 15 steps, at inner corners, where the jittered
// waypoint of the next cell pulls the disc across the corner).
//
// What this proves: the map, its wall geometry, the planner and the
// collection controller's waypoints form paths that a body of the ant's
// footprint can follow without getting stuck, short enough for the time
// limit from anywhere in the maze, and heading straight for the goal
// without the planner does not reach it. It does not prove that a goal-reaching ant
// policy follows the waypoints (that needs the trained policy; data
// collection with it is checked by koopq dataset info's goal counts).
func TestWaypointControllerReachesGoal(t *testing.T) {
	for _, m := range []*mujoco.Maze{&mujoco.LargeMaze, &mujoco.MediumMaze, &mujoco.UMaze} {
		a := &discAgent{m: m, walls: m.Walls(), Radius: 0.75, Speed: 0.1}
		rng := rand.New(rand.NewPCG(3, 9))
		longest, mostBlocked := 0, 0
		for _, c := range m.FreeCells() {
			for trial := 0; trial < 3; trial++ {
				x, y := m.CellCenter(c[0], c[1])
				// D4RL's start noise: U(0, 0.5)·Scaling/2 in each coordinate.
				x += rng.Float64() * 0.25 * m.Scaling
				y += rng.Float64() * 0.25 * m.Scaling
				if a.hits(x, y) {
					t.Fatalf("%s: start (%.2f, %.2f) in cell %v overlaps a wall", m.Name, x, y, c)
				}
				gx, gy := m.SampleGoal(rng)
				reached, blocked := a.run(x, y, gx, gy, m.MaxEpisodeSteps, rng)
				if reached < 0 {
					t.Errorf("%s: from cell %v (%.2f, %.2f) the controller did not reach the goal (%.2f, %.2f) in %d steps",
						m.Name, c, x, y, gx, gy, m.MaxEpisodeSteps)
				}
				if reached > 0 && blocked*10 > reached {
					t.Errorf("%s: from cell %v the disc slid along walls on %d of its %d steps (> 10%%)", m.Name, c, blocked, reached)
				}
				longest, mostBlocked = max(longest, reached), max(mostBlocked, blocked)
			}
		}
		t.Logf("%s: %d free cells × 3 starts reach the goal; longest run %d of %d steps; at most %d steps sliding along a wall",
			m.Name, len(m.FreeCells()), longest, m.MaxEpisodeSteps, mostBlocked)
	}
	// The check can fail: without the planner (heading straight for the
	// goal) the disc sticks against the large maze's walls.
	straight := &discAgent{m: &mujoco.LargeMaze, walls: mujoco.LargeMaze.Walls(), Radius: 0.75, Speed: 0.1}
	open := mujoco.Maze{Name: "no walls", Scaling: 4, Height: 0.5, MaxEpisodeSteps: 1000, Rows: []string{"rg"}}
	straight.m = &open // Waypoint on a map without walls: always the goal itself
	gx, gy := mujoco.LargeMaze.SampleGoal(rand.New(rand.NewPCG(1, 1)))
	if r, _ := straight.run(0, 0, gx, gy, 1000, rand.New(rand.NewPCG(1, 1))); r >= 0 {
		t.Errorf("heading straight for the goal reached it in the large maze (step %d): the maze would not need a planner", r)
	}
}
