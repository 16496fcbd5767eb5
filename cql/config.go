// Package cql implements offline Conservative Q-learning (Kumar et al. 2020),
// the SAC-based CQL(H) variant with importance-sampled logsumexp that the KFC
// paper builds on, with state shifts entering the Bellman update through a
// StateShift (Step 3 of the paper, Eq. policystepKFC): an interface cql
// declares and the augmenters of package augment implement, so that cql
// imports neither augment nor koopman (TestNoPluginImports).
//
// Where a shifted state is used follows the KFC authors' code: the shifted
// s̃_t in Q(s̃_t, a_t) (Bellman error and the CQL "push-up" data term), the
// shifted s̃_{t+1} in the target Q(s̃_{t+1}, a'), with a' ~ π(·|s_{t+1}) drawn
// at the clean next state; clean states in the logsumexp samples, the actor
// loss and the behaviour-cloning warm-up.
package cql

import (
	"fmt"
	"math"

	"github.com/koopq/koopq/sac"
)

// Config holds CQL's hyperparameters. Defaults are the KFC authors' code
// (their main_kfc.py / KFC_prime.py defaults), which the paper's CQL baseline
// follows; the comments give CORL's Gym-MuJoCo values where they differ.
type Config struct {
	Net           sac.NetConfig `json:"net"`              // critics and actor, 2×256 ReLU (CORL: 3×256)
	Gamma         float64       `json:"gamma"`            // discount γ = 0.99
	Tau           float64       `json:"tau"`              // target Polyak rate τ = 5e-3
	LRActor       float64       `json:"lr_actor"`         // policy learning rate 1e-4 (CORL: 3e-5)
	LRCritic      float64       `json:"lr_critic"`        // Q learning rate 3e-4
	LRAlphaPrime  float64       `json:"lr_alpha_prime"`   // Lagrange α' learning rate 3e-4
	Batch         int           `json:"batch"`            // minibatch 256
	NumActions    int           `json:"num_actions"`      // samples per source in the logsumexp: 10 (×3 sources)
	MinQWeight    float64       `json:"min_q_weight"`     // CQL α (min-Q weight) 10
	Temp          float64       `json:"temp"`             // logsumexp temperature 1
	Lagrange      bool          `json:"lagrange"`         // tune α' by dual gradient descent (authors: true)
	LagrangeThres float64       `json:"lagrange_thresh"`  // τ_lagrange = 10
	Alpha         float64       `json:"alpha"`            // fixed entropy weight α = 0.2
	AutoEntropy   bool          `json:"auto_entropy"`     // tune α toward entropy −|A| (authors: off; CORL: on)
	BackupEntropy bool          `json:"backup_entropy"`   // subtract α log π in the target (authors: yes; CORL: no)
	BCSteps       int           `json:"bc_steps"`         // behaviour-cloning warm-up steps 40000 (policy_eval_start)
	Steps         int           `json:"steps"`            // gradient steps (paper: 1M)
	Normalize     bool          `json:"normalize_states"` // standardize states with dataset mean/std (authors: off; CORL: on)
	Seed          uint64        `json:"seed"`

	// ActorInit is the actor's initialization: "" or "net" (the same as
	// Net.Init, like every other network; authors: Xavier-uniform, zero
	// bias) or "torch", CORL's TanhGaussianPolicy: hidden layers keep
	// PyTorch's nn.Linear default (weights and biases U(±1/√fan_in)), the
	// output layer is Xavier-uniform with gain 1e-2 and zero bias, also
	// when the critics are orthogonal.
	ActorInit string `json:"actor_init,omitempty"`
	// LogStdOffset is CORL's log_std_offset: log σ = raw + offset (CORL
	// −1, multiplier 1; authors 0), before the [−20, 2] clamp. It is
	// applied by starting the log σ output biases at the offset, which is
	// the same parameterization: the gradients are identical and Adam's
	// update does not depend on where a parameter starts.
	LogStdOffset float64 `json:"log_std_offset,omitempty"`
	// NormalizeReward multiplies every reward by
	// RewardEpisodeSteps/(max − min episode return) over the dataset's
	// episodes, CORL's modify_reward for Gym-MuJoCo (its YAMLs enable it
	// for hopper-medium only; the authors never scale rewards). An episode
	// ends at a terminal, a timeout or RewardEpisodeSteps rows.
	NormalizeReward bool `json:"normalize_reward,omitempty"`
	// RewardEpisodeSteps is the time limit used by NormalizeReward (CORL:
	// 1000, the Gym-MuJoCo limit); 0 means 1000.
	RewardEpisodeSteps int `json:"reward_episode_steps,omitempty"`

	// RewardScale and RewardBias transform every reward in the Bellman
	// target, r ← RewardScale·r + RewardBias (CORL's reward_scale and
	// reward_bias; AntMaze: 10r − 5). RewardScale 0 means 1 (no transform),
	// so configs written before the fields existed keep their meaning.
	RewardScale float64 `json:"reward_scale,omitempty"`
	RewardBias  float64 `json:"reward_bias,omitempty"`
	// MaxTargetBackup replaces the target's single a' ~ π(·|s') by
	// NumActions samples and backs up the largest min_k Q̄_k(s̃', a'_j) over
	// them, with the log π of that sample in the entropy term (CQL's and
	// CORL's cql_max_target_backup; AntMaze: on).
	MaxTargetBackup bool `json:"max_target_backup,omitempty"`
	// ClipDiff clamps each state's CQL difference T·LSE − Q(s̃, a) to
	// [ClipDiffMin, ClipDiffMax] before the batch mean (CORL's
	// cql_clip_diff_min/max; AntMaze: −200 and +∞, written as
	// math.MaxFloat64); clamped states pass no gradient, and the Lagrange
	// step sees the clamped mean.
	ClipDiff    bool    `json:"clip_diff,omitempty"`
	ClipDiffMin float64 `json:"clip_diff_min,omitempty"`
	ClipDiffMax float64 `json:"clip_diff_max,omitempty"`
	// PushUpClean evaluates CQL's push-up data term at the clean state,
	// Q(s, a), instead of the shifted Q(s̃, a) that the Bellman error uses.
	// Off (the authors' code), the regularizer compares a logsumexp at the
	// clean s with the data term at s̃, so a shift that lowers Q(s̃, a)
	// widens the measured gap and lets the Lagrange loop lower α' (their
	// code's undocumented mix of state sets); on, both terms are at s, at
	// the cost of B more critic rows per step. Without augmentation the two
	// are the same loss.
	PushUpClean bool `json:"push_up_clean,omitempty"`
	// LogAlphaPrimeInit is the Lagrange multiplier's starting log α'
	// (authors 0; CORL 1.0: its Scalar(1.0)).
	LogAlphaPrimeInit float64 `json:"log_alpha_prime_init,omitempty"`
	// Q1Hidden and Q2Hidden, when set, replace Net.Hidden for the first and
	// second critic (and their targets). CORL's AntMaze config asks for 5
	// hidden layers, which its code applies to critic_1 only: critic_2 is
	// always built with 3.
	Q1Hidden []int `json:"q1_hidden,omitempty"`
	Q2Hidden []int `json:"q2_hidden,omitempty"`
	// RNGStreams is how the Trainer splits Seed into random streams.
	// RNGPaired ("paired", DefaultConfig) derives four independent PCG
	// streams: network initialisation, minibatch indices, the update's
	// policy samples, and the augmenter's draws, so two runs with one seed
	// and different augmenters start from the same weights, see the same
	// minibatches and draw the same policy noise (issue 67, paired
	// comparisons). RNGLegacy ("", the value of configs written before the
	// field existed) is the single stream that fed all four in turn; it is
	// kept so those runs resume bit-identically.
	RNGStreams string `json:"rng_streams,omitempty"`
}

