package collect

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/meter"
)

// AntMazeKind is how a D4RL AntMaze dataset picks starts and goals
// (d4rl/locomotion/generate_dataset.py with --multi_start, and the D4RL
// paper's description of the datasets).
type AntMazeKind string

const (
	// AntMazeFixed (antmaze-umaze-v2): every episode starts at the reset
	// cell and is commanded to the maze's hand-picked goal cell.
	AntMazeFixed AntMazeKind = "fixed"
	// AntMazeDiverse (-diverse): random starts (Maze.SampleStart) and goals
	// in uniformly chosen free cells ("random goals", D4RL paper).
	AntMazeDiverse AntMazeKind = "diverse"
	// AntMazePlay (-play): random starts and goals from the hand-picked
	// cells (Maze.PlayGoals: the G cells of D4RL's collection maps).
	AntMazePlay AntMazeKind = "play"
)

// AntMazeConfig configures AntMaze data collection with D4RL's recipe:
// a goal-reaching ant policy steered through the maze by a waypoint
// planner, with Gaussian action noise; rewards relabelled afterwards to the
// sparse evaluation-goal reward.
type AntMazeConfig struct {
	// Dataset is a D4RL AntMaze dataset name, e.g. "antmaze-medium-diverse-v2".
	Dataset string `json:"dataset"`
	// Transitions is the dataset size (D4RL: 1,000,000).
	Transitions int `json:"transitions"`
	// EpisodeSteps cuts episodes (a timeout) after this many steps
	// (generate_dataset.py's --max_episode_steps default: 1000).
	EpisodeSteps int `json:"episode_steps"`
	// ActionNoise is the std of the Gaussian added to the policy's action
	// before clipping to [−1, 1] (D4RL's --noisy: 0.2).
	ActionNoise float64 `json:"action_noise"`
	// Seed seeds starts, goals, waypoint noise, action noise and resets.
	Seed uint64 `json:"seed"`
	// Progress, if set, is called every 1000 transitions and at the end.
	Progress meter.Progress `json:"-"`
}

// AntMazeKindOf maps a dataset name to its maze env and kind:
// antmaze-umaze-v2 → fixed, *-diverse-v2 → diverse, *-play-v2 → play.
func AntMazeKindOf(name string) (*mujoco.Maze, AntMazeKind, error) {
	m, ok := mujoco.Mazes[name]
	if !ok {
		return nil, "", fmt.Errorf("%q is not an AntMaze dataset (known: %s)", name, strings.Join(mujoco.AntMazeNames(), ", "))
	}
	switch {
	case strings.Contains(name, "-diverse-"):
		return m, AntMazeDiverse, nil
	case strings.Contains(name, "-play-"):
		return m, AntMazePlay, nil
	case name == "antmaze-umaze-v2":
		return m, AntMazeFixed, nil
	}
	return nil, "", fmt.Errorf("%q names an evaluation env, not a dataset: use -diverse or -play (or antmaze-umaze-v2)", name)
}

// GoalObservation builds the low-level policy's observation from an AntMaze
// observation (qpos[0:15] | qvel[0:14]) and a target offset (dx, dy): the
// maze observation without x-y (27 entries) followed by the offset rescaled
// to length 10, as D4RL's _goal_reaching_policy_fn does; the layout of the
// mujoco.AntGoalName env's observations. dst: [29].
func GoalObservation(dst, mazeObs []float64, dx, dy float64) {
	copy(dst, mazeObs[2:29])
	if l := math.Hypot(dx, dy); l > 0 {
		dx, dy = dx/l*10, dy/l*10
	}
	dst[27], dst[28] = dx, dy
}

