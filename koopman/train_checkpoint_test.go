package koopman

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc64"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/koopq/koopq/nn"
)

// smallTraining is a quick Pendulum training setup for checkpoint tests:
// 600 transitions, a 16×16 model, 6 epochs, early stopping off.
func smallTraining(t *testing.T) (ModelConfig, TrainConfig, [3][]float32) {
	t.Helper()
	obs, act, next := pendulumData(t, 600, 3)
	mc := DefaultModelConfig(3, 1)
	mc.Hidden, mc.Latent, mc.Seed = []int{16, 16}, 4, 7
	tc := DefaultTrainConfig()
	tc.MaxEpochs, tc.Batch, tc.LR, tc.Seed, tc.Patience = 6, 32, 1e-3, 11, 0
	return mc, tc, [3][]float32{obs, act, next}
}

func newModel(t *testing.T, mc ModelConfig) *Model {
	t.Helper()
	m, err := NewModel(mc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// equalWeights reports the first parameter where a and b differ bitwise.
func equalWeights(t *testing.T, a, b *Model) {
	t.Helper()
	pa, pb := a.Params(), b.Params()
	for i := range pa {
		for j := range pa[i].Data {
			if pa[i].Data[j] != pb[i].Data[j] {
				t.Fatalf("weights differ at %s[%d]: %v vs %v", pa[i].Name, j, pa[i].Data[j], pb[i].Data[j])
			}
		}
	}
}

// Training stopped (context cancelled) after epoch k at any k and resumed
// from its checkpoint ends with the same weights and epoch history, bit for
// bit, as one uninterrupted training; the stopped call returns an error
// wrapping context.Canceled, never a model that looks finished.
func TestTrainCheckpointResumeIsBitIdentical(t *testing.T) {
	mc, tc, d := smallTraining(t)
	ref := newModel(t, mc)
	want, err := Train(context.Background(), ref, d[0], d[1], d[2], tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAfter := range []int{1, 3, 5} {
		ck := filepath.Join(t.TempDir(), "train.ckpt")
		m := newModel(t, mc)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := TrainWith(ctx, m, d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck, OnEpoch: func(st EpochStats) {
			if st.Epoch == stopAfter {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stop after %d: err = %v, want context.Canceled", stopAfter, err)
		}
		// A fresh process: new model (other initial weights would be
		// overwritten), same config and data.
		m2 := newModel(t, mc)
		var resumedEpochs []int
		got, err := TrainWith(context.Background(), m2, d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck,
			OnEpoch: func(st EpochStats) { resumedEpochs = append(resumedEpochs, st.Epoch) }})
		if err != nil {
			t.Fatalf("resume after %d: %v", stopAfter, err)
		}
		if len(resumedEpochs) != tc.MaxEpochs-stopAfter || resumedEpochs[0] != stopAfter+1 {
			t.Errorf("resume after %d ran epochs %v", stopAfter, resumedEpochs)
		}
		equalWeights(t, ref, m2)
		if got.BestEpoch != want.BestEpoch || len(got.Epochs) != len(want.Epochs) || got.Stopped != want.Stopped {
			t.Fatalf("resume after %d: best %d of %d (%s), want %d of %d (%s)", stopAfter,
				got.BestEpoch, len(got.Epochs), got.Stopped, want.BestEpoch, len(want.Epochs), want.Stopped)
		}
		for i := range want.Epochs {
			a, b := want.Epochs[i], got.Epochs[i]
			a.Seconds, a.SamplesPerSec, b.Seconds, b.SamplesPerSec = 0, 0, 0, 0
			if a != b {
				t.Fatalf("resume after %d: epoch %d stats %+v, want %+v", stopAfter, i+1, b, a)
			}
		}
		if !reflect.DeepEqual(got.TrainIdx, want.TrainIdx) || !reflect.DeepEqual(got.ValIdx, want.ValIdx) {
			t.Fatal("resumed split differs")
		}
		// A checkpoint of a finished training gives the finished model
		// again without training.
		m3 := newModel(t, mc)
		ran := 0
		if _, err := TrainWith(context.Background(), m3, d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck,
			OnEpoch: func(EpochStats) { ran++ }}); err != nil || ran != 0 {
			t.Fatalf("finished checkpoint: err %v, %d epochs trained again", err, ran)
		}
		equalWeights(t, ref, m3)
	}
}

// Early stopping that fires before a kill is remembered by the checkpoint.
func TestTrainCheckpointKeepsEarlyStop(t *testing.T) {
	mc, tc, d := smallTraining(t)
	tc.MaxEpochs, tc.Patience, tc.MinDelta = 30, 1, 0.5 // stops after the second epoch at the latest
	ref := newModel(t, mc)
	want, err := Train(context.Background(), ref, d[0], d[1], d[2], tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(want.Stopped, "early_stopping") {
		t.Fatalf("setup: training did not stop early: %s", want.Stopped)
	}
	ck := filepath.Join(t.TempDir(), "c")
	m := newModel(t, mc)
	if _, err := TrainWith(context.Background(), m, d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck}); err != nil {
		t.Fatal(err)
	}
	m2 := newModel(t, mc)
	got, err := TrainWith(context.Background(), m2, d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck})
	if err != nil {
		t.Fatal(err)
	}
	if got.Stopped != want.Stopped || len(got.Epochs) != len(want.Epochs) {
		t.Fatalf("after resume: %s, %d epochs; want %s, %d", got.Stopped, len(got.Epochs), want.Stopped, len(want.Epochs))
	}
	equalWeights(t, ref, m2)
}

// A checkpoint made with another config, model shape or dataset, or a
// damaged one, is refused with an error that names the difference; the
// checkpoint is left untouched.
func TestTrainCheckpointRefusesMismatch(t *testing.T) {
	mc, tc, d := smallTraining(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "c")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := TrainWith(ctx, newModel(t, mc), d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck,
		OnEpoch: func(EpochStats) { cancel() }})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	before, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	otherLR := tc
	otherLR.LR = 5e-4
	otherModel := mc
	otherModel.Latent = 5
	otherData := append([]float32(nil), d[0]...)
	otherData[7] += 0.25
	damaged := filepath.Join(dir, "damaged")
	if err := os.WriteFile(damaged, before[:len(before)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		mc   ModelConfig
		tc   TrainConfig
		obs  []float32
		ck   string
		want string
	}{
		// The message names the setting that changed, not two whole configs.
		{"config", mc, otherLR, d[0], ck, "another training config (lr: "},
		{"model", otherModel, tc, d[0], ck, "another model (latent: "},
		{"data", mc, tc, otherData, ck, "other data"},
		{"damaged", mc, tc, d[0], damaged, "safetensors"},
		{"missing directory", mc, tc, d[0], filepath.Join(dir, "no", "c"), "checkpoint directory"},
	} {
		_, err := TrainWith(context.Background(), newModel(t, c.mc), c.obs, d[1], d[2], c.tc, TrainOptions{Checkpoint: c.ck})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	after, err := os.ReadFile(ck)
	if err != nil || string(after) != string(before) {
		t.Fatalf("a refused resume changed the checkpoint (err %v)", err)
	}
}

// TestTrainCheckpointBackend: a checkpoint records the backend it was made
// under (none when none is given) and refuses to continue under another
// one unless the change is allowed.
func TestTrainCheckpointBackend(t *testing.T) {
	mc, tc, d := smallTraining(t)
	tc.Batch = 35 // divides the 420 training rows: no empty last batch may be taken
	for _, b := range []string{"", "openblas Haswell"} {
		ck := filepath.Join(t.TempDir(), "c")
		ctx, cancel := context.WithCancel(context.Background())
		_, err := TrainWith(ctx, newModel(t, mc), d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck, Backend: b,
			OnEpoch: func(EpochStats) { cancel() }})
		cancel()
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped in epoch 2 (1 epochs complete)") {
			t.Fatalf("cancelled after epoch 1: %v", err)
		}
		_, meta, err := nn.LoadSafetensors(ck)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := meta["backend"]; got != b || ok != (b != "") {
			t.Fatalf("backend %q: checkpoint records %q (present %v)", b, got, ok)
		}
		// One Adam step per minibatch of the epoch's training rows.
		var sc checkpointScalars
		if err := json.Unmarshal([]byte(meta["state"]), &sc); err != nil {
			t.Fatal(err)
		}
		nTrain := len(d[1]) - int(math.Round(tc.ValFraction*float64(len(d[1]))))
		if want := (nTrain + tc.Batch - 1) / tc.Batch; sc.AdamT != want {
			t.Fatalf("after one epoch of %d rows in batches of %d: %d Adam steps, want %d", nTrain, tc.Batch, sc.AdamT, want)
		}
		if b == "" {
			continue
		}
		_, err = TrainWith(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck, Backend: "onednn bf16"})
		if err == nil || !strings.Contains(err.Error(), "openblas Haswell") {
			t.Fatalf("resume under another backend: %v, want a refusal naming the recorded one", err)
		}
		if _, err = TrainWith(context.Background(), newModel(t, mc), d[0], d[1], d[2], tc, TrainOptions{Checkpoint: ck,
			Backend: "onednn bf16", AllowBackendChange: true}); err != nil {
			t.Fatalf("allowed backend change: %v", err)
		}
	}
}