// Values of Config.RNGStreams.
const (
	RNGLegacy = ""       // one PCG stream (Seed, 0xc91) for everything
	RNGPaired = "paired" // independent init, batch, policy and augment streams
)

// rewardTransform returns RewardScale (0 read as 1) and RewardBias, and
// whether they change rewards at all.
func (c Config) rewardTransform() (scale, bias float64, on bool) {
	scale = c.RewardScale
	if scale == 0 {
		scale = 1
	}
	return scale, c.RewardBias, scale != 1 || c.RewardBias != 0
}

// CriticNet returns the network config of critic i (0 or 1): Net with
// Q1Hidden or Q2Hidden as hidden widths when set.
func (c Config) CriticNet(i int) sac.NetConfig {
	n := c.Net
	if h := [2][]int{c.Q1Hidden, c.Q2Hidden}[i]; len(h) > 0 {
		n.Hidden = h
	}
	return n
}

// DefaultConfig is the KFC authors' CQL configuration ("paper").
func DefaultConfig() Config {
	return Config{Net: sac.DefaultNetConfig(), Gamma: 0.99, Tau: 5e-3, LRActor: 1e-4, LRCritic: 3e-4,
		LRAlphaPrime: 3e-4, Batch: 256, NumActions: 10, MinQWeight: 10, Temp: 1, Lagrange: true,
		LagrangeThres: 10, Alpha: 0.2, BackupEntropy: true, BCSteps: 40000, Steps: 1000000, RNGStreams: RNGPaired}
}

