package collect

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/run"
)

// MazeCoverage summarizes where the ant of an AntMaze dataset went: which
// free cells of the maze its x-y positions (observation entries 0 and 1)
// visited, and how many of its episodes reached the evaluation goal.
type MazeCoverage struct {
	Maze         string  `json:"maze"`
	FreeCells    int     `json:"free_cells"`
	VisitedCells int     `json:"visited_cells"`    // free cells holding ≥ 1 observation
	Fraction     float64 `json:"visited_fraction"` // VisitedCells / FreeCells
	// OutsideFree counts observations whose x-y lies in a wall cell or
	// outside the map (the torso can overhang a wall edge; many of them
	// mean the data does not belong to this maze).
	OutsideFree int `json:"outside_free"`
	// Counts[row][col] is the number of observations in each cell.
	Counts [][]int `json:"counts"`
	// Episodes and GoalEpisodes: episodes in the file, and those with a
	// reward ≥ 1 (D4RL relabels AntMaze rewards to the evaluation goal).
	Episodes     int `json:"episodes"`
	GoalEpisodes int `json:"goal_episodes"`
}

// AntMazeCoverage computes the coverage of d in maze m. d's observations
// must start with the torso's x and y (D4RL's 29-dim AntMaze layout).
func AntMazeCoverage(d *dataset.Dataset, m *mujoco.Maze) (*MazeCoverage, error) {
	if d.ObsDim < 2 {
		return nil, fmt.Errorf("antmaze coverage: observations have %d entries, want x and y first", d.ObsDim)
	}
	c := &MazeCoverage{Maze: m.Name, Counts: make([][]int, len(m.Rows))}
	for i, r := range m.Rows {
		c.Counts[i] = make([]int, len(r))
		for j := range len(r) {
			if m.Free(i, j) {
				c.FreeCells++
			}
		}
	}
	for k := range d.Len() {
		x, y := float64(d.Observations[k*d.ObsDim]), float64(d.Observations[k*d.ObsDim+1])
		r, col := m.CellAt(x, y)
		if !m.Free(r, col) {
			c.OutsideFree++
			if r >= 0 && r < len(c.Counts) && col >= 0 && col < len(c.Counts[r]) {
				c.Counts[r][col]++
			}
			continue
		}
		if c.Counts[r][col] == 0 {
			c.VisitedCells++
		}
		c.Counts[r][col]++
	}
	c.Fraction = float64(c.VisitedCells) / float64(c.FreeCells)
	// An episode ends at a timeout, at the last row, or at a terminal after
	// which the rows do not continue the same trajectory: D4RL's AntMaze
	// data marks every step within 0.5 m of the goal terminal while the ant
	// walks on (observations[k+1] = next_observations[k]).
	eps := d.EpisodesBy(dataset.EpisodeRule{TerminalContinues: d.Continues})
	c.Episodes = len(eps)
	for _, e := range eps {
		if slices.ContainsFunc(d.Rewards[e.Start:e.Start+e.Len], func(r float32) bool { return r >= 1 }) {
			c.GoalEpisodes++
		}
	}
	return c, nil
}

// PlotAntMazeCoverage writes a PNG of the maze (walls dark, the evaluation
// goal cell marked) with up to maxPoints x-y positions of d drawn over it
// (every k-th transition, k chosen to stay under maxPoints): the picture
// people look at to judge AntMaze data.
func PlotAntMazeCoverage(path string, d *dataset.Dataset, m *mujoco.Maze, title string, maxPoints int) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "x (m)"
	p.Y.Label.Text = "y (m)"
	var walls plotter.XYs
	for i, r := range m.Rows {
		for j := range len(r) {
			x, y := m.CellCenter(i, j)
			if !m.Free(i, j) {
				walls = append(walls, plotter.XY{X: x, Y: y})
			}
		}
	}
	// Each wall is a filled square polygon of the cell's size.
	for _, w := range walls {
		h := m.Scaling / 2
		poly, err := plotter.NewPolygon(plotter.XYs{{X: w.X - h, Y: w.Y - h}, {X: w.X + h, Y: w.Y - h},
			{X: w.X + h, Y: w.Y + h}, {X: w.X - h, Y: w.Y + h}})
		if err != nil {
			return err
		}
		poly.Color = color.RGBA{90, 70, 50, 255}
		poly.LineStyle.Color = poly.Color
		p.Add(poly)
	}
	step := max(1, d.Len()/max(1, maxPoints))
	pts := make(plotter.XYs, 0, d.Len()/step+1)
	for k := 0; k < d.Len(); k += step {
		pts = append(pts, plotter.XY{X: float64(d.Observations[k*d.ObsDim]), Y: float64(d.Observations[k*d.ObsDim+1])})
	}
	if len(pts) > 0 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Radius = vg.Points(0.6)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Color = color.NRGBA{31, 119, 180, 110}
		p.Add(sc)
	}
	gx, gy := m.CellCenter(m.GoalCell())
	goal, err := plotter.NewScatter(plotter.XYs{{X: gx + 0.75, Y: gy + 0.75}})
	if err != nil {
		return err
	}
	goal.GlyphStyle.Radius = vg.Points(5)
	goal.GlyphStyle.Shape = draw.CrossGlyph{}
	goal.GlyphStyle.Color = color.RGBA{214, 39, 40, 255}
	p.Add(goal)
	p.Legend.Add("evaluation goal (mean)", goal)
	p.Legend.Top = true
	rows, cols := float64(len(m.Rows)), float64(len(m.Rows[0]))
	const inch = 0.6
	img := vgimg.New(vg.Length(cols*inch+1)*vg.Inch, vg.Length(rows*inch+1)*vg.Inch)
	p.Draw(draw.New(img))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return err
	}
	return run.WriteFileAtomic(path, buf.Bytes())
}
