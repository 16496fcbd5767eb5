package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/stats"
)

// Options configures the statistics.
type Options struct {
	// Baseline is the method the probability of improvement compares
	// against; "" picks a method named CQL (any case), else one with
	// augment none, else the first.
	Baseline string
	// Reps is the number of bootstrap resamples (default 2000).
	Reps int
	// Level is the confidence level (default 0.95).
	Level float64
	// Seed seeds the bootstrap: the same seed gives the same intervals.
	Seed uint64
	// ProfilePoints is the number of thresholds τ of the performance
	// profiles (default 101).
	ProfilePoints int
	// Pairs are extra probability-of-improvement comparisons (method over
	// another method), reported with their intervals.
	Pairs []Pair
	// Reference, when set, is printed beside our table (never used in a
	// statistic): published scores on other data.
	Reference *Reference
	// Last, when above 1, scores each finished run by the mean normalized
	// score of its last Last evaluations (its history, the final
	// evaluation included) instead of the final evaluation alone: a
	// steadier estimate of where a run ended when scores swing from one
	// evaluation to the next. A run with fewer evaluations is an error.
	Last int
	// Inputs are the directories the runs were collected from, as given
	// (recorded in the report's settings, so that it can be remade: a
	// report over a study and its follow-up names both).
	Inputs []string
	// EquivalenceMargin is the ±margin, in normalized points, within which
	// a paired difference's interval counts as equivalent (0:
	// DefaultEquivalenceMargin; negative or not finite is an error).
	EquivalenceMargin float64
	// Reevaluations are re-evaluations of the runs' final policies
	// (LoadReevaluations): each is matched to its run by directory and
	// becomes the paired comparisons' second measure. A re-evaluation of a
	// run not reported, or a run re-evaluated twice, is an error.
	Reevaluations []Reevaluation
	// ReevaluationFiles are the files Reevaluations came from (recorded in
	// the report's settings).
	ReevaluationFiles []string
}

func (o *Options) defaults() {
	if o.Reps <= 0 {
		o.Reps = 2000
	}
	if !(o.Level > 0 && o.Level < 1) {
		o.Level = 0.95
	}
	if o.ProfilePoints < 2 {
		o.ProfilePoints = 101
	}
	if o.EquivalenceMargin == 0 {
		o.EquivalenceMargin = DefaultEquivalenceMargin
	}
}

// Cell is one table entry: the final normalized scores of a method on a
// dataset over seeds.
type Cell struct {
	Mean   float64   `json:"mean"`
	Std    float64   `json:"std"`
	Scores []float64 `json:"scores"`
	Seeds  []uint64  `json:"seeds"`
	// Best marks the highest mean of its row.
	Best bool `json:"best"`
}

// N is the number of seeds.
func (c Cell) N() int { return len(c.Scores) }

// MarshalJSON writes NaN (an empty cell) as null.
func (c Cell) MarshalJSON() ([]byte, error) {
	type plain struct {
		Mean   any       `json:"mean"`
		Std    any       `json:"std"`
		N      int       `json:"n"`
		Scores []float64 `json:"scores"`
		Seeds  []uint64  `json:"seeds"`
		Best   bool      `json:"best"`
	}
	return json.Marshal(plain{stats.NullIfNaN(c.Mean), stats.NullIfNaN(c.Std), c.N(), nonNil(c.Scores), c.Seeds, c.Best})
}

func nonNil(x []float64) []float64 {
	if x == nil {
		return []float64{}
	}
	return x
}

// Row is one dataset of a table.
type Row struct {
	Name  string `json:"name"`
	Cells []Cell `json:"cells"`
}

// Table is datasets (rows) × methods (columns).
type Table struct {
	Columns []string `json:"columns"`
	Rows    []Row    `json:"rows"`
}

// MethodCI is a per-method statistic with its interval.
type MethodCI struct {
	Method string `json:"method"`
	Runs   int    `json:"runs"`
	stats.CI
	// Test is the permutation test of a probability of improvement (nil
	// for other statistics).
	Test *stats.RankTest
}

// MarshalJSON flattens the interval next to the method.
func (m MethodCI) MarshalJSON() ([]byte, error) {
	o := map[string]any{"method": m.Method, "runs": m.Runs, "value": stats.NullIfNaN(m.Value), "lo": stats.NullIfNaN(m.Lo), "hi": stats.NullIfNaN(m.Hi)}
	if m.Test != nil {
		o["rank_test"] = m.Test
	}
	return json.Marshal(o)
}

// ProfileCurve is one method's performance profile.
type ProfileCurve struct {
	Method string     `json:"method"`
	Curve  []stats.CI `json:"fraction_above"`
}

