package nn

// Pair runs a function on two goroutines at once, f(0) on the caller's and
// f(1) on a long-lived worker, without allocating per call: the two-core
// split of SAC's and CQL's twin critics (critic k on goroutine k) and of
// the actor's rows. Starting a goroutine per call, as a WaitGroup-based
// helper would, allocates a closure, a WaitGroup and a goroutine each time,
// which shows up in SAC's once-per-env-step update.
//
// The worker holds only the Pair's channels, never a reference to the
// function's receiver once a Run has returned, so an owner can stop it
// with runtime.AddCleanup(owner, func(p *Pair) { p.Close() }, pair).
// Run must not be called concurrently on one Pair, nor from within f.
type Pair struct {
	job  chan func(int)
	done chan struct{}
}

// NewPair starts a Pair's worker goroutine; Close stops it.
func NewPair() *Pair {
	p := &Pair{job: make(chan func(int)), done: make(chan struct{})}
	go func(job <-chan func(int), done chan<- struct{}) {
		for f := range job {
			f(1)
			done <- struct{}{}
		}
	}(p.job, p.done)
	return p
}

// Run calls f(0) on the calling goroutine and f(1) on the worker
// concurrently, and returns when both are done. It does not allocate (f
// itself should be made once, e.g. a method value kept in a field, for a
// call to allocate nothing).
func (p *Pair) Run(f func(int)) {
	p.job <- f
	f(0)
	<-p.done
}

// Close stops the worker; the Pair must not be used afterwards.
func (p *Pair) Close() { close(p.job) }

// Both runs f(0) and f(1) concurrently (f(0) on the calling goroutine) and
// returns when both are done, on a Pair made for this one call: for
// one-off splits (the Koopman loss's two halves, benchmarks) where a
// goroutine per call does not matter. Hot loops keep a Pair instead.
func Both(f func(i int)) {
	p := NewPair()
	defer p.Close()
	p.Run(f)
}
