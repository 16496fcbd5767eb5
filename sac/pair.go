package sac

// pair runs a function on two goroutines at once, f(0) on the caller's and
// f(1) on a long-lived worker, without allocating per call (nn.Both starts a
// goroutine and allocates a closure and a WaitGroup each time, which shows
// up in SAC's once-per-env-step update). The worker exits when close is
// called; Agent arranges that with runtime.AddCleanup, so the worker holds
// no reference to the Agent (only to the pair's channels).
type pair struct {
	job  chan func(int)
	done chan struct{}
}

func newPair() *pair {
	p := &pair{job: make(chan func(int)), done: make(chan struct{})}
	go func(job <-chan func(int), done chan<- struct{}) {
		for f := range job {
			f(1)
			done <- struct{}{}
		}
	}(p.job, p.done)
	return p
}

// run calls f(0) and f(1) concurrently and returns when both are done.
func (p *pair) run(f func(int)) {
	p.job <- f
	f(0)
	<-p.done
}

// close stops the worker.
func (p *pair) close() { close(p.job) }