// AntMazeDataset rolls out lowLevel (a policy for mujoco.AntGoalName
// observations) steered by the maze's waypoints and returns the dataset:
// observations [N, 29], actions [N, 8], rewards 1 and terminals where the
// next x-y is within 0.5 m of the evaluation goal (D4RL's sparse
// relabelling; episodes continue past it, as in D4RL's collection),
// timeouts every EpisodeSteps, and infos goal [N, 2] (the commanded goal),
// qpos [N, 15], qvel [N, 14]. The evaluation goal is drawn once per dataset
// from the seed and recorded in the metadata. Same config → same bytes.
func AntMazeDataset(cfg AntMazeConfig, lowLevel eval.Policy) (*dataset.Dataset, map[string]dataset.Array, error) {
	m, kind, err := AntMazeKindOf(cfg.Dataset)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Transitions <= 0 || cfg.EpisodeSteps <= 0 || !(cfg.ActionNoise >= 0) || math.IsInf(cfg.ActionNoise, 0) {
		return nil, nil, fmt.Errorf("antmaze collect: transitions %d and episode steps %d must be positive, action noise %v finite and ≥ 0",
			cfg.Transitions, cfg.EpisodeSteps, cfg.ActionNoise)
	}
	e, err := mujoco.New(cfg.Dataset, mujoco.Options{})
	if err != nil {
		return nil, nil, err
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xa27a2e))
	evalX, evalY := m.SampleGoal(rng)
	N := cfg.Transitions
	d := &dataset.Dataset{ObsDim: 29, ActDim: 8,
		Observations: make([]float32, 0, N*29), NextObservations: make([]float32, 0, N*29),
		Actions: make([]float32, 0, N*8), Rewards: make([]float32, 0, N),
		Terminals: make([]float32, 0, N), Timeouts: make([]float32, 0, N),
		Meta: map[string]string{"env": cfg.Dataset, "seed": strconv.FormatUint(cfg.Seed, 10), "kind": string(kind),
			"eval_goal": fmt.Sprintf("%g,%g", evalX, evalY), "action_noise": strconv.FormatFloat(cfg.ActionNoise, 'g', -1, 64),
			"episode_steps": strconv.Itoa(cfg.EpisodeSteps), "recipe": "D4RL generate_dataset.py: waypoint planner + goal-reaching policy"}}
	goals := make([]float32, 0, 2*N)
	qpos := make([]float32, 0, 15*N)
	qvel := make([]float32, 0, 14*N)
	free := m.FreeCells()
	pol := make([]float64, 29)
	act := make([]float64, 8)
	appendF := func(dst []float32, src ...float64) []float32 {
		for _, v := range src {
			dst = append(dst, float32(v))
		}
		return dst
	}
	for d.Len() < N {
		obs := e.Reset(rng)
		var gx, gy float64
		switch kind {
		case AntMazeFixed:
			g := m.PlayGoals[0]
			gx, gy = m.SampleNear(g[0], g[1], rng)
		case AntMazePlay:
			g := m.PlayGoals[rng.IntN(len(m.PlayGoals))]
			gx, gy = m.SampleNear(g[0], g[1], rng)
		case AntMazeDiverse:
			g := free[rng.IntN(len(free))]
			gx, gy = m.SampleNear(g[0], g[1], rng)
		}
		if kind != AntMazeFixed {
			sx, sy := m.SampleStart(rng)
			st := e.State()
			st[0], st[1] = sx, sy
			if err := e.SetState(st); err != nil {
				return nil, nil, err
			}
			obs[0], obs[1] = sx, sy
		}
		if err := e.SetGoal(gx, gy); err != nil {
			return nil, nil, err
		}
		for t := 1; t <= cfg.EpisodeSteps && d.Len() < N; t++ {
			x, y := obs[0], obs[1]
			wx, wy := SteerTarget(m, x, y, gx, gy, rng)
			GoalObservation(pol, obs, wx-x, wy-y)
			lowLevel.Act(pol, act)
			for i := range act {
				if cfg.ActionNoise > 0 {
					act[i] += cfg.ActionNoise * rng.NormFloat64()
				}
				act[i] = math.Max(-1, math.Min(1, act[i]))
			}
			q, v := e.QPos(), e.QVel()
			next, _, _, _, err := e.Step(act)
			if err != nil {
				return nil, nil, fmt.Errorf("antmaze collect: transition %d: %w", d.Len(), err)
			}
			hit := math.Hypot(next[0]-evalX, next[1]-evalY) <= mujoco.GoalRadius
			// The last row is a timeout too, so every episode in the file ends.
			d.Append(obs, act, b2f64(hit), next, hit, t == cfg.EpisodeSteps || d.Len() == N-1)
			goals = appendF(goals, gx, gy)
			qpos = appendF(qpos, q...)
			qvel = appendF(qvel, v...)
			obs = next
			if cfg.Progress != nil && (d.Len()%1000 == 0 || d.Len() == N) {
				cfg.Progress(d.Len(), N, "")
			}
		}
	}
	infos := map[string]dataset.Array{
		"goal": {Data: goals, Shape: []int{N, 2}},
		"qpos": {Data: qpos, Shape: []int{N, 15}},
		"qvel": {Data: qvel, Shape: []int{N, 14}},
	}
	return d, infos, nil
}

// SteerTarget is the waypoint controller of AntMaze data collection (D4RL's
// WaypointController for the ant): from world (x, y) toward goal (gx, gy)
// it returns the point the goal-reaching policy is sent to, the centre of
// the next cell on a shortest path (Maze.Waypoint) jittered by
// U(0, Scaling/4) in each coordinate as D4RL does, or the goal itself in
// the goal's cell. From inside a wall's footprint (the torso can overhang
// a wall's edge) it heads straight for the goal. It draws two numbers from
// rng for a jittered waypoint, none otherwise.
func SteerTarget(m *mujoco.Maze, x, y, gx, gy float64, rng *rand.Rand) (wx, wy float64) {
	wx, wy, ok := m.Waypoint(x, y, gx, gy)
	if !ok {
		return gx, gy
	}
	if wx != gx || wy != gy {
		wx += rng.Float64() * m.Scaling * 0.25
		wy += rng.Float64() * m.Scaling * 0.25
	}
	return wx, wy
}

func b2f64(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
