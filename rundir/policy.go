package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PolicyPath resolves what a user gave as a policy: a policy file is
// returned as it is, a run directory as its PolicyFile. A path that does
// not exist, or a directory without PolicyFile (a run that has not
// finished, or not a run directory), is an error that says so.
func PolicyPath(arg string) (string, error) {
	st, err := os.Stat(arg)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: no such file or directory", arg)
	}
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return arg, nil
	}
	p := filepath.Join(arg, PolicyFile)
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		return "", fmt.Errorf("%s is a directory without %s (not a finished run directory?)", arg, PolicyFile)
	}
	return p, nil
}