// TestFingerprintIsCRCOfAllValues: the data fingerprint is the CRC-64 of
// every value of obs, act and next in order (computed here in one piece),
// so a change of the very last value shows.
func TestFingerprintIsCRCOfAllValues(t *testing.T) {
	rows := 20000 // more than one 64 KiB chunk of obs values
	obs, act, next := make([]float32, rows*3), make([]float32, rows), make([]float32, rows*3)
	rng := rand.New(rand.NewPCG(2, 2))
	for _, xs := range [][]float32{obs, act, next} {
		for i := range xs {
			xs[i] = float32(rng.NormFloat64())
		}
	}
	var all []byte
	for _, xs := range [][]float32{obs, act, next} {
		for _, v := range xs {
			all = binary.LittleEndian.AppendUint32(all, math.Float32bits(v))
		}
	}
	want := dataPrint{Rows: rows, CRC64: crc64.Checksum(all, crc64.MakeTable(crc64.ECMA))}
	if got := fingerprint(obs, act, next, rows); got != want {
		t.Fatalf("fingerprint %+v, want %+v", got, want)
	}
	next[len(next)-1]++
	if fingerprint(obs, act, next, rows) == want {
		t.Error("changing the last value of next did not change the fingerprint")
	}
}

// TestTrainValidationSplitEdges: the split needs at least one validation
// and one training row: 2 rows at 50% train, 2 rows at 90% (nothing left
// to train on) and 1 row are refused.
func TestTrainValidationSplitEdges(t *testing.T) {
	mc, tc, d := smallTraining(t)
	tc.MaxEpochs, tc.Batch = 1, 2
	for _, c := range []struct {
		rows int
		frac float64
		ok   bool
	}{{2, 0.5, true}, {2, 0.9, false}, {1, 0.5, false}} {
		tc.ValFraction = c.frac
		_, err := Train(context.Background(), newModel(t, mc), d[0][:3*c.rows], d[1][:c.rows], d[2][:3*c.rows], tc, nil)
		if (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "each needs at least 1")) {
			t.Errorf("%d rows at validation fraction %v: %v (want ok %v)", c.rows, c.frac, err, c.ok)
		}
	}
}

// TestJSONDiff: the keys that differ, both values, absent keys named.
func TestJSONDiff(t *testing.T) {
	got := jsonDiff(`{"lr":0.001,"batch":64,"old":1}`, `{"lr":0.0005,"batch":64,"new":true}`)
	want := "lr: 0.001 in the checkpoint, 0.0005 here; new: absent in the checkpoint, true here; old: 1 in the checkpoint, absent here"
	if got != want {
		t.Errorf("jsonDiff = %q\nwant %q", got, want)
	}
}
