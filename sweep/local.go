package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/koopq/koopq/internal/plural"
)

// LocalOptions configures the local executor.
type LocalOptions struct {
	ExecOptions
	// Jobs is the number of concurrent runs; 0 fills the cores
	// (NumCPU / Threads, at least 1).
	Jobs int
	// Progress receives one line per active run every ProgressEvery, and a
	// line per start and end (nil: silent).
	Progress      io.Writer
	ProgressEvery time.Duration
	// Deadline, when set, is the end of the time this sweep may use (a
	// batch allocation, a working session): a run is started only if its
	// steps left, at its speed from Speeds, end before it; runs that would not are
	// held (counted in Summary.Held, left pending, never half-run). The
	// caller also cancels ctx at the deadline, so that active trainers
	// checkpoint and exit rather than being killed with the allocation.
	Deadline time.Time
	// Speeds gives each run's expected training speed for the Deadline
	// check; a run whose speed is unknown (the zero Speeds) always starts.
	// Once runs of the same method have trained in this sweep, their
	// measured speed takes its place (see measuredSpeed).
	Speeds Speeds
}

// activeRun is a run RunLocal is executing and the step it started from.
type activeRun struct {
	Run
	from int
}

// minMeasuredFraction is the share of a run's steps an active run must have
// trained in this sweep before its speed counts (its first steps include
// the behaviour-cloning warm-up and the Koopman precompute).
const minMeasuredFraction = 0.1

// measuredSpeed is the median speed (steps/s) that runs of r's dataset and
// method, else of r's method on any dataset, reached in this RunLocal call:
// the runs finished here (finished) and the active ones that have trained at
// least minMeasuredFraction of their steps here. That is this machine at this
// concurrency, better evidence for the Deadline check than a given or
// historical speed from another machine (the same study ran at 24 steps/s per
// run on one 2-core machine and at 14 on another that looked the same). ok
// is false when no such run exists.
func measuredSpeed(out string, r Run, finished []finishedSpeed, active map[int]activeRun) (v float64, what string, ok bool) {
	all := slices.Clone(finished)
	for _, a := range active {
		if st := RunStatus(out, a.Run); st.StepsPerSec > 0 && float64(st.Step-a.from) >= minMeasuredFraction*float64(a.Steps) {
			all = append(all, finishedSpeed{a.Dataset, a.Method, a.Augment, st.StepsPerSec})
		}
	}
	var same, method []float64
	for _, f := range all {
		if f.method == r.Method {
			method = append(method, f.perSec)
			if f.dataset == r.Dataset {
				same = append(same, f.perSec)
			}
		}
	}
	switch {
	case len(same) > 0:
		return median(same), fmt.Sprintf("measured in this sweep: %d %s %s on %s", len(same), r.Method, plural.Pick(len(same), "run", "runs"), r.Dataset), true
	case len(method) > 0:
		return median(method), fmt.Sprintf("measured in this sweep: %d %s %s", len(method), r.Method, plural.Pick(len(method), "run", "runs")), true
	}
	return 0, "", false
}

// Summary is what an executor did.
type Summary struct {
	Done, Skipped, Failed, Interrupted int
	// NotRetried counts runs that had failed before and were left alone
	// (no RetryFailed); Running counts runs another process is executing;
	// Held counts runs not started because they would not finish before
	// LocalOptions.Deadline.
	NotRetried, Running, Held int
	// Errors has one entry per failed run.
	Errors []string
}

