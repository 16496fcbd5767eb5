package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progressQuiet turns every progress bar off (train's --quiet).
var progressQuiet bool

// progressLogEvery is the interval of the plain log lines that replace the
// bar when stderr is not a terminal.
var progressLogEvery = 10 * time.Second

// bar shows the progress of one phase on stderr: a redrawn \r bar with
// count, percentage, rate and ETA on a terminal; otherwise a plain log line
// every progressLogEvery and one at the end. The rate counts only the units
// done since the bar's first update (a resumed run starts part-way) and is
// shown once a second has passed, so it never starts absurd.
type bar struct {
	mu       sync.Mutex
	out      io.Writer
	tty      bool
	quiet    bool
	desc     string
	total    int
	done     int
	msg      string
	first    int // done at the first update
	firstAt  time.Time
	started  bool
	lastDraw time.Time
	finished bool
	now      func() time.Time // the clock (tests replace it)
}

// newBar starts a bar for total units described by desc (e.g. the phase).
func newBar(total int, desc string) *bar {
	return &bar{out: os.Stderr, tty: term.IsTerminal(int(os.Stderr.Fd())), quiet: progressQuiet, desc: desc, total: total, now: time.Now}
}

// set moves the bar to done and updates its message.
func (b *bar) set(done int, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.quiet || b.finished {
		return
	}
	now := b.now()
	if !b.started {
		b.started, b.first, b.firstAt = true, done, now
	}
	b.done = done
	if msg != "" {
		b.msg = msg
	}
	if b.tty {
		if now.Sub(b.lastDraw) >= 200*time.Millisecond || done >= b.total {
			b.lastDraw = now
			fmt.Fprintf(b.out, "\r%s\033[K", b.line(now, true))
		}
		return
	}
	if b.lastDraw.IsZero() {
		b.lastDraw = now
	}
	if now.Sub(b.lastDraw) >= progressLogEvery {
		b.lastDraw = now
		fmt.Fprintln(b.out, b.line(now, false))
	}
}

// finish ends the bar's line (terminal) or prints the final log line.
func (b *bar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.quiet || b.finished || !b.started {
		b.finished = true
		return
	}
	b.finished = true
	if b.tty {
		fmt.Fprintf(b.out, "\r%s\033[K\n", b.line(b.now(), true))
		return
	}
	fmt.Fprintln(b.out, b.line(b.now(), false))
}

// line renders the current state; graphic adds the [===>  ] part.
func (b *bar) line(now time.Time, graphic bool) string {
	var s strings.Builder
	s.WriteString(b.desc)
	pct := 0.0
	if b.total > 0 {
		pct = 100 * float64(b.done) / float64(b.total)
	}
	if graphic {
		const w = 25
		n := min(max(int(pct/100*w), 0), w)
		s.WriteString(" [" + strings.Repeat("=", n) + strings.Repeat(" ", w-n) + "]")
	}
	fmt.Fprintf(&s, " %d/%d (%.0f%%)", b.done, b.total, pct)
	if el := now.Sub(b.firstAt).Seconds(); el >= 1 && b.done > b.first {
		rate := float64(b.done-b.first) / el
		fmt.Fprintf(&s, " %.3g/s", rate)
		if left := b.total - b.done; left > 0 {
			fmt.Fprintf(&s, " ETA %s", time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second))
		}
	}
	if b.msg != "" {
		s.WriteString(" " + b.msg)
	}
	return s.String()
}

// phaseBars shows one bar at a time for a job of successive phases (its
// update is a meter.Staged): a new phase name, or a new total under the same
// name (a stage that starts over with another count), finishes the previous
// bar and starts one with the phase's own total.
type phaseBars struct {
	mu    sync.Mutex
	cur   *bar
	phase string
	total int
}

// update reports done of total units of phase.
func (p *phaseBars) update(phase string, done, total int, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil || phase != p.phase || total != p.total {
		if p.cur != nil {
			p.cur.finish()
		}
		p.cur, p.phase, p.total = newBar(total, phase), phase, total
	}
	p.cur.set(done, msg)
}

// close finishes the current bar.
func (p *phaseBars) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.finish()
		p.cur = nil
	}
}
