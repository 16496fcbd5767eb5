//go:build !crashtest

package run

import (
	"context"
	"syscall"
)

// crashPoint is the no-op of a build without the crash hooks (see
// CrashEnv): it never signals.
func crashPoint(string) syscall.Signal { return 0 }

// crashPointStop is the no-op of a build without the crash hooks.
func crashPointStop(context.Context, string) {}

// CrashPoint is the no-op of a build without the crash hooks.
func CrashPoint(context.Context, string) {}

// CrashHooks reports whether this binary was built with the crash hooks
// (-tags crashtest).
const CrashHooks = false
