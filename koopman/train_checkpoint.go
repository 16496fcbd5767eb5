package koopman

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/koopq/koopq/nn"
)

// trainState is the part of a training run's state that is not the model's
// current weights or the optimizer: what TrainWith carries from one epoch
// to the next.
type trainState struct {
	best       float64     // best validation total so far (+Inf before epoch 1)
	sinceBest  int         // epochs without a MinDelta improvement
	bestParams [][]float32 // weights of the best epoch, one per model parameter
	train      []int       // training rows in their current shuffled order
	stopped    string      // StopEarly or StopMinLR once one fired, else ""
	lr         float64     // Adam's learning rate for the next epoch
	sinceLR    int         // epochs without a MinDelta improvement since the last improvement or LR reduction
}

// checkpointKind marks a Koopman training checkpoint in its metadata.
const checkpointKind = "koopman-train-checkpoint"

// checkpointScalars is the JSON part of a checkpoint.
type checkpointScalars struct {
	Config    TrainConfig  `json:"config"`
	Model     ModelConfig  `json:"model"`
	Data      dataPrint    `json:"data"`
	Epochs    []EpochStats `json:"epochs"`
	BestEpoch int          `json:"best_epoch"`
	BestBits  uint64       `json:"best_bits"` // math.Float64bits of the best validation total (+Inf is not JSON)
	SinceBest int          `json:"since_best"`
	Stopped   string       `json:"stopped,omitempty"`
	AdamT     int          `json:"adam_t"`
	// LRBits is math.Float64bits of the learning rate of the next epoch
	// (0 in checkpoints made before the plateau rule: the constant
	// Config.LR); SinceLR is the plateau counter of LRPatience.
	LRBits  uint64 `json:"lr_bits,omitempty"`
	SinceLR int    `json:"since_lr,omitempty"`
}

// dataPrint identifies the transitions a checkpoint was trained on, so that
// a resume on other data is refused instead of silently mixing the two.
type dataPrint struct {
	Rows  int    `json:"rows"`
	CRC64 uint64 `json:"crc64"` // ECMA CRC-64 of the float32 bits of obs, act, next
}

// fingerprint hashes the transition arrays (about 100 MB for 1M hopper
// rows: a fraction of one epoch's time).
func fingerprint(obs, act, next []float32, rows int) dataPrint {
	tab := crc64.MakeTable(crc64.ECMA)
	var crc uint64
	buf := make([]byte, 0, 1<<16)
	for _, xs := range [][]float32{obs, act, next} {
		for i, v := range xs {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) || i == len(xs)-1 {
				crc = crc64.Update(crc, tab, buf)
				buf = buf[:0]
			}
		}
	}
	return dataPrint{Rows: rows, CRC64: crc}
}

// checkpointer writes and reads one training run's checkpoint file.
type checkpointer struct {
	path string
	m    *Model
	cfg  TrainConfig
	opt  *nn.Adam
	pcg  *rand.PCG
	data dataPrint
	// backend is TrainOptions.Backend, stored as meta["backend"];
	// allowBackend accepts a checkpoint made under another one.
	backend      string
	allowBackend bool
}

// tensors lists the checkpoint's tensors: current weights, best weights
// and Adam's moments, under distinct names.
func (c *checkpointer) tensors(st *trainState) []*nn.Param {
	ps := c.m.Params()
	out := make([]*nn.Param, 0, 4*len(ps))
	for i, p := range ps {
		out = append(out,
			&nn.Param{Name: "weights." + p.Name, Shape: p.Shape, Data: p.Data},
			&nn.Param{Name: "best." + p.Name, Shape: p.Shape, Data: st.bestParams[i]},
			&nn.Param{Name: "adam.m." + p.Name, Shape: p.Shape, Data: c.opt.M[i]},
			&nn.Param{Name: "adam.v." + p.Name, Shape: p.Shape, Data: c.opt.V[i]})
	}
	return out
}

// save writes the state after a finished epoch atomically. Non-finite
// values are refused (the previous checkpoint stays).
func (c *checkpointer) save(st *trainState, res *TrainResult) error {
	ts := c.tensors(st)
	if err := nn.CheckFinite(ts); err != nil {
		return fmt.Errorf("koopman train: refusing to write checkpoint %s: %w", c.path, err)
	}
	sc := checkpointScalars{Config: c.cfg, Model: c.m.Cfg, Data: c.data, Epochs: res.Epochs,
		BestEpoch: res.BestEpoch, BestBits: math.Float64bits(st.best), SinceBest: st.sinceBest,
		Stopped: st.stopped, AdamT: c.opt.T, LRBits: math.Float64bits(st.lr), SinceLR: st.sinceLR}
	sj, err := json.Marshal(sc)
	if err != nil {
		return fmt.Errorf("koopman train: checkpoint %s: %w", c.path, err)
	}
	rb, err := c.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	order := make([]byte, 0, 4*len(st.train))
	for _, i := range st.train {
		order = binary.LittleEndian.AppendUint32(order, uint32(i))
	}
	meta := map[string]string{"koopq.kind": checkpointKind, "state": string(sj),
		"rng": base64.StdEncoding.EncodeToString(rb), "order": base64.StdEncoding.EncodeToString(order)}
	if c.backend != "" {
		meta["backend"] = c.backend
	}
	return nn.SaveSafetensors(c.path, ts, meta)
}

