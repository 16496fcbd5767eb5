package report

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/koopq/koopq/stats"
)

// SuccessReport tables the success rate of the runs whose env has a
// per-step success test (manipulation: results.json's final_eval carries
// per-episode successes): the percentage of final-evaluation episodes that
// reached the goal at any step, MetaWorld's measure, with the statistics of
// the normalized score (mean ± std over seeds per cell, and per method the
// IQM and the mean with stratified bootstrap intervals over datasets ×
// seeds). Rows are only the datasets, columns only the methods, that have
// such runs.
type SuccessReport struct {
	Datasets []string `json:"datasets"`
	Methods  []string `json:"methods"`
	// Table holds each cell's success rates in percent (Cell.Scores).
	Table Table      `json:"table"`
	IQM   []MethodCI `json:"iqm"`
	Mean  []MethodCI `json:"mean"`
}

// successReport builds the SuccessReport of main's runs that recorded
// success (nil when none did), its bootstrap streams seeded apart from
// every other statistic's.
func successReport(main []Result, o Options, stream func(uint64) *rand.Rand) *SuccessReport {
	var sel []Result
	for _, r := range main {
		if r.Success != nil {
			c := r
			c.Score = *r.Success
			sel = append(sel, c)
		}
	}
	if len(sel) == 0 {
		return nil
	}
	s := &SuccessReport{Datasets: order(sel, func(r Result) string { return r.Dataset }),
		Methods: order(sel, func(r Result) string { return r.Method })}
	s.Table = scoreTable(sel, s.Datasets, s.Methods)
	for i, m := range s.Methods {
		t := tasks(sel, s.Datasets, m)
		n := len(t.Flat())
		s.IQM = append(s.IQM, MethodCI{Method: m, Runs: n, CI: stats.BootstrapIQM(t, o.Reps, o.Level, stream(900000+uint64(i)))})
		s.Mean = append(s.Mean, MethodCI{Method: m, Runs: n,
			CI: stats.Bootstrap(t, func(u stats.Tasks) float64 { return stats.Mean(u.Flat()) }, o.Reps, o.Level, stream(910000+uint64(i)))})
	}
	return s
}

// Markdown renders the success table and its aggregates.
func (s *SuccessReport) Markdown(level string, reps int, seed uint64) string {
	var b strings.Builder
	b.WriteString(s.Table.Markdown("dataset"))
	fmt.Fprintf(&b, "\n| method | runs | IQM | mean |\n|---|---:|---:|---:|\n")
	single := false
	for i, m := range s.IQM {
		single = single || unresampled(m.CI) || unresampled(s.Mean[i].CI)
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", m.Method, m.Runs, ci(m.CI), ci(s.Mean[i].CI))
	}
	fmt.Fprintf(&b, "\nSuccess rate: the percentage of a run's final-evaluation episodes in which the env's success test held at "+
		"any step (MetaWorld's measure); on datasets whose env has no reference returns it is also the main table's score. IQM and mean over all datasets × seeds, %s CIs from %d stratified bootstrap resamples (seed %d).\n",
		level, reps, seed)
	if single {
		b.WriteString(singleRunNote + "\n")
	}
	return b.String()
}
