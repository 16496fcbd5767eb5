package sweep

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/koopq/koopq/internal/lockfile"
)

// runChild runs cmd (a trainer, collect or Koopman training) to its end such
// that it does not outlive this process: a sweep killed with SIGKILL (or by
// the OOM killer) must not leave orphans that keep writing into run
// directories a rerun then works on. On Linux the child gets SIGKILL as its
// parent-death signal (setParentDeathSignal); it resumes from its last
// checkpoint as after any kill -9. The kernel sends that signal when the
// thread that started the child exits, not the process, and Go ends a
// thread when a goroutine locked to it returns: so the child is started
// and waited for on a goroutine locked to its thread, which keeps the
// thread alive for exactly as long as the child.
//
// lock, when not nil, is a lock file this process holds (lockfile.TryLockFile)
// on what the child works on: the child inherits it (as fd 3, unused by
// koopq), so that on systems without a parent-death signal an orphan still
// holds the lock and a rerun reports the work as running elsewhere instead
// of starting it twice. The lock file names the child's pid (SetHolder).
func runChild(cmd *exec.Cmd, lock *os.File) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setParentDeathSignal(cmd.SysProcAttr)
	if lock != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, lock)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			done <- err
			return
		}
		if lock != nil {
			lockfile.SetHolder(lock, cmd.Process.Pid)
		}
		done <- cmd.Wait()
	}()
	return <-done
}
