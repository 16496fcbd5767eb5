package sweep

import "syscall"

// setParentDeathSignal makes the kernel send the child SIGKILL when the
// thread that started it exits (see runChild).
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
