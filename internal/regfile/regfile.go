// Package regfile opens input files (checkpoints, models, policies,
// datasets, config files) only when they are regular files: opening a
// named pipe for reading blocks until a writer appears (a FIFO in place of
// checkpoints/latest.safetensors hung 'train --resume' forever), and a
// device or socket is never a koopq input.
package regfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrDir is the error of Check and Open for a directory.
var ErrDir = errors.New("is a directory")

// Kind describes what a non-regular file mode is, for messages: "a named
// pipe (FIFO)", "a socket", "a device", "a directory", ...
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file"
}

// modeErr returns nil for a regular file, ErrDir for a directory, and an
// error naming the kind for anything else.
func modeErr(m fs.FileMode) error {
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return ErrDir
	}
	return errors.New("is " + Kind(m) + ", not a regular file")
}

// Check returns nil when path (after symbolic links) is a regular file,
// else a *fs.PathError: the Stat error, ErrDir, or one naming what path
// is ("is a named pipe (FIFO), not a regular file").
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := modeErr(st.Mode()); err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return nil
}

// Open opens path for reading when it is a regular file (Check). It opens
// without blocking and checks the opened file again, so a named pipe
// swapped in after the check is refused too, never waited on.
func Open(path string) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = modeErr(st.Mode())
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

// ReadFile is os.ReadFile for regular files only.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