// Curve is one method's learning curve on one dataset: mean normalized score
// over seeds at each evaluation step, with a bootstrap CI of the mean (NaN
// bounds, written as null, for a curve of one seed).
type Curve struct {
	Method string `json:"method"`
	// InProgress: the curve is of runs that have not finished.
	InProgress bool      `json:"in_progress,omitempty"`
	Seeds      int       `json:"seeds"`
	Steps      []int     `json:"steps"`
	Mean       []float64 `json:"mean"`
	Lo         []float64 `json:"lo"`
	Hi         []float64 `json:"hi"`
}

// MarshalJSON writes the curve with undefined values (a one-seed curve's
// bounds) as null.
func (c Curve) MarshalJSON() ([]byte, error) {
	type plain Curve
	return json.Marshal(struct {
		plain
		Mean []any `json:"mean"`
		Lo   []any `json:"lo"`
		Hi   []any `json:"hi"`
	}{plain(c), nullable(c.Mean), nullable(c.Lo), nullable(c.Hi)})
}

// nullable is x with NaN and ±Inf as nil (JSON null).
func nullable(x []float64) []any {
	if x == nil {
		return nil
	}
	out := make([]any, len(x))
	for i, v := range x {
		out[i] = stats.NullIfNaN(v)
	}
	return out
}

// DatasetCurves are the learning curves of every method on one dataset.
type DatasetCurves struct {
	Dataset string  `json:"dataset"`
	Curves  []Curve `json:"curves"`
	// QCurves are the methods' mean Q(s̃, a) on data actions over training
	// (Result.Train["q_data"]; Mean etc. hold Q values), where the runs
	// logged it.
	QCurves []Curve `json:"q_data_curves,omitempty"`
	// AlphaPrimeCurves are the methods' CQL Lagrange multiplier α′ over
	// training (Result.Train["alpha_prime"]), where the runs logged it: the
	// weight the conservative penalty ended up with.
	AlphaPrimeCurves []Curve `json:"alpha_prime_curves,omitempty"`
}

// DiagnosticColumns are the logged training statistics (metrics.jsonl keys)
// the diagnostics table shows, in order, with their column titles. They
// say how a method trained, not how well: e.g. a smaller α′ means CQL's
// Lagrange loop weakened the conservative penalty, and ‖s̃ − s‖ is how far
// the augmentation moved the states (raw units; logged by koopq after
// 648ab9f, "–" for runs made before). Key names the column (in
// diagnostics.csv and report.json), Metric the logged statistic it is made
// of, Stat how a run's logged values become one number: the mean over the
// last DiagnosticWindow of training, the largest value over the whole run
// (the critic loss peak tells a run whose critic diverged on the way, e.g.
// from 10 to thousands, and then settled from one that never did, which the
// end-of-training mean hides), or the median after the first
// DiagnosticWindow (the critic loss median: how large the Bellman error
// typically was once training was under way, robust to single spikes).
// Batches selects the logged rows a column uses: all of them here, the
// model or the noise branch's in BranchColumns.
var DiagnosticColumns = []DiagColumn{
	{"q_data", rundir.QData, "Q(s̃, a) data", EndMean, AllBatches},
	{"q_policy", rundir.QPolicy, "Q(s, π)", EndMean, AllBatches},
	{"q_random", rundir.QRandom, "Q(s, random)", EndMean, AllBatches},
	{"cql_gap", rundir.CQLGap, "CQL gap", EndMean, AllBatches},
	{"alpha_prime", rundir.AlphaPrime, "α′", EndMean, AllBatches},
	{"q_loss", rundir.QLoss, "critic loss", EndMean, AllBatches},
	{"q_loss_peak", rundir.QLoss, "critic loss peak", Peak, AllBatches},
	{"q_loss_median", rundir.QLoss, "critic loss median", LateMedian, AllBatches},
	{"log_pi", rundir.LogPi, "log π", EndMean, AllBatches},
	{"shift_l2", rundir.ShiftL2, "‖s̃ − s‖", EndMean, AllBatches},
}

// BranchColumns are the branch table's columns: for the Koopman augmenters,
// which shift a batch with probability p_K and add S4RL-N noise otherwise,
// statistics over the model-branch and the noise-branch batches apart
// (Result.ModelBatches), each run's mean over its last DiagnosticWindow.
// Their CQL regularizer takes the logsumexp at the clean state s and Q at
// the shifted s̃, so the CQL gap and Q(s̃, a) on model batches say how far
// the shift lifts Q, which the mean over all batches blurs with the noise
// branch's.
var BranchColumns = []DiagColumn{
	{"shift_l2_model", rundir.ShiftL2, "‖s̃ − s‖, model", EndMean, ModelBatches},
	{"cql_gap_model", rundir.CQLGap, "CQL gap, model", EndMean, ModelBatches},
	{"cql_gap_noise", rundir.CQLGap, "CQL gap, noise", EndMean, NoiseBatches},
	{"q_data_model", rundir.QData, "Q(s̃, a) data, model", EndMean, ModelBatches},
	{"q_data_noise", rundir.QData, "Q(s̃, a) data, noise", EndMean, NoiseBatches},
	{"q_policy_model", rundir.QPolicy, "Q(s, π), model", EndMean, ModelBatches},
	{"q_policy_noise", rundir.QPolicy, "Q(s, π), noise", EndMean, NoiseBatches},
	{"q_loss_model", rundir.QLoss, "critic loss, model", EndMean, ModelBatches},
	{"q_loss_noise", rundir.QLoss, "critic loss, noise", EndMean, NoiseBatches},
}

