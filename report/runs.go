package report

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/koopq/koopq/internal/plural"
)

// runsInOrder returns the finished runs as the tables list them: datasets
// and methods in spec order, main methods before ablations, seeds
// ascending.
func (r *Report) runsInOrder() []Result {
	rs := slices.Clone(r.Runs)
	idx := func(list []string, s string) int {
		if i := slices.Index(list, s); i >= 0 {
			return i
		}
		return len(list)
	}
	slices.SortStableFunc(rs, func(a, b Result) int {
		return cmp.Or(
			cmp.Compare(idx(r.Datasets, a.Dataset), idx(r.Datasets, b.Dataset)),
			cmp.Compare(boolInt(a.Ablation), boolInt(b.Ablation)),
			cmp.Compare(idx(r.Methods, a.Method), idx(r.Methods, b.Method)),
			strings.Compare(a.Method, b.Method),
			cmp.Compare(a.Seed, b.Seed))
	})
	return rs
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kSteps writes a step count as "75k" when it is a whole thousand.
func kSteps(n int) string {
	if n%1000 == 0 && n != 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// describe says where and how fast a segment trained.
func (s Segment) describe() string {
	span := kSteps(s.From) + "–" + kSteps(s.To)
	if !s.Known {
		return span + ": not recorded"
	}
	parts := []string{s.Host, s.GEMM, s.Commit}
	if v := s.StepsPerSec(); !math.IsNaN(v) {
		parts = append(parts, fmt.Sprintf("%.1f steps/s", v))
	}
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	d := span + ": " + strings.Join(kept, ", ")
	if s.Unsegmented {
		d += " (the last process; earlier ones, if resumed, not recorded)"
	}
	if len(s.Moved) > 0 {
		d += fmt.Sprintf(" (read %s at a new path, same content)", plural.Count(len(s.Moved), "moved input"))
	}
	if s.Restarted != "" {
		d += " (restarted from step 0 without a checkpoint, replacing an earlier process's logs)"
	}
	return d
}

// RunsMarkdown lists every finished run: its final score, the mean of its
// last K evaluations when the report scores by them, its number of
// evaluations, and the processes that trained it (steps, host, GEMM
// backend, precision and ISA, koopq commit, and steps/s over the process's
// wall time, evaluations and set-up included), so each number of the
// tables can be traced to a run and a machine.
func (r *Report) RunsMarkdown() string {
	var b strings.Builder
	last := r.Settings.Last > 1
	b.WriteString("| dataset | method | seed | final |")
	if last {
		fmt.Fprintf(&b, " last %d |", r.Settings.Last)
	}
	b.WriteString(" evaluations | trained by (steps: host, GEMM, commit, speed) |\n|---|---|---:|---:|")
	if last {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---|\n")
	for _, x := range r.runsInOrder() {
		m := x.Method
		if x.Ablation {
			m += " (ablation of " + x.Base + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f |", x.Dataset, m, x.Seed, x.Final)
		if last {
			fmt.Fprintf(&b, " %.1f |", x.Score)
		}
		var segs []string
		for _, s := range x.Segments {
			segs = append(segs, s.describe())
		}
		fmt.Fprintf(&b, " %d | %s |\n", len(x.History), strings.Join(segs, "; "))
	}
	return b.String()
}

// RunsCSV is RunsMarkdown in long form: one row per run and training
// segment, numbers unrounded.
func (r *Report) RunsCSV() string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"dataset", "method", "ablation_of", "seed", "final", "score", "evaluations", "segment", "from_step", "to_step",
		"wall_seconds", "steps_per_sec", "host", "commit", "gemm", "dir"})
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, x := range r.runsInOrder() {
		for i, s := range x.Segments {
			w.Write([]string{x.Dataset, x.Method, x.Base, strconv.FormatUint(x.Seed, 10), f(x.Final), f(x.Score),
				strconv.Itoa(len(x.History)), strconv.Itoa(i), strconv.Itoa(s.From), strconv.Itoa(s.To), f(s.Seconds),
				f(s.StepsPerSec()), s.Host, s.Commit, s.GEMM, x.Dir})
		}
	}
	w.Flush()
	return b.String()
}