// Err returns an error describing failures, or nil when every executed run
// finished.
func (s Summary) Err() error {
	switch {
	case s.Interrupted > 0:
		return fmt.Errorf("stopped: %s interrupted (%s from %s on the next 'koopq sweep run')", plural.Count(s.Interrupted, "run"),
			plural.Pick(s.Interrupted, "it resumes", "they resume"), plural.Pick(s.Interrupted, "its checkpoint", "their checkpoints"))
	case s.Failed > 0:
		return fmt.Errorf("%s failed (see 'koopq sweep status'; rerun with --retry-failed):\n  %s", plural.Count(s.Failed, "run"), strings.Join(s.Errors, "\n  "))
	case s.Held > 0:
		return fmt.Errorf("%s not started: at the expected speed %s not finish before the time limit (%s on the next 'koopq sweep run')", plural.Count(s.Held, "run"),
			plural.Pick(s.Held, "it would", "they would"), plural.Pick(s.Held, "it starts", "they start"))
	case s.NotRetried > 0:
		return fmt.Errorf("%s failed in an earlier attempt and %s not retried (see 'koopq sweep status'; --retry-failed runs %s again)", plural.Count(s.NotRetried, "run"),
			plural.Pick(s.NotRetried, "was", "were"), plural.Pick(s.NotRetried, "it", "them"))
	}
	return nil
}

// DefaultJobs is the concurrency that fills the cores with runs of threads
// threads each.
func DefaultJobs(threads int) int {
	return max(1, runtime.NumCPU()/max(1, threads))
}

// RunLocal executes runs on this machine, o.Jobs at a time, partial runs
// first (ResumeFirst), then the others in their order. Done runs are
// skipped, failed ones too unless o.RetryFailed. Cancelling ctx (Ctrl-C)
// stops starting new runs and asks the active trainers to checkpoint and
// exit.
func RunLocal(ctx context.Context, out string, runs []Run, o LocalOptions) Summary {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs(o.Threads)
	}
	if o.Executor == "" {
		o.Executor = "local"
	}
	l := &localRunner{ctx: ctx, out: out, o: o, active: map[int]activeRun{}}
	todo := make(chan Run)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.work(todo)
		}()
	}
	stopTicker := make(chan struct{})
	tickDone := make(chan struct{})
	go l.tick(stopTicker, tickDone)
	ordered, partial := ResumeFirst(out, runs)
	if partial > 0 {
		l.say("%s with a checkpoint %s before the others", plural.Count(partial, "run"), plural.Pick(partial, "resumes", "resume"))
	}
	skippedDone := l.feed(ordered, todo)
	close(todo)
	wg.Wait()
	close(stopTicker)
	<-tickDone
	l.sum.Skipped += skippedDone
	if skippedDone > 0 {
		l.say("%s %s already done", plural.Count(skippedDone, "run"), plural.Pick(skippedDone, "was", "were"))
	}
	return l.sum
}

// localRunner is the state RunLocal's workers, ticker and feeder share; mu
// guards sum, active, measured and writes to o.Progress.
type localRunner struct {
	ctx context.Context
	out string
	o   LocalOptions

	mu       sync.Mutex
	sum      Summary
	active   map[int]activeRun
	measured []finishedSpeed // speeds of the runs finished here
}

// say writes one progress line, if o.Progress is set.
func (l *localRunner) say(format string, a ...any) {
	if l.o.Progress != nil {
		l.mu.Lock()
		fmt.Fprintf(l.o.Progress, format+"\n", a...)
		l.mu.Unlock()
	}
}

// work executes the runs it receives from todo until todo is closed.
func (l *localRunner) work(todo <-chan Run) {
	for r := range todo {
		l.mu.Lock()
		need, sp, what, ok := l.o.fits(l.out, r, l.measured, l.active)
		if !ok {
			l.sum.Held++
		} else {
			l.active[r.Index] = activeRun{r, RunStatus(l.out, r).resumeStep()}
		}
		l.mu.Unlock()
		if !ok {
			l.say("hold    %s: needs %s at %.1f steps/s (%s), %s left before the time limit; not started",
				r.Name, needText(need), sp, what, FormatMinutes(time.Until(l.o.Deadline)))
			continue
		}
		l.say("start   %s", r.Name)
		state, err := Execute(l.ctx, l.out, r, l.o.ExecOptions)
		st := RunStatus(l.out, r)
		l.record(r, state, err, st)
		l.report(r, state, err, st)
	}
}

