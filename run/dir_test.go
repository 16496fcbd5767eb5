package run

import (
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
