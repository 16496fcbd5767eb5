package hdf5

import (
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Workers used by the tests below; the test binary serves them through
// TestMain like any binary that links a package calling ServeWorker.
func init() {
	RegisterWorker("test.echo", func(req []byte) (Encoder, error) {
		return func(w io.Writer) error {
			_, err := w.Write([]byte(strings.ToUpper(string(req))))
			return err
		}, nil
	})
	RegisterWorker("test.fail", func(req []byte) (Encoder, error) {
		return nil, errors.New("worker says no: " + string(req))
	})
	RegisterWorker("test.kill", func([]byte) (Encoder, error) {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	})
	RegisterWorker("test.segv", func([]byte) (Encoder, error) {
		// An asynchronous SIGSEGV, as a fault inside C code looks to Go.
		syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		select {}
	})
	RegisterWorker("test.panic", func([]byte) (Encoder, error) {
		var m map[string]int
		m["x"] = 1 // assignment to a nil map
		return nil, nil
	})
	RegisterWorker("test.hang", func([]byte) (Encoder, error) {
		select {}
	})
}

func TestMain(m *testing.M) {
	ServeWorker()
	os.Exit(m.Run())
}

func TestRunWorkerResult(t *testing.T) {
	var got []byte
	err := RunWorker("test.echo", []byte("koopman"), time.Minute, func(r io.Reader) error {
		var err error
		got, err = io.ReadAll(r)
		return err
	})
	if err != nil || string(got) != "KOOPMAN" {
		t.Fatalf("echo worker: got %q, %v; want KOOPMAN, nil", got, err)
	}
	err = RunWorker("test.fail", []byte("bad key"), time.Minute, func(io.Reader) error { return nil })
	if err == nil || err.Error() != "worker says no: bad key" {
		t.Fatalf("failing worker: got %v, want its own message", err)
	}
}

func TestRunWorkerAbnormalEnds(t *testing.T) {
	decode := func(r io.Reader) error { _, err := io.ReadAll(r); return err }
	cases := []struct {
		name    string
		timeout time.Duration
		want    error
		isolate bool // kills or hangs the process unless run in a worker
	}{
		{"test.kill", time.Minute, ErrCrashed, true},
		{"test.segv", time.Minute, ErrCrashed, true},
		{"test.panic", time.Minute, ErrWorkerPanic, false},
		{"test.hang", 300 * time.Millisecond, ErrTimedOut, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.isolate {
				SkipWithoutIsolation(t, c.name+" ends its process")
			}
			err := RunWorker(c.name, nil, c.timeout, decode)
			if !errors.Is(err, c.want) {
				t.Errorf("%s: got %v, want an error wrapping %v", c.name, err, c.want)
			}
		})
	}
}

func TestRunWorkerUnknownName(t *testing.T) {
	err := RunWorker("test.no-such-worker", nil, time.Minute, func(io.Reader) error { return nil })
	if err == nil {
		t.Fatal("an unregistered worker name must be an error")
	}
}
