package cql

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// checkpointParams lists every tensor that defines the learner's state:
// networks, targets and Adam moments, with unique names.
func (l *Learner) checkpointParams() []*nn.Param {
	var ps []*nn.Param
	add := func(prefix string, list []*nn.Param) {
		for _, p := range list {
			ps = append(ps, &nn.Param{Name: prefix + p.Name, Shape: p.Shape, Data: p.Data})
		}
	}
	add("", l.Actor.Params())
	for i := range l.Q {
		add("", l.Q[i].Params())
		add("target.", l.QT[i].Params())
	}
	addAdam := func(prefix string, a *nn.Adam) {
		for i, p := range a.Params {
			ps = append(ps, &nn.Param{Name: prefix + "m." + p.Name, Shape: p.Shape, Data: a.M[i]})
			ps = append(ps, &nn.Param{Name: prefix + "v." + p.Name, Shape: p.Shape, Data: a.V[i]})
		}
	}
	addAdam("adam.actor.", l.optA)
	addAdam("adam.q1.", l.Opt[0])
	addAdam("adam.q2.", l.Opt[1])
	return ps
}

// scalarState is the non-tensor part of a checkpoint.
type scalarState struct {
	Steps         int           `json:"steps"`
	LogAlpha      float64       `json:"log_alpha"`
	LogAlphaPrime float64       `json:"log_alpha_prime"`
	AdamT         [3]int        `json:"adam_t"`      // actor, q1, q2
	Scalar        [2][3]float64 `json:"scalar_adam"` // m, v, t for α and α'
}

// SaveCheckpoint writes the full training state (networks, targets,
// optimizer moments, scalars, config and, when rng is non-nil, the single
// RNG stream under "rng") atomically to path, so that training resumed from
// it continues bit-for-bit. extra is stored as metadata (provenance; the
// paired layout's streams, from Trainer.Save).
func (l *Learner) SaveCheckpoint(path string, rng *rand.PCG, extra map[string]string) error {
	st := scalarState{Steps: l.Steps, LogAlpha: l.LogAlpha, LogAlphaPrime: l.LogAlphaPrime,
		AdamT: [3]int{l.optA.T, l.Opt[0].T, l.Opt[1].T}}
	for i, s := range l.scalar {
		st.Scalar[i] = [3]float64{s.M, s.V, float64(s.T)}
	}
	if err := l.checkFinite(true); err != nil {
		return fmt.Errorf("refusing to write checkpoint %s: %w", path, err)
	}
	sj, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("checkpoint %s: state: %w", path, err)
	}
	cj, err := json.Marshal(l.Cfg)
	if err != nil {
		return fmt.Errorf("checkpoint %s: config: %w", path, err)
	}
	nj, err := json.Marshal(l.Norm)
	if err != nil {
		return fmt.Errorf("checkpoint %s: normalizer: %w", path, err)
	}
	meta := map[string]string{"koopq.kind": "cql-learner", "state": string(sj), "config": string(cj),
		"normalizer": string(nj), "obs_dim": strconv.Itoa(l.ObsDim), "act_dim": strconv.Itoa(l.ActDim)}
	if rng != nil {
		rb, err := rng.MarshalBinary()
		if err != nil {
			return err
		}
		meta["rng"] = base64.StdEncoding.EncodeToString(rb)
	}
	for k, v := range extra {
		meta[k] = v
	}
	return nn.SaveSafetensors(path, l.checkpointParams(), meta)
}

// CheckFinite reports the first non-finite (NaN or ±Inf) weight of the
// actor, the critics or the target critics, or a non-finite log α / log α',
// as an error naming the tensor; nil when all are finite. Call it after an
// update: a loss computed before the update can be finite while the update
// itself overflowed.
func (l *Learner) CheckFinite() error { return l.checkFinite(false) }

// CheckFiniteState is CheckFinite over the whole training state: the Adam
// moments too, which can overflow (a squared gradient beyond float32)
// while every weight is still finite. Save refuses such a state; a caller
// checks it first to report a diverged run as one.
func (l *Learner) CheckFiniteState() error { return l.checkFinite(true) }

