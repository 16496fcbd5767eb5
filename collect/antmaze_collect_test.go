package collect

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/koopq/koopq/env/mujoco"
)

// zeroPolicy leaves the ant's joints unactuated (before action noise).
type zeroPolicy struct{ seen [][]float64 }

func (p *zeroPolicy) Act(obs, act []float64) {
	if len(p.seen) < 3 {
		p.seen = append(p.seen, append([]float64(nil), obs...))
	}
	for i := range act {
		act[i] = 0
	}
}

func TestAntMazeKindOf(t *testing.T) {
	for name, want := range map[string]AntMazeKind{"antmaze-umaze-v2": AntMazeFixed, "antmaze-umaze-diverse-v2": AntMazeDiverse,
		"antmaze-medium-play-v2": AntMazePlay, "antmaze-large-diverse-v2": AntMazeDiverse} {
		if _, k, err := AntMazeKindOf(name); err != nil || k != want {
			t.Errorf("%s: %v, %v; want %v", name, k, err, want)
		}
	}
	for _, bad := range []string{"antmaze-medium-v2", "hopper-medium-v2", ""} {
		if _, _, err := AntMazeKindOf(bad); err == nil {
			t.Errorf("%q accepted as an AntMaze dataset", bad)
		}
	}
}

func TestGoalObservation(t *testing.T) {
	obs := make([]float64, 29)
	for i := range obs {
		obs[i] = float64(i)
	}
	dst := make([]float64, 29)
	GoalObservation(dst, obs, 3, -4)
	if dst[0] != 2 || dst[26] != 28 || dst[27] != 6 || dst[28] != -8 {
		t.Errorf("goal observation %v", dst)
	}
}

// Collection writes D4RL's AntMaze layout: 29-dim observations whose x-y
// equal infos/qpos[0:2], timeouts every EpisodeSteps, rewards and terminals
// exactly where the next x-y is within 0.5 m of the evaluation goal in the
// metadata; starts and commanded goals follow the dataset kind; the same
// config gives identical data.
func TestCollectAntMaze(t *testing.T) {
	for _, name := range []string{"antmaze-umaze-v2", "antmaze-medium-diverse-v2", "antmaze-large-play-v2"} {
		cfg := AntMazeConfig{Dataset: name, Transitions: 250, EpisodeSteps: 50, ActionNoise: 0.2, Seed: 4}
		p := &zeroPolicy{}
		d, infos, err := AntMazeDataset(cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		m, kind, _ := AntMazeKindOf(name)
		if d.Len() != 250 || d.ObsDim != 29 || infos["goal"].Shape[0] != 250 || infos["qpos"].Shape[1] != 15 || infos["qvel"].Shape[1] != 14 {
			t.Fatalf("%s: shapes %d×%d, infos %v", name, d.Len(), d.ObsDim, infos["goal"].Shape)
		}
		var ex, ey float64
		if _, err := fmt.Sscanf(strings.Replace(d.Meta["eval_goal"], ",", " ", 1), "%g %g", &ex, &ey); err != nil {
			t.Fatalf("%s: eval_goal %q: %v", name, d.Meta["eval_goal"], err)
		}
		for k := range d.Len() {
			if got := d.Timeouts[k] == 1; got != ((k+1)%50 == 0) {
				t.Fatalf("%s row %d: timeout %v", name, k, got)
			}
			nx, ny := float64(d.NextObservations[29*k]), float64(d.NextObservations[29*k+1])
			hit := math.Hypot(nx-ex, ny-ey) <= mujoco.GoalRadius
			if (d.Rewards[k] == 1) != hit || d.Terminals[k] != d.Rewards[k] {
				t.Fatalf("%s row %d: reward %v terminal %v, next x-y distance to goal %v", name, k, d.Rewards[k], d.Terminals[k], math.Hypot(nx-ex, ny-ey))
			}
			if d.Observations[29*k] != infos["qpos"].Data[15*k] || d.Observations[29*k+2] != infos["qpos"].Data[15*k+2] {
				t.Fatalf("%s row %d: observation and infos/qpos disagree", name, k)
			}
			if k%50 != 0 {
				continue
			}
			// First row of an episode: start and goal by kind.
			sx, sy := float64(d.Observations[29*k]), float64(d.Observations[29*k+1])
			r, c := m.CellAt(sx, sy)
			if kind == AntMazeFixed && (r != 1 || c != 1) || !m.Free(r, c) {
				t.Errorf("%s episode %d starts in cell (%d,%d)", name, k/50, r, c)
			}
			gr, gc := m.CellAt(float64(infos["goal"].Data[2*k]), float64(infos["goal"].Data[2*k+1]))
			play := false
			for _, g := range m.PlayGoals {
				play = play || g == [2]int{gr, gc}
			}
			if !m.Free(gr, gc) || (kind != AntMazeDiverse && !play) {
				t.Errorf("%s episode %d commanded to cell (%d,%d)", name, k/50, gr, gc)
			}
		}
		// The low-level policy sees the maze observation without x-y and a
		// unit offset scaled to 10.
		if o := p.seen[0]; len(o) != 29 || math.Abs(math.Hypot(o[27], o[28])-10) > 1e-9 || float32(o[0]) != d.Observations[2] {
			t.Errorf("%s: low-level observation %v", name, o)
		}
		d2, infos2, err := AntMazeDataset(cfg, &zeroPolicy{})
		if err != nil || !reflect.DeepEqual(d, d2) || !reflect.DeepEqual(infos, infos2) {
			t.Errorf("%s: a second collection with the same seed differs (err %v)", name, err)
		}
		if d.Meta["seed"] != strconv.Itoa(4) || d.Meta["kind"] != string(kind) {
			t.Errorf("%s: metadata %v", name, d.Meta)
		}
	}
	if _, _, err := AntMazeDataset(AntMazeConfig{Dataset: "antmaze-umaze-v2", Transitions: 0, EpisodeSteps: 5}, &zeroPolicy{}); err == nil {
		t.Error("zero transitions accepted")
	}
}
