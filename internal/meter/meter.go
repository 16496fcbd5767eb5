// Package meter holds the module's progress-callback types, low enough
// (layer 0) for every package to take them: Progress for one piece of work
// and Staged for work made of named stages (a collection's datasets, a
// training run's phases), with the helpers that turn one into the other.
package meter

// Progress reports progress of long work: done of total units, with a
// short message (empty when the caller has nothing to add). total may be 0
// when unknown. Progress is called from the working goroutine; a nil
// Progress means no reporting.
type Progress func(done, total int, msg string)

// Staged reports progress of work made of named stages: done of total
// units of stage, with a short message as for Progress. Each stage counts
// from its own start; a consumer that draws one bar per stage keys it on
// stage. A nil Staged means no reporting.
type Staged func(stage string, done, total int, msg string)

// Stage is the Progress of one stage of s: its reports reach s under name,
// message unchanged. It is nil when s is nil, so the work skips reporting.
func Stage(s Staged, name string) Progress {
	if s == nil {
		return nil
	}
	return func(done, total int, msg string) { s(name, done, total, msg) }
}

// Within is s with every stage name prefixed by prefix and a space (a
// training run's "bc" phase reported as "hopper/cql/s0 bc"). It is nil when
// s is nil.
func Within(s Staged, prefix string) Staged {
	if s == nil {
		return nil
	}
	return func(stage string, done, total int, msg string) { s(prefix+" "+stage, done, total, msg) }
}

// Flat is the Staged that reports to p, the stage name and a space put
// before each message (for a caller with one bar for all stages). It is nil
// when p is nil.
func Flat(p Progress) Staged {
	if p == nil {
		return nil
	}
	return func(stage string, done, total int, msg string) { p(done, total, stage+" "+msg) }
}
