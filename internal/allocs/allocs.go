// Package allocs measures allocations per call for the tests that pin hot
// loops at zero (cql's Step, sac's Update, the GEMM wrappers). A raw
// testing.AllocsPerRun counts every allocation of the process in its
// window, so a finalizer or cleanup of an earlier test that the garbage
// collector happens to run then (more likely on a loaded machine) shows up
// as the loop's own. Min settles the collector first and keeps the lowest
// of a few measurements: an allocation the loop really makes is in every
// one of them, so the least is still above zero.
package allocs

import (
	"runtime"
	"testing"
)

// Tries is how many measurements Min takes at most.
const Tries = 3

// Min returns the fewest allocations per call of f seen in up to Tries
// windows of runs calls each (testing.AllocsPerRun), each after a full
// garbage collection; it stops at the first window without any.
func Min(runs int, f func()) float64 {
	best := -1.0
	for range Tries {
		runtime.GC()
		runtime.GC() // finalizers the first cycle queued get their chance to run first
		n := testing.AllocsPerRun(runs, f)
		if best < 0 || n < best {
			best = n
		}
		if best == 0 {
			break
		}
	}
	return best
}
