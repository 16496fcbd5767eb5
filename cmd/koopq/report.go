package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/report"
	"github.com/koopq/koopq/sweep"
)

// reportOptions holds the flag values of 'koopq report'.
type reportOptions struct {
	out        string
	refPath    string
	compare    []string
	inProgress bool
	// reevaluations are the files of --reevaluations (koopq eval --json
	// re-evaluations), read into stats.Reevaluations by validate.
	reevaluations []string
	stats         report.Options // --baseline, --reps, --level, --seed, --last, --equivalence-margin; filled by validate and run
}

// newReportCmd makes 'koopq report'.
func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report DIR...",
		Short: "Paper tables, IQM / probability of improvement with bootstrap CIs, performance profiles and curves from run directories",
		Long:  reportLong,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(args)
		},
	}
	f := cmd.Flags()
	reportParams().MustRegister(f, o, defaultReportOptions())
	// --compare repeats (a string array, not a comma list): declared here, outside the table.
	f.StringArrayVar(&o.compare, "compare", nil, "extra comparison METHOD:OVER (probability of improvement, Welch mean difference, rank test), e.g. KFC++:S4RL-N or an ablation over its base, KFC++-residual:KFC++ (repeatable)")
	return cmd
}

// defaultReportOptions is the flag defaults (2000 resamples, 95% intervals, the final evaluation,
// ±5 points of equivalence).
func defaultReportOptions() reportOptions {
	return reportOptions{stats: report.Options{Reps: 2000, Level: 0.95, Last: 1, EquivalenceMargin: report.DefaultEquivalenceMargin}}
}

// reportParams is the table of 'koopq report' settings; --compare and
// --reference are parsed in validate.
func reportParams() param.Table[reportOptions] {
	type o = reportOptions
	return param.Table[o]{
		param.New("out", "", "output directory (default <first DIR>/report)", func(o *o) any { return &o.out }, param.AnyValue),
		param.New("baseline", "", "method the probability of improvement compares against (default CQL, else the augment-none method)", func(o *o) any { return &o.stats.Baseline }, param.AnyValue),
		param.New("reps", "", "bootstrap resamples", func(o *o) any { return &o.stats.Reps }, param.Positive),
		param.New("level", "", "confidence level of the intervals", func(o *o) any { return &o.stats.Level }, param.OpenFraction),
		param.New("seed", "", "bootstrap seed", func(o *o) any { return &o.stats.Seed }, param.AnyValue),
		param.New("reference", "", "YAML/JSON file of published scores (label, source, note, scores: {dataset: {method: score}}) shown beside ours", func(o *o) any { return &o.refPath }, param.AnyValue),
		param.New("in-progress", "", "also draw learning curves of unfinished runs (history.json)", func(o *o) any { return &o.inProgress }, param.AnyValue),
		param.New("last", "", "score each run by the mean of its last N evaluations (1: the final evaluation)", func(o *o) any { return &o.stats.Last }, param.AtLeast(1)),
		param.New("equivalence-margin", "", "paired differences: an interval within ±this many normalized points is equivalent", func(o *o) any { return &o.stats.EquivalenceMargin }, param.Positive),
		param.New("reevaluations", "", "JSON file of re-evaluated final policies (koopq eval --run DIR --episodes N --seed S --json FILE): the paired differences' second measure (repeatable)", func(o *o) any { return &o.reevaluations }, param.AnyValue),
	}
}

