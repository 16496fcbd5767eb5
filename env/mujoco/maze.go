package mujoco

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Maze is one of D4RL's AntMaze layouts (d4rl/locomotion/maze_env.py): a
// grid of square cells, each a wall block, free floor, the reset cell where
// the ant starts, or the goal cell. The world frame puts the centre of the
// reset cell at the origin, so cell (row, col) is centred at
// ((col − resetCol)·Scaling, (row − resetRow)·Scaling); rows grow along +y.
type Maze struct {
	// Name is the layout's name: "umaze", "medium" or "large".
	Name string
	// Rows is the map, one string per row: '1' wall, '0' free, 'r' reset
	// cell (exactly one), 'g' goal cell (exactly one; D4RL's *_TEST maps).
	Rows []string
	// Scaling is the side of a cell in metres (D4RL maze_size_scaling 4).
	Scaling float64
	// Height is the wall height in cells (D4RL maze_height 0.5, so walls are
	// 0.5·Scaling = 2 m high).
	Height float64
	// MaxEpisodeSteps is the time limit of the evaluation env (700 for the
	// U-maze, 1000 for the others, as D4RL registers them).
	MaxEpisodeSteps int
	// PlayGoals are the hand-picked goal cells (row, col) of D4RL's data
	// collection maps (maze_env.py U_MAZE, BIG_MAZE, HARDEST_MAZE: their G
	// cells), which the -play datasets (and the U-maze dataset) command.
	PlayGoals [][2]int
}

// D4RL's evaluation maps (maze_env.py U_MAZE_TEST, BIG_MAZE_TEST,
// HARDEST_MAZE_TEST), which the antmaze-*-v2 environments use: 'r' marks
// the start, 'g' the single evaluation goal.
var (
	UMaze = Maze{Name: "umaze", Scaling: 4, Height: 0.5, MaxEpisodeSteps: 700, PlayGoals: [][2]int{{3, 1}}, Rows: []string{
		"11111",
		"1r001",
		"11101",
		"1g001",
		"11111",
	}}
	MediumMaze = Maze{Name: "medium", Scaling: 4, Height: 0.5, MaxEpisodeSteps: 1000,
		PlayGoals: [][2]int{{2, 6}, {5, 1}, {6, 5}}, Rows: []string{
			"11111111",
			"1r011001",
			"10010001",
			"11000111",
			"10010001",
			"10100101",
			"100010g1",
			"11111111",
		}}
	LargeMaze = Maze{Name: "large", Scaling: 4, Height: 0.5, MaxEpisodeSteps: 1000,
		PlayGoals: [][2]int{{1, 6}, {3, 5}, {3, 10}, {5, 2}, {7, 4}, {7, 6}, {7, 9}}, Rows: []string{
			"111111111111",
			"1r0001000001",
			"101101010101",
			"100000010001",
			"101111011101",
			"100101000001",
			"110101010111",
			"100100010g01",
			"111111111111",
		}}
)

// cell returns the map character at (row, col), '1' outside the map.
func (m *Maze) cell(row, col int) byte {
	if row < 0 || row >= len(m.Rows) || col < 0 || col >= len(m.Rows[row]) {
		return '1'
	}
	return m.Rows[row][col]
}

