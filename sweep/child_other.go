//go:build !linux

package sweep

import "syscall"

// setParentDeathSignal does nothing where there is no parent-death signal:
// the lock the child inherits (runChild) keeps a rerun off its work.
func setParentDeathSignal(*syscall.SysProcAttr) {}
