package main

import (
	"testing"
	"time"
)

// Bad --backend / --precision values (or environment variables) are errors
// naming the flag, reported before a verb writes anything.
func TestGEMMFlagsRejectBadValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "mkl", "train", "--data", "x.hdf5"}, "--backend"},
		{[]string{"train", "--precision", "fp8", "--data", "x.hdf5"}, "--precision"},
		{[]string{"--backend", "openblas", "--precision", "bf16", "train", "--data", "x.hdf5"}, "bf16 needs onednn"},
	} {
		dir := t.TempDir()
		r := runCLI(t, dir, time.Minute, tc.args...)
		expectCLIError(t, r, tc.want)
		if files := listTree(t, dir); len(files) != 0 {
			t.Errorf("%v wrote %v before failing", tc.args, files)
		}
	}
}