// CORLConfig is CORL's Gym-MuJoCo CQL (algorithms/offline/cql.py with its
// configs/offline/cql/*/*_v2.yaml): 3×256 networks, orthogonal critics and
// CORL's actor init ("torch"), log σ offset −1, policy lr 3e-5 (also α's),
// automatic entropy from α = 1 toward −|A|, min-Q weight 10 without
// Lagrange, no entropy backup, no BC warm-up, state normalization (std
// floor 1e-3). Reward normalization is off as in 17 of CORL's 18 locomotion
// YAMLs; set NormalizeReward for hopper-medium, as CORL's YAML does.
//
// What still differs from CORL's cql.py: CORL steps α before the networks
// and the actor before the critics, with every loss computed first, so the
// update is the same; evaluation cadence and episode counts belong to the
// caller. CORL's AntMaze settings are CORLAntMazeConfig.
func CORLConfig() Config {
	c := DefaultConfig()
	c.Net = sac.NetConfig{Hidden: []int{256, 256, 256}, Init: "orthogonal"}
	c.LRActor = 3e-5
	c.AutoEntropy = true
	c.Alpha = 1
	c.Lagrange = false
	c.BackupEntropy = false
	c.BCSteps = 0
	c.Normalize = true
	c.ActorInit = "torch"
	c.LogStdOffset = -1
	return c
}

