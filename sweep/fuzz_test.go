package sweep

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary text to the spec parser: it must return an
// error or a valid expansion, never panic, and an accepted spec's runs must
// respect the checks Parse promises (positive steps, bounded threads,
// unique run names). Seeds: testdata/fuzz/FuzzParse (valid and invalid specs).
// Run: go test -run '^$' -fuzz FuzzParse -fuzztime 30s ./sweep/
func FuzzParse(f *testing.F) {
	f.Add(testSpec)
	f.Fuzz(func(t *testing.T, text string) {
		s, runs, err := Parse([]byte(text), Checker{})
		if err != nil {
			if s != nil || runs != nil {
				t.Errorf("Parse returned an error and a spec: %v", err)
			}
			return
		}
		if len(runs) == 0 || s.Steps <= 0 || s.Threads < 0 || s.Threads > MaxThreads || s.StepsPerSecond < 0 {
			t.Errorf("accepted spec with %d runs, steps %d, threads %d, steps_per_second %v", len(runs), s.Steps, s.Threads, s.StepsPerSecond)
		}
		names := map[string]bool{}
		for i, r := range runs {
			if r.Index != i || names[r.Name] || r.Steps != s.Steps {
				t.Errorf("run %d: %+v", i, r)
			}
			names[r.Name] = true
			if a := r.TrainArgs("/root", "/out", r.Name); len(a) == 0 || a[0] != "train" {
				t.Errorf("run %d: train args %q", i, a)
			}
		}
		for _, d := range s.Datasets {
			if a := d.CollectArgs("/root"); a != nil && a[0] != "collect" {
				t.Errorf("collect args %q", a)
			}
			if a := d.KoopmanArgs("/root"); a != nil && !strings.HasPrefix(strings.Join(a, " "), "koopman train") {
				t.Errorf("koopman args %q", a)
			}
		}
		_ = s.BaselineName()
	})
}
