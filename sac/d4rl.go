package sac

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/meter"
)

// D4RLKinds are the D4RL v2 Gym-MuJoCo dataset kinds koopq can generate.
var D4RLKinds = []string{"random", "medium", "expert", "medium-replay", "medium-expert", "full-replay"}

// ParseD4RLName splits a D4RL-style dataset name "hopper-medium-replay-v2"
// into its environment ("hopper") and kind ("medium-replay"). The "-v2"
// suffix is optional; other versions are rejected (koopq makes v2
// semantics: timeouts, qpos/qvel infos).
func ParseD4RLName(name string) (envName, kind string, err error) {
	s := strings.ToLower(name)
	if i := strings.LastIndex(s, "-v"); i > 0 && !strings.Contains(s[i+2:], "-") {
		if s[i+2:] != "2" {
			return "", "", fmt.Errorf("dataset %q: only v2 datasets are generated (use %s-v2)", name, s[:i])
		}
		s = s[:i]
	}
	// Longest kinds first, so "medium-expert" is not read as "expert".
	for _, k := range []string{"medium-replay", "medium-expert", "full-replay", "random", "medium", "expert"} {
		if e, ok := strings.CutSuffix(s, "-"+k); ok && e != "" {
			return e, k, nil
		}
	}
	return "", "", fmt.Errorf("dataset %q: want <env>-<kind>-v2 with kind one of %s", name, strings.Join(D4RLKinds, ", "))
}

// RandomPolicy is D4RL's "random" behaviour policy: a randomly initialized
// tanh-Gaussian actor (net, seeded), acting stochastically.
func RandomPolicy(e env.Env, net NetConfig, seed uint64) (*Policy, error) {
	scale, err := Scale(e)
	if err != nil {
		return nil, err
	}
	actor := NewActor(net, e.ObservationSpace().Dim(), e.ActionSpace().Dim(), rand.New(rand.NewPCG(seed, 0x7a4d0)))
	return NewPolicy(actor, nil, scale), nil
}

// Generated is a dataset made by rolling out a policy, with D4RL's infos.
type Generated struct {
	Data  *dataset.Dataset
	Infos map[string]dataset.Array // qpos [N, nq], qvel [N, nv], action_log_probs [N]
}

// Generate samples n transitions from p acting stochastically (as D4RL's
// data was generated) in fresh instances of envName, with D4RL v2's
// bookkeeping: episodes truncate at the environment's 1000-step limit with
// timeouts, terminals mark only true terminations, infos/qpos and
// infos/qvel hold the simulator state before each step and
// infos/action_log_probs the policy's log π(a|s). The last row is marked as
// a timeout when it does not end an episode.
//
// The rows are made by two independent streams (seeds (seed, 0) and
// (seed, 1)) on two goroutines, stream 0's rows first, each ending with a
// cut episode; the bytes depend only on the arguments, never on scheduling.
func Generate(ctx context.Context, envName string, p *Policy, n int, seed uint64, progress meter.Progress) (*Generated, error) {
	if n <= 0 {
		return nil, fmt.Errorf("generate %s: %d transitions requested, want > 0", envName, n)
	}
	counts := [2]int{(n + 1) / 2, n / 2}
	var parts [2]*Generated
	var errs [2]error
	var done [2]atomic.Int64 // rows made per stream; stream 1 writes, stream 0 reports
	report := func() {
		if progress != nil {
			progress(int(done[0].Load()+done[1].Load()), n, "")
		}
	}
	pols := [2]*Policy{p, p.Clone()}
	runStream := func(k int) {
		if counts[k] == 0 {
			return
		}
		e, err := env.Make(envName)
		if err != nil {
			errs[k] = err
			return
		}
		parts[k], errs[k] = rollout(ctx, e, pols[k], counts[k], rand.New(rand.NewPCG(seed, uint64(k))), func(d, _ int, _ string) {
			done[k].Store(int64(d))
			if k == 0 {
				report()
			}
		})
	}
	ch := make(chan struct{})
	go func() { runStream(1); close(ch) }()
	runStream(0)
	<-ch
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := parts[0]
	if parts[1] != nil {
		out = concatGenerated(parts[0], parts[1])
	}
	done[0].Store(int64(counts[0]))
	done[1].Store(int64(counts[1]))
	report()
	return out, nil
}

