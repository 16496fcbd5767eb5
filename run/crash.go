package run

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// CrashEnv names a test-only environment variable for the kill -9 tests:
// KOOPQ_TEST_CRASH=POINT:N makes the process send itself SIGKILL the N-th
// time (counting from 1) it reaches POINT, so that a test can stop `koopq
// train` at exact moments that random kills would rarely hit. The points are
//
//	step        after a gradient step, before its logging
//	metrics     between the metrics.jsonl row and the metrics.csv row
//	eval        after an evaluation, before history.json is written
//	checkpoint  just before a checkpoint is written
//	atomic      inside WriteFileAtomic: the temporary file is complete but
//	            not yet renamed (config.json, history.json, results.json, ...)
//	policy      after policy.safetensors, before results.json
//
// Unset (the normal case) it costs one string comparison per point.
const CrashEnv = "KOOPQ_TEST_CRASH"

var crash struct {
	once  sync.Once
	point string
	at    int
	mu    sync.Mutex
	seen  int
}

// crashPoint kills the process with SIGKILL when CrashEnv selects this
// point and occurrence.
func crashPoint(name string) {
	crash.once.Do(func() {
		p, n, ok := strings.Cut(os.Getenv(CrashEnv), ":")
		if !ok {
			return
		}
		at, err := strconv.Atoi(n)
		if err != nil || at < 1 {
			return
		}
		crash.point, crash.at = p, at
	})
	if crash.point != name {
		return
	}
	crash.mu.Lock()
	crash.seen++
	hit := crash.seen == crash.at
	crash.mu.Unlock()
	if hit {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL cannot be caught; wait for it
	}
}
