package run

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/koopq/koopq/cql"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/sac"
)

// OfflineResult is results.json's record of a run without a simulator:
// the final diagnostics on the held-out episodes and the split.
type OfflineResult struct {
	cql.Diagnostics
	HoldoutFraction float64 `json:"holdout_fraction"`
	HoldoutEpisodes int     `json:"holdout_episodes"`
	TrainEpisodes   int     `json:"train_episodes"`
}

// streamHoldout seeds the held-out split, apart from training's streams.
const streamHoldout = 0x6b6f6f70_686f6c64 // "koophold"

func holdoutFraction(f float64) float64 {
	if f == 0 {
		return DefaultHoldoutFraction
	}
	return f
}

// SplitHoldout splits d by episode into a training set and a held-out set
// of round(fraction·episodes) episodes (at least one; fraction 0 means
// DefaultHoldoutFraction), chosen at random from seed. No episode is in
// both. It needs at least two episodes.
func SplitHoldout(d *dataset.Dataset, fraction float64, seed uint64) (train, held *dataset.Dataset, err error) {
	fraction = holdoutFraction(fraction)
	if !(fraction > 0 && fraction < 1) {
		return nil, nil, fmt.Errorf("holdout fraction %v: must be in (0, 1)", fraction)
	}
	eps := d.Episodes()
	if len(eps) < 2 {
		return nil, nil, fmt.Errorf("training without a simulator holds out whole episodes for its diagnostics; the data has %d episode (mark episode ends with terminals or timeouts)", len(eps))
	}
	k := max(1, int(math.Round(fraction*float64(len(eps)))))
	k = min(k, len(eps)-1)
	perm := rand.New(rand.NewPCG(seed, streamHoldout)).Perm(len(eps))
	pick := perm[:k]
	slices.Sort(pick)
	isHeld := make([]bool, len(eps))
	for _, i := range pick {
		isHeld[i] = true
	}
	train, held = subset(d), subset(d)
	for i, e := range eps {
		dst := train
		if isHeld[i] {
			dst = held
		}
		appendRows(dst, d, e.Start, e.Start+e.Len)
	}
	return train, held, nil
}

func subset(d *dataset.Dataset) *dataset.Dataset {
	return &dataset.Dataset{ObsDim: d.ObsDim, ActDim: d.ActDim, Meta: d.Meta}
}

// appendRows appends rows [lo, hi) of src to dst.
func appendRows(dst, src *dataset.Dataset, lo, hi int) {
	S, A := src.ObsDim, src.ActDim
	dst.Observations = append(dst.Observations, src.Observations[lo*S:hi*S]...)
	dst.NextObservations = append(dst.NextObservations, src.NextObservations[lo*S:hi*S]...)
	dst.Actions = append(dst.Actions, src.Actions[lo*A:hi*A]...)
	dst.Rewards = append(dst.Rewards, src.Rewards[lo:hi]...)
	dst.Terminals = append(dst.Terminals, src.Terminals[lo:hi]...)
	if src.Timeouts != nil {
		dst.Timeouts = append(dst.Timeouts, src.Timeouts[lo:hi]...)
	}
}

// ScaleFor returns the action bounds a run trains with: the env's box, or
// with Env EnvNone cfg.ActionLow/ActionHigh when given (every data action
// must lie inside), else the data's per-dimension minimum and maximum (a
// constant dimension c gets [c−1, c+1]).
func ScaleFor(cfg TrainConfig, data *dataset.Dataset) (sac.ActionScale, error) {
	if cfg.Env != EnvNone {
		e, err := env.Make(cfg.Env)
		if err != nil {
			return sac.ActionScale{}, err
		}
		return sac.Scale(e)
	}
	A := data.ActDim
	if len(cfg.ActionLow) > 0 || len(cfg.ActionHigh) > 0 {
		if len(cfg.ActionLow) != A || len(cfg.ActionHigh) != A {
			return sac.ActionScale{}, fmt.Errorf("--action-low/--action-high have %d/%d values, dataset %s has %d-dimensional actions",
				len(cfg.ActionLow), len(cfg.ActionHigh), cfg.Data, A)
		}
		sc := sac.ActionScale{Low: make([]float32, A), High: make([]float32, A)}
		for j := range A {
			if !(cfg.ActionHigh[j] > cfg.ActionLow[j]) {
				return sac.ActionScale{}, fmt.Errorf("--action-low/--action-high: dimension %d has bounds [%g, %g]: low must be below high", j, cfg.ActionLow[j], cfg.ActionHigh[j])
			}
			if lo, hi := cfg.ActionLow[j], cfg.ActionHigh[j]; math.Abs(lo) > math.MaxFloat32 || math.Abs(hi) > math.MaxFloat32 || !(hi-lo <= math.MaxFloat32) {
				return sac.ActionScale{}, fmt.Errorf("--action-low/--action-high: dimension %d has bounds [%g, %g]: the policy computes in float32, so |low|, |high| and high − low must stay within %g",
					j, cfg.ActionLow[j], cfg.ActionHigh[j], math.MaxFloat32)
			}
			sc.Low[j], sc.High[j] = float32(cfg.ActionLow[j]), float32(cfg.ActionHigh[j])
		}
		if err := checkActionRange(data, cfg.Data, "--action-low/--action-high", cfg.ActionLow, cfg.ActionHigh); err != nil {
			return sac.ActionScale{}, err
		}
		return sc, nil
	}
	if data.Len() == 0 {
		return sac.ActionScale{}, fmt.Errorf("dataset %s has no transitions to take action bounds from", cfg.Data)
	}
	sc := sac.ActionScale{Low: slices.Clone(data.Actions[:A]), High: slices.Clone(data.Actions[:A])}
	for i, v := range data.Actions {
		j := i % A
		sc.Low[j], sc.High[j] = min(sc.Low[j], v), max(sc.High[j], v)
	}
	for j := range A {
		if !(sc.High[j] > sc.Low[j]) {
			sc.Low[j], sc.High[j] = sc.Low[j]-1, sc.High[j]+1
		}
	}
	return sc, nil
}

// ResolveEnv fills in an empty cfg.Env from the dataset: the env its
// metadata records when koopq knows it, else EnvNone. It reads the dataset
// (cfg.Data) when data is nil and returns it (nil when nothing was read).
func ResolveEnv(cfg TrainConfig, data *dataset.Dataset) (TrainConfig, *dataset.Dataset, error) {
	if cfg.Env != "" || cfg.Data == "" {
		return cfg, data, nil
	}
	if data == nil {
		if _, err := os.Stat(cfg.Data); err != nil {
			return cfg, nil, nil // CheckTrain reports it
		}
		var err error
		if data, err = ReadDataset(cfg.Data, cfg.ReadOptions); err != nil {
			return cfg, nil, err
		}
	}
	cfg.Env = EnvNone
	if got := EnvOfLabel(data.Meta["env"]); got != "" && slices.Contains(env.Names(), got) {
		cfg.Env = got
	}
	return cfg, data, nil
}
