//go:build cgo && !nomujoco

package mujoco

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	mj "github.com/koopq/koopq/internal/mujoco"
)

// d4rlMaps are D4RL's evaluation maps transcribed from
// d4rl/locomotion/maze_env.py (U_MAZE_TEST, BIG_MAZE_TEST,
// HARDEST_MAZE_TEST) in D4RL's own notation, with R = −1 and G = −2,
// independently of the string form in maze.go.
var d4rlMaps = map[string][][]int{
	"umaze": {
		{1, 1, 1, 1, 1},
		{1, -1, 0, 0, 1},
		{1, 1, 1, 0, 1},
		{1, -2, 0, 0, 1},
		{1, 1, 1, 1, 1},
	},
	"medium": {
		{1, 1, 1, 1, 1, 1, 1, 1},
		{1, -1, 0, 1, 1, 0, 0, 1},
		{1, 0, 0, 1, 0, 0, 0, 1},
		{1, 1, 0, 0, 0, 1, 1, 1},
		{1, 0, 0, 1, 0, 0, 0, 1},
		{1, 0, 1, 0, 0, 1, 0, 1},
		{1, 0, 0, 0, 1, 0, -2, 1},
		{1, 1, 1, 1, 1, 1, 1, 1},
	},
	"large": {
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		{1, -1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1},
		{1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1},
		{1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1},
		{1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1},
		{1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1},
		{1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1},
		{1, 0, 0, 1, 0, 0, 0, 1, 0, -2, 0, 1},
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	},
}

var mazeByName = map[string]*Maze{"umaze": &UMaze, "medium": &MediumMaze, "large": &LargeMaze}

// The maps equal D4RL's, every layout validates, and the wall boxes are
// where maze_env.py puts them: for every wall cell (i, j), a box at
// (j·4 − torso_x, i·4 − torso_y, 0.5/2·4) with half-sizes (2, 2, 1), where
// torso_x, torso_y = 4·(reset col, reset row).
func TestMazeGeometryMatchesD4RL(t *testing.T) {
	for name, grid := range d4rlMaps {
		m := mazeByName[name]
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		var torsoX, torsoY float64
		for i, row := range grid {
			for j, v := range row {
				if v == -1 {
					torsoX, torsoY = float64(j)*4, float64(i)*4
				}
			}
		}
		type box struct{ x, y, z, hx, hy, hz float64 }
		want := map[string]box{}
		for i, row := range grid {
			if len(m.Rows[i]) != len(row) {
				t.Fatalf("%s row %d: %d cells, D4RL %d", name, i, len(m.Rows[i]), len(row))
			}
			for j, v := range row {
				c := map[int]byte{1: '1', 0: '0', -1: 'r', -2: 'g'}[v]
				if m.Rows[i][j] != c {
					t.Errorf("%s cell (%d,%d) = %q, D4RL %d", name, i, j, m.Rows[i][j], v)
				}
				if v == 1 {
					want[fmt.Sprintf("block_%d_%d", i, j)] = box{float64(j)*4 - torsoX, float64(i)*4 - torsoY, 0.5 / 2 * 4, 2, 2, 0.5 / 2 * 4}
				}
			}
		}
		// Compile the model and read the boxes back from MuJoCo.
		mod := compile(t, AntMazeRobot(m), ModelOptions{})
		pos, size := mod.GeomPos(), mod.GeomSize()
		for gname, b := range want {
			g := mod.ID(mj.ObjGeom, gname)
			if g < 0 {
				t.Errorf("%s: no geom %s", name, gname)
				continue
			}
			got := box{pos[3*g], pos[3*g+1], pos[3*g+2], size[3*g], size[3*g+1], size[3*g+2]}
			if got != b {
				t.Errorf("%s %s: %+v, want %+v", name, gname, got, b)
			}
		}
		// floor + torso + 4 legs × 3 capsules + walls
		if ng := mod.NGeom(); ng != 1+1+12+len(want) {
			t.Errorf("%s: %d geoms, want %d", name, ng, 14+len(want))
		}
	}
}