// record counts the outcome of run r (its state, Execute's error and its
// status st afterwards) in the summary and, for a finished run, its speed.
func (l *localRunner) record(r Run, state State, err error, st Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.active, r.Index)
	switch {
	case err == nil:
		l.sum.Done++
		if st.StepsPerSec > 0 { // results.json: this process's speed
			l.measured = append(l.measured, finishedSpeed{r.Dataset, r.Method, r.Augment, st.StepsPerSec})
		}
	case errors.Is(err, ErrSkipped) && state == Running: // another process took it first
		l.sum.Running++
	case errors.Is(err, ErrSkipped):
		l.sum.Skipped++
	case state == Pending && l.ctx.Err() != nil:
		l.sum.Interrupted++
	default:
		l.sum.Failed++
		l.sum.Errors = append(l.sum.Errors, err.Error())
	}
}

// report writes the progress line of run r's outcome.
func (l *localRunner) report(r Run, state State, err error, st Status) {
	switch {
	case err == nil:
		l.say("done    %s  score %s  (%.1f steps/s)", r.Name, st.ScoreText(), st.StepsPerSec)
	case errors.Is(err, ErrSkipped):
		if state != Done {
			l.say("skip    %s", err)
		}
	default:
		l.say("%-7s %s", map[bool]string{true: "stopped", false: "FAILED"}[l.ctx.Err() != nil], err)
	}
}

// tick writes a progress line per active run every o.ProgressEvery until
// stop is closed, then closes done.
func (l *localRunner) tick(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	every := l.o.ProgressEvery
	if every <= 0 || l.o.Progress == nil {
		<-stop
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			l.mu.Lock()
			rs := make([]Run, 0, len(l.active))
			for _, a := range l.active {
				rs = append(rs, a.Run)
			}
			l.mu.Unlock()
			sort.Slice(rs, func(i, j int) bool { return rs[i].Index < rs[j].Index })
			for _, r := range rs {
				l.say("%s", progressLine(RunStatus(l.out, r)))
			}
		}
	}
}

// feed sends the runs of ordered that are to execute to todo, until ctx is
// cancelled, counting those it leaves alone: it returns how many were
// already done.
func (l *localRunner) feed(ordered []Run, todo chan<- Run) (skippedDone int) {
	for _, r := range ordered {
		switch st := RunStatus(l.out, r); {
		case st.State == Done:
			skippedDone++
			continue
		case st.State == Failed && !l.o.RetryFailed:
			l.mu.Lock()
			l.sum.NotRetried++
			l.mu.Unlock()
			l.say("skip    %s: failed before: %s", r.Name, firstLine(st.Message))
			continue
		case st.State == Running && !l.o.TakeOver:
			l.mu.Lock()
			l.sum.Running++
			l.mu.Unlock()
			l.say("skip    %s: running elsewhere", r.Name)
			continue
		}
		select {
		case todo <- r:
		case <-l.ctx.Done():
			return skippedDone
		}
	}
	return skippedDone
}

// fits reports whether run r, from the step it has reached in out, is
// expected to finish before o.Deadline, how long it needs and at what
// speed (steps/s) from where (the speed measured in this sweep, else
// o.Speeds).
func (o LocalOptions) fits(out string, r Run, measured []finishedSpeed, active map[int]activeRun) (time.Duration, float64, string, bool) {
	if o.Deadline.IsZero() {
		return 0, 0, "", true
	}
	sp, what, ok := measuredSpeed(out, r, measured, active)
	if !ok {
		s := o.Speeds.For(r)
		sp, what = s.PerSec, s.Source
	}
	if !(sp > 0) {
		return 0, sp, what, true
	}
	need := timeLeft(r, RunStatus(out, r), sp)
	return need, sp, what, need < maxDuration && !time.Now().Add(need).After(o.Deadline)
}