// checkFinite is CheckFinite, with the Adam moments too when all is set.
func (l *Learner) checkFinite(all bool) error {
	for _, s := range []struct {
		name string
		v    float64
	}{{"log_alpha", l.LogAlpha}, {"log_alpha_prime", l.LogAlphaPrime}} {
		if math.IsNaN(s.v) || math.IsInf(s.v, 0) {
			return fmt.Errorf("%s is %v", s.name, s.v)
		}
	}
	ps := l.checkpointParams()
	if !all {
		ps = ps[:len(l.Actor.Params())+2*(len(l.Q[0].Params())+len(l.QT[0].Params()))]
	}
	for _, p := range ps {
		if !finite32(p.Data) {
			for i, v := range p.Data {
				if v-v != 0 {
					return fmt.Errorf("non-finite weight %v in %s[%d]", v, p.Name, i)
				}
			}
		}
	}
	return nil
}

// finite32 reports whether every value is finite: x − x is 0 for finite x
// and NaN for NaN and ±Inf. Summing the differences keeps the loop free of
// branches (a NaN anywhere makes the sum NaN).
func finite32(xs []float32) bool {
	var a0, a1, a2, a3 float32 // four chains, so the adds overlap
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		a0 += xs[i] - xs[i]
		a1 += xs[i+1] - xs[i+1]
		a2 += xs[i+2] - xs[i+2]
		a3 += xs[i+3] - xs[i+3]
	}
	for ; i < len(xs); i++ {
		a0 += xs[i] - xs[i]
	}
	return a0+a1+a2+a3 == 0
}

// LoadCheckpoint restores a learner saved by SaveCheckpoint into l (which
// must have been built with the same config and dimensions) and, if rng is
// non-nil, the RNG state. It returns the file's metadata.
func (l *Learner) LoadCheckpoint(path string, rng *rand.PCG) (map[string]string, error) {
	ts, meta, err := nn.LoadSafetensors(path)
	if err != nil {
		return nil, err
	}
	if meta["koopq.kind"] != "cql-learner" {
		return nil, fmt.Errorf("checkpoint %s is not a CQL learner checkpoint (kind %q)", path, meta["koopq.kind"])
	}
	if meta["obs_dim"] != strconv.Itoa(l.ObsDim) || meta["act_dim"] != strconv.Itoa(l.ActDim) {
		return nil, fmt.Errorf("checkpoint %s is for obs %s / act %s, learner has %d / %d", path, meta["obs_dim"], meta["act_dim"], l.ObsDim, l.ActDim)
	}
	if err := nn.AssignParams(l.checkpointParams(), ts); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := l.checkFinite(true); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	var st scalarState
	if err := json.Unmarshal([]byte(meta["state"]), &st); err != nil {
		return nil, fmt.Errorf("checkpoint %s: bad state: %w", path, err)
	}
	l.Steps, l.LogAlpha, l.LogAlphaPrime = st.Steps, st.LogAlpha, st.LogAlphaPrime
	l.optA.T, l.Opt[0].T, l.Opt[1].T = st.AdamT[0], st.AdamT[1], st.AdamT[2]
	for i := range l.scalar {
		l.scalar[i] = sac.ScalarAdam{M: st.Scalar[i][0], V: st.Scalar[i][1], T: int(st.Scalar[i][2])}
	}
	if nj := meta["normalizer"]; nj != "" {
		if err := json.Unmarshal([]byte(nj), l.Norm); err != nil {
			return nil, fmt.Errorf("checkpoint %s: bad normalizer: %w", path, err)
		}
	}
	if rng != nil {
		if _, ok := meta["rng"]; !ok && meta["rng_streams"] != "" {
			return nil, fmt.Errorf("checkpoint %s has paired random streams (rng_streams), the config the legacy single stream: resume it with the run's own config", path)
		}
		rb, err := base64.StdEncoding.DecodeString(meta["rng"])
		if err != nil || rng.UnmarshalBinary(rb) != nil {
			return nil, fmt.Errorf("checkpoint %s: missing or bad RNG state", path)
		}
	}
	return meta, nil
}
