package run

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/koopq/koopq/rundir"
)

// A run directory that comes without its checkpoint (from git, or copied
// from another machine: checkpoints are not kept) but with the logs of an
// earlier process restarts from step 0, as before, but says so: the warning
// names the steps whose logs it replaces, and this process's segment in
// results.json records it. The restarted run ends as an uninterrupted one.
func TestResumeWithoutCheckpointSaysItRestarts(t *testing.T) {
	d, cfg, dirA := trainFinished(t, 4)
	dirB, _ := NewDir(t.TempDir(), "b")
	trainInterrupted(t, cfg, dirB, d, 25)
	rows := metricRows(t, dirB)
	lastRow := int(rows[len(rows)-1][rundir.Step])
	if lastRow < cfg.EvalEvery {
		t.Fatalf("the interrupted run logged to step %d: the test needs an evaluation before the interruption", lastRow)
	}
	if err := os.RemoveAll(dirB.File(rundir.CheckpointsDir)); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	res, err := TrainWith(context.Background(), cfg, dirB, d, TrainOptions{Resume: true, Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	var said string
	for _, w := range warnings {
		if strings.Contains(w, "restarts from step 0") {
			said = w
		}
	}
	want := fmt.Sprintf("metric rows to step %d and evaluations to step 20", lastRow)
	if !strings.Contains(said, want) {
		t.Fatalf("warnings %q: want one saying the run restarts from step 0, replacing the %s", warnings, want)
	}
	if len(res.Segments) != 1 || res.Segments[0].FromStep != 0 || res.Segments[0].Restarted != said {
		t.Fatalf("segments %+v: want one from step 0 recording %q", res.Segments, said)
	}
	a, b := csvWithoutWall(t, dirA.File("metrics.csv")), csvWithoutWall(t, dirB.File("metrics.csv"))
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("restarted metrics.csv:\n%s\nwant the uninterrupted run's\n%s", strings.Join(b, "\n"), strings.Join(a, "\n"))
	}
	pa, _ := os.ReadFile(dirA.File(rundir.PolicyFile))
	pb, _ := os.ReadFile(dirB.File(rundir.PolicyFile))
	if len(pa) == 0 || string(pa) != string(pb) {
		t.Fatal("the restarted run's policy differs from the uninterrupted run's")
	}
}

// A run killed before its first metric row restarts without a warning:
// nothing logged is replaced.
func TestResumeWithoutCheckpointOrLogsIsQuiet(t *testing.T) {
	d := pendulumLike(300, 5)
	cfg := tinyConfig()
	dir, _ := NewDir(t.TempDir(), "a")
	if err := writeConfig(dir, cfg); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	res, err := TrainWith(context.Background(), cfg, dir, d, TrainOptions{Resume: true, Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 || res.Segments[0].Restarted != "" {
		t.Fatalf("warnings %q, segment %+v: a run with nothing logged restarts quietly", warnings, res.Segments[0])
	}
}

// Extending a finished run whose checkpoint is gone (a committed run on a
// fresh machine) would train it again from step 0 over its results. It is
// refused, before any file changes.
func TestExtendingAFinishedRunWithoutCheckpointIsRefused(t *testing.T) {
	d, cfg, dir := trainFinished(t, 6)
	if err := os.RemoveAll(dir.File(rundir.CheckpointsDir)); err != nil {
		t.Fatal(err)
	}
	before := fileContents(t, dir, rundir.ConfigFile, rundir.ResultsFile, rundir.HistoryFile, rundir.MetricsCSV, rundir.MetricsJSONL, rundir.PolicyFile, InputsFile)
	longer := cfg
	longer.CQL.Steps = 60
	_, err := Train(context.Background(), longer, dir, d, true, nil)
	if err == nil || !strings.Contains(err.Error(), "no checkpoint") || !strings.Contains(err.Error(), "finished at step 40") {
		t.Fatalf("want a refusal naming the missing checkpoint and the finished step, got %v", err)
	}
	if c := changedFiles(dir, before); len(c) > 0 {
		t.Errorf("the refused extension changed %v", c)
	}
	// At its own length the run is still finished and resumes to nothing.
	if res, err := Train(context.Background(), cfg, dir, d, true, nil); err != nil || !res.AlreadyFinished {
		t.Fatalf("resume at the run's own steps: %v (finished %v)", err, res != nil && res.AlreadyFinished)
	}
}