// The evaluation goal cells are at D4RL's positions: the U-maze goal cell
// centre is (0, 8), the medium maze's (20, 20), the large maze's (32, 24);
// sampled goals add U(0, 1) + U(0, 0.5) per coordinate.
func TestMazeGoals(t *testing.T) {
	for name, c := range map[string][2]float64{"umaze": {0, 8}, "medium": {20, 20}, "large": {32, 24}} {
		m := mazeByName[name]
		gx, gy := m.CellCenter(m.GoalCell())
		if gx != c[0] || gy != c[1] {
			t.Errorf("%s goal cell centre (%v, %v), want %v", name, gx, gy, c)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var maxd [2]float64
		for range 2000 {
			x, y := m.SampleGoal(rng)
			dx, dy := x-c[0], y-c[1]
			if dx < 0 || dx > 1.5 || dy < 0 || dy > 1.5 {
				t.Fatalf("%s goal (%v, %v) outside the D4RL noise box", name, x, y)
			}
			maxd[0], maxd[1] = math.Max(maxd[0], dx), math.Max(maxd[1], dy)
		}
		if maxd[0] < 1.3 || maxd[1] < 1.3 {
			t.Errorf("%s: largest goal offsets %v, want close to 1.5", name, maxd)
		}
	}
}

// The AntMaze model is D4RL's ant: the Ant's bodies and masses, timestep
// 0.02 (env step 0.1 s), torque 30·a, solimp (0.8, 0.8, 0.01) on its geoms;
// 29-dim observations (qpos and qvel with x-y, no goal), 8 actions in
// [−1, 1], the episode lengths D4RL registers.
func TestAntMazeModel(t *testing.T) {
	ant := compile(t, Ant(), ModelOptions{})
	for _, name := range AntMazeNames() {
		e := newEnv(t, name, Options{})
		m := e.model
		if e.ObservationSpace().Dim() != 29 || e.ActionSpace().Dim() != 8 {
			t.Errorf("%s: obs %d act %d, want 29, 8", name, e.ObservationSpace().Dim(), e.ActionSpace().Dim())
		}
		if m.Timestep() != 0.02 || e.Dt() != 0.1 {
			t.Errorf("%s: timestep %v dt %v", name, m.Timestep(), e.Dt())
		}
		if want := map[string]int{"umaze": 700, "medium": 1000, "large": 1000}[e.Maze().Name]; e.MaxEpisodeSteps() != want {
			t.Errorf("%s: episode length %d, want %d", name, e.MaxEpisodeSteps(), want)
		}
		am, bm := ant.BodyMass(), m.BodyMass()
		if len(am) != len(bm) {
			t.Fatalf("%s: %d bodies, ant %d", name, len(bm), len(am))
		}
		for i := range am {
			if am[i] != bm[i] {
				t.Errorf("%s body %d mass %v, Gym ant %v", name, i, bm[i], am[i])
			}
		}
		for i, g := range m.ActuatorGear() {
			if g != 30 {
				t.Errorf("%s actuator %d gear %v, want 30", name, i, g)
			}
		}
		imp := m.GeomSolImp()
		for g := range m.NGeom() {
			if imp[5*g] != 0.8 || imp[5*g+1] != 0.8 || imp[5*g+2] != 0.01 {
				t.Errorf("%s geom %d solimp %v", name, g, imp[5*g:5*g+3])
				break
			}
		}
		obs := e.Reset(rand.New(rand.NewPCG(3, 4)))
		if math.Abs(obs[0]) > 0.1 || math.Abs(obs[1]) > 0.1 || math.Abs(obs[2]-0.75) > 0.1 {
			t.Errorf("%s: first observation starts %v, want the ant near (0, 0, 0.75)", name, obs[:3])
		}
	}
}

// Sparse reward and termination: reward 1 and terminated within 0.5 m of
// the goal, else 0 and not terminated (falling over does not end an
// AntMaze episode); truncation after the maze's episode length.
func TestAntMazeRewardAndTermination(t *testing.T) {
	e := newEnv(t, "antmaze-umaze-v2", Options{})
	e.Reset(rand.New(rand.NewPCG(5, 6)))
	x, y := e.QPos()[0], e.QPos()[1]
	if err := e.SetGoal(x+0.3, y); err != nil {
		t.Fatal(err)
	}
	_, r, term, trunc, err := e.Step(make([]float64, 8))
	if err != nil || r != 1 || !term || trunc {
		t.Fatalf("next to the goal: r %v term %v trunc %v err %v", r, term, trunc, err)
	}
	e.Reset(rand.New(rand.NewPCG(5, 6)))
	if err := e.SetGoal(x+3, y); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for k := 1; k <= 700; k++ {
		_, r, term, trunc, err := e.Step(randAction(rng, 8))
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Hypot(e.QPos()[0]-x-3, e.QPos()[1]-y); (d <= GoalRadius) != (r == 1) || term != (r == 1) || (r != 0 && r != 1) {
			t.Fatalf("step %d: distance %v, reward %v, terminated %v", k, d, r, term)
		}
		if term {
			t.Fatalf("random actions reached a goal 3 m away at step %d (possible, but not with this seed)", k)
		}
		if trunc != (k == 700) {
			t.Fatalf("step %d: truncated %v", k, trunc)
		}
	}
	if err := newEnv(t, "ant", Options{}).SetGoal(1, 1); err == nil {
		t.Error("SetGoal on the plain ant succeeded")
	}
}

// Walls are solid and 2 m high: an ant dropped onto a wall cell comes to
// rest on top of the wall, one dropped on a free cell on the floor.
func TestAntMazeWallsAreSolid(t *testing.T) {
	for _, c := range []struct {
		row, col int
		minZ     float64
		maxZ     float64
	}{{0, 1, 2.0, 3.5}, {1, 2, 0.0, 1.2}} {
		e := newEnv(t, "antmaze-umaze-v2", Options{})
		e.Reset(rand.New(rand.NewPCG(9, 10)))
		x, y := UMaze.CellCenter(c.row, c.col)
		st := e.State()
		st[0], st[1], st[2] = x, y, 2.75
		if err := e.SetState(st); err != nil {
			t.Fatal(err)
		}
		for range 30 {
			if _, _, _, _, err := e.Step(make([]float64, 8)); err != nil {
				t.Fatal(err)
			}
		}
		if z := e.QPos()[2]; z < c.minZ || z > c.maxZ {
			t.Errorf("cell (%d,%d): torso height %v after landing, want in [%v, %v]", c.row, c.col, z, c.minZ, c.maxZ)
		}
	}
}

// Shortest paths over the grid (D4RL's waypoint planner): from the reset
// cell to the goal, each step moves to a free 4-neighbour, and the number of
// moves is the hand-counted shortest path: 6 (U-maze), 10 (medium), 14
// (large). The world-coordinate Waypoint heads for the next cell's centre,
// then for the goal itself.
func TestMazeShortestPaths(t *testing.T) {
	for name, moves := range map[string]int{"umaze": 6, "medium": 10, "large": 14} {
		m := mazeByName[name]
		r, c, _ := m.find('r')
		gr, gc := m.GoalCell()
		n := 0
		for r != gr || c != gc {
			next, ok := m.NextCell(r, c, gr, gc)
			if !ok {
				t.Fatalf("%s: no path from (%d,%d)", name, r, c)
			}
			if d := abs(next[0]-r) + abs(next[1]-c); d != 1 || !m.Free(next[0], next[1]) {
				t.Fatalf("%s: step (%d,%d) → %v is not to a free neighbour", name, r, c, next)
			}
			r, c = next[0], next[1]
			if n++; n > 100 {
				t.Fatalf("%s: path does not end", name)
			}
		}
		if n != moves {
			t.Errorf("%s: %d moves from start to goal, want %d", name, n, moves)
		}
		gx, gy := m.SampleGoal(rand.New(rand.NewPCG(1, 1)))
		wx, wy, ok := m.Waypoint(0.3, -0.2, gx, gy)
		first, _ := m.NextCell(1, 1, gr, gc)
		cx, cy := m.CellCenter(first[0], first[1])
		if !ok || wx != cx || wy != cy {
			t.Errorf("%s: first waypoint (%v, %v, %v), want the centre of cell %v (%v, %v)", name, wx, wy, ok, first, cx, cy)
		}
		if wx, wy, ok := m.Waypoint(gx-0.2, gy+0.1, gx, gy); !ok || wx != gx || wy != gy {
			t.Errorf("%s: in the goal cell the waypoint is (%v, %v), want the goal", name, wx, wy)
		}
	}
	if _, _, ok := UMaze.Waypoint(0, -4, 0, 8); ok {
		t.Error("a waypoint from inside a wall")
	}
	bad := Maze{Name: "bad", Scaling: 4, Height: 0.5, MaxEpisodeSteps: 10, Rows: []string{"11111", "1r1g1", "11111"}}
	if err := bad.Validate(); err == nil {
		t.Error("a maze without a path validated")
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// The goal-reaching ant (AntGoalName): 29-dim observations ending in
// g − xy, goals uniform on the disk of radius 10 (mean radius 20/3 for the
// uniform-radius sampler D4RL uses), reward −‖g − xy‖, termination when the
// torso leaves [0.2, 1], a 500-step limit, and the AntMaze ant's dynamics.
func TestAntGoal(t *testing.T) {
	e := newEnv(t, AntGoalName, Options{})
	if e.ObservationSpace().Dim() != 29 || e.ActionSpace().Dim() != 8 || e.MaxEpisodeSteps() != 500 || e.Dt() != 0.1 {
		t.Fatalf("obs %d act %d limit %d dt %v", e.ObservationSpace().Dim(), e.ActionSpace().Dim(), e.MaxEpisodeSteps(), e.Dt())
	}
	rng := rand.New(rand.NewPCG(1, 3))
	var sumR float64
	const n = 3000
	for range n {
		e.Reset(rng)
		gx, gy := e.Goal()
		r := math.Hypot(gx, gy)
		if r > 10 {
			t.Fatalf("goal (%v, %v) outside the disk", gx, gy)
		}
		sumR += r
	}
	if m := sumR / n; math.Abs(m-5) > 0.3 {
		t.Errorf("mean goal radius %v, want 5 (radius uniform on [0, 10])", m)
	}
	obs := e.Reset(rng)
	gx, gy := e.Goal()
	q := e.QPos()
	if obs[27] != gx-q[0] || obs[28] != gy-q[1] || obs[0] != q[2] {
		t.Errorf("observation tail %v, want g − xy = (%v, %v); head %v want qpos[2] %v", obs[27:], gx-q[0], gy-q[1], obs[0], q[2])
	}
	obs, r, term, _, err := e.Step(make([]float64, 8))
	if err != nil || term {
		t.Fatalf("step: err %v term %v", err, term)
	}
	if want := -math.Hypot(obs[27], obs[28]); math.Abs(r-want) > 1e-12 {
		t.Errorf("reward %v, want −‖g − xy‖ = %v", r, want)
	}
	st := e.State()
	// No early termination (D4RL): a torso at 1.6 m, which the locomotion
	// Ant calls unhealthy, does not end the episode; ending it would reward
	// jumping away from the −distance penalty.
	st[2] = 1.6
	if err := e.SetState(st); err != nil {
		t.Fatal(err)
	}
	if _, _, term, _, err := e.Step(make([]float64, 8)); err != nil || term {
		t.Errorf("torso at 1.6 m: terminated %v, err %v; want no termination", term, err)
	}
}

// D4RL's data-collection maps (maze_env.py U_MAZE, BIG_MAZE, HARDEST_MAZE;
// R = −1, G = −2) have the walls of the evaluation maps, and their G cells
// are Maze.PlayGoals.
var d4rlCollectionMaps = map[string][][]int{
	"umaze": d4rlMaps["umaze"],
	"medium": {
		{1, 1, 1, 1, 1, 1, 1, 1},
		{1, -1, 0, 1, 1, 0, 0, 1},
		{1, 0, 0, 1, 0, 0, -2, 1},
		{1, 1, 0, 0, 0, 1, 1, 1},
		{1, 0, 0, 1, 0, 0, 0, 1},
		{1, -2, 1, 0, 0, 1, 0, 1},
		{1, 0, 0, 0, 1, -2, 0, 1},
		{1, 1, 1, 1, 1, 1, 1, 1},
	},
	"large": {
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		{1, -1, 0, 0, 0, 1, -2, 0, 0, 0, 0, 1},
		{1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1},
		{1, 0, 0, 0, 0, -2, 0, 1, 0, 0, -2, 1},
		{1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1},
		{1, 0, -2, 1, 0, 1, 0, 0, 0, 0, 0, 1},
		{1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1},
		{1, 0, 0, 1, -2, 0, -2, 1, 0, -2, 0, 1},
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	},
}

func TestMazePlayGoalsMatchD4RL(t *testing.T) {
	for name, grid := range d4rlCollectionMaps {
		m := mazeByName[name]
		var goals [][2]int
		for i, row := range grid {
			for j, v := range row {
				if (v == 1) != !m.Free(i, j) {
					t.Errorf("%s (%d,%d): collection map wall %v, evaluation map free %v", name, i, j, v == 1, m.Free(i, j))
				}
				if v == -2 {
					goals = append(goals, [2]int{i, j})
				}
			}
		}
		if fmt.Sprint(goals) != fmt.Sprint(m.PlayGoals) {
			t.Errorf("%s: play goals %v, D4RL's G cells %v", name, m.PlayGoals, goals)
		}
		// Starts avoid the goal cells and walls.
		rng := rand.New(rand.NewPCG(2, 2))
		for range 500 {
			x, y := m.SampleStart(rng)
			r, c := m.CellAt(x, y)
			if !m.Free(r, c) || m.isPlayGoal(r, c) {
				t.Fatalf("%s: start (%v, %v) in cell (%d,%d)", name, x, y, r, c)
			}
		}
	}
}
