package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// 'koopq koopman train' and 'koopq train' set the Koopman training from one
// table (koopman.TrainParams): a value out of range, and a value breaking a
// rule across settings (koopman.TrainConfig.Validate's), name the flag
// each command has, and train's errors the config key too.
func TestKoopmanTrainFlagErrorsBothCommands(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 200, 1)
	out := filepath.Join(tmp, "runs")
	kt := func(extra ...string) []string {
		return append([]string{"koopman", "train", "--data", data, "--out", filepath.Join(tmp, "m.safetensors")}, extra...)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{kt("--lr-factor", "1.5"), "--lr-factor 1.5: must be in (0, 1) when --lr-patience is set"},
		{kt("--min-lr", "0.01", "--lr", "0.001"), "--min-lr 0.01: must be in [0, --lr 0.001] when --lr-patience is set"},
		{kt("--val-fraction", "1"), "--val-fraction 1: must be in (0, 1)"},
		{tinyTrain(data, out, "a", "--koopman-lr-factor", "1.5"),
			"--koopman-lr-factor (koopman_train.lr_factor) = 1.5: must be in (0, 1) when --koopman-lr-patience (koopman_train.lr_patience) is set"},
		{tinyTrain(data, out, "b", "--koopman-min-lr", "0.01", "--koopman-lr", "0.001"),
			"--koopman-min-lr (koopman_train.min_lr) = 0.01: must be in [0, --koopman-lr (koopman_train.lr) 0.001] when --koopman-lr-patience (koopman_train.lr_patience) is set"},
		{tinyTrain(data, out, "c", "--koopman-val-fraction", "1"), "--koopman-val-fraction (koopman_train.val_fraction) = 1: must be in (0, 1)"},
	} {
		r := runCLI(t, tmp, time.Minute, c.args...)
		expectCLIError(t, r, c.want)
		if strings.Contains(r.Stderr, "koopman train: ") {
			t.Errorf("%v: the library's wording leaked: %s", c.args, r.Stderr)
		}
	}
	// With the plateau rule off the factor and the floor are not used.
	r := runCLI(t, tmp, time.Minute, kt("--lr-patience", "0", "--lr-factor", "0", "--min-lr", "1", "--max-epochs", "1", "--hidden", "8", "--latent", "2", "--diag-n", "20")...)
	ok(t, r)
}
