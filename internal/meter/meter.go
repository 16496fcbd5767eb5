// Package meter holds the module's one progress-callback type, low enough
// (layer 0) for every package to take it.
package meter

// Progress reports progress of long work: done of total units, with a
// short message (empty when the caller has nothing to add). total may be 0
// when unknown. Progress is called from the working goroutine; a nil
// Progress means no reporting.
type Progress func(done, total int, msg string)