// find returns the (row, col) of the first cell holding c.
func (m *Maze) find(c byte) (int, int, bool) {
	for i, r := range m.Rows {
		for j := range len(r) {
			if r[j] == c {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// Validate checks the map: rectangular, only '0', '1', 'r', 'g', exactly
// one reset and one goal cell, and a free path from reset to goal.
func (m *Maze) Validate() error {
	if len(m.Rows) == 0 {
		return fmt.Errorf("maze %s: empty map", m.Name)
	}
	nr, ng := 0, 0
	for i, r := range m.Rows {
		if len(r) != len(m.Rows[0]) {
			return fmt.Errorf("maze %s: row %d has %d cells, row 0 has %d", m.Name, i, len(r), len(m.Rows[0]))
		}
		for j := range len(r) {
			switch r[j] {
			case '0', '1':
			case 'r':
				nr++
			case 'g':
				ng++
			default:
				return fmt.Errorf("maze %s: cell (%d,%d) is %q, want 0, 1, r or g", m.Name, i, j, r[j])
			}
		}
	}
	if nr != 1 || ng != 1 {
		return fmt.Errorf("maze %s: %d reset and %d goal cells, want one of each", m.Name, nr, ng)
	}
	if !(m.Scaling > 0) || !(m.Height > 0) || m.MaxEpisodeSteps <= 0 {
		return fmt.Errorf("maze %s: scaling %v, height %v and episode length %d must be positive", m.Name, m.Scaling, m.Height, m.MaxEpisodeSteps)
	}
	gr, gc, _ := m.find('g')
	rr, rc, _ := m.find('r')
	if _, ok := m.NextCell(rr, rc, gr, gc); !ok {
		return fmt.Errorf("maze %s: no free path from the reset cell to the goal", m.Name)
	}
	return nil
}

// Free reports whether (row, col) is floor (free, reset or goal).
func (m *Maze) Free(row, col int) bool { return m.cell(row, col) != '1' }

// CellCenter returns the world x, y (metres) of the centre of cell (row, col).
func (m *Maze) CellCenter(row, col int) (x, y float64) {
	rr, rc, _ := m.find('r')
	return float64(col-rc) * m.Scaling, float64(row-rr) * m.Scaling
}

// CellAt returns the cell containing world point (x, y): the nearest cell
// centre. (D4RL's _xy_to_rowcol computes int(1 + y/s), int(1 + x/s), which
// is offset by half a cell for negative coordinates; koopq rounds, so a
// point is always assigned the cell it lies in.)
func (m *Maze) CellAt(x, y float64) (row, col int) {
	rr, rc, _ := m.find('r')
	return rr + int(math.Round(y/m.Scaling)), rc + int(math.Round(x/m.Scaling))
}

// Start returns the world position of the reset cell's centre (the origin).
func (m *Maze) Start() (x, y float64) { return 0, 0 }

// GoalCell returns the (row, col) of the evaluation goal cell.
func (m *Maze) GoalCell() (row, col int) {
	r, c, _ := m.find('g')
	return r, c
}

// SampleGoal draws an evaluation goal the way D4RL's goal_sampler does for a
// map with one goal cell: the cell's centre plus U(0, Scaling/4) plus
// U(0, 0.5)·Scaling/4 in each coordinate, each coordinate clipped below at 0.
// (D4RL draws the two noise terms from numpy's global RNG; koopq from rng.)
func (m *Maze) SampleGoal(rng *rand.Rand) (x, y float64) {
	gr, gc := m.GoalCell()
	return m.SampleNear(gr, gc, rng)
}

// SampleNear returns a goal in cell (row, col) with D4RL's goal noise (see
// SampleGoal).
func (m *Maze) SampleNear(row, col int, rng *rand.Rand) (x, y float64) {
	x, y = m.CellCenter(row, col)
	x += rng.Float64() * m.Scaling * 0.25
	y += rng.Float64() * m.Scaling * 0.25
	x += rng.Float64() * 0.5 * 0.25 * m.Scaling
	y += rng.Float64() * 0.5 * 0.25 * m.Scaling
	return math.Max(x, 0), math.Max(y, 0)
}

// NextCell returns the neighbour of (row, col) on a shortest free path to
// (toRow, toCol) (breadth-first search over 4-connected free cells, as
// D4RL's _get_best_next_rowcol), or the target itself when already there.
// ok is false when no path exists or either cell is a wall.
func (m *Maze) NextCell(row, col, toRow, toCol int) (next [2]int, ok bool) {
	if !m.Free(row, col) || !m.Free(toRow, toCol) {
		return next, false
	}
	if row == toRow && col == toCol {
		return [2]int{row, col}, true
	}
	// Search from the target so the first time the current cell is reached,
	// the cell it was reached from is its successor on a shortest path.
	seen := map[[2]int]bool{{toRow, toCol}: true}
	frontier := [][2]int{{toRow, toCol}}
	for len(frontier) > 0 {
		var nextFrontier [][2]int
		for _, c := range frontier {
			for _, d := range [4][2]int{{0, -1}, {0, 1}, {1, 0}, {-1, 0}} {
				n := [2]int{c[0] + d[0], c[1] + d[1]}
				if n == [2]int{row, col} {
					return c, true
				}
				if !m.Free(n[0], n[1]) || seen[n] {
					continue
				}
				seen[n] = true
				nextFrontier = append(nextFrontier, n)
			}
		}
		frontier = nextFrontier
	}
	return next, false
}

// Waypoint returns where a navigation controller at world (x, y) should head
// to reach world goal (gx, gy): the centre of the next cell on a shortest
// path, or the goal itself once in the goal's cell. ok is false when (x, y)
// or the goal lies in a wall or no path exists.
func (m *Maze) Waypoint(x, y, gx, gy float64) (wx, wy float64, ok bool) {
	r, c := m.CellAt(x, y)
	gr, gc := m.CellAt(gx, gy)
	n, ok := m.NextCell(r, c, gr, gc)
	if !ok {
		return 0, 0, false
	}
	if n == [2]int{gr, gc} {
		return gx, gy, true
	}
	wx, wy = m.CellCenter(n[0], n[1])
	return wx, wy, true
}

// SampleStart draws a start position as D4RL's _get_reset_location does
// for multi-start data collection: a uniformly chosen free cell that is not
// a PlayGoals cell (D4RL's start map counts goal cells as walls), plus
// U(0, 0.5)·Scaling/2 in each coordinate, each coordinate clipped below at 0.
func (m *Maze) SampleStart(rng *rand.Rand) (x, y float64) {
	var cells [][2]int
	for i, r := range m.Rows {
		for j := range len(r) {
			if m.Free(i, j) && !m.isPlayGoal(i, j) {
				cells = append(cells, [2]int{i, j})
			}
		}
	}
	c := cells[rng.IntN(len(cells))]
	x, y = m.CellCenter(c[0], c[1])
	x += rng.Float64() * 0.5 * 0.5 * m.Scaling
	y += rng.Float64() * 0.5 * 0.5 * m.Scaling
	return math.Max(x, 0), math.Max(y, 0)
}

func (m *Maze) isPlayGoal(row, col int) bool {
	for _, g := range m.PlayGoals {
		if g == [2]int{row, col} {
			return true
		}
	}
	return false
}

// FreeCells lists the free cells (row, col) in row-major order.
func (m *Maze) FreeCells() [][2]int {
	var out [][2]int
	for i, r := range m.Rows {
		for j := range len(r) {
			if m.Free(i, j) {
				out = append(out, [2]int{i, j})
			}
		}
	}
	return out
}

// Walls returns one box geom per wall cell as D4RL adds them to the world:
// centred on the cell at height Height·Scaling/2, half-sizes (Scaling/2,
// Scaling/2, Height·Scaling/2), contype 1, conaffinity 1, and the geom
// defaults of D4RL's ant.xml (condim 3, friction (1, 0.5, 0.5), margin 0.01,
// solref (0.02, 1), solimp (0.8, 0.8, 0.01)).
func (m *Maze) Walls() []Geom {
	var out []Geom
	h := m.Height * m.Scaling / 2
	for i, r := range m.Rows {
		for j := range len(r) {
			if r[j] != '1' {
				continue
			}
			x, y := m.CellCenter(i, j)
			out = append(out, Geom{Name: fmt.Sprintf("block_%d_%d", i, j), Type: "box",
				Size: []float64{m.Scaling / 2, m.Scaling / 2, h}, Pos: [3]float64{x, y, h},
				Friction: [3]float64{1, 0.5, 0.5}, Density: 5, ConType: 1, ConAffinity: 1, Condim: 3,
				Margin: 0.01, SolRef: []float64{0.02, 1}, SolImp: []float64{0.8, 0.8, 0.01}})
		}
	}
	return out
}

// Mazes maps every AntMaze environment and dataset name koopq registers to
// its layout: antmaze-{umaze,medium,large}-v2 and D4RL's dataset names
// (umaze, umaze-diverse, medium-play, medium-diverse, large-play,
// large-diverse), which share the evaluation env of their maze.
var Mazes = map[string]*Maze{
	"antmaze-umaze-v2":          &UMaze,
	"antmaze-umaze-diverse-v2":  &UMaze,
	"antmaze-medium-v2":         &MediumMaze,
	"antmaze-medium-play-v2":    &MediumMaze,
	"antmaze-medium-diverse-v2": &MediumMaze,
	"antmaze-large-v2":          &LargeMaze,
	"antmaze-large-play-v2":     &LargeMaze,
	"antmaze-large-diverse-v2":  &LargeMaze,
}
