package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/koopq/koopq/rundir"
)

// Reevaluation is one run's final policy evaluated again on fresh
// episodes, as `koopq eval --run DIR --episodes N --seed S --json FILE`
// records it (the file's "reevaluations": run.Reevaluation, whose
// evaluations are rundir.Eval): the study's second measure beside the run
// score.
type Reevaluation struct {
	// Run is the run directory as the file names it (relative paths are
	// relative to the directory koopq eval ran in, which the report takes
	// to be its own).
	Run string `json:"run"`
	// Score is the re-evaluation's normalized score, or for an env scored
	// by its success test (Result.ScoredBySuccess) its success rate in
	// percent: the scale of Result.Score. Recorded is the same number of
	// the final evaluation results.json recorded (NaN when absent).
	Score    float64 `json:"score"`
	Recorded float64 `json:"-"`
	// Episodes and Seed are the re-evaluation's episodes and the seed of
	// their initial states.
	Episodes int    `json:"episodes"`
	Seed     uint64 `json:"seed"`
	// Source is the file it was read from.
	Source string `json:"source"`
}

// reevalEval is a rundir.Eval whose absent scores read as NaN (no score),
// not 0.
type reevalEval struct{ rundir.Eval }

// UnmarshalJSON decodes an evaluation with absent scores NaN.
func (e *reevalEval) UnmarshalJSON(b []byte) error {
	nan := rundir.Score(math.NaN())
	v := rundir.Eval{Normalized: nan, NormalizedStd: nan, SuccessRate: nan}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	e.Eval = v
	return nil
}

// headline is an evaluation's score on Result.Score's scale: the
// normalized score, else the success rate in percent; NaN for neither.
func headline(e rundir.Eval) float64 {
	return scoreOn(float64(e.Normalized), float64(e.SuccessRate))
}

// LoadReevaluations reads the re-evaluations in a JSON file written by
// `koopq eval --run … --episodes N --seed S --json FILE`. A file without
// "reevaluations" (e.g. a replay's), an entry without a run directory or
// whose re-evaluation has neither a normalized score nor a success rate is
// an error naming the file.
func LoadReevaluations(path string) ([]Reevaluation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("re-evaluations: %w", err)
	}
	var f struct {
		Reevaluations *[]struct {
			Run         string     `json:"run"`
			Recorded    reevalEval `json:"recorded"`
			Reevaluated reevalEval `json:"reevaluated"`
		} `json:"reevaluations"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("re-evaluations %s: %w", path, err)
	}
	if f.Reevaluations == nil {
		return nil, fmt.Errorf("re-evaluations %s: no \"reevaluations\" list (write one with koopq eval --run DIR --episodes N --seed S --json FILE)", path)
	}
	var out []Reevaluation
	for i, e := range *f.Reevaluations {
		if e.Run == "" {
			return nil, fmt.Errorf("re-evaluations %s: entry %d names no run directory", path, i+1)
		}
		v := headline(e.Reevaluated.Eval)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("re-evaluations %s: %s: no normalized score or success rate", path, e.Run)
		}
		out = append(out, Reevaluation{Run: e.Run, Score: v, Recorded: headline(e.Recorded.Eval),
			Episodes: e.Reevaluated.Episodes, Seed: e.Reevaluated.Seed, Source: path})
	}
	return out, nil
}

// attachReevaluations returns a copy of runs with each re-evaluation's
// score set on its run (Result.Reevaluated), matched by run directory
// (absolute, cleaned). A re-evaluation of a run not among the finished
// runs, a run re-evaluated twice, re-evaluations of different episodes or
// seeds (then the runs are not evaluated from the same initial states),
// or one whose recorded final score differs from the run's results.json
// (the run was trained again since) is an error.
func attachReevaluations(runs []Result, re []Reevaluation) ([]Result, error) {
	if len(re) == 0 {
		return runs, nil
	}
	runs = append([]Result(nil), runs...)
	index := map[string]int{}
	for i, r := range runs {
		if !r.InProgress {
			abs, err := filepath.Abs(r.Dir)
			if err != nil {
				return nil, fmt.Errorf("report: %s: %w", r.Dir, err)
			}
			index[abs] = i
		}
	}
	from := map[string]Reevaluation{}
	for _, e := range re {
		if e.Episodes != re[0].Episodes || e.Seed != re[0].Seed {
			return nil, fmt.Errorf("report: re-evaluations differ in their episodes: %s in %s has %d from seed %d, %s in %s %d from seed %d "+
				"(paired runs must be re-evaluated from the same initial states)", re[0].Run, re[0].Source, re[0].Episodes, re[0].Seed,
				e.Run, e.Source, e.Episodes, e.Seed)
		}
		abs, err := filepath.Abs(e.Run)
		if err != nil {
			return nil, fmt.Errorf("report: re-evaluation %s in %s: %w", e.Run, e.Source, err)
		}
		i, ok := index[abs]
		if !ok {
			return nil, fmt.Errorf("report: re-evaluation of %s (%s, in %s) is not among the %d finished runs reported "+
				"(relative paths are taken from the current directory)", e.Run, abs, e.Source, len(index))
		}
		if prev, ok := from[abs]; ok {
			return nil, fmt.Errorf("report: run %s is re-evaluated twice: as %s in %s and as %s in %s", abs, prev.Run, prev.Source, e.Run, e.Source)
		}
		from[abs] = e
		r := &runs[i]
		if !math.IsNaN(e.Recorded) && math.Abs(e.Recorded-r.Final) > 1e-9*math.Max(1, math.Abs(r.Final)) {
			return nil, fmt.Errorf("report: re-evaluation of %s (in %s) records a final score of %g, its results.json %g: "+
				"was the run trained again after it was re-evaluated?", e.Run, e.Source, e.Recorded, r.Final)
		}
		v := e.Score
		r.Reevaluated = &v
	}
	return runs, nil
}

// reevaluationSetting says how the runs were re-evaluated, e.g. "100
// episodes from seed 1000", for the report's settings.
func reevaluationSetting(re []Reevaluation) string {
	if len(re) == 0 {
		return ""
	}
	return fmt.Sprintf("%d episodes from seed %d", re[0].Episodes, re[0].Seed)
}
