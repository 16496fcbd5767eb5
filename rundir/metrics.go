package rundir

// The keys of a metric row (metrics.jsonl's object keys, metrics.csv's
// columns). Every value is a number; a row logs every key except
// ModelBatch, which only the runs of augmenters with two branches log.
const (
	// Step is the gradient step the row was logged after (an integer).
	Step = "step"
	// WallSeconds is the seconds since the logging process started: not
	// a training statistic, and not reproducible.
	WallSeconds = "wall_seconds"
	// QLoss is the critics' Bellman mean squared error, mean of the twins.
	QLoss = "q_loss"
	// CQLGap is CQL's conservative gap, logsumexp_a Q(s, a) − Q(s̃, a_data)
	// (Q(s, a_data) with push-up on the clean state), mean of the twins.
	CQLGap = "cql_gap"
	// AlphaPrime is CQL's Lagrange multiplier α′, the weight the
	// conservative penalty has (the fixed weight without the Lagrange loop).
	AlphaPrime = "alpha_prime"
	// Alpha is SAC's entropy weight α.
	Alpha = "alpha"
	// ActorLoss is the actor's loss (behaviour cloning's during the warm-up).
	ActorLoss = "actor_loss"
	// QData is the mean Q(s̃, a) on the dataset's actions at the
	// (augmented) states of the batch.
	QData = "q_data"
	// QRandom is the mean Q(s, a) at uniformly random actions.
	QRandom = "q_random"
	// QPolicy is the mean Q(s, a) at actions a ~ π(s).
	QPolicy = "q_policy"
	// LogPi is the mean log π(a|s) of the policy's actions, in nats.
	LogPi = "log_pi"
	// BC is 1 when the step's actor update was behaviour cloning, else 0.
	BC = "bc"
	// ShiftL2 is the batch mean of ‖s̃_t − s_t‖₂, how far the augmenter
	// moved the states this step, in raw state units.
	ShiftL2 = "shift_l2"
	// ShiftNextL2 is the batch mean of ‖s̃_{t+1} − s_{t+1}‖₂, raw units.
	ShiftNextL2 = "shift_next_l2"
	// ModelBatch is, for the augmenters with a model branch and a noise
	// branch (the Koopman ones), 1 when the step's batch took the model
	// branch and 0 when it took the noise branch; absent for the others
	// and in runs logged before koopq recorded it.
	ModelBatch = "model_batch"
)

// MetricKeys lists every key a metric row may have. metrics.jsonl writes
// a row's keys sorted (a JSON object from a map); metrics.csv puts Step
// first and the others sorted.
var MetricKeys = []string{Step, QLoss, CQLGap, AlphaPrime, Alpha, ActorLoss, QData, QRandom, QPolicy, LogPi, BC,
	ShiftL2, ShiftNextL2, WallSeconds, ModelBatch}

// IsStatistic tells whether a metric key is a training statistic: every
// key but the bookkeeping Step and WallSeconds.
func IsStatistic(key string) bool { return key != Step && key != WallSeconds }

// The top-level keys of results.json that measure the augmentation's size
// (run.Magnitude's fields, written inline in Results' record).
const (
	// ShiftScale is the scale --shift-l2 calibrated, in the units of the
	// config key shift_calibration.param names; absent without --shift-l2.
	ShiftScale = "shift_scale"
	// ShiftRows is the number of rows the shift statistics are over
	// (batch size × steps).
	ShiftRows = "shift_rows"
	// ShiftL2Mean, ShiftL2Median and ShiftL2P95 are the mean, median and
	// 95th percentile of ‖s̃_t − s_t‖₂ over every row of every training
	// batch, raw state units.
	ShiftL2Mean   = "shift_l2_mean"
	ShiftL2Median = "shift_l2_median"
	ShiftL2P95    = "shift_l2_p95"
	// ShiftNextL2Mean, ShiftNextL2Median and ShiftNextL2P95 are the same
	// of ‖s̃_{t+1} − s_{t+1}‖₂.
	ShiftNextL2Mean   = "shift_next_l2_mean"
	ShiftNextL2Median = "shift_next_l2_median"
	ShiftNextL2P95    = "shift_next_l2_p95"
	// ModelErrorL2Mean is the Koopman augmenters' mean ‖D(E(s)) − s‖₂ on
	// the calibration sample (the autoencoder's reconstruction error, part
	// of the shift with direct decoding); absent for other augmenters.
	ModelErrorL2Mean = "model_error_l2_mean"
	// SymmetryL2Mean is the Koopman augmenters' mean ‖D(g̃) − D(E(s))‖₂ on
	// the calibration sample: the symmetry shift's own part.
	SymmetryL2Mean = "symmetry_l2_mean"
)

// MagnitudeKeys lists the numeric magnitude keys of results.json, in the
// order run writes them.
var MagnitudeKeys = []string{ShiftScale, ShiftRows, ShiftL2Mean, ShiftL2Median, ShiftL2P95,
	ShiftNextL2Mean, ShiftNextL2Median, ShiftNextL2P95, ModelErrorL2Mean, SymmetryL2Mean}