// DiagColumn is one column of a diagnostics table. Key names it (in
// diagnostics.csv and report.json), Metric is the logged statistic it is
// made of, Stat how a run's selected values become one number, Batches
// which of the run's logged rows it uses.
type DiagColumn struct {
	Key, Metric, Title string
	Stat               DiagStat
	Batches            Batches
}

// Batches selects which logged rows a diagnostics column reduces.
type Batches int

const (
	// AllBatches uses every logged row.
	AllBatches Batches = iota
	// ModelBatches uses the rows whose batch took a Koopman augmenter's
	// model branch (a run without Result.ModelBatches has none).
	ModelBatches
	// NoiseBatches uses the rows whose batch took a Koopman augmenter's
	// S4RL-N noise branch.
	NoiseBatches
)

// rowsOf returns the points of pts whose step's batch b selects (all of
// pts for AllBatches; none when the run's branches are unknown).
func rowsOf(pts []Point, b Batches, model map[int]bool) []Point {
	if b == AllBatches {
		return pts
	}
	var out []Point
	for _, p := range pts {
		if m, ok := model[p.Step]; ok && m == (b == ModelBatches) {
			out = append(out, p)
		}
	}
	return out
}

// DiagStat is how a diagnostics column reduces one run's logged values.
type DiagStat int

const (
	// EndMean is the mean over the last DiagnosticWindow of training.
	EndMean DiagStat = iota
	// Peak is the largest logged value.
	Peak
	// LateMedian is the median of the values logged after the first
	// DiagnosticWindow of training (steps above DiagnosticWindow × the last
	// logged step: 20k–100k for a 100k-step run).
	LateMedian
)

// DiagnosticWindow is the part of training the diagnostics average over:
// each run's logged values at steps above (1 − DiagnosticWindow) × its
// last logged step, i.e. the last fifth of training.
const DiagnosticWindow = 0.2

// Diagnostics is the training-diagnostics table: one row per dataset ×
// method, one column per DiagnosticColumns entry any run logged; each cell
// is the mean ± std over seeds of every run's mean over its
// DiagnosticWindow, or of its peak for a Peak column (Cell.Scores hold
// those per-run values, Best is unused).
type Diagnostics struct {
	Columns []string  `json:"columns"`
	Titles  []string  `json:"titles"`
	Rows    []DiagRow `json:"rows"`
}

// DiagRow is one dataset × method of the diagnostics table.
type DiagRow struct {
	Dataset string `json:"dataset"`
	Method  string `json:"method"`
	Cells   []Cell `json:"cells"`
}

