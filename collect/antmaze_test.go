package collect

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/mujoco"
)

// mazeWalk is a synthetic AntMaze dataset: episode 1 walks from the start
// to the evaluation goal along the planner's waypoints in steps of 0.25 m
// (reward 1 on the first step within 0.5 m, then it terminates); episode 2
// stays at the start until its time limit.
func mazeWalk(t *testing.T, m *mujoco.Maze) *dataset.Dataset {
	t.Helper()
	const obsDim = 29
	d := &dataset.Dataset{ObsDim: obsDim, ActDim: 8}
	add := func(x, y, r float64, term, timeout bool) {
		o := make([]float32, obsDim)
		o[0], o[1] = float32(x), float32(y)
		d.Observations = append(d.Observations, o...)
		d.NextObservations = append(d.NextObservations, o...)
		d.Actions = append(d.Actions, make([]float32, 8)...)
		d.Rewards = append(d.Rewards, float32(r))
		d.Terminals = append(d.Terminals, b2f(term))
		d.Timeouts = append(d.Timeouts, b2f(timeout))
	}
	gx, gy := m.CellCenter(m.GoalCell())
	gx, gy = gx+0.5, gy+0.5
	x, y := 0.0, 0.0
	for n := 0; ; n++ {
		if n > 10000 {
			t.Fatal("walk does not reach the goal")
		}
		wx, wy, ok := m.Waypoint(x, y, gx, gy)
		if !ok {
			t.Fatalf("no waypoint from (%v, %v)", x, y)
		}
		dx, dy := wx-x, wy-y
		if l := math.Hypot(dx, dy); l > 0.25 {
			dx, dy = dx/l*0.25, dy/l*0.25
		}
		x, y = x+dx, y+dy
		if math.Hypot(x-gx, y-gy) <= mujoco.GoalRadius {
			add(x, y, 1, true, false)
			break
		}
		add(x, y, 0, false, false)
	}
	for k := range 50 {
		add(0.1, -0.1, 0, false, k == 49)
	}
	return d
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// A walk along the planner's path visits every free cell of the U-maze
// (all 7 lie on the only path) and reaches the goal in 1 of 2 episodes; in
// the large maze it visits exactly the 15 cells of the shortest path.
func TestAntMazeCoverage(t *testing.T) {
	c, err := AntMazeCoverage(mazeWalk(t, &mujoco.UMaze), &mujoco.UMaze)
	if err != nil {
		t.Fatal(err)
	}
	if c.FreeCells != 7 || c.VisitedCells != 7 || c.Fraction != 1 || c.OutsideFree != 0 {
		t.Errorf("U-maze coverage %+v", c)
	}
	if c.Episodes != 2 || c.GoalEpisodes != 1 {
		t.Errorf("U-maze episodes %d, reaching the goal %d; want 2, 1", c.Episodes, c.GoalEpisodes)
	}
	if c.Counts[1][1] < 50 {
		t.Errorf("start cell holds %d observations, want ≥ 50", c.Counts[1][1])
	}
	c, err = AntMazeCoverage(mazeWalk(t, &mujoco.LargeMaze), &mujoco.LargeMaze)
	if err != nil {
		t.Fatal(err)
	}
	free := 0
	for i, r := range mujoco.LargeMaze.Rows {
		for j := range len(r) {
			if mujoco.LargeMaze.Free(i, j) {
				free++
			}
		}
	}
	if c.FreeCells != free || c.VisitedCells != 15 {
		t.Errorf("large maze: %d of %d free cells visited, want 15 of %d", c.VisitedCells, c.FreeCells, free)
	}
	bad := &dataset.Dataset{ObsDim: 1, ActDim: 1}
	if _, err := AntMazeCoverage(bad, &mujoco.UMaze); err == nil {
		t.Error("1-dim observations accepted")
	}
}

func TestPlotAntMazeCoverage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cov.png")
	if err := PlotAntMazeCoverage(path, mazeWalk(t, &mujoco.MediumMaze), &mujoco.MediumMaze, "walk", 1000); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 2000 {
		t.Fatalf("coverage plot: %d bytes, err %v", len(b), err)
	}
}