// reportLong is the long help of 'koopq report'.
const reportLong = `report collects the results.json of every finished run under the given directories (sweep directories,
run directories or their parents) and writes into --out:
  table.md / table.csv / table.tex   dataset rows × method columns, final normalized score mean ± std over seeds,
                                     best per row in bold
  summary.md                         the table plus IQM and mean per method with 95% stratified bootstrap CIs and
                                     the probability of improvement of each method over the baseline (CQL)
  ablations.md / .csv / .tex         when a sweep ran ablations
  diagnostics.md / .csv              training statistics per dataset × method (Q on data/policy/random actions,
                                     CQL gap, α′, critic loss, log π): each run's mean over its last 20% of logged
                                     steps, then mean ± std over seeds (from metrics.jsonl, and metrics.csv for steps it lacks)
  performance-profiles.png/.svg, iqm.png/.svg, curves-<dataset>.png/.svg (mean over seeds, shaded CI band;
                                     beside it the mean Q on data actions and CQL's α′ when logged)
  table-vs-reference.md              with --reference: our table beside published scores (other data, never in a statistic)
  paired.md / paired.csv             every method against the baseline and every --compare pair, per dataset, seed by
                                     seed: the differences A − B, their mean ± std and 95% t-interval, and the verdict
                                     (beats / loses when the interval excludes 0, else no difference detected; equivalent
                                     within ±--equivalence-margin); with --reevaluations FILE (koopq eval --run DIR
                                     --episodes 100 --seed 1000 --json FILE) the re-evaluated scores beside, and a verdict
                                     that needs both; seeds only one method has are listed as unpaired
  dose-response.png/.svg/.csv        when an augmentation ran at two or more magnitudes on a dataset: mean score (t-interval)
                                     against the runs' measured shift_l2_mean (log scale), one line per augmentation, CQL as
                                     a band (dose-response-<dataset>.png when several datasets have one)
  report.json                        every number above
  offline.md / offline.json          runs trained without a simulator (--env none; no score): per dataset, ranked by
                                     their Fitted Q Evaluation estimate (RUN/fqe.json from 'koopq fqe --policy RUN
                                     --data DATA --json RUN/fqe.json'; checked against the run's policy and data),
                                     beside their offline diagnostics; the only output when every run is offline
--compare A:B adds P(A > B) with its interval (e.g. --compare KFC++:S4RL-N); --in-progress also draws the learning
curves of runs still training (from their history.json; they enter no table or statistic).
A sweep's runs are labelled with the spec's dataset and method names; other runs by data file and augmentation
(plus " bf16" for runs trained with --precision bf16). Rows and columns follow the spec's order; runs of several
sweeps (e.g. a study and its follow-up) take one sweep's order after the other's, in the order DIR... names them.
A run's score is its final evaluation; --last N makes it the mean of its last N evaluations (the final one included),
for every table and statistic (a run with fewer evaluations is an error).
The bootstrap is seeded (--seed): the same runs and seed give the same intervals.`

// validate checks the statistics flags and parses --compare and
// --reference into the report options.
func (o *reportOptions) validate() error {
	if err := reportParams().Validate(o); err != nil {
		return err
	}
	for _, c := range o.compare {
		pr, err := report.ParsePair(c)
		if err != nil {
			return fmt.Errorf("--compare %v", err)
		}
		o.stats.Pairs = append(o.stats.Pairs, pr)
	}
	for _, f := range o.reevaluations {
		re, err := report.LoadReevaluations(f)
		if err != nil {
			return fmt.Errorf("--reevaluations: %w", err)
		}
		o.stats.Reevaluations = append(o.stats.Reevaluations, re...)
		o.stats.ReevaluationFiles = append(o.stats.ReevaluationFiles, f)
	}
	if o.refPath != "" {
		ref, err := report.LoadReference(o.refPath)
		if err != nil {
			return fmt.Errorf("--reference: %w", err)
		}
		o.stats.Reference = ref
	}
	return nil
}

// run collects the runs under dirs and writes the report (and the offline
// ranking of runs trained without a simulator) into --out.
func (o *reportOptions) run(dirs []string) error {
	o.stats.Inputs = dirs
	if o.out == "" {
		o.out = filepath.Join(dirs[0], "report")
	}
	runs, offline, ranking, onlyOffline, err := o.collect(dirs)
	if err != nil {
		return err
	}
	if onlyOffline {
		return writeOfflineRanking(ranking, o.out)
	}
	if runs, err = withoutOrphans(runs, dirs); err != nil {
		return err
	}
	rep, err := report.Build(runs, o.stats)
	if err != nil {
		return err
	}
	if ranking != nil {
		fmt.Fprintf(os.Stderr, "koopq report: note: %s trained without a simulator (--env none) left out of the score tables "+
			"and ranked by FQE in %s: %s\n", plural.Count(len(offline), "run"), filepath.Join(o.out, "offline.md"), strings.Join(offline, ", "))
		if err := writeOfflineRanking(ranking, o.out); err != nil {
			return err
		}
	}
	if ref := o.stats.Reference; ref != nil && rep.ReferenceTable() == "" {
		fmt.Fprintf(os.Stderr, "koopq report: note: --reference %s has scores for %s, none of them a dataset of this report (%s): "+
			"no table-vs-reference.md (names must match exactly)\n",
			o.refPath, strings.Join(slices.Sorted(maps.Keys(ref.Scores)), ", "), strings.Join(rep.Datasets, ", "))
	}
	files, err := rep.Write(o.out)
	if err != nil {
		return err
	}
	fmt.Print(rep.Summary())
	inProg := ""
	if n := len(rep.InProgress); n > 0 {
		inProg = fmt.Sprintf(" and %d in progress (curves only)", n)
	}
	fmt.Printf("\n%s%s, %s, %s; wrote %s to %s (report.json has every number)\n",
		plural.Count(len(rep.Runs), "finished run"), inProg, plural.Count(len(rep.Datasets), "dataset"), plural.Count(len(rep.Methods), "method"),
		plural.Count(len(files), "file"), o.out)
	return nil
}

