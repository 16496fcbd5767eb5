package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ranHere is set by the test.where worker: true in this process only when
// the worker ran in it.
var ranHere atomic.Bool

// wherePayload is what test.where streams after its PID: larger than the
// 1 MiB buffers on both ends of the pipe, so the result really streams.
var wherePayload = func() []byte {
	b := make([]byte, 3<<20+17)
	for i := range b {
		b[i] = byte(i*7 + i>>11)
	}
	return b
}()

func init() {
	RegisterWorker("test.where", func([]byte) (Encoder, error) {
		ranHere.Store(true)
		return func(w io.Writer) error {
			if err := binary.Write(w, binary.LittleEndian, int64(os.Getpid())); err != nil {
				return err
			}
			_, err := w.Write(wherePayload)
			return err
		}, nil
	})
	RegisterWorker("test.wrapped", func([]byte) (Encoder, error) {
		return nil, fmt.Errorf("reading /obs: %w", io.ErrUnexpectedEOF)
	})
	RegisterWorker("test.encpanic", func([]byte) (Encoder, error) {
		return func(w io.Writer) error {
			w.Write([]byte("half a result"))
			var p *int
			return fmt.Errorf("%d", *p) // nil dereference: a Go panic
		}, nil
	})
	RegisterWorker("test.encfail", func([]byte) (Encoder, error) {
		return func(io.Writer) error { return errors.New("disk on fire") }, nil
	})
}

// runWhere runs test.where and returns the PID it reported; it checks the
// payload that followed.
func runWhere(t *testing.T, timeout time.Duration) int {
	t.Helper()
	var pid int64
	err := RunWorker("test.where", nil, timeout, func(r io.Reader) error {
		if err := binary.Read(r, binary.LittleEndian, &pid); err != nil {
			return err
		}
		got, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, wherePayload) {
			return fmt.Errorf("payload: got %d bytes, want the %d sent", len(got), len(wherePayload))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("test.where: %v", err)
	}
	return int(pid)
}

func TestRunWorkerInProcess(t *testing.T) {
	t.Setenv(InProcessEnv, "1")
	ranHere.Store(false)
	if pid := runWhere(t, time.Minute); pid != os.Getpid() || !ranHere.Load() {
		t.Fatalf("with %s=1 the worker ran in PID %d (ranHere %v); want this process, %d", InProcessEnv, pid, ranHere.Load(), os.Getpid())
	}
	// The time limit cannot be enforced in-process: it is ignored.
	if pid := runWhere(t, time.Nanosecond); pid != os.Getpid() {
		t.Fatalf("1 ns limit: worker ran in PID %d, want %d", pid, os.Getpid())
	}

	err := RunWorker("test.fail", []byte("bad key"), time.Minute, func(io.Reader) error { return errors.New("decode must not run") })
	if err == nil || err.Error() != "worker says no: bad key" {
		t.Errorf("failing worker: got %v, want its own message", err)
	}
	// As over the pipe, only the message comes back, not the wrapped error.
	err = RunWorker("test.wrapped", nil, time.Minute, func(io.Reader) error { return nil })
	if err == nil || err.Error() != "reading /obs: unexpected EOF" || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("wrapping worker: got %v (wraps: %v), want the plain message", err, errors.Is(err, io.ErrUnexpectedEOF))
	}
	err = RunWorker("test.no-such-worker", nil, time.Minute, func(io.Reader) error { return nil })
	if !errors.Is(err, ErrWorkerStart) || !strings.Contains(err.Error(), `"test.no-such-worker"`) {
		t.Errorf("unregistered worker: got %v, want ErrWorkerStart naming it", err)
	}
	err = RunWorker("test.encfail", nil, time.Minute, func(r io.Reader) error { _, err := io.ReadAll(r); return err })
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("failing encoder: got %v, want its error", err)
	}
	// A decoder that stops early gets its own error back, without
	// deadlocking the encoder that still has megabytes to write.
	err = RunWorker("test.where", nil, time.Minute, func(r io.Reader) error {
		var b [1]byte
		if _, err := r.Read(b[:]); err != nil {
			return err
		}
		return errors.New("decoder gave up")
	})
	if err == nil || err.Error() != "decoder gave up" {
		t.Errorf("early-stopping decoder: got %v, want its own error", err)
	}
}

// TestRunWorkerPanicsBothWays: a panic in the worker function or in its
// encoder is ErrWorkerPanic whether the worker runs in a child process or
// in-process.
func TestRunWorkerPanicsBothWays(t *testing.T) {
	decode := func(r io.Reader) error { _, err := io.ReadAll(r); return err }
	for _, mode := range []string{"0", "1"} {
		t.Setenv(InProcessEnv, mode)
		for _, name := range []string{"test.panic", "test.encpanic"} {
			err := RunWorker(name, nil, time.Minute, decode)
			if !errors.Is(err, ErrWorkerPanic) || !strings.Contains(err.Error(), "nil") {
				t.Errorf("%s=%s, %s: got %v, want ErrWorkerPanic with the panic message", InProcessEnv, mode, name, err)
			}
		}
	}
}

// TestRunWorkerChildUnlessOne: any value but "1" keeps the child process.
func TestRunWorkerChildUnlessOne(t *testing.T) {
	for _, v := range []string{"", "0", "true", " 1"} {
		t.Setenv(InProcessEnv, v)
		ranHere.Store(false)
		if pid := runWhere(t, time.Minute); pid == os.Getpid() || pid <= 0 || ranHere.Load() {
			t.Errorf("%s=%q: worker ran in PID %d (ranHere %v); want a child process, not %d", InProcessEnv, v, pid, ranHere.Load(), os.Getpid())
		}
	}
}
