package serve

import (
	"time"
)

// job is one /v1/act request's rows on their way through the batcher.
type job struct {
	obs    []float64 // [rows, obsDim], finite
	rows   int
	act    []float64 // [rows, actDim], written by the batcher
	logStd []float64 // [rows, actDim] or nil, written by the batcher
	done   chan struct{}
}

// batcher owns the engine: one goroutine takes the queued jobs, merges
// them into batches of up to maxBatch rows, waiting at most maxWait after
// the first for more to arrive, and computes each batch with one forward
// pass per maxBatch rows. Every job's rows are computed exactly as alone
// (see engine), so batching changes throughput, never answers.
type batcher struct {
	eng      *engine
	jobs     chan *job
	maxBatch int
	maxWait  time.Duration
	m        *metrics
	stop     chan struct{}
	stopped  chan struct{}

	obs    []float64
	act    []float64
	logStd []float64
}

func newBatcher(eng *engine, maxBatch int, maxWait time.Duration, queue int, m *metrics) *batcher {
	b := &batcher{eng: eng, jobs: make(chan *job, queue), maxBatch: maxBatch, maxWait: maxWait, m: m,
		stop: make(chan struct{}), stopped: make(chan struct{})}
	go b.loop()
	return b
}

// close stops the batcher after the jobs already queued are done. No job
// may be submitted after close.
func (b *batcher) close() {
	close(b.stop)
	<-b.stopped
}

func (b *batcher) loop() {
	defer close(b.stopped)
	var timer *time.Timer
	for {
		var first *job
		select {
		case first = <-b.jobs:
		case <-b.stop:
			// Handlers have all returned (the server drained) before
			// close, but finish anything queued all the same.
			for {
				select {
				case j := <-b.jobs:
					b.run([]*job{j})
				default:
					return
				}
			}
		}
		batch, rows := []*job{first}, first.rows
		if b.maxWait > 0 && rows < b.maxBatch {
			if timer == nil {
				timer = time.NewTimer(b.maxWait)
			} else {
				timer.Reset(b.maxWait)
			}
		collect:
			for rows < b.maxBatch {
				select {
				case j := <-b.jobs:
					batch, rows = append(batch, j), rows+j.rows
				case <-timer.C:
					break collect
				case <-b.stop:
					break collect
				}
			}
			timer.Stop()
		} else {
		drain:
			for rows < b.maxBatch {
				select {
				case j := <-b.jobs:
					batch, rows = append(batch, j), rows+j.rows
				default:
					break drain
				}
			}
		}
		b.run(batch)
	}
}

// run computes the jobs of one batch and releases their handlers.
func (b *batcher) run(batch []*job) {
	od, ad := b.eng.obsDim, b.eng.actDim
	rows, withStd := 0, false
	for _, j := range batch {
		rows += j.rows
		withStd = withStd || j.logStd != nil
	}
	var obs, act, logStd []float64
	if len(batch) == 1 {
		obs, act, logStd = batch[0].obs, batch[0].act, batch[0].logStd
	} else {
		b.obs, b.act = growF(b.obs, rows*od), growF(b.act, rows*ad)
		obs, act = b.obs, b.act
		if withStd {
			b.logStd = growF(b.logStd, rows*ad)
			logStd = b.logStd
		}
		r := 0
		for _, j := range batch {
			copy(obs[r*od:], j.obs)
			r += j.rows
		}
	}
	passes := b.eng.compute(obs, rows, act, logStd)
	if len(batch) > 1 {
		r := 0
		for _, j := range batch {
			copy(j.act, act[r*ad:(r+j.rows)*ad])
			if j.logStd != nil {
				copy(j.logStd, logStd[r*ad:(r+j.rows)*ad])
			}
			r += j.rows
		}
	}
	b.m.batchRequests.Observe(float64(len(batch)))
	for _, n := range passes {
		b.m.passRows.Observe(float64(n))
	}
	for _, j := range batch {
		close(j.done)
	}
}

func growF(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
