package hdf5

// In-process worker runs, for coverage measurement only.
//
// Coverage tools (go test -coverprofile, and gremlins, which mutates only
// the lines the package's own tests cover) see nothing a child process
// runs, so every line a worker executes looks untested. With
// KOOPQ_HDF5_IN_PROCESS=1 in the environment, RunWorker calls the
// registered WorkerFunc in the calling process instead and hands its
// Encoder's output to decode through an io.Pipe: the same code runs and
// the parent's coverage profile sees it.
//
// This removes the crash isolation: a libhdf5 fault on a corrupt file then
// kills the whole process, and a file that makes libhdf5 loop hangs it
// (the time limit cannot be enforced on code running in this process).
// Never set the variable when reading files you did not write.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// InProcessEnv is the environment variable that, set to exactly "1", makes
// RunWorker run workers in the calling process (see InProcess). It exists
// so that coverage tools (make mutate) see the code that reads HDF5 files;
// it removes the crash isolation, so never set it for untrusted files. Any
// other value, or none, keeps the child-process behaviour.
const InProcessEnv = "KOOPQ_HDF5_IN_PROCESS"

// InProcess reports whether RunWorker runs workers in the calling process
// (InProcessEnv is "1"). Tests that need the isolation itself (files that
// crash or hang libhdf5, worker crashes, fuzzing libhdf5) skip when it is
// true.
func InProcess() bool { return os.Getenv(InProcessEnv) == "1" }

// runInProcess is RunWorker with InProcessEnv set: fn runs in this
// goroutine, its Encoder in another one writing into a pipe that decode
// reads. A panic in either becomes ErrWorkerPanic, as in a worker process;
// a fault in C code cannot be caught and kills the process.
func runInProcess(name string, req []byte, decode func(r io.Reader) error) error {
	workersMu.Lock()
	fn := workers[name]
	workersMu.Unlock()
	if fn == nil {
		return fmt.Errorf("%w: no worker %q is registered in this binary (%s=1)", ErrWorkerStart, name, InProcessEnv)
	}
	enc, err := callWorker(fn, req)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	sent := make(chan error, 1)
	go func() {
		err := encodeTo(pw, enc)
		pw.CloseWithError(err)
		sent <- err
	}()
	result := decode(bufio.NewReaderSize(pr, 1<<20))
	io.Copy(io.Discard, pr) // let the encoder finish writing
	pr.Close()
	if err := <-sent; err != nil {
		if errors.Is(err, ErrWorkerPanic) {
			return err
		}
		return fmt.Errorf("worker %s: sending the result: %v", name, err)
	}
	return result
}

// callWorker runs fn on req; a worker error comes back as a plain error
// carrying only its message (as it would over the pipe), a panic as
// ErrWorkerPanic.
func callWorker(fn WorkerFunc, req []byte) (enc Encoder, err error) {
	defer func() {
		if p := recover(); p != nil {
			enc, err = nil, fmt.Errorf("%w: %v\n%s", ErrWorkerPanic, p, debug.Stack())
		}
	}()
	enc, err = fn(req)
	if err != nil {
		return nil, errors.New(err.Error())
	}
	if enc == nil {
		return nil, fmt.Errorf("%w: worker returned neither a result nor an error", ErrWorkerPanic)
	}
	return enc, nil
}

// encodeTo runs enc into w through a buffer, turning a panic into
// ErrWorkerPanic.
func encodeTo(w io.Writer, enc Encoder) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", ErrWorkerPanic, p, debug.Stack())
		}
	}()
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := enc(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// Skipper is the part of testing.TB that SkipWithoutIsolation needs (this
// package does not import testing).
type Skipper interface {
	Helper()
	Skipf(format string, args ...any)
}

// SkipWithoutIsolation skips the calling test when InProcess is true. Call
// it first in every test that needs a worker's process isolation: a file
// that crashes or hangs libhdf5, a worker that is killed or hangs, fuzzing
// libhdf5 with arbitrary bytes. In-process such a test would kill or hang
// the whole test binary. what says what the test needs, for the skip
// message.
func SkipWithoutIsolation(t Skipper, what string) {
	t.Helper()
	if InProcess() {
		t.Skipf("needs the HDF5 worker's process isolation (%s); %s=1 runs workers in-process, for coverage measurement only", what, InProcessEnv)
	}
}
