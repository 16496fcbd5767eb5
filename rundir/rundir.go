// Package rundir owns the format of a koopq run directory: the names of
// the files `koopq train` writes into it, the JSON records they hold
// (results.json, history.json, inputs.json) and the keys of its metric log
// (metrics.jsonl and metrics.csv). The writer (package run) and the reader
// (package report) both go through these names and types, so a field or a
// key cannot be renamed on one side only.
//
// It sits at the bottom of the import graph (the standard library and
// internal/fingerprint only), so that a reader of run directories need not
// import any training package. The parts of results.json whose types
// belong to a training package (the config, the learner's statistics, the
// offline diagnostics) are type parameters of Results: run instantiates
// them with its own types, and a reader that does not know them reads them
// as raw JSON (RawResults).
package rundir

// The files of a run directory, relative to it.
const (
	// ConfigFile is the run's configuration (run.TrainConfig), written
	// before training starts and rewritten when a resume extends the run.
	ConfigFile = "config.json"
	// InputsFile fingerprints what the run reads (Inputs), written when
	// the run starts and checked by every resume.
	InputsFile = "inputs.json"
	// MetricsJSONL is the metric log, one JSON object per logged step with
	// the keys below (Step, QLoss, ...): the record.
	MetricsJSONL = "metrics.jsonl"
	// MetricsCSV holds the same rows as MetricsJSONL as CSV, with a header
	// of the same keys; a column a row did not log is empty.
	MetricsCSV = "metrics.csv"
	// HistoryFile is the evaluations so far, a JSON array of HistoryPoint,
	// rewritten after every evaluation.
	HistoryFile = "history.json"
	// ResultsFile is the finished run's record (Results), written last: a
	// run directory without it has not finished.
	ResultsFile = "results.json"
	// CheckpointsDir holds the run's checkpoints.
	CheckpointsDir = "checkpoints"
	// CheckpointFile is the latest checkpoint (safetensors; its metadata
	// holds the seed, the last stats and the segments so far).
	CheckpointFile = CheckpointsDir + "/latest.safetensors"
	// PolicyFile is the trained policy (safetensors), written at the end,
	// before ResultsFile.
	PolicyFile = "policy.safetensors"
	// KoopmanFile is the Koopman model a run trained itself (when its
	// augmentation needs one and none was given).
	KoopmanFile = "koopman.safetensors"
	// SweepRunFile is a sweep's description of the run in a slot
	// (SweepRun), beside the slot's run directory: it lies in the run
	// directory's parent, not in the run directory.
	SweepRunFile = "sweep-run.json"
)
