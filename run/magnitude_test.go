package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koopq/koopq/learntest"
)

// magnitudeKeys are the results.json keys every run has.
var magnitudeKeys = []string{"shift_rows", "shift_l2_mean", "shift_l2_median", "shift_l2_p95",
	"shift_next_l2_mean", "shift_next_l2_median", "shift_next_l2_p95"}

// --shift-l2 calibrates S4RL-N's σ: results.json records the calibrated
// scale and the training distances, whose mean is the target within 5%;
// a run killed and resumed reports the same distances as an uninterrupted
// one (the histograms travel in the checkpoint).
func TestShiftL2CalibratesAndRecords(t *testing.T) {
	d := learntest.PendulumT(t, 400, 5)
	cfg := tinyConfig()
	cfg.AugmentParams.ShiftL2 = 1e-2
	whole, _ := NewDir(t.TempDir(), "whole")
	if _, err := Train(context.Background(), cfg, whole, d, false, nil); err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := whole.ReadJSON("results.json", &res); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(magnitudeKeys, "shift_scale", "shift_calibration") {
		if _, ok := res[k]; !ok {
			t.Errorf("results.json has no %s", k)
		}
	}
	if _, ok := res["model_error_l2_mean"]; ok {
		t.Error("S4RL-N run reports a Koopman model error")
	}
	mean, rows := res["shift_l2_mean"].(float64), res["shift_rows"].(float64)
	t.Logf("shift_l2_mean %.5g, median %.5g, p95 %.5g, next mean %.5g over %v rows; sigma %.5g",
		mean, res["shift_l2_median"], res["shift_l2_p95"], res["shift_next_l2_mean"], rows, res["shift_scale"])
	if math.Abs(mean-1e-2) > 5e-4 || rows != float64(cfg.CQL.Batch*cfg.CQL.Steps) {
		t.Errorf("shift_l2_mean %.4g over %v rows, want 1e-2 within 5%% over %d", mean, rows, cfg.CQL.Batch*cfg.CQL.Steps)
	}
	if s := res["shift_scale"].(float64); math.Abs(s-1e-2/math.Sqrt(3)) > 1e-3 {
		t.Errorf("shift_scale %.4g, want ≈ 1e-2/E‖z‖ for 3-dim states", s)
	}

	split, _ := NewDir(t.TempDir(), "split")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Train(ctx, cfg, split, d, false, func(done, _ int, msg string) {
		if strings.HasPrefix(msg, "cql") && done >= 13 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want cancellation, got %v", err)
	}
	if _, err := Train(context.Background(), cfg, split, d, true, nil); err != nil {
		t.Fatal(err)
	}
	var res2 map[string]any
	if err := split.ReadJSON("results.json", &res2); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(magnitudeKeys, "shift_scale") {
		if res[k] != res2[k] {
			t.Errorf("%s: uninterrupted %v, killed and resumed %v", k, res[k], res2[k])
		}
	}
}

// A Koopman run reports the model-error and symmetry parts of its shift;
// with direct decoding and a model whose error is larger than the symmetry
// shift asked for, train warns naming --residual (and keeps the warning in
// results.json); with --residual it does not. A --shift-l2 below the
// model-error floor with direct decoding is refused naming --residual,
// before the run directory is touched when the model is given.
func TestKoopmanShiftParts(t *testing.T) {
	d := learntest.PendulumT(t, 400, 5)
	cfg := tinyConfig()
	cfg.Augment, cfg.CQL.Steps, cfg.EvalEvery = "kfc++", 12, 0
	cfg.AugmentParams.ShiftSigma = 0.1 // a symmetry shift far below the 2-epoch model's error
	cfg.KoopmanHidden, cfg.KoopmanLatent = []int{16, 16}, 4
	cfg.KoopmanTrain.MaxEpochs, cfg.KoopmanTrain.Batch, cfg.KoopmanTrain.Patience, cfg.KoopmanTrain.Seed = 2, 64, 0, 3
	var warnings []string
	dir, _ := NewDir(t.TempDir(), "direct")
	_, err := TrainWith(context.Background(), cfg, dir, d, TrainOptions{Warn: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := dir.ReadJSON("results.json", &res); err != nil {
		t.Fatal(err)
	}
	me, _ := res["model_error_l2_mean"].(float64)
	sym, _ := res["symmetry_l2_mean"].(float64)
	t.Logf("model error %.4g, symmetry %.4g, shift_l2_mean %.4g; warnings %q", me, sym, res["shift_l2_mean"], warnings)
	if !(me > sym && sym > 0) {
		t.Fatalf("model_error_l2_mean %v, symmetry_l2_mean %v: want both, model error larger", res["model_error_l2_mean"], res["symmetry_l2_mean"])
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "--residual") || res["shift_warnings"] == nil {
		t.Errorf("warnings %q (results.json %v), want one naming --residual", warnings, res["shift_warnings"])
	}

	cfg.AugmentParams.Residual = true
	cfg.KoopmanModel = dir.File(KoopmanFile) // the same model
	warnings = nil
	dir2, _ := NewDir(t.TempDir(), "residual")
	if _, err := TrainWith(context.Background(), cfg, dir2, d, TrainOptions{Warn: func(s string) { warnings = append(warnings, s) }}); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("residual decoding warned: %q", warnings)
	}
	// The same model on other transitions: a warning, kept in results.json.
	warnings = nil
	other, _ := NewDir(t.TempDir(), "other-data")
	if _, err := TrainWith(context.Background(), cfg, other, learntest.PendulumT(t, 400, 6), TrainOptions{Warn: func(s string) { warnings = append(warnings, s) }}); err != nil {
		t.Fatal(err)
	}
	var resOther map[string]any
	if err := other.ReadJSON("results.json", &resOther); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "trained on other transitions") ||
		!strings.Contains(fmt.Sprint(resOther["shift_warnings"]), "trained on other transitions") {
		t.Errorf("model of other data: warnings %q, results.json %v", warnings, resOther["shift_warnings"])
	}

	cfg.AugmentParams.Residual, cfg.AugmentParams.ShiftL2 = false, me/2
	root := t.TempDir()
	dir3 := &Dir{Path: filepath.Join(root, "floor")}
	if _, err := TrainWith(context.Background(), cfg, dir3, d, TrainOptions{}); err == nil || !strings.Contains(err.Error(), "--residual") {
		t.Errorf("--shift-l2 below the floor: err %v, want one naming --residual", err)
	}
	if _, err := os.Stat(dir3.Path); err == nil {
		t.Error("the refused run created its directory")
	}
	cfg.AugmentParams.Residual, cfg.AugmentParams.ShiftL2 = true, 1e-2
	cfg.CQL.Steps = 150 // the 2-epoch model's shifts vary much from row to row
	dir4, _ := NewDir(t.TempDir(), "calibrated")
	if _, err := TrainWith(context.Background(), cfg, dir4, d, TrainOptions{}); err != nil {
		t.Fatal(err)
	}
	var res4 map[string]any
	if err := dir4.ReadJSON("results.json", &res4); err != nil {
		t.Fatal(err)
	}
	// p_K = 0.8: model and noise branches are both calibrated to the target.
	if got := res4["shift_l2_mean"].(float64); math.Abs(got-1e-2) > 5e-4 {
		t.Errorf("kfc++ residual --shift-l2 1e-2: shift_l2_mean %.4g (calibration %v)", got, res4["shift_calibration"])
	}
}

// shift_l2 is a config-file key (augment_params.shift_l2) and a flag;
// Validate refuses it for plain CQL and raw S4RL-Adv.
func TestShiftL2Config(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("augment: kfc++\naugment_params:\n  shift_l2: 2.6e-4\n  residual: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfigFile(p, DefaultTrainConfig(), "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AugmentParams.ShiftL2 != 2.6e-4 {
		t.Errorf("shift_l2 %v, want 2.6e-4", cfg.AugmentParams.ShiftL2)
	}
	found := false
	for _, q := range TrainParams() {
		found = found || q.Flag == "shift-l2" && q.Key == "augment_params.shift_l2"
	}
	if !found {
		t.Error("no --shift-l2 flag")
	}
	cfg = tinyConfig()
	cfg.AugmentParams.ShiftL2 = 1e-3
	for _, c := range []struct{ aug, mode string }{{"none", "l2"}, {"s4rl-adv", "raw"}} {
		cfg.Augment, cfg.AugmentParams.AdvMode = c.aug, c.mode
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--shift-l2") {
			t.Errorf("%s %s: err %v, want a --shift-l2 error", c.aug, c.mode, err)
		}
	}
	cfg.AugmentParams.ShiftL2 = -1
	cfg.Augment = "gaussian"
	if err := cfg.Validate(); err == nil {
		t.Error("negative shift_l2 accepted")
	}
}
