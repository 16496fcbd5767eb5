//go:build crashtest

package run

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var crash struct {
	once  sync.Once
	point string
	at    int
	sig   syscall.Signal
	mu    sync.Mutex
	seen  int
}

// crashPoint signals the process when CrashEnv selects this point and
// occurrence, and returns the signal it sent (0 if none).
func crashPoint(name string) syscall.Signal {
	crash.once.Do(func() {
		parts := strings.Split(os.Getenv(CrashEnv), ":")
		if len(parts) < 2 || len(parts) > 3 {
			return
		}
		at, err := strconv.Atoi(parts[1])
		if err != nil || at < 1 {
			return
		}
		sig := syscall.SIGKILL
		if len(parts) == 3 {
			switch parts[2] {
			case "INT":
				sig = syscall.SIGINT
			case "TERM":
				sig = syscall.SIGTERM
			case "STOP":
				sig = syscall.SIGSTOP
			case "KILL":
			default:
				return
			}
		}
		crash.point, crash.at, crash.sig = parts[0], at, sig
	})
	if crash.point != name {
		return 0
	}
	crash.mu.Lock()
	crash.seen++
	hit := crash.seen == crash.at
	crash.mu.Unlock()
	if !hit {
		return 0
	}
	_ = syscall.Kill(os.Getpid(), crash.sig)
	if crash.sig == syscall.SIGKILL {
		select {} // SIGKILL cannot be caught; wait for it
	}
	return crash.sig
}

// CrashPoint is the test hook for long jobs outside this package (see
// CrashEnv): at the selected occurrence of point it signals the process
// and, for SIGINT or SIGTERM, waits until ctx (cancelled by the CLI's
// signal handler) is done.
func CrashPoint(ctx context.Context, point string) { crashPointStop(ctx, point) }

// CrashHooks reports whether this binary was built with the crash hooks
// (-tags crashtest).
const CrashHooks = true

// crashPointStop is crashPoint at a point inside the training loop: after
// sending SIGINT or SIGTERM it waits (at most a minute) until ctx, which
// the CLI's signal handler cancels, is done, so that the run stops at
// exactly this step however late the runtime delivers the signal (without
// the wait a loaded machine could finish a short run first).
func crashPointStop(ctx context.Context, name string) {
	if s := crashPoint(name); s == syscall.SIGINT || s == syscall.SIGTERM {
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
	}
}
