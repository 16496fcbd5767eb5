package koopman

import "github.com/koopq/koopq/internal/param"

// SettingError is the error TrainConfig.Validate returns: it names the
// setting at fault by its JSON key (e.g. "min_lr") and, in its rule, the
// settings it is checked against, so that a command can name its own flags
// instead (param.Explain with TrainParams).
type SettingError = param.RuleError

// TrainParams is the table of the TrainConfig settings a command sets:
// flag (without a prefix), key (the JSON name), help text, field and
// range. 'koopq koopman train' registers it with plain flags (--lr),
// 'koopq train' nests it as --koopman-lr, koopman_train.lr
// (run.TrainParams), so both share one wording and one range per setting.
// Rules across settings (LRFactor in (0, 1) and MinLR ≤ LR while
// LRPatience is set) are Validate's; HuberDelta and Seed have no row (Seed
// comes from each command's own --seed).
func TrainParams() param.Table[TrainConfig] {
	type c = TrainConfig
	return param.Table[c]{
		param.New("max-epochs", "max_epochs", "maximum epochs (paper: 75; authors' code: up to 400)", func(c *c) any { return &c.MaxEpochs }, param.Positive),
		param.New("batch", "batch", "minibatch size", func(c *c) any { return &c.Batch }, param.Positive),
		param.New("lr", "lr", "Adam learning rate", func(c *c) any { return &c.LR }, param.Positive),
		param.New("ae-weight", "ae_weight", "γ_ae, weight of the autoencoder loss (authors' code: 10)", func(c *c) any { return &c.AEWeight }, param.NonNegative),
		param.New("noise", "noise_sigma", "σ of the Gaussian noise on autoencoder inputs (state units)", func(c *c) any { return &c.NoiseSigma }, param.NonNegative),
		param.New("val-fraction", "val_fraction", "validation share of transitions", func(c *c) any { return &c.ValFraction }, param.OpenFraction),
		param.New("patience", "patience", "early stopping: epochs without a --min-delta relative validation improvement (0: off)", func(c *c) any { return &c.Patience }, param.NonNegative),
		param.New("min-delta", "min_delta", "relative validation improvement that counts for --patience and --lr-patience", func(c *c) any { return &c.MinDelta }, param.NonNegative),
		param.New("lr-patience", "lr_patience", "epochs without improvement before the learning rate is multiplied by --lr-factor (0: constant rate)", func(c *c) any { return &c.LRPatience }, param.NonNegative),
		// (0, 1) only matters while lr-patience is set: Validate's rule.
		param.New("lr-factor", "lr_factor", "learning-rate factor on a plateau, in (0, 1) (authors' code: 0.5)", func(c *c) any { return &c.LRFactor }, param.NonNegative),
		param.New("min-lr", "min_lr", "learning-rate floor; a plateau at it stops training (stopped: min_lr)", func(c *c) any { return &c.MinLR }, param.NonNegative),
	}
}
