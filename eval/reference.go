package eval

import (
	"strings"

	"github.com/koopq/koopq/rundir"
)

// Reference holds the returns that define a normalized score of 0 (Random)
// and 100 (Expert).
type Reference struct {
	Random, Expert float64
	Source         string // how the numbers were obtained
	// GoalReaching marks sparse goal-reaching envs (AntMaze): an episode
	// succeeds when its return is at least 1, and evaluations report the
	// success rate.
	GoalReaching bool
}

// Normalize maps a return to 100·(R − Random)/(Expert − Random).
func (r Reference) Normalize(ret float64) float64 {
	return 100 * (ret - r.Random) / (r.Expert - r.Random)
}

// References maps env names to reference returns. MuJoCo entries are D4RL's
// v2 REF_MIN_SCORE / REF_MAX_SCORE (d4rl/infos.py). Classic-control entries
// were measured with koopq itself, as each Source says.
var References = map[string]Reference{
	"hopper":      {Random: -20.272305, Expert: 3234.3, Source: "D4RL v2 infos.py"},
	"halfcheetah": {Random: -280.178953, Expert: 12135.0, Source: "D4RL v2 infos.py"},
	"walker2d":    {Random: 1.629008, Expert: 4592.3, Source: "D4RL v2 infos.py"},
	"ant":         {Random: -325.6, Expert: 3879.7, Source: "D4RL v2 infos.py"},
	// AntMaze: D4RL registers ref_min_score 0 and ref_max_score 1 for every
	// antmaze-*-v2 env, so the normalized score is 100 × the success rate.
	"antmaze": {Random: 0, Expert: 1, Source: "D4RL v2 antmaze ref_min_score/ref_max_score", GoalReaching: true},
	// Measured with `koopq references --env pendulum --sac-steps 30000
	// --episodes 100 --seed 0`: a uniform-random policy, and SAC (2×256,
	// defaults) after 30k env steps, 100 deterministic episodes each.
	"pendulum": {Random: -1242.33, Expert: -155.42, Source: "koopq references, 100 episodes: uniform random / SAC 30k steps"},
}

// ReferenceFor resolves the environment part of a dataset or env id to
// its reference returns: "hopper", "hopper-medium-v2", "Hopper-v3",
// "mujoco/hopper/medium-v0" and "halfcheetah_medium_replay" all give
// "hopper"'s (or "halfcheetah"'s) entry. It returns the matched name, and
// false when no known environment matches.
func ReferenceFor(id string) (string, Reference, bool) {
	id = strings.ToLower(id)
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '/' || r == '-' || r == '_' || r == ' ' }) {
		if r, ok := References[part]; ok {
			return part, r, true
		}
	}
	return "", Reference{}, false
}

// Score is a float64 that encodes NaN (no reference returns for the env) as
// JSON null and decodes null back to NaN (rundir.Score, the type of the
// scores in a run directory's files).
type Score = rundir.Score