func rollout(ctx context.Context, e env.Env, p *Policy, n int, rng *rand.Rand, progress meter.Progress) (*Generated, error) {
	S, A := e.ObservationSpace().Dim(), e.ActionSpace().Dim()
	nq, nv := 0, 0
	mj, isMJ := e.(qposer)
	if isMJ {
		nq, nv = len(mj.QPos()), len(mj.QVel())
	}
	buf := NewReplay(S, A, nq, nv, n)
	act := make([]float64, A)
	obs := e.Reset(rng)
	for i := 0; i < n; i++ {
		if i%10000 == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if progress != nil {
				progress(i, n, "")
			}
		}
		logp := p.SampleLogProb(obs, rng, act)
		var qpos, qvel []float64
		if isMJ {
			qpos, qvel = mj.QPos(), mj.QVel()
		}
		next, r, term, trunc, err := e.Step(act)
		if err != nil {
			return nil, fmt.Errorf("generate %s: step %d: %w", e.Name(), i, err)
		}
		if err := buf.Add(obs, act, r, next, term, trunc, qpos, qvel, float64(logp)); err != nil {
			return nil, err
		}
		obs = next
		if term || trunc {
			obs = e.Reset(rng)
		}
	}
	d, infos := buf.Slice(0, n)
	return &Generated{Data: d, Infos: infos}, nil
}

func concatGenerated(parts ...*Generated) *Generated {
	ds := make([]*dataset.Dataset, len(parts))
	for i, p := range parts {
		ds[i] = p.Data
	}
	out := &Generated{Data: Concat(ds...), Infos: map[string]dataset.Array{}}
	for name, a := range parts[0].Infos {
		c := dataset.Array{Shape: append([]int(nil), a.Shape...)}
		c.Shape[0] = 0
		for _, p := range parts {
			c.Data = append(c.Data, p.Infos[name].Data...)
			c.Shape[0] += p.Infos[name].Shape[0]
		}
		out.Infos[name] = c
	}
	return out
}

// CutAfterLastEpisode returns g without the rows after its last terminal or
// timeout (D4RL's stitch_dataset does this to the first file of a
// medium-expert pair), or g itself if no episode ends.
func CutAfterLastEpisode(g *Generated) *Generated {
	d := g.Data
	last := -1
	if eps := d.Episodes(); len(eps) > 0 {
		e := eps[len(eps)-1]
		if !e.Complete() && len(eps) > 1 {
			e = eps[len(eps)-2]
		}
		if e.Complete() {
			last = e.Start + e.Len - 1
		}
	}
	if last < 0 || last == d.Len()-1 {
		return g
	}
	n := last + 1
	out := &Generated{Data: Slice(d, 0, n), Infos: map[string]dataset.Array{}}
	for name, a := range g.Infos {
		w := len(a.Data) / a.Shape[0]
		s := append([]int{n}, a.Shape[1:]...)
		out.Infos[name] = dataset.Array{Data: append([]float32(nil), a.Data[:n*w]...), Shape: s}
	}
	return out
}

// MediumExpert is D4RL's medium-expert: medium cut after its last complete
// episode, followed by expert.
func MediumExpert(medium, expert *Generated) *Generated {
	return concatGenerated(CutAfterLastEpisode(medium), expert)
}

// RunInfo is what a run directory says about its run so far.
type RunInfo struct {
	Config    RunConfig
	Snapshots []RunSnapshot
	Expert    *RunSnapshot // the final policy; nil while the run is not finished
	ReplayLen int          // replay rows the last checkpoint counts
}

// ReadRun reads the config and last checkpoint of the run in dir.
func ReadRun(dir string) (*RunInfo, error) {
	cfg, err := ReadRunConfig(dir)
	if err != nil {
		return nil, err
	}
	e, err := env.Make(cfg.Env)
	if err != nil {
		return nil, err
	}
	var st runState
	ag := NewAgent(cfg.SAC, e.ObservationSpace().Dim(), e.ActionSpace().Dim(), rand.New(rand.NewPCG(0, 0)))
	if err := loadCheckpoint(filepath.Join(dir, runCheckpointFile), ag, &st); err != nil {
		return nil, err
	}
	info := &RunInfo{Config: cfg, Snapshots: st.Snapshots, ReplayLen: st.ReplayLen}
	if st.Done {
		res, err := ReadRunResult(dir)
		if err != nil {
			return nil, err
		}
		info.Expert = &res.Expert
	}
	return info, nil
}

// RunReplay reads the replay buffer of the SAC run in dir: the first rows
// rows (all rows the last checkpoint counts if rows ≤ 0).
func RunReplay(dir string, rows int) (*Replay, error) {
	info, err := ReadRun(dir)
	if err != nil {
		return nil, err
	}
	if rows <= 0 || rows > info.ReplayLen {
		rows = info.ReplayLen
	}
	e, err := env.Make(info.Config.Env)
	if err != nil {
		return nil, err
	}
	nq, nv := 0, 0
	if mj, ok := e.(qposer); ok {
		nq, nv = len(mj.QPos()), len(mj.QVel())
	}
	buf := NewReplay(e.ObservationSpace().Dim(), e.ActionSpace().Dim(), nq, nv, rows)
	f, err := os.Open(filepath.Join(dir, runReplayFile))
	if err != nil {
		return nil, fmt.Errorf("sac run: %w", err)
	}
	defer f.Close()
	if err := buf.readRows(f, rows); err != nil {
		return nil, fmt.Errorf("sac run: %s: %w", filepath.Join(dir, runReplayFile), err)
	}
	return buf, nil
}
