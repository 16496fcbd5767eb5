package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestCheckTrainArgs: a sweep run's train command line is checked in this
// process as 'koopq train' would check it before reading any file, and
// quietly (a deprecated flag name would otherwise print one notice per run
// of the spec).
func TestCheckTrainArgs(t *testing.T) {
	base := []string{"train", "--data", "d.hdf5", "--env", "hopper", "--steps", "100"}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	okErr := checkTrainArgs(append(base, "--augment", "kfc++", "--koopman-epochs=3", "--bc-steps=10"))
	bcErr := checkTrainArgs(append(base, "--augment", "gaussian"))
	cqlErr := checkTrainArgs(append(base, "--augment", "cql", "--bc-steps=10", "--shift-l2=1e-3"))
	os.Stderr = stderr
	w.Close()
	printed, _ := io.ReadAll(r)
	if okErr != nil {
		t.Errorf("valid command line refused: %v", okErr)
	}
	if len(printed) != 0 {
		t.Errorf("checking printed %q", printed)
	}
	if bcErr == nil || !strings.Contains(bcErr.Error(), "--steps (cql.steps) 100 is not above --bc-steps (cql.bc_steps) 40000") {
		t.Errorf("steps under the preset's BC steps: %v", bcErr)
	}
	if cqlErr == nil || !strings.Contains(cqlErr.Error(), "plain CQL shifts nothing") {
		t.Errorf("shift-l2 on plain CQL: %v", cqlErr)
	}
	if err := checkTrainArgs([]string{"collect"}); err == nil {
		t.Error("a command line of another verb was accepted")
	}
}
