package run

import (
	"fmt"
	"os"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/stheader"
	"github.com/koopq/koopq/koopman"
)

// Magnitude is the size of a run's augmentation, top-level keys of
// results.json: how --shift-l2 set the scale, the distances measured during
// training and, for the Koopman augmenters, what the shift is made of.
//
// The training distances are kept per row of every batch in bounded
// log-binned histograms (augment.Meter) saved with every checkpoint, so a
// resumed run reports the same numbers as an uninterrupted one; the mean is
// exact, median and p95 are within ≈1.2% (half a bin). A run resumed from a
// checkpoint written before koopq kept them counts only the steps after it
// (shift_rows says how many rows entered).
type Magnitude struct {
	// ShiftCalibration is how --shift-l2 set the scale; absent without it.
	ShiftCalibration *augment.Calibration `json:"shift_calibration,omitempty"`
	// ShiftScale is the calibrated scale (ShiftCalibration.Scale, in the
	// units of the config key ShiftCalibration.Param); absent without
	// --shift-l2.
	ShiftScale float64 `json:"shift_scale,omitempty"`
	// ShiftRows is the number of rows the statistics below are over
	// (batch size × steps).
	ShiftRows int64 `json:"shift_rows"`
	// ‖s̃_t − s_t‖₂ and ‖s̃_{t+1} − s_{t+1}‖₂ over every row of every
	// training batch, raw state units.
	ShiftL2Mean       float64 `json:"shift_l2_mean"`
	ShiftL2Median     float64 `json:"shift_l2_median"`
	ShiftL2P95        float64 `json:"shift_l2_p95"`
	ShiftNextL2Mean   float64 `json:"shift_next_l2_mean"`
	ShiftNextL2Median float64 `json:"shift_next_l2_median"`
	ShiftNextL2P95    float64 `json:"shift_next_l2_p95"`
	// ModelErrorL2Mean and SymmetryL2Mean are the Koopman augmenters' two
	// parts of the model branch's shift of s_t on the calibration sample
	// (augment.Decomposition): mean ‖D(E(s)) − s‖₂, which enters the shift
	// only with direct decoding, and mean ‖D(g̃) − D(E(s))‖₂.
	ModelErrorL2Mean *float64 `json:"model_error_l2_mean,omitempty"`
	SymmetryL2Mean   *float64 `json:"symmetry_l2_mean,omitempty"`
	// ShiftWarnings are the warnings train printed about the shift and the
	// Koopman model it comes from.
	ShiftWarnings []string `json:"shift_warnings,omitempty"`
}

// checkShiftL2 rejects --shift-l2 settings no augmenter can honour
// (Validate: before anything is read or written).
func (c TrainConfig) checkShiftL2() error {
	if c.AugmentParams.ShiftL2 == 0 {
		return nil
	}
	switch {
	case augment.IsCQL(c.Augment):
		return fmt.Errorf("--shift-l2 (augment_params.shift_l2) %v with --augment cql: plain CQL shifts nothing; pick an augmentation or drop --shift-l2", c.AugmentParams.ShiftL2)
	case c.Augment == "s4rl-adv" && c.AugmentParams.AdvMode == "raw":
		return fmt.Errorf("--shift-l2 (augment_params.shift_l2) with --adv-mode raw: the raw step's size is the critic's gradient's and changes as it learns; use --adv-mode l2 or sign")
	}
	return nil
}

// checkShiftFloor refuses, before any side effect, a --shift-l2 below the
// reconstruction error of a given Koopman model with direct decoding (the
// shift can go no lower). Models trained for the run are checked when they
// are calibrated.
func checkShiftFloor(cfg TrainConfig, data *dataset.Dataset, m *koopman.Model) error {
	x := cfg.AugmentParams.ShiftL2
	if x == 0 || cfg.AugmentParams.Residual || !augment.DecodesState(cfg.Augment) || cfg.Augment == "kfc++-contact" {
		return nil
	}
	if floor := augment.ModelErrorL2(m, augment.CalibrationSample(data, augment.CalibrationRows, augment.CalibrationSeed)); floor >= x {
		return fmt.Errorf("--shift-l2 %.3g is below the model-error floor of %s with direct decoding: the Koopman model %s reconstructs states "+
			"with mean ‖D(E(s)) − s‖₂ %.3g on the calibration sample; use --residual (s̃ = s + D(g̃) − D(g)) or a better model", x, cfg.Augment, cfg.KoopmanModel, floor)
	}
	return nil
}

