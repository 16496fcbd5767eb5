package run

// CrashEnv names a test-only environment variable for the kill -9 and
// signal tests: KOOPQ_TEST_CRASH=POINT:N makes the process send itself
// SIGKILL the N-th time (counting from 1) it reaches POINT, so that a test
// can stop `koopq train` at exact moments that random kills would rarely
// hit; POINT:N:INT or POINT:N:TERM sends SIGINT or SIGTERM instead (and
// goes on, as after a user's Ctrl-C), and POINT:N:STOP sends SIGSTOP, which
// freezes the process until the test sends SIGCONT (and then, say, SIGKILL
// a moment later, inside whatever the run does next). The points are
//
//	step        after a gradient step, before its logging
//	metrics     between the metrics.jsonl row and the metrics.csv row
//	eval        after an evaluation, before history.json is written
//	final       after the last step and its checkpoint, before the final evaluation
//	checkpoint  just before a checkpoint is written
//	atomic      inside WriteFileAtomic: the temporary file is complete but
//	            not yet renamed (config.json, history.json, results.json, ...)
//	policy      after policy.safetensors, before results.json
//	koopman-epoch  after a `koopq koopman train` epoch and its checkpoint
//
// The hooks exist only in binaries built with -tags crashtest (the CLI
// tests build koopq so);
// in a normal build every point is an empty function (crash_off.go) and
// the variable is ignored.
const CrashEnv = "KOOPQ_TEST_CRASH"
