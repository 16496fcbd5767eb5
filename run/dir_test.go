package run

import (
	"context"
	"maps"
	"os"
	"strings"
	"testing"
)

// A statistic that first appears mid-run (a run resumed by a koopq that
// logs a new key) gets its own metrics.csv column, empty in the earlier
// rows, whether it appears while logging or in the rows kept on resume;
// before, the CSV kept the first row's columns and silently dropped it.
func TestMetricsCSVTakesNewKeys(t *testing.T) {
	dir, err := NewDir(t.TempDir(), "m")
	if err != nil {
		t.Fatal(err)
	}
	csvOf := func() string {
		t.Helper()
		b, err := os.ReadFile(dir.File("metrics.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	m, err := dir.OpenMetrics(-1)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []map[string]float64{{"step": 1, "q": 0.5}, {"step": 2, "q": 0.25}, {"step": 3, "q": 2, "model_batch": 1}, {"step": 4, "q": 3, "model_batch": 0}} {
		if err := m.Log(row); err != nil {
			t.Fatal(err)
		}
	}
	want := "step,model_batch,q\n1,,0.5\n2,,0.25\n3,1,2\n4,0,3\n"
	if got := csvOf(); got != want {
		t.Fatalf("metrics.csv after a new key:\n%s\nwant\n%s", got, want)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Resume at step 3: the kept rows decide the columns, then a row with
	// yet another key arrives.
	m, err = dir.OpenMetrics(3)
	if err != nil {
		t.Fatal(err)
	}
	if got := csvOf(); got != "step,model_batch,q\n1,,0.5\n2,,0.25\n3,1,2\n" {
		t.Fatalf("metrics.csv rebuilt on resume:\n%s", got)
	}
	if err := m.Log(map[string]float64{"step": 4, "q": 1, "model_batch": 1, "extra": 7}); err != nil {
		t.Fatal(err)
	}
	if err := m.Log(map[string]float64{"step": 5, "q": 1}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	want = "step,extra,model_batch,q\n1,,,0.5\n2,,,0.25\n3,,1,2\n4,7,1,1\n5,,,1\n"
	if got := csvOf(); got != want {
		t.Fatalf("metrics.csv after resume and a new key:\n%s\nwant\n%s", got, want)
	}
	b, err := os.ReadFile(dir.File("metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 5 {
		t.Errorf("metrics.jsonl has %d rows, want 5:\n%s", n, b)
	}
}

// Issue 66 item 9: with metrics.jsonl truncated (or empty) and metrics.csv
// intact, a resume rebuilt the CSV from the JSONL and the rows vanished
// from both. Now the rows up to the checkpoint come from whichever log has
// them, exactly (the CSV is lossless), and both logs end as those of an
// uninterrupted run.
func TestResumeRecoversMetricRowsFromCSV(t *testing.T) {
	d := pendulumLike(300, 1)
	cfg := tinyConfig()
	cfg.LogEvery, cfg.CheckpointEvery = 2, 20
	dirA, _ := NewDir(t.TempDir(), "a")
	if _, err := Train(context.Background(), cfg, dirA, d, false, nil); err != nil {
		t.Fatal(err)
	}
	for _, keepLines := range []int{3, 0} {
		dirB, _ := NewDir(t.TempDir(), "b")
		trainInterrupted(t, cfg, dirB, d, 25)
		b, err := os.ReadFile(dirB.File("metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		if len(lines) < 10 {
			t.Fatalf("only %d metric rows before the kill", len(lines))
		}
		if err := os.WriteFile(dirB.File("metrics.jsonl"), []byte(strings.Join(lines[:keepLines], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Train(context.Background(), cfg, dirB, d, true, nil); err != nil {
			t.Fatal(err)
		}
		ra, rb := metricRows(t, dirA), metricRows(t, dirB)
		if len(ra) != len(rb) {
			t.Fatalf("JSONL kept %d lines: metrics.jsonl has %d rows after resume, uninterrupted %d", keepLines, len(rb), len(ra))
		}
		for i := range ra {
			delete(ra[i], "wall_seconds")
			delete(rb[i], "wall_seconds")
			if !maps.Equal(ra[i], rb[i]) {
				t.Fatalf("JSONL kept %d lines: row %d is %v after resume, uninterrupted %v", keepLines, i, rb[i], ra[i])
			}
		}
		a, c := csvWithoutWall(t, dirA.File("metrics.csv")), csvWithoutWall(t, dirB.File("metrics.csv"))
		if strings.Join(a, "\n") != strings.Join(c, "\n") {
			t.Fatalf("JSONL kept %d lines: metrics.csv after resume:\n%s\nwant\n%s", keepLines, strings.Join(c, "\n"), strings.Join(a, "\n"))
		}
	}
}

// Recovering rows from metrics.csv stops at a torn last line (no newline)
// and keeps only steps up to the checkpoint; a JSONL row wins over the
// CSV's row of the same step.
func TestOpenMetricsMergesCSVRows(t *testing.T) {
	dir, err := NewDir(t.TempDir(), "m")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir.File("metrics.jsonl"), []byte(`{"step":1,"q":0.123456789012345}`+"\n"+`{"step":2,"q":0.5}`+"\n"+`{"step":3,"q"`), 0o644)
	os.WriteFile(dir.File("metrics.csv"), []byte("step,q,x\n1,0.12345679,\n2,0.5,\n3,0.75,1\n4,1.25,2\n5,2,3\n6,2.5"), 0o644)
	m, err := dir.OpenMetrics(4)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	j, _ := os.ReadFile(dir.File("metrics.jsonl"))
	wantJ := `{"step":1,"q":0.123456789012345}` + "\n" + `{"step":2,"q":0.5}` + "\n" + `{"q":0.75,"step":3,"x":1}` + "\n" + `{"q":1.25,"step":4,"x":2}` + "\n"
	if string(j) != wantJ {
		t.Errorf("metrics.jsonl:\n%s\nwant\n%s", j, wantJ)
	}
	c, _ := os.ReadFile(dir.File("metrics.csv"))
	if want := "step,q,x\n1,0.123456789012345,\n2,0.5,\n3,0.75,1\n4,1.25,2\n"; string(c) != want {
		t.Errorf("metrics.csv:\n%s\nwant\n%s", c, want)
	}
}