// endMean is the mean of pts over the last DiagnosticWindow of training,
// which ended at step last (NaN when no point lies there).
func endMean(pts []Point, last int) float64 {
	from := float64(last) * (1 - DiagnosticWindow)
	var sum float64
	n := 0
	for _, p := range pts {
		if float64(p.Step) > from || p.Step == last {
			sum += p.Score
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// lateMedian is the median of pts after the first DiagnosticWindow of
// training, which ended at step last (NaN when no point lies there).
func lateMedian(pts []Point, last int) float64 {
	from := float64(last) * DiagnosticWindow
	var v []float64
	for _, p := range pts {
		if float64(p.Step) > from {
			v = append(v, p.Score)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// peak is the largest score in pts (NaN when pts is empty).
func peak(pts []Point, _ int) float64 {
	v := math.NaN()
	for _, p := range pts {
		if math.IsNaN(v) || p.Score > v {
			v = p.Score
		}
	}
	return v
}

// diagnostics builds a table of columns over the finished runs rs, rows in
// the order of datasets then methods (ablations after the main methods),
// with the columns some run logged; nil when there are none. For branch
// columns only runs whose branches are known enter.
func diagnostics(rs []Result, datasets, methods []string, columns []DiagColumn) *Diagnostics {
	d := &Diagnostics{}
	var cols []DiagColumn
	for _, c := range columns {
		for _, r := range rs {
			if len(rowsOf(r.Train[c.Metric], c.Batches, r.ModelBatches)) > 0 {
				d.Columns, d.Titles = append(d.Columns, c.Key), append(d.Titles, c.Title)
				cols = append(cols, c)
				break
			}
		}
	}
	if len(d.Columns) == 0 {
		return nil
	}
	for _, ds := range datasets {
		for _, m := range methods {
			sel := slices.DeleteFunc(runsOf(rs, ds, m), func(r Result) bool {
				return r.Train == nil || (cols[0].Batches != AllBatches && r.ModelBatches == nil)
			})
			if len(sel) == 0 {
				continue
			}
			row := DiagRow{Dataset: ds, Method: m}
			for _, col := range cols {
				reduce := map[DiagStat]func([]Point, int) float64{EndMean: endMean, Peak: peak, LateMedian: lateMedian}[col.Stat]
				var c Cell
				for _, r := range sel {
					pts := r.Train[col.Metric]
					if len(pts) == 0 {
						continue
					}
					// The window is the run's, not the selected rows'.
					last := pts[len(pts)-1].Step
					if v := reduce(rowsOf(pts, col.Batches, r.ModelBatches), last); !math.IsNaN(v) {
						c.Scores, c.Seeds = append(c.Scores, v), append(c.Seeds, r.Seed)
					}
				}
				c.Mean, c.Std = stats.Mean(c.Scores), stats.Std(c.Scores)
				row.Cells = append(row.Cells, c)
			}
			d.Rows = append(d.Rows, row)
		}
	}
	if len(d.Rows) == 0 {
		return nil
	}
	return d
}

// ReportVersion is the koopq code identity a report records: its version
// text, git commit, whether the tree was modified, and where the commit
// came from ("build" stamp or "checkout"; see internal/version).
type ReportVersion struct {
	Version      string `json:"version"`
	Commit       string `json:"git_commit"`
	Dirty        bool   `json:"git_dirty"`
	CommitSource string `json:"git_commit_source"`
}

// Report holds every number the report writes.
type Report struct {
	Settings struct {
		BootstrapReps int     `json:"bootstrap_reps"`
		Level         float64 `json:"confidence_level"`
		Seed          uint64  `json:"seed"`
		Interval      string  `json:"interval"`
		// Score says what a run's score is: "final evaluation" or "mean
		// of the last K evaluations".
		Score string `json:"score"`
		Last  int    `json:"last,omitempty"`
		// Inputs are Options.Inputs: the run directories as given.
		Inputs []string `json:"inputs,omitempty"`
		// EquivalenceMargin is the paired comparisons' ±margin (normalized
		// points); Reevaluations the re-evaluation files and
		// ReevaluationEpisodes how they evaluated ("" without any).
		EquivalenceMargin    float64  `json:"equivalence_margin"`
		Reevaluations        []string `json:"reevaluations,omitempty"`
		ReevaluationEpisodes string   `json:"reevaluation_episodes,omitempty"`
	} `json:"settings"`
	// Koopq is the code that made the report (results.json, fqe.json and
	// eval --json record theirs too).
	Koopq    ReportVersion `json:"koopq"`
	Datasets []string      `json:"datasets"`
	Methods  []string      `json:"methods"`
	// Table is the paper's table: final normalized score, mean ± std over
	// seeds.
	Table Table `json:"table"`
	// IQM per method over all its runs (datasets × seeds).
	IQM []MethodCI `json:"iqm"`
	// Mean per method over all its runs, with the same kind of interval.
	Mean     []MethodCI `json:"mean"`
	Baseline string     `json:"baseline"`
	// PoI is P(method > baseline) for every other method.
	PoI []MethodCI `json:"probability_of_improvement"`
	// Taus are the thresholds of the performance profiles.
	Taus     []float64       `json:"profile_taus"`
	Profiles []ProfileCurve  `json:"performance_profiles"`
	Curves   []DatasetCurves `json:"learning_curves"`
	// Pairs are the requested comparisons (Options.Pairs).
	Pairs []PairCI `json:"pairs,omitempty"`
	// MeanDifferences are Welch's t-tests of the difference of mean scores,
	// per dataset, for every method against the baseline and every
	// requested pair, on each dataset where both have at least two runs.
	MeanDifferences []MeanDifference `json:"mean_differences,omitempty"`
	// Paired are the seed-by-seed differences of every method against the
	// baseline and every requested pair, per dataset where both have runs,
	// with the study's verdicts (one or two measures).
	Paired []PairedDifference `json:"paired_differences,omitempty"`
	// DoseResponse is score against the augmentation's measured size, per
	// dataset where some augmentation ran at two or more magnitudes.
	DoseResponse []DoseResponse `json:"dose_response,omitempty"`
	// Ablations is nil when no run is an ablation: rows are each ablated
	// method followed by its ablations, columns the datasets.
	Ablations *Table `json:"ablations,omitempty"`
	// Diagnostics are the training statistics at the end of training per
	// dataset × method (main methods, then ablations); nil when no run
	// logged any.
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`
	// BranchDiagnostics are the Koopman augmenters' statistics on their
	// model-branch and noise-branch batches apart (BranchColumns); nil
	// when no run's branches are known.
	BranchDiagnostics *Diagnostics `json:"branch_diagnostics,omitempty"`
	// Magnitude puts each dataset × method's score beside its
	// augmentation size (MagnitudeColumns); nil when no run recorded it.
	Magnitude *Diagnostics `json:"magnitude,omitempty"`
	// Success tables the success rate of the runs whose env has a success
	// test (manipulation); nil when no run has one.
	Success *SuccessReport `json:"success,omitempty"`
	// SettingDifferences are the training settings that differ between
	// datasets for the same method (datasets run under different
	// protocols); empty when every dataset had the same settings.
	SettingDifferences []SettingDifference `json:"setting_differences,omitempty"`
	// ProvenanceNotes flag the cells whose runs were trained by more than
	// one koopq commit, a "+dirty" build or more than one GEMM precision.
	ProvenanceNotes []ProvenanceNote `json:"provenance_notes,omitempty"`
	// Reference is Options.Reference, for the side-by-side table.
	Reference *Reference `json:"reference,omitempty"`
	Runs      []Result   `json:"runs"`
	// InProgress are runs without results.json that have evaluations
	// (history.json): they appear only in the learning curves.
	InProgress []Result `json:"in_progress,omitempty"`
}

// tasks returns a method's final scores grouped by dataset (in datasets'
// order; empty where the method has no run).
func tasks(rs []Result, datasets []string, method string) stats.Tasks {
	t := make(stats.Tasks, len(datasets))
	for i, d := range datasets {
		for _, r := range rs {
			if r.Dataset == d && r.Method == method {
				t[i] = append(t[i], r.Score)
			}
		}
	}
	return t
}

// runsOf returns the runs of method on dataset, by seed.
func runsOf(rs []Result, dataset, method string) []Result {
	var sel []Result
	for _, r := range rs {
		if r.Dataset == dataset && r.Method == method {
			sel = append(sel, r)
		}
	}
	sort.Slice(sel, func(i, j int) bool { return sel[i].Seed < sel[j].Seed })
	return sel
}

func cellOf(rs []Result, dataset, method string) Cell {
	var c Cell
	for _, r := range runsOf(rs, dataset, method) {
		c.Scores = append(c.Scores, r.Score)
		c.Seeds = append(c.Seeds, r.Seed)
	}
	c.Mean, c.Std = stats.Mean(c.Scores), stats.Std(c.Scores)
	return c
}

func markBest(row *Row) {
	best := math.Inf(-1)
	for _, c := range row.Cells {
		if c.N() > 0 && c.Mean > best {
			best = c.Mean
		}
	}
	for i := range row.Cells {
		row.Cells[i].Best = row.Cells[i].N() > 0 && row.Cells[i].Mean == best
	}
}

// checkScoreRange refuses scores (final or evaluated along the way) so far
// apart that their difference overflows float64: the performance profiles'
// thresholds and the plots' axes span that difference, and no statistic of
// such numbers means anything (a corrupt or hand-edited results.json).
func checkScoreRange(runs []Result) error {
	var lo, hi struct {
		v   float64
		dir string
	}
	lo.v, hi.v = math.Inf(1), math.Inf(-1)
	see := func(v float64, dir string) {
		if v < lo.v {
			lo.v, lo.dir = v, dir
		}
		if v > hi.v {
			hi.v, hi.dir = v, dir
		}
	}
	for _, r := range runs {
		see(r.Score, r.Dir)
		for _, p := range r.History {
			see(p.Score, r.Dir)
		}
	}
	if hi.v >= lo.v && math.IsInf(hi.v-lo.v, 0) {
		return fmt.Errorf("report: scores range from %g (%s) to %g (%s), too far apart to compute statistics or draw; is one of these results.json corrupt? (nothing written)",
			lo.v, lo.dir, hi.v, hi.dir)
	}
	return nil
}

// Build computes the report from runs.
func Build(runs []Result, o Options) (*Report, error) {
	o.defaults()
	rep := newReport(o)
	var err error
	if o.Last > 1 {
		if runs, err = lastScores(runs, o.Last); err != nil {
			return nil, err
		}
	}
	if m := o.EquivalenceMargin; m < 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return nil, fmt.Errorf("report: equivalence margin %v: want a positive number of points", m)
	}
	if runs, err = attachReevaluations(runs, o.Reevaluations); err != nil {
		return nil, err
	}
	if err := checkRuns(runs); err != nil {
		return nil, err
	}
	if err := checkScoreRange(runs); err != nil {
		return nil, err
	}
	main, abl, partial := rep.split(runs)
	curveRuns := methodRuns(main, partial)
	if len(curveRuns) == 0 {
		return nil, fmt.Errorf("report: only ablation runs found; the table needs the methods' runs")
	}
	rep.Datasets = order(curveRuns, func(r Result) string { return r.Dataset })
	rep.Methods = order(curveRuns, func(r Result) string { return r.Method })
	rep.SettingDifferences = settingDifferences(curveRuns, rep.Datasets, rep.Methods)
	rep.ProvenanceNotes = provenanceNotes(rep.runsInOrder())
	rep.buildTable(main)
	if err := rep.chooseBaseline(main, o.Baseline); err != nil {
		return nil, err
	}

	// Each statistic gets its own seeded stream, so adding one never changes
	// another's numbers.
	stream := func(k uint64) *rand.Rand { return rand.New(rand.NewPCG(o.Seed, k)) }
	all := rep.methodStats(main, o, stream)
	// A comparison may name an ablation as well as a main method (an
	// ablation against its base is the question an ablation asks); the
	// finished runs of both kinds are its pool.
	finished := append(append([]Result{}, main...), abl...)
	if err := rep.comparePairs(finished, abl, o, stream); err != nil {
		return nil, err
	}
	rep.MeanDifferences = meanDifferences(finished, rep.Datasets, rep.Methods, rep.Baseline, o.Pairs, o.Level, stream)
	rep.Paired = pairedDifferences(finished, rep.Datasets, comparisons(rep.Methods, rep.Baseline, o.Pairs), o.Level,
		o.EquivalenceMargin, len(o.Reevaluations) > 0, o.Reps, stream)
	rep.DoseResponse = doseResponses(main, rep.Datasets, rep.Methods, rep.Baseline, o.Level)
	rep.Taus = profileTaus(all, o.ProfilePoints)
	for i, m := range rep.Methods {
		rep.Profiles = append(rep.Profiles, ProfileCurve{Method: m,
			Curve: stats.BootstrapProfile(tasks(main, rep.Datasets, m), rep.Taus, o.Reps, o.Level, stream(4000+uint64(i)))})
	}
	rep.buildCurves(curveRuns, o, stream)
	if len(abl) > 0 {
		rep.Ablations = ablationTable(main, abl)
	}
	datasets, methods := order(finished, func(r Result) string { return r.Dataset }), order(finished, func(r Result) string { return r.Method })
	rep.Diagnostics = diagnostics(finished, datasets, methods, DiagnosticColumns)
	rep.BranchDiagnostics = diagnostics(finished, datasets, methods, BranchColumns)
	rep.Magnitude = magnitudeTable(finished, datasets, methods)
	rep.Success = successReport(main, o, stream)
	return rep, nil
}

// newReport returns an empty report with o's settings recorded.
func newReport(o Options) *Report {
	rep := &Report{Reference: o.Reference}
	rep.Settings.BootstrapReps, rep.Settings.Level, rep.Settings.Seed = o.Reps, o.Level, o.Seed
	rep.Settings.Inputs = o.Inputs
	v := version.Get()
	rep.Koopq = ReportVersion{Version: v.String(), Commit: v.Commit, Dirty: v.Dirty, CommitSource: v.Source}
	rep.Settings.EquivalenceMargin = o.EquivalenceMargin
	rep.Settings.Reevaluations = o.ReevaluationFiles
	rep.Settings.ReevaluationEpisodes = reevaluationSetting(o.Reevaluations)
	rep.Settings.Interval = "percentile, stratified bootstrap over seeds within each dataset"
	rep.Settings.Score = "final evaluation"
	if o.Last > 1 {
		rep.Settings.Score, rep.Settings.Last = fmt.Sprintf("mean of the last %d evaluations", o.Last), o.Last
	}
	return rep
}

// lastScores returns a copy of runs in which each finished run's score is
// the mean of its last n evaluations; it refuses a finished run with fewer.
func lastScores(runs []Result, n int) ([]Result, error) {
	runs = slices.Clone(runs)
	for i, r := range runs {
		if r.InProgress {
			continue
		}
		if len(r.History) < n {
			return nil, fmt.Errorf("report: --last %d: %s has %d evaluations", n, r.Dir, len(r.History))
		}
		last := make([]float64, n)
		for j, p := range r.History[len(r.History)-n:] {
			last[j] = p.Score
		}
		runs[i].Score = stats.Mean(last)
	}
	return runs, nil
}

// split sorts runs into the finished methods' runs (main), the finished
// ablations' (abl) and those in progress (partial), listing them in
// rep.Runs and rep.InProgress.
func (rep *Report) split(runs []Result) (main, abl, partial []Result) {
	for _, r := range runs {
		switch {
		case r.InProgress:
			partial = append(partial, r)
			rep.InProgress = append(rep.InProgress, r)
		case r.Ablation:
			abl = append(abl, r)
			rep.Runs = append(rep.Runs, r)
		default:
			main = append(main, r)
			rep.Runs = append(rep.Runs, r)
		}
	}
	return main, abl, partial
}

// methodRuns returns the runs of main then partial that are not ablations:
// those the learning curves and the method and dataset lists come from.
func methodRuns(main, partial []Result) []Result {
	var out []Result
	for _, r := range append(append([]Result{}, main...), partial...) {
		if !r.Ablation {
			out = append(out, r)
		}
	}
	return out
}

// buildTable fills rep.Table with a row of main's cells per dataset, the
// best of each marked.
func (rep *Report) buildTable(main []Result) {
	rep.Table = scoreTable(main, rep.Datasets, rep.Methods)
}

// scoreTable is the table of rs's scores: a row per dataset, a column per
// method, each cell over seeds, the best of each row marked.
func scoreTable(rs []Result, datasets, methods []string) Table {
	t := Table{Columns: methods}
	for _, d := range datasets {
		row := Row{Name: d}
		for _, m := range methods {
			row.Cells = append(row.Cells, cellOf(rs, d, m))
		}
		markBest(&row)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// chooseBaseline sets rep.Baseline: baseline if given, else a method named
// CQL (any case), else the first of main's methods with CQL's augmentation,
// else the first method. It refuses a baseline that is not a method.
func (rep *Report) chooseBaseline(main []Result, baseline string) error {
	rep.Baseline = baseline
	if rep.Baseline == "" {
		for _, m := range rep.Methods {
			if strings.EqualFold(m, "cql") {
				rep.Baseline = m
			}
		}
	}
	if rep.Baseline == "" {
		for _, r := range main {
			if rundir.IsPlainCQL(r.Augment) {
				rep.Baseline = r.Method
				break
			}
		}
	}
	if rep.Baseline == "" {
		rep.Baseline = rep.Methods[0]
	}
	found := false
	for _, m := range rep.Methods {
		found = found || m == rep.Baseline
	}
	if !found {
		return fmt.Errorf("report: baseline %q is not among the methods (%s)", rep.Baseline, strings.Join(rep.Methods, ", "))
	}
	return nil
}

// methodStats computes each method's IQM and mean intervals and its
// probability of improvement over the baseline from main's runs, and
// returns all the methods' scores (the performance profiles' range).
func (rep *Report) methodStats(main []Result, o Options, stream func(uint64) *rand.Rand) []float64 {
	var all []float64
	for i, m := range rep.Methods {
		t := tasks(main, rep.Datasets, m)
		n := len(t.Flat())
		all = append(all, t.Flat()...)
		rep.IQM = append(rep.IQM, MethodCI{Method: m, Runs: n, CI: stats.BootstrapIQM(t, o.Reps, o.Level, stream(1000+uint64(i)))})
		rep.Mean = append(rep.Mean, MethodCI{Method: m, Runs: n,
			CI: stats.Bootstrap(t, func(u stats.Tasks) float64 { return stats.Mean(u.Flat()) }, o.Reps, o.Level, stream(2000+uint64(i)))})
	}
	base := tasks(main, rep.Datasets, rep.Baseline)
	for i, m := range rep.Methods {
		if m == rep.Baseline {
			continue
		}
		t := tasks(main, rep.Datasets, m)
		test := stats.PermutationPoI(t, base, stream(7000+uint64(i)))
		rep.PoI = append(rep.PoI, MethodCI{Method: m, Runs: len(t.Flat()), CI: stats.BootstrapPoI(t, base, o.Reps, o.Level, stream(3000+uint64(i))), Test: &test})
	}
	return all
}

// comparePairs computes the probability of improvement of each requested
// pair (o.Pairs) over the finished runs, refusing a pair that names neither
// a method nor an ablation (abl: the ablations' runs).
func (rep *Report) comparePairs(finished, abl []Result, o Options, stream func(uint64) *rand.Rand) error {
	known := append(append([]string{}, rep.Methods...), order(abl, func(r Result) string { return r.Method })...)
	for i, p := range o.Pairs {
		var missing []string
		for _, m := range []string{p.Method, p.Over} {
			if !slices.Contains(known, m) {
				missing = append(missing, m)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("report: comparison %s:%s: no method %s (methods and ablations: %s)", p.Method, p.Over,
				strings.Join(missing, ", "), strings.Join(known, ", "))
		}
		x, y := tasks(finished, rep.Datasets, p.Method), tasks(finished, rep.Datasets, p.Over)
		pc := PairCI{Pair: p, CI: stats.BootstrapPoI(x, y, o.Reps, o.Level, stream(6000+uint64(i))), Test: stats.PermutationPoI(x, y, stream(8000+uint64(i)))}
		// Only datasets where both have runs enter P(X > Y).
		for k := range x {
			if len(x[k]) > 0 && len(y[k]) > 0 {
				pc.Runs, pc.OverRuns = pc.Runs+len(x[k]), pc.OverRuns+len(y[k])
			}
		}
		rep.Pairs = append(rep.Pairs, pc)
	}
	return nil
}

// profileTaus returns the points thresholds of the performance profiles,
// evenly spaced over the range of the scores all (widened by 1 each side
// when all the scores are equal; [-1, 1] when there are none).
func profileTaus(all []float64, points int) []float64 {
	if len(all) == 0 {
		all = []float64{0}
	}
	lo, hi := all[0], all[0]
	for _, v := range all {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	taus := make([]float64, points)
	for i := range taus {
		taus[i] = lo + (hi-lo)*float64(i)/float64(points-1)
		if math.IsInf(taus[i], 0) { // (hi − lo)·i overflowed
			f := float64(i) / float64(points-1)
			taus[i] = lo*(1-f) + hi*f
		}
	}
	return taus
}

// buildCurves fills rep.Curves: per dataset, each method's evaluation,
// Q-value and alpha' curves over curveRuns (those with any steps).
func (rep *Report) buildCurves(curveRuns []Result, o Options, stream func(uint64) *rand.Rand) {
	for di, d := range rep.Datasets {
		dc := DatasetCurves{Dataset: d}
		for mi, m := range rep.Methods {
			c := curveOf(curveRuns, d, m, o, stream(uint64(5000+1000*di+mi)), func(r Result) []Point { return r.History })
			if len(c.Steps) > 0 {
				dc.Curves = append(dc.Curves, c)
			}
			q := curveOf(curveRuns, d, m, o, stream(uint64(500000+1000*di+mi)), func(r Result) []Point { return r.Train["q_data"] })
			if len(q.Steps) > 0 {
				dc.QCurves = append(dc.QCurves, q)
			}
			a := curveOf(curveRuns, d, m, o, stream(uint64(700000+1000*di+mi)), func(r Result) []Point { return r.Train["alpha_prime"] })
			if len(a.Steps) > 0 {
				dc.AlphaPrimeCurves = append(dc.AlphaPrimeCurves, a)
			}
		}
		rep.Curves = append(rep.Curves, dc)
	}
}

// curveOf averages a per-run series (the evaluation history, or the logged
// Q values) of a method's seeds on a dataset at the steps every seed has.
func curveOf(rs []Result, dataset, method string, o Options, rng *rand.Rand, series func(Result) []Point) Curve {
	c := Curve{Method: method}
	// Finished runs make the curve; runs in progress only where none of
	// the method's runs on the dataset has finished.
	var hs, partial [][]Point
	for _, r := range rs {
		if h := series(r); r.Dataset == dataset && r.Method == method && len(h) > 0 {
			if r.InProgress {
				partial = append(partial, h)
			} else {
				hs = append(hs, h)
			}
		}
	}
	if len(hs) == 0 && len(partial) > 0 {
		hs, c.InProgress = partial, true
	}
	c.Seeds = len(hs)
	if len(hs) == 0 {
		return c
	}
	count := map[int]int{}
	vals := map[int][]float64{}
	for _, h := range hs {
		seen := map[int]bool{}
		for _, p := range h {
			if seen[p.Step] {
				continue
			}
			seen[p.Step] = true
			count[p.Step]++
			vals[p.Step] = append(vals[p.Step], p.Score)
		}
	}
	for s, n := range count {
		if n == len(hs) {
			c.Steps = append(c.Steps, s)
		}
	}
	sort.Ints(c.Steps)
	for _, s := range c.Steps {
		ci := stats.BootstrapMean(vals[s], o.Reps, o.Level, rng)
		c.Mean, c.Lo, c.Hi = append(c.Mean, ci.Value), append(c.Lo, ci.Lo), append(c.Hi, ci.Hi)
	}
	return c
}

// ablationTable has one row per ablated method (from the main grid) followed
// by its ablations; columns are the datasets any ablation ran on.
func ablationTable(main, abl []Result) *Table {
	t := &Table{Columns: order(abl, func(r Result) string { return r.Dataset })}
	for _, b := range order(abl, func(r Result) string { return r.Base }) {
		row := Row{Name: b}
		for _, d := range t.Columns {
			row.Cells = append(row.Cells, cellOf(main, d, b))
		}
		var rows []Row
		rows = append(rows, row)
		var mine []Result
		for _, r := range abl {
			if r.Base == b {
				mine = append(mine, r)
			}
		}
		for _, a := range order(mine, func(r Result) string { return r.Method }) {
			row := Row{Name: a}
			for _, d := range t.Columns {
				row.Cells = append(row.Cells, cellOf(mine, d, a))
			}
			rows = append(rows, row)
		}
		t.Rows = append(t.Rows, rows...)
	}
	// Best per column (dataset) within each group is what an ablation asks;
	// mark it per column over the whole table.
	for j := range t.Columns {
		best := math.Inf(-1)
		for _, r := range t.Rows {
			if c := r.Cells[j]; c.N() > 0 && c.Mean > best {
				best = c.Mean
			}
		}
		for i := range t.Rows {
			c := &t.Rows[i].Cells[j]
			c.Best = c.N() > 0 && c.Mean == best
		}
	}
	return t
}
