package sweep

import (
	"fmt"
	"sort"
	"strings"
)

// MeasuredStepsPerSec is the median training speed (steps/s) of the runs
// already done in out, and how many runs it is taken from (0: none).
func MeasuredStepsPerSec(out string, runs []Run) (float64, int) {
	var v []float64
	for _, r := range runs {
		if st := RunStatus(out, r); st.State == Done && st.StepsPerSec > 0 {
			v = append(v, st.StepsPerSec)
		}
	}
	if len(v) == 0 {
		return 0, 0
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2], n
	}
	return (v[n/2-1] + v[n/2]) / 2, n
}

// CPUHours estimates the cost of runs: Σ steps / stepsPerSec, times the
// threads each run holds, in hours. Evaluation time is not included.
func CPUHours(runs []Run, stepsPerSec float64, threads int) float64 {
	if stepsPerSec <= 0 {
		return 0
	}
	total := 0.0
	for _, r := range runs {
		total += float64(r.Steps) / stepsPerSec
	}
	return total * float64(max(threads, 1)) / 3600
}

// FormatPlan renders the run list of a spec.
func FormatPlan(runs []Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-44s %-20s %-12s %-10s %5s %9s  %s\n", "#", "run", "dataset", "method", "augment", "seed", "steps", "extra flags")
	for _, r := range runs {
		var fl []string
		if r.Preset != "" {
			fl = append(fl, "--preset="+r.Preset)
		}
		for _, f := range r.Flags {
			fl = append(fl, "--"+f.Name+"="+f.Value)
		}
		method := r.Method
		if r.Ablation {
			method += " (" + r.Base + ")"
		}
		fmt.Fprintf(&b, "%-4d %-44s %-20s %-12s %-10s %5d %9d  %s\n", r.Index, r.Name, r.Dataset, method, r.Augment, r.Seed, r.Steps, strings.Join(fl, " "))
	}
	return b.String()
}

// Left returns the runs of runs that are not done in the sweep directory out
// (pending, partial, running or failed: what a `sweep run` there still has
// to finish) in their order, and how many of runs are done.
func Left(out string, runs []Run) (left []Run, done int) {
	for _, r := range runs {
		if RunStatus(out, r).State == Done {
			done++
			continue
		}
		left = append(left, r)
	}
	return left, done
}
