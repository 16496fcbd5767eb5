package hdf5

// Process isolation for files koopq did not write.
//
// libhdf5 1.10 trusts what it reads: a damaged object header makes it
// memcpy out of bounds (SIGSEGV inside H5Oopen), and other damage can make
// it loop forever. Go cannot recover from a fault in C code, so parsing an
// untrusted file in-process can kill the whole program. Instead the caller
// re-executes its own binary as a short-lived worker (RunWorker): the worker
// does all the libhdf5 work and streams the result back over a pipe, and a
// worker that dies by a signal, runs out of time or memory, or panics
// becomes an ordinary error in the caller.
//
// Workers are plain Go functions registered by name (RegisterWorker). A
// package that registers workers calls ServeWorker at the end of its init:
// when the process was started as a worker, ServeWorker runs it and exits
// before main (or the test framework) starts, so this works for any binary
// that links the package, test and fuzz binaries included.
//
// For coverage measurement only, KOOPQ_HDF5_IN_PROCESS=1 runs workers in
// the calling process, without this isolation (inprocess.go).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
)

// workerEnv names the worker a process was started as. It is internal to
// RunWorker/ServeWorker; do not set it yourself.
const workerEnv = "KOOPQ_HDF5_WORKER"

// workerPanicCode is the exit status of a worker whose Go code panicked.
const workerPanicCode = 3

// Errors a worker run can end in, besides the worker's own error. They are
// wrapped with detail (the signal, the time limit, the panic message); test
// with errors.Is.
var (
	// ErrCrashed: the worker died by a signal or a fatal runtime error,
	// in practice libhdf5 faulting on a corrupt or malicious file.
	ErrCrashed = errors.New("libhdf5 crashed while parsing the file (corrupt or malicious HDF5); refused")
	// ErrTimedOut: the worker did not finish within the time limit, in
	// practice libhdf5 looping on a damaged file.
	ErrTimedOut = errors.New("libhdf5 did not finish parsing the file in time (corrupt or malicious HDF5?); refused")
	// ErrWorkerPanic: Go code in the worker panicked. This is a bug in
	// koopq, not a property of the file.
	ErrWorkerPanic = errors.New("internal error while reading the file (a bug in koopq; please report it)")
	// ErrWorkerStart: the worker process could not be started.
	ErrWorkerStart = errors.New("cannot start a worker process to parse the file")
)

// Encoder writes a worker's result to the caller.
type Encoder func(w io.Writer) error

// WorkerFunc runs in the worker process on the request bytes handed to
// RunWorker. It returns either an error (sent back as its message and
// returned by RunWorker as a plain error) or an Encoder that streams the
// result; the caller's decode function reads exactly that stream.
type WorkerFunc func(req []byte) (Encoder, error)

var (
	workersMu sync.Mutex
	workers   = map[string]WorkerFunc{}
)

// RegisterWorker makes fn runnable as worker name. Call it from an init
// function, before ServeWorker.
func RegisterWorker(name string, fn WorkerFunc) {
	workersMu.Lock()
	defer workersMu.Unlock()
	if _, dup := workers[name]; dup {
		panic("hdf5: worker " + name + " registered twice")
	}
	workers[name] = fn
}

// ServeWorker returns at once unless this process was started by
// RunWorker; then it runs the requested worker and exits the process.
func ServeWorker() {
	name, ok := os.LookupEnv(workerEnv)
	if !ok {
		return
	}
	os.Unsetenv(workerEnv)
	os.Exit(serve(name))
}

func serve(name string) int {
	out := os.NewFile(3, "koopq-worker-result")
	if st, err := out.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		fmt.Fprintf(os.Stderr, "%s is set, but this process was not started as a koopq worker (no result pipe on fd 3); unset it\n", workerEnv)
		return 2
	}
	workersMu.Lock()
	fn := workers[name]
	workersMu.Unlock()
	if fn == nil {
		fmt.Fprintf(os.Stderr, "koopq worker: no worker %q in this binary\n", name)
		return 2
	}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "koopq worker panic: %v\n%s", p, debug.Stack())
			os.Exit(workerPanicCode)
		}
	}()
	req, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "koopq worker: reading the request: %v\n", err)
		return 2
	}
	w := bufio.NewWriterSize(out, 1<<20)
	enc, err := fn(req)
	if err != nil {
		w.WriteByte('E')
		w.WriteString(err.Error())
	} else {
		w.WriteByte('O')
		if err := enc(w); err != nil {
			fmt.Fprintf(os.Stderr, "koopq worker: sending the result: %v\n", err)
			return 2
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "koopq worker: sending the result: %v\n", err)
		return 2
	}
	return 0
}

// tailBuffer keeps the first and the last few KiB written to it (a worker's
// stderr: the fault and the top of its stack trace come first).
type tailBuffer struct {
	mu         sync.Mutex
	head, tail []byte
}

