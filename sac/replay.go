package sac

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/koopq/koopq/dataset"
)

// Replay is SAC's replay buffer: every transition of a run in order, never
// evicted (D4RL's buffer held all 1M steps of its run, which is what its
// medium-replay and full-replay datasets are), plus D4RL's per-step infos:
// the MuJoCo state before the step (qpos, qvel) and the behaviour policy's
// log-probability of the action. Storage is allocated once for the run's
// capacity, so adding a transition never allocates.
type Replay struct {
	ObsDim, ActDim int
	NQ, NV         int // qpos and qvel widths (0 for environments without them)

	view dataset.Dataset // the first n rows, for sampling
	n    int
	obs, act, rew, next, term, tout,
	qpos, qvel, logp []float32
}

// NewReplay allocates a buffer for capacity transitions.
func NewReplay(obsDim, actDim, nq, nv, capacity int) *Replay {
	f := func(w int) []float32 { return make([]float32, capacity*w) }
	return &Replay{ObsDim: obsDim, ActDim: actDim, NQ: nq, NV: nv,
		view: dataset.Dataset{ObsDim: obsDim, ActDim: actDim},
		obs:  f(obsDim), act: f(actDim), rew: f(1), next: f(obsDim), term: f(1), tout: f(1),
		qpos: f(nq), qvel: f(nv), logp: f(1)}
}

// Len is the number of stored transitions.
func (r *Replay) Len() int { return r.n }

// Cap is the buffer's capacity.
func (r *Replay) Cap() int { return len(r.rew) }

// Add appends one transition: s, a (env units), r, s', whether s' is a true
// terminal state, whether the episode was cut by the time limit after this
// step (ignored when terminal), the MuJoCo state of s and log π(a|s).
func (r *Replay) Add(s, a []float64, rew float64, s2 []float64, term, timeout bool, qpos, qvel []float64, logp float64) error {
	if r.n == r.Cap() {
		return fmt.Errorf("sac: replay buffer full (%d transitions)", r.n)
	}
	i := r.n
	put := func(dst []float32, w int, src []float64) {
		row := dst[i*w : (i+1)*w]
		for j := range row {
			row[j] = float32(src[j])
		}
	}
	put(r.obs, r.ObsDim, s)
	put(r.act, r.ActDim, a)
	put(r.next, r.ObsDim, s2)
	put(r.qpos, r.NQ, qpos)
	put(r.qvel, r.NV, qvel)
	r.rew[i] = float32(rew)
	r.term[i] = b2f(term)
	r.tout[i] = b2f(timeout && !term)
	r.logp[i] = float32(logp)
	r.setLen(i + 1)
	return nil
}

func (r *Replay) setLen(n int) {
	r.n = n
	v := &r.view
	v.Observations, v.Actions, v.Rewards = r.obs[:n*r.ObsDim], r.act[:n*r.ActDim], r.rew[:n]
	v.NextObservations, v.Terminals, v.Timeouts = r.next[:n*r.ObsDim], r.term[:n], r.tout[:n]
}

// View is the stored transitions as a dataset that shares the buffer's
// memory (valid until the next Add; for sampling).
func (r *Replay) View() *dataset.Dataset { return &r.view }

// Slice copies transitions [from, to) into a new dataset with infos
// (qpos, qvel, action_log_probs). The last row is marked as a timeout if it
// does not end an episode, so no reader bootstraps across the cut.
func (r *Replay) Slice(from, to int) (*dataset.Dataset, map[string]dataset.Array) {
	d := Slice(&r.view, from, to)
	n := to - from
	infos := map[string]dataset.Array{
		"action_log_probs": {Data: append([]float32(nil), r.logp[from:to]...), Shape: []int{n}},
	}
	if r.NQ > 0 {
		infos["qpos"] = dataset.Array{Data: append([]float32(nil), r.qpos[from*r.NQ:to*r.NQ]...), Shape: []int{n, r.NQ}}
		infos["qvel"] = dataset.Array{Data: append([]float32(nil), r.qvel[from*r.NV:to*r.NV]...), Shape: []int{n, r.NV}}
	}
	return d, infos
}

// rowFloats is the number of float32 values of one transition on disk.
func (r *Replay) rowFloats() int { return 2*r.ObsDim + r.ActDim + 4 + r.NQ + r.NV }

// writeRows appends rows [from, to) to w as little-endian float32 values,
// each row laid out s | a | r | s' | terminal | timeout | qpos | qvel | logp.
func (r *Replay) writeRows(w io.Writer, from, to int) error {
	buf := make([]byte, 0, r.rowFloats()*4*min(to-from, 4096))
	put := func(x []float32) {
		for _, v := range x {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	for i := from; i < to; i++ {
		S, A := r.ObsDim, r.ActDim
		put(r.obs[i*S : (i+1)*S])
		put(r.act[i*A : (i+1)*A])
		put(r.rew[i : i+1])
		put(r.next[i*S : (i+1)*S])
		put(r.term[i : i+1])
		put(r.tout[i : i+1])
		put(r.qpos[i*r.NQ : (i+1)*r.NQ])
		put(r.qvel[i*r.NV : (i+1)*r.NV])
		put(r.logp[i : i+1])
		if len(buf) >= cap(buf)-r.rowFloats()*4 || i == to-1 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}

// readRows replaces the buffer's contents with rows read from rd (the
// layout of writeRows).
func (r *Replay) readRows(rd io.Reader, rows int) error {
	if rows > r.Cap() {
		return fmt.Errorf("replay file holds %d rows, buffer capacity is %d", rows, r.Cap())
	}
	row := make([]byte, r.rowFloats()*4)
	vals := make([]float32, r.rowFloats())
	for i := 0; i < rows; i++ {
		if _, err := io.ReadFull(rd, row); err != nil {
			return fmt.Errorf("replay row %d: %w", i, err)
		}
		for j := range vals {
			vals[j] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*j:]))
		}
		k := 0
		take := func(dst []float32, w int) {
			copy(dst[i*w:(i+1)*w], vals[k:k+w])
			k += w
		}
		take(r.obs, r.ObsDim)
		take(r.act, r.ActDim)
		take(r.rew, 1)
		take(r.next, r.ObsDim)
		take(r.term, 1)
		take(r.tout, 1)
		take(r.qpos, r.NQ)
		take(r.qvel, r.NV)
		take(r.logp, 1)
	}
	r.setLen(rows)
	return nil
}
