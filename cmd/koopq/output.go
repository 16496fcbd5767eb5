package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/koopq/koopq/run"
)

// inFile is a file a command reads, named by --flag: no output of the
// command may be that file.
type inFile struct{ flag, path string }

// needOutFile checks, before any work is done, that the file named by
// --flag can be written: its directory exists and takes new files, path
// itself is not a directory, and it is none of the command's inputs (the
// same file, whatever the path or link: writing it would destroy what the
// command reads). Absolute and relative paths are both taken as given
// (relative to the working directory). Nothing is left behind.
func needOutFile(flag, path string, inputs ...inFile) error {
	if path == "" {
		return fmt.Errorf("--%s: empty file name", flag)
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("--%s %s: is a directory, want a file name", flag, path)
		}
		for _, in := range inputs {
			if ist, err := os.Stat(in.path); in.path != "" && err == nil && os.SameFile(st, ist) {
				return fmt.Errorf("--%s %s: is the file --%s reads (%s); writing it would destroy that input, choose another name",
					flag, path, in.flag, in.path)
			}
		}
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--%s %s: directory %s: %w", flag, path, dir, unwrapPathErr(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("--%s %s: %s is not a directory", flag, path, dir)
	}
	probe, err := os.CreateTemp(dir, ".koopq-probe-*")
	if err != nil {
		return fmt.Errorf("--%s %s: cannot create files in %s: %w", flag, path, dir, unwrapPathErr(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// needOutDir checks that the directory named by --flag either exists as a
// directory or can be created (its nearest existing ancestor is a
// directory). It creates nothing.
func needOutDir(flag, path string) error {
	if path == "" {
		return fmt.Errorf("--%s: empty directory name", flag)
	}
	p := filepath.Clean(path)
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				if p == filepath.Clean(path) {
					return fmt.Errorf("--%s %s: exists and is not a directory", flag, path)
				}
				return fmt.Errorf("--%s %s: %s is not a directory", flag, path, p)
			}
			return nil
		}
		if !os.IsNotExist(err) {
			return fmt.Errorf("--%s %s: %w", flag, path, unwrapPathErr(err))
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

// unwrapPathErr drops the *os.PathError wrapper (whose message repeats the
// path) and keeps the cause, e.g. "no such file or directory".
func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// writeJSONFile writes v as indented JSON to path (absolute or relative to
// the working directory), atomically.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := run.WriteFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// needWidths checks a --hidden style list of layer widths: not empty
// (a table range checks entries only), every width at least 1.
func needWidths(flag string, v []int) error {
	if len(v) == 0 {
		return fmt.Errorf("--%s: give at least one layer width, e.g. --%s 64,64", flag, flag)
	}
	for _, w := range v {
		if w < 1 {
			return fmt.Errorf("--%s %v: layer widths must be at least 1", flag, intsString(v))
		}
	}
	return nil
}

func intsString(v []int) string {
	s := ""
	for i, w := range v {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(w)
	}
	return s
}

// firstErr returns the first non-nil error of a list of flag checks.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
