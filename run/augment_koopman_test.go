package run

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/koopq/koopq/koopman"
)

// A run stopped during its own Koopman training (Step 1) saves no model (it
// used to save the half-trained weights as koopman.safetensors, which the
// resumed run then loaded as if finished); it keeps the finished epochs in
// koopman.ckpt, and the resumed run ends with the model an uninterrupted
// training makes, bit for bit.
func TestBuildAugmenterResumesKoopmanTraining(t *testing.T) {
	d := pendulumTransitions(t, 500, 4)
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
	_, err = BuildAugmenter(ctx, cfg, d, dir, func(done, _ int, msg string) {
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
	if _, err := BuildAugmenter(context.Background(), cfg, d, dir, func(done, _ int, msg string) {
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
