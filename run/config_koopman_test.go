package run

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/learntest"
)

// koopq train sets the Koopman learning-rate schedule of a model trained
// for the run: each flag writes the field whose JSON path is its config key.
func TestKoopmanScheduleParams(t *testing.T) {
	for flag, key := range map[string]string{
		"koopman-lr-patience": "koopman_train.lr_patience",
		"koopman-lr-factor":   "koopman_train.lr_factor",
		"koopman-min-lr":      "koopman_train.min_lr",
		"koopman-max-epochs":  "koopman_train.max_epochs",
	} {
		var p *Param
		for _, q := range TrainParams() {
			if q.Flag == flag {
				p = &q
			}
		}
		if p == nil || p.Key != key {
			t.Errorf("--%s: param %+v, want key %s", flag, p, key)
			continue
		}
		cfg := DefaultTrainConfig()
		switch v := p.Field(&cfg).(type) {
		case *int:
			*v = 7
		case *float64:
			*v = 7
		default:
			t.Fatalf("--%s: field %T", flag, v)
		}
		var tree map[string]any
		b, _ := json.Marshal(cfg)
		json.Unmarshal(b, &tree)
		parts := strings.Split(key, ".")
		got := tree[parts[0]].(map[string]any)[parts[1]]
		if got != 7.0 {
			t.Errorf("--%s = 7 gives %s = %v", flag, key, got)
		}
	}
}

// A Koopman model trained for a run records in its metadata why its
// training stopped, the final learning rate and whether it looks
// undertrained (two epochs from scratch: still improving at the cap).
func TestRunKoopmanModelRecordsStop(t *testing.T) {
	d := learntest.PendulumT(t, 300, 4)
	cfg := DefaultTrainConfig()
	cfg.Env, cfg.Data, cfg.Augment = "pendulum", "pendulum.hdf5", "kfc++"
	cfg.KoopmanHidden, cfg.KoopmanLatent = []int{8, 8}, 3
	cfg.KoopmanTrain.MaxEpochs, cfg.KoopmanTrain.Batch, cfg.KoopmanTrain.MinDelta = 2, 64, 0
	dir := &Dir{Path: t.TempDir()}
	if _, err := BuildAugmenter(context.Background(), cfg, d, dir, "", nil); err != nil {
		t.Fatal(err)
	}
	_, meta, err := koopman.LoadModel(dir.File(KoopmanFile))
	if err != nil {
		t.Fatal(err)
	}
	if meta["stopped"] != koopman.StopMaxEpochs || meta["final_lr"] != "0.0003" || meta["undertrained"] != "true" ||
		meta["epochs"] != "2" || meta["dataset"] != cfg.Data {
		t.Fatalf("model metadata %v", meta)
	}
}

// koopq train's --koopman-… rows are koopman.TrainParams nested, and the
// Koopman config's rules across settings name the flags and keys.
func TestKoopmanTrainErrorsNameFlags(t *testing.T) {
	for _, r := range koopman.TrainParams() {
		if r.Flag == "min-delta" {
			continue // a config-file key only
		}
		p, ok := TrainParams().Lookup("koopman-" + r.Flag)
		if !ok || p.Key != "koopman_train."+r.Key || !p.Range.Equal(r.Range) || !strings.HasPrefix(p.Usage, KoopmanTrainPrefix.Usage) {
			t.Errorf("--koopman-%s: %+v", r.Flag, p)
		}
	}
	for name, c := range map[string]struct {
		mut  func(*koopman.TrainConfig)
		want string
	}{
		"factor":    {func(k *koopman.TrainConfig) { k.LRFactor = 1.5 }, "--koopman-lr-factor (koopman_train.lr_factor) = 1.5: must be in (0, 1) when --koopman-lr-patience (koopman_train.lr_patience) is set"},
		"min lr":    {func(k *koopman.TrainConfig) { k.MinLR = 1 }, "--koopman-min-lr (koopman_train.min_lr) = 1: must be in [0, --koopman-lr (koopman_train.lr) 0.0003] when --koopman-lr-patience (koopman_train.lr_patience) is set"},
		"min delta": {func(k *koopman.TrainConfig) { k.MinDelta = -1 }, "koopman_train.min_delta = -1: must be >= 0"},
	} {
		cfg := DefaultTrainConfig()
		cfg.Data, cfg.Env = "d.hdf5", EnvNone
		c.mut(&cfg.KoopmanTrain)
		if err := cfg.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	cfg := DefaultTrainConfig()
	cfg.Data, cfg.Env = "d.hdf5", EnvNone
	cfg.KoopmanTrain.LRPatience, cfg.KoopmanTrain.LRFactor, cfg.KoopmanTrain.MinLR = 0, 0, 0
	if err := cfg.Validate(); err != nil {
		t.Errorf("schedule off: %v", err)
	}
}
