package augment

// Ablation helpers for the paper's appendix studies. The ablation
// augmenters themselves (kfc++-contact, vae-noise, kfc++-prediction,
// kfc++-latent-prediction, fwd-prediction) are modes of Koopman; see its doc
// comment.

// IsContact reports whether a transition is a "contact" transition in the
// paper's sense (appendix "Training on non contact events"): some velocity
// dimension in dims changes sign between s_t and s_{t+1} (strictly: the
// product of the two values is negative, so a velocity that is exactly zero
// does not count).
func IsContact(s, next []float32, dims []int) bool {
	for _, j := range dims {
		if s[j]*next[j] < 0 {
			return true
		}
	}
	return false
}

// DefaultContactDims returns the velocity dimensions of an environment's
// observation, used by kfc++-contact when Options.ContactDims is nil. Known
// environments (by name, else by state dimension for the Gym-MuJoCo layouts
// qpos[1:] | qvel): hopper 5–10 (11-dim), walker2d and halfcheetah 8–16
// (17-dim), ant 13–26 (27-dim), pendulum [2] (θ̇), cartpole /
// cartpole-continuous [1, 3] (ẋ, θ̇), mountaincar-continuous [1].
func DefaultContactDims(env string, obsDim int) ([]int, bool) {
	span := func(lo, hi int) []int {
		var d []int
		for j := lo; j <= hi; j++ {
			d = append(d, j)
		}
		return d
	}
	switch env {
	case "hopper":
		return span(5, 10), obsDim == 11
	case "walker2d", "halfcheetah":
		return span(8, 16), obsDim == 17
	case "ant":
		return span(13, 26), obsDim >= 27
	case "pendulum":
		return []int{2}, obsDim == 3
	case "cartpole", "cartpole-continuous":
		return []int{1, 3}, obsDim == 4
	case "mountaincar-continuous":
		return []int{1}, obsDim == 2
	case "":
		switch obsDim {
		case 11:
			return span(5, 10), true
		case 17:
			return span(8, 16), true
		}
	}
	return nil, false
}