const tailKeep = 8 << 10

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := tailKeep - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > tailKeep {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-tailKeep:]...)
	}
	return n, nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.head) + string(b.tail)
}

// executable is the binary RunWorker starts: on Linux /proc/self/exe, which
// still works when the file on disk was replaced since the process started.
func executable() (string, error) {
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			return "/proc/self/exe", nil
		}
	}
	return os.Executable()
}

// timedOut is RunWorker's error when the worker gave no answer within
// timeout, whether it had started or not.
func timedOut(timeout time.Duration) error {
	return fmt.Errorf("%w (no answer within %v)", ErrTimedOut, timeout)
}

// RunWorker runs worker name in a fresh copy of this process with req on
// its stdin, and hands the result stream to decode, which must read it to
// the end. It returns the worker's own error (as a plain error carrying its
// message), decode's error, or an error wrapping ErrCrashed, ErrTimedOut,
// ErrWorkerPanic or ErrWorkerStart. timeout <= 0 means no time limit.
//
// The worker must be registered in this binary, and the binary must call
// ServeWorker during init (packages using RunWorker do so).
//
// For coverage measurement only: with KOOPQ_HDF5_IN_PROCESS=1 in the
// environment (InProcessEnv), the worker runs in this process instead, with
// the same results for a worker that succeeds, fails, panics or is not
// registered, but without the isolation: a libhdf5 fault kills this
// process and timeout is ignored (a hang hangs the caller). Never use it
// on untrusted files; see inprocess.go.
func RunWorker(name string, req []byte, timeout time.Duration, decode func(r io.Reader) error) error {
	if InProcess() {
		return runInProcess(name, req, decode)
	}
	exe, err := executable()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWorkerStart, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWorkerStart, err)
	}
	defer pr.Close()
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = []string{os.Args[0]}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, workerEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, workerEnv+"="+name)
	cmd.Stdin = bytes.NewReader(req)
	var stderr tailBuffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{pw}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		pw.Close()
		if ctx.Err() == context.DeadlineExceeded { // the limit ran out before the worker started
			return timedOut(timeout)
		}
		return fmt.Errorf("%w: %v", ErrWorkerStart, err)
	}
	pw.Close()

	br := bufio.NewReaderSize(pr, 1<<20)
	var result error
	status, rerr := br.ReadByte()
	switch {
	case rerr != nil:
		result = fmt.Errorf("worker sent no result")
	case status == 'E':
		msg, _ := io.ReadAll(br)
		result = errors.New(string(msg))
	case status == 'O':
		result = decode(br)
	default:
		result = fmt.Errorf("worker sent a malformed result")
	}
	io.Copy(io.Discard, br) // let the worker finish writing
	if werr := cmd.Wait(); werr != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return timedOut(timeout)
		}
		return classify(werr, stderr.String())
	}
	return result
}

// classify turns a worker's abnormal end into an error.
func classify(werr error, stderr string) error {
	first := firstLine(stderr)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return fmt.Errorf("%w: %v", ErrCrashed, werr)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		if sig == syscall.SIGKILL {
			return fmt.Errorf("%w (killed by SIGKILL; out of memory?)", ErrCrashed)
		}
		return fmt.Errorf("%w (%v)", ErrCrashed, sig)
	}
	switch code := ee.ExitCode(); {
	case code == workerPanicCode && strings.HasPrefix(stderr, "koopq worker panic:"):
		return fmt.Errorf("%w: %s", ErrWorkerPanic, strings.TrimSpace(strings.TrimPrefix(stderr, "koopq worker panic:")))
	case strings.Contains(stderr, "out of memory"):
		return fmt.Errorf("%w (out of memory: %s)", ErrCrashed, first)
	case strings.Contains(stderr, "signal arrived during cgo execution"),
		strings.HasPrefix(first, "SIG"), strings.HasPrefix(first, "fatal error: unexpected signal"):
		// The Go runtime reports a fault in C code like this and exits 2.
		return fmt.Errorf("%w (%s)", ErrCrashed, signalName(stderr, first))
	case strings.HasPrefix(stderr, "panic:") || strings.Contains(stderr, "\npanic:"):
		// A panic outside the worker goroutine: still our bug.
		return fmt.Errorf("%w: %s", ErrWorkerPanic, strings.TrimSpace(stderr))
	}
	if first != "" {
		return fmt.Errorf("%w: %v: %s", ErrCrashed, werr, first)
	}
	return fmt.Errorf("%w: %v", ErrCrashed, werr)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// signalName picks "SIGSEGV" etc. out of a Go runtime fault report.
func signalName(stderr, first string) string {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "SIG") || strings.HasPrefix(line, "[signal SIG") {
			line = strings.TrimPrefix(line, "[signal ")
			if i := strings.IndexAny(line, ":]"); i > 0 {
				return line[:i]
			}
			return line
		}
	}
	return first
}
