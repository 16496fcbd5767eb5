package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// `koopq koopman train` takes the learning-rate schedule flags, records the
// per-epoch rates and why training stopped in MODEL.json and the model's
// metadata, and `koopman inspect` shows the stop reason and the final rate.
// With --min-delta 0.9 no epoch after the first counts as an improvement,
// so --lr-patience 1 halves the rate after epochs 2 and 3 (down to --min-lr)
// and the plateau after epoch 4 stops training with min_lr.
func TestKoopmanTrainLRSchedule(t *testing.T) {
	t.Parallel()
	fx := fixtures(t)
	dir := t.TempDir()
	r := runCLI(t, dir, 2*time.Minute, "koopman", "train", "--data", fx.Data, "--env", "pendulum", "--out", "m.safetensors",
		"--max-epochs", "20", "--hidden", "16,8", "--latent", "4", "--batch", "64", "--diag-n", "50",
		"--lr", "1e-3", "--lr-patience", "1", "--lr-factor", "0.5", "--min-lr", "2.5e-4", "--min-delta", "0.9", "--patience", "0")
	ok(t, r)
	if !strings.Contains(r.Stdout, "stopped: min_lr") || !strings.Contains(r.Stdout, "epoch   3/20  lr 0.0005") {
		t.Errorf("koopman train output:\n%s", r.Stdout)
	}
	var sum struct {
		Train struct {
			Config struct {
				LRPatience int     `json:"lr_patience"`
				LRFactor   float64 `json:"lr_factor"`
				MinLR      float64 `json:"min_lr"`
				MinDelta   float64 `json:"min_delta"`
			} `json:"config"`
			Epochs []struct {
				LR float64 `json:"lr"`
			} `json:"epochs"`
			Stopped      string  `json:"stopped"`
			FinalLR      float64 `json:"final_lr"`
			Undertrained bool    `json:"undertrained"`
		} `json:"train"`
	}
	readJSON(t, filepath.Join(dir, "m.safetensors.json"), &sum)
	tr := sum.Train
	var lrs []float64
	for _, e := range tr.Epochs {
		lrs = append(lrs, e.LR)
	}
	if c := tr.Config; c.LRPatience != 1 || c.LRFactor != 0.5 || c.MinLR != 2.5e-4 || c.MinDelta != 0.9 {
		t.Errorf("recorded config %+v", c)
	}
	if want := []float64{1e-3, 1e-3, 5e-4, 2.5e-4}; !slices.Equal(lrs, want) || tr.Stopped != "min_lr" || tr.FinalLR != 2.5e-4 || tr.Undertrained {
		t.Errorf("m.safetensors.json: rates %v (want %v), stopped %q, final lr %v, undertrained %v", lrs, want, tr.Stopped, tr.FinalLR, tr.Undertrained)
	}

	r = runCLI(t, dir, time.Minute, "koopman", "inspect", "--model", "m.safetensors", "--data", fx.Data, "--n", "20")
	ok(t, r)
	if !strings.Contains(r.Stdout, "training: stopped min_lr after 4 epochs, final lr 0.00025") {
		t.Errorf("koopman inspect output:\n%s", r.Stdout)
	}

	// Two epochs from scratch end at the cap while still improving: flagged
	// in the summary, the metadata (inspect) and a warning.
	r = runCLI(t, dir, 2*time.Minute, "koopman", "train", "--data", fx.Data, "--env", "pendulum", "--out", "short.safetensors",
		"--epochs", "2", "--hidden", "16,8", "--latent", "4", "--batch", "64", "--diag-n", "50", "--min-delta", "0")
	ok(t, r)
	if !strings.Contains(r.Stderr, "warning: the model may be undertrained") {
		t.Errorf("no undertraining warning; stderr:\n%s", r.Stderr)
	}
	r = runCLI(t, dir, time.Minute, "koopman", "inspect", "--model", "short.safetensors", "--data", fx.Data, "--n", "20")
	ok(t, r)
	if !strings.Contains(r.Stdout, "training: stopped max_epochs after 2 epochs") || !strings.Contains(r.Stdout, "UNDERTRAINED") {
		t.Errorf("koopman inspect output:\n%s", r.Stdout)
	}

	expectCLIError(t, runCLI(t, dir, time.Minute, "koopman", "train", "--data", fx.Data, "--out", "bad.safetensors",
		"--lr-factor", "1.5"), "--lr-factor 1.5: must be in (0, 1)")
}