// CORLAntMazeConfig is CORL's AntMaze CQL (algorithms/offline/cql.py with
// configs/offline/cql/antmaze/*_v2.yaml), on top of CORLConfig:
//
//   - policy lr 1e-4 (also α's), Q lr 3e-4 (also α′'s: qf_lr);
//   - min-Q weight (cql_alpha) 5 with Lagrange on and target action gap
//     0.8. CORL's Lagrange term is α′·cql_alpha·(diff − gap); koopq's (the
//     CQL authors') is α′·(w·diff − τ), the same with τ = 5·0.8 = 4;
//     log α′ starts at 1.0 (CORL's Scalar(1.0));
//   - max-target backup on (10 samples of π(·|s′)); CQL differences clipped
//     below at −200 (above: +∞, as math.MaxFloat64);
//   - rewards 10·r − 5 (reward_scale 10, reward_bias −5), no state
//     normalization;
//   - actor 3×256; critic_1 5×256 and critic_2 3×256: the YAMLs set
//     q_n_hidden_layers 5, which CORL's code passes to critic_1 only.
//
// Unchanged from CORLConfig: orthogonal critics, CORL's actor init and log σ
// offset −1, automatic entropy (α from 1, target −|A|), no entropy backup,
// no BC warm-up, batch 256, γ 0.99, τ 5e-3, 10 actions per logsumexp
// source, temperature 1, 1M steps.
func CORLAntMazeConfig() Config {
	c := CORLConfig()
	c.LRActor = 1e-4
	c.LRCritic = 3e-4
	c.LRAlphaPrime = 3e-4
	c.MinQWeight = 5
	c.Lagrange = true
	c.LagrangeThres = 5 * 0.8
	c.LogAlphaPrimeInit = 1
	c.MaxTargetBackup = true
	c.ClipDiff, c.ClipDiffMin, c.ClipDiffMax = true, -200, math.MaxFloat64
	c.RewardScale, c.RewardBias = 10, -5
	c.Normalize = false
	c.Q1Hidden = []int{256, 256, 256, 256, 256}
	c.Q2Hidden = []int{256, 256, 256}
	return c
}

// Validate rejects configurations that cannot run.
func (c Config) Validate() error {
	if err := c.Net.Validate(); err != nil {
		return fmt.Errorf("cql: %w", err)
	}
	switch {
	case c.Batch <= 0:
		return fmt.Errorf("cql: batch %d must be positive", c.Batch)
	case c.NumActions <= 0:
		return fmt.Errorf("cql: num_actions %d must be positive", c.NumActions)
	case c.Gamma < 0 || c.Gamma >= 1:
		return fmt.Errorf("cql: gamma %v must be in [0, 1)", c.Gamma)
	case c.Tau <= 0 || c.Tau > 1:
		return fmt.Errorf("cql: tau %v must be in (0, 1]", c.Tau)
	case c.LRActor <= 0 || c.LRCritic <= 0 || c.LRAlphaPrime <= 0:
		return fmt.Errorf("cql: learning rates must be positive")
	case c.Temp <= 0:
		return fmt.Errorf("cql: temp %v must be positive", c.Temp)
	case c.Alpha <= 0:
		return fmt.Errorf("cql: alpha %v must be positive", c.Alpha)
	case c.Steps < 0 || c.BCSteps < 0:
		return fmt.Errorf("cql: steps must be non-negative")
	case c.ActorInit != "" && c.ActorInit != "net" && c.ActorInit != "torch":
		return fmt.Errorf("cql: actor_init %q: want net or torch", c.ActorInit)
	case math.IsNaN(c.LogStdOffset) || math.IsInf(c.LogStdOffset, 0):
		return fmt.Errorf("cql: log_std_offset %v must be finite", c.LogStdOffset)
	case c.RewardEpisodeSteps < 0:
		return fmt.Errorf("cql: reward_episode_steps %d must be non-negative", c.RewardEpisodeSteps)
	case !finite(c.RewardScale) || !finite(c.RewardBias) || !finite(c.LogAlphaPrimeInit):
		return fmt.Errorf("cql: reward_scale %v, reward_bias %v and log_alpha_prime_init %v must be finite", c.RewardScale, c.RewardBias, c.LogAlphaPrimeInit)
	case c.ClipDiff && !(c.ClipDiffMin <= c.ClipDiffMax):
		return fmt.Errorf("cql: clip_diff_min %v must not exceed clip_diff_max %v", c.ClipDiffMin, c.ClipDiffMax)
	case c.RNGStreams != RNGLegacy && c.RNGStreams != RNGPaired:
		return fmt.Errorf("cql: rng_streams %q: want %q (or absent: the legacy single stream)", c.RNGStreams, RNGPaired)
	}
	for i, h := range [][]int{c.Q1Hidden, c.Q2Hidden} {
		for _, w := range h {
			if w <= 0 {
				return fmt.Errorf("cql: q%d_hidden %v: widths must be positive", i+1, h)
			}
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