// collect reads the runs under dirs: the scored ones, and the directories
// of runs trained without a simulator (offline) with their FQE ranking
// (nil when there are none). onlyOffline says every run found is offline.
func (o *reportOptions) collect(dirs []string) (runs []report.Result, offline []string, ranking *report.OfflineRanking, onlyOffline bool, err error) {
	runs, err = report.CollectWith(report.CollectOptions{InProgress: o.inProgress,
		OnSkip: func(dir string) { offline = append(offline, dir) }}, dirs...)
	onlyOffline = errors.Is(err, report.ErrOnlyOffline)
	if err != nil && !onlyOffline {
		return nil, nil, nil, false, err
	}
	// Runs without a simulator have no score: they are ranked by
	// their FQE estimates (fqe.json) in offline.md instead.
	if len(offline) > 0 {
		offRuns, err := report.CollectOffline(dirs...)
		if err != nil {
			return nil, nil, nil, false, err
		}
		if ranking, err = report.RankOffline(offRuns); err != nil {
			return nil, nil, nil, false, err
		}
	}
	return runs, offline, ranking, onlyOffline, nil
}

// writeOfflineRanking writes offline.md/.json into out and prints the
// ranking with a hint for the runs that have no estimate yet.
func writeOfflineRanking(rk *report.OfflineRanking, out string) error {
	files, err := rk.Write(out)
	if err != nil {
		return err
	}
	fmt.Print(rk.Markdown())
	missing := 0
	for _, ds := range rk.Datasets {
		for _, r := range rk.Runs[ds] {
			if r.FQE == nil {
				missing++
			}
		}
	}
	if missing > 0 {
		fmt.Printf("\n%s without an estimate: koopq fqe --policy RUN --data DATA --json RUN/%s ranks them\n",
			plural.Count(missing, "run"), report.FQEFile)
	}
	fmt.Printf("wrote %s to %s\n", plural.Count(len(files), "file"), out)
	return nil
}

// withoutOrphans drops the runs that sit in a slot of a sweep directory
// among dirs but are not runs of that sweep's spec (sweep.Orphans: a method
// renamed in the spec leaves its old slots behind), saying which.
func withoutOrphans(runs []report.Result, dirs []string) ([]report.Result, error) {
	skip := map[string]bool{}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, ".sweep", "spec.yaml")); err != nil {
			continue
		}
		_, spec, err := sweepRuns(d)
		if err != nil {
			return nil, fmt.Errorf("sweep %s: %w", d, err)
		}
		o := sweep.Orphans(d, spec)
		for _, name := range o {
			abs, _ := filepath.Abs(filepath.Join(d, name))
			skip[abs] = true
		}
		if len(o) > 0 {
			fmt.Fprintf(os.Stderr, "warning: %s in %s %s not in its spec (.sweep/spec.yaml): left out: %s\n",
				plural.Count(len(o), "run directory"), d, plural.Pick(len(o), "is", "are"), strings.Join(o, ", "))
		}
	}
	if len(skip) == 0 {
		return runs, nil
	}
	var kept []report.Result
	for _, r := range runs {
		if abs, _ := filepath.Abs(filepath.Dir(r.Dir)); !skip[abs] {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("report: every run found is outside its sweep's spec")
	}
	return kept, nil
}
