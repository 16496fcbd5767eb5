package run

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/learntest"
)

// A run stopped during its own Koopman training (Step 1) saves no model (it
// used to save the half-trained weights as koopman.safetensors, which the
// resumed run then loaded as if finished); it keeps the finished epochs in
// koopman.ckpt, and the resumed run ends with the model an uninterrupted
// training makes, bit for bit.
func TestBuildAugmenterResumesKoopmanTraining(t *testing.T) {
	d := learntest.PendulumT(t, 500, 4)
	cfg := DefaultTrainConfig()
	cfg.Env, cfg.Data, cfg.Augment = "pendulum", "pendulum.hdf5", "kfc++"
	cfg.KoopmanHidden, cfg.KoopmanLatent = []int{16, 16}, 4
	cfg.KoopmanTrain.MaxEpochs, cfg.KoopmanTrain.Batch, cfg.KoopmanTrain.Patience, cfg.KoopmanTrain.Seed = 6, 64, 0, 9
	want, err := TrainKoopman(context.Background(), d, cfg.KoopmanTrain, cfg.KoopmanHidden, cfg.KoopmanLatent, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := &Dir{Path: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = BuildAugmenter(ctx, cfg, d, dir, "", func(done, _ int, msg string) {
		if done == 3 && msg != "koopman precompute" {
			cancel()
		}
	})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped during the Koopman training: err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(dir.File(KoopmanFile)); err == nil {
		t.Fatal("a half-trained Koopman model was saved as the run's model")
	}
	if _, err := os.Stat(dir.File(KoopmanCheckpointFile)); err != nil {
		t.Fatalf("no Koopman training checkpoint: %v", err)
	}
	var epochs []int
	if _, err := BuildAugmenter(context.Background(), cfg, d, dir, "", func(done, _ int, msg string) {
		if msg != "koopman precompute" {
			epochs = append(epochs, done)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(epochs) != 3 || epochs[0] != 4 {
		t.Errorf("resumed training ran epochs %v, want 4..6", epochs)
	}
	got, _, err := koopman.LoadModel(dir.File(KoopmanFile))
	if err != nil {
		t.Fatal(err)
	}
	pw, pg := want.Params(), got.Params()
	for i := range pw {
		for j := range pw[i].Data {
			if pw[i].Data[j] != pg[i].Data[j] {
				t.Fatalf("resumed model differs at %s[%d]", pw[i].Name, j)
			}
		}
	}
	if _, err := os.Stat(dir.File(KoopmanCheckpointFile)); err == nil {
		t.Error("koopman.ckpt left after the model was saved")
	}
}

// results.json keeps each training process's augmenter record: for KFC++
// the precompute (every transition cached under the default budget) and
// counters whose batches are exactly the steps of that process, also for a
// run killed and resumed; augmenters without a record leave it out. Each
// metrics row of a Koopman run says which branch its batch took
// (model_batch), and those rows add up to the record's model-branch count;
// other runs log no model_batch.
func TestSegmentsRecordAugmenterReport(t *testing.T) {
	d := learntest.PendulumT(t, 400, 5)
	cfg := tinyConfig()
	cfg.Augment, cfg.LogEvery = "kfc++", 1
	cfg.AugmentParams.KoopmanProb = 0.5
	cfg.KoopmanHidden, cfg.KoopmanLatent = []int{16, 16}, 4
	cfg.KoopmanTrain.MaxEpochs, cfg.KoopmanTrain.Batch, cfg.KoopmanTrain.Patience, cfg.KoopmanTrain.Seed = 2, 64, 0, 3
	dir, _ := NewDir(t.TempDir(), "kfc")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Train(ctx, cfg, dir, d, false, func(done, total int, msg string) {
		if strings.HasPrefix(msg, "cql") && done >= 13 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancellation, got %v", err)
	}
	if _, err := Train(context.Background(), cfg, dir, d, true, nil); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Segments []struct {
			FromStep int                    `json:"from_step"`
			ToStep   int                    `json:"to_step"`
			Augment  *augment.KoopmanReport `json:"augment"`
		} `json:"segments"`
	}
	if err := dir.ReadJSON("results.json", &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Segments) != 2 || res.Segments[1].ToStep != cfg.CQL.Steps {
		t.Fatalf("segments %+v, want two ending at %d", res.Segments, cfg.CQL.Steps)
	}
	for i, g := range res.Segments {
		a := g.Augment
		if a == nil {
			t.Fatalf("segment %d has no augmenter record", i)
		}
		if a.Precompute.Transitions != d.Len() || a.Precompute.Cached != d.Len() || a.Precompute.Bytes <= 0 {
			t.Errorf("segment %d precompute %+v, want all %d transitions cached", i, a.Precompute, d.Len())
		}
		st := a.Stats
		if st.Batches != g.ToStep-g.FromStep || st.KoopmanBatches+st.GaussianBatches != st.Batches || st.KoopmanBatches == 0 {
			t.Errorf("segment %d (steps %d..%d): stats %+v", i, g.FromStep, g.ToStep, st)
		}
		if st.CachedRows != st.KoopmanBatches*cfg.CQL.Batch || st.SlowRows != 0 || !(st.MeanShiftL2 > 0) {
			t.Errorf("segment %d: rows %+v, want %d cached per model-branch batch", i, st, cfg.CQL.Batch)
		}
		if st.GaussianBatches == 0 {
			t.Errorf("segment %d: no noise-branch batch with p_K = 0.5: %+v", i, st)
		}
		model, rows := 0, 0
		for _, r := range metricRows(t, dir) {
			if step := int(r["step"]); step > g.FromStep && step <= g.ToStep {
				rows++
				switch r["model_batch"] {
				case 1:
					model++
				case 0:
				default:
					t.Fatalf("step %d: model_batch %v, want 0 or 1 (row %v)", step, r["model_batch"], r)
				}
			}
		}
		if rows != st.Batches || model != st.KoopmanBatches {
			t.Errorf("segment %d: %d rows with %d model_batch = 1, want %d rows and %d model-branch batches", i, rows, model, st.Batches, st.KoopmanBatches)
		}
	}

	cfg.Augment = "gaussian"
	dir2, _ := NewDir(t.TempDir(), "gauss")
	if _, err := Train(context.Background(), cfg, dir2, d, false, nil); err != nil {
		t.Fatal(err)
	}
	var res2 struct {
		Segments []map[string]any `json:"segments"`
	}
	if err := dir2.ReadJSON("results.json", &res2); err != nil {
		t.Fatal(err)
	}
	if len(res2.Segments) != 1 || res2.Segments[0]["provenance"] == nil {
		t.Fatalf("S4RL-N run: segments %v", res2.Segments)
	}
	if a, ok := res2.Segments[0]["augment"]; ok {
		t.Errorf("S4RL-N keeps no augmenter record, but its segment has %v", a)
	}
	for _, r := range metricRows(t, dir2) {
		if v, ok := r["model_batch"]; ok {
			t.Fatalf("S4RL-N step %v logged model_batch %v", r["step"], v)
		}
	}
}