// prepareMagnitude calibrates aug to --shift-l2 when it is set and, for the
// Koopman augmenters, measures the model-error and symmetry parts of the
// shift at the scale the run uses, warning (naming --residual) when with
// direct decoding the model error is the larger part. It returns the
// augmenter to train with.
func prepareMagnitude(cfg TrainConfig, data *dataset.Dataset, aug augment.Augmenter, warnTo func(string)) (augment.Augmenter, Magnitude, error) {
	var mag Magnitude
	_, isKoopman := aug.(*augment.Koopman)
	if cfg.AugmentParams.ShiftL2 == 0 && !isKoopman {
		return aug, mag, nil
	}
	sample := augment.CalibrationSample(data, augment.CalibrationRows, augment.CalibrationSeed)
	if x := cfg.AugmentParams.ShiftL2; x > 0 {
		a, cal, err := augment.Calibrate(aug, sample, x)
		if err != nil {
			return nil, mag, fmt.Errorf("%s: %w", cfg.Augment, err)
		}
		aug, mag.ShiftCalibration, mag.ShiftScale = a, &cal, cal.Scale
	}
	if k, ok := aug.(*augment.Koopman); ok {
		d, ok, err := k.Decompose(sample, augment.CalibrationSeed)
		if err != nil {
			return nil, mag, err
		}
		if ok {
			mag.ModelErrorL2Mean, mag.SymmetryL2Mean = &d.ModelError, &d.Symmetry
			if !cfg.AugmentParams.Residual && d.ModelError > d.Symmetry {
				w := fmt.Sprintf("%s with direct decoding: the model-error part of the shift, mean ‖D(E(s)) − s‖₂ = %.3g, is larger than the "+
					"symmetry shift asked for, mean ‖D(g̃) − D(g)‖₂ = %.3g: most of s̃ − s is the Koopman model's reconstruction error; "+
					"--residual (s̃ = s + D(g̃) − D(g)) leaves it out", cfg.Augment, d.ModelError, d.Symmetry)
				warn(warnTo, w)
				mag.ShiftWarnings = append(mag.ShiftWarnings, w)
			}
		}
	}
	return aug, mag, nil
}

// record copies the training distances of meter into m.
func (m *Magnitude) record(meter *augment.Meter) {
	o, n := meter.Obs.Summary(), meter.Next.Summary()
	m.ShiftRows = o.Rows
	m.ShiftL2Mean, m.ShiftL2Median, m.ShiftL2P95 = o.Mean, o.Median, o.P95
	m.ShiftNextL2Mean, m.ShiftNextL2Median, m.ShiftNextL2P95 = n.Mean, n.Median, n.P95
}

// warn gives msg to to, or prints it on stderr when to is nil (TrainOptions.Warn).
func warn(to func(string), msg string) {
	if to == nil {
		fmt.Fprintln(os.Stderr, "koopq: warning:", msg)
		return
	}
	to(msg)
}

// modelDataWarning is the warning for a run given a Koopman model
// (cfg.KoopmanModel) that was trained on other transitions than the run's
// data (the model's MetaDataContent against data's content sha256): its
// symmetries then describe another dataset's dynamics. "" when they agree,
// when the run trains its own model, or when the model does not record its
// data (saved by an older koopq).
func modelDataWarning(cfg TrainConfig, data DatasetInput) (string, error) {
	if cfg.KoopmanModel == "" || !augment.NeedsKoopman(cfg.Augment) {
		return "", nil
	}
	h, err := stheader.Read(cfg.KoopmanModel)
	if err != nil {
		return "", fmt.Errorf("Koopman model: %w", err)
	}
	got := h.Meta[koopman.MetaDataContent]
	if got == "" || got == data.ContentSHA256 {
		return "", nil
	}
	from := ""
	if p := h.Meta["data"]; p != "" {
		from = " of " + p
	}
	return fmt.Sprintf("the Koopman model %s was trained on other transitions (content sha256 %s%s) than this run's data %s "+
		"(content sha256 %s): its symmetries describe that data's dynamics", cfg.KoopmanModel, fingerprint.Short(got), from,
		data.Path, fingerprint.Short(data.ContentSHA256)), nil
}
