package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// bar is a progress bar on stderr showing rate (it/s) and a status message.
type bar struct {
	mu  sync.Mutex
	pb  *progressbar.ProgressBar
	out io.Writer
}

func newBar(total int, desc string) *bar {
	pb := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("steps"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(25),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }),
	)
	return &bar{pb: pb, out: os.Stderr}
}

// set moves the bar to done and updates its message.
func (b *bar) set(done int, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if msg != "" {
		b.pb.Describe(msg)
	}
	_ = b.pb.Set(done)
}

func (b *bar) finish() { _ = b.pb.Finish() }