// load restores st, res.Epochs/BestEpoch, the model's weights, Adam and the
// RNG from the checkpoint if it exists; a missing file leaves everything as
// it is (a fresh start). A checkpoint of another config, model or dataset
// is an error that says which.
func (c *checkpointer) load(st *trainState, res *TrainResult) error {
	if _, err := os.Stat(c.path); errors.Is(err, fs.ErrNotExist) {
		if dir := filepath.Dir(c.path); dir != "" {
			if _, err := os.Stat(dir); err != nil {
				return fmt.Errorf("koopman train: checkpoint directory: %w", err)
			}
		}
		return nil
	}
	ts, meta, err := nn.LoadSafetensors(c.path)
	if err != nil {
		return fmt.Errorf("koopman train: %w", err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("koopman train: checkpoint %s: "+format, append([]any{c.path}, a...)...)
	}
	if meta["koopq.kind"] != checkpointKind {
		return bad("not a Koopman training checkpoint (kind %q)", meta["koopq.kind"])
	}
	if was := meta["backend"]; was != "" && c.backend != "" && was != c.backend && !c.allowBackend {
		return bad("made under GEMM %s, this process has %s: the continuation would not reproduce an uninterrupted "+
			"training (choose the recorded backend with --backend/--precision, or accept the change with --allow-backend-change)", was, c.backend)
	}
	var sc checkpointScalars
	if err := json.Unmarshal([]byte(meta["state"]), &sc); err != nil {
		return bad("bad state: %v", err)
	}
	if a, b := mustJSON(sc.Config), mustJSON(c.cfg); a != b {
		return bad("made with another training config (%s; delete it to start over, or resume with the recorded settings)", jsonDiff(a, b))
	}
	if a, b := mustJSON(sc.Model), mustJSON(c.m.Cfg); a != b {
		return bad("made for another model (%s; delete it to start over, or resume with the recorded settings)", jsonDiff(a, b))
	}
	if sc.Data != c.data {
		return bad("made on other data (%d rows, CRC-64 %016x; this run: %d rows, %016x); delete it to start over",
			sc.Data.Rows, sc.Data.CRC64, c.data.Rows, c.data.CRC64)
	}
	if len(sc.Epochs) > c.cfg.MaxEpochs || sc.BestEpoch < 1 || sc.BestEpoch > len(sc.Epochs) ||
		sc.SinceBest < 0 || sc.AdamT < 0 || sc.SinceLR < 0 {
		return bad("inconsistent state (%d epochs, best %d, since best %d)", len(sc.Epochs), sc.BestEpoch, sc.SinceBest)
	}
	lr := c.cfg.LR
	if sc.LRBits != 0 {
		lr = math.Float64frombits(sc.LRBits)
	}
	if !(lr > 0 && lr <= c.cfg.LR) {
		return bad("learning rate %v is outside (0, lr %v]", lr, c.cfg.LR)
	}
	stopped := sc.Stopped
	if strings.HasPrefix(stopped, StopEarly) { // older checkpoints added the rule in words
		stopped = StopEarly
	}
	if err := nn.AssignParams(c.tensors(st), ts); err != nil {
		return bad("%v", err)
	}
	if err := nn.CheckFinite(c.tensors(st)); err != nil {
		return bad("%v", err)
	}
	rb, err := base64.StdEncoding.DecodeString(meta["rng"])
	if err != nil || c.pcg.UnmarshalBinary(rb) != nil {
		return bad("missing or bad RNG state")
	}
	ob, err := base64.StdEncoding.DecodeString(meta["order"])
	if err != nil || len(ob) != 4*len(st.train) {
		return bad("missing or bad training order (%d bytes for %d rows)", len(ob), len(st.train))
	}
	// The order must be a permutation of this split's training rows.
	seen := make(map[int]bool, len(st.train))
	for _, i := range st.train {
		seen[i] = true
	}
	for k := range st.train {
		i := int(binary.LittleEndian.Uint32(ob[4*k:]))
		if !seen[i] {
			return bad("training order holds row %d, which is not in this split (or twice)", i)
		}
		delete(seen, i)
		st.train[k] = i
	}
	st.best, st.sinceBest, st.stopped = math.Float64frombits(sc.BestBits), sc.SinceBest, stopped
	st.lr, st.sinceLR = lr, sc.SinceLR
	c.opt.T = sc.AdamT
	res.Epochs, res.BestEpoch = sc.Epochs, sc.BestEpoch
	return nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// jsonDiff names the top-level keys in which the JSON objects a (the
// checkpoint's) and b (this run's) differ, with both values:
// "lr: 0.001 in the checkpoint, 0.0005 here; ...". Text that is not an
// object is shown whole.
func jsonDiff(a, b string) string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal([]byte(a), &ma) != nil || json.Unmarshal([]byte(b), &mb) != nil {
		return fmt.Sprintf("%s in the checkpoint, %s here", a, b)
	}
	keys := make([]string, 0, len(ma)+len(mb))
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	show := func(v json.RawMessage) string {
		if v == nil {
			return "absent"
		}
		return string(v)
	}
	var parts []string
	for _, k := range keys {
		if !bytes.Equal(ma[k], mb[k]) {
			parts = append(parts, fmt.Sprintf("%s: %s in the checkpoint, %s here", k, show(ma[k]), show(mb[k])))
		}
	}
	return strings.Join(parts, "; ")
}
