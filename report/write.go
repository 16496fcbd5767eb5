package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/koopq/koopq/stats"
)

// pm writes a cell as mean ± std; one seed has no spread to show, so it
// says "(1 seed)" instead of a "± 0.0" that would read as no variance.
func pm(c Cell) string {
	if c.N() == 0 {
		return "–"
	}
	return meanPM(c, "±")
}

// meanPM writes a cell with runs as mean, the sign pm (Markdown's ± or
// LaTeX's $\pm$) and std, or as "mean (1 seed)" for a single run.
func meanPM(c Cell, pm string) string {
	if c.N() == 1 {
		return fmt.Sprintf("%.1f (1 seed)", c.Mean)
	}
	return fmt.Sprintf("%.1f %s %.1f", c.Mean, pm, c.Std)
}

// Markdown renders a table with the best entry of each row (or column, for
// ablation tables) in bold; corner names the first column.
func (t *Table) Markdown(corner string) string {
	var b strings.Builder
	b.WriteString("| " + corner + " |")
	for _, c := range t.Columns {
		b.WriteString(" " + c + " |")
	}
	b.WriteString("\n|---|")
	for range t.Columns {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("| " + r.Name + " |")
		for _, c := range r.Cells {
			s := pm(c)
			if c.Best {
				s = "**" + s + "**"
			}
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// CSV renders a table in long form: one line per cell (row name, column
// name, mean, std, n, best); corner and column name the first two fields.
func (t *Table) CSV(corner, column string) string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{corner, column, "mean", "std", "n", "best"})
	for _, r := range t.Rows {
		for j, c := range r.Cells {
			mean, std := csvMeanStd(c)
			_ = w.Write([]string{r.Name, t.Columns[j], mean, std, strconv.Itoa(c.N()), strconv.FormatBool(c.Best)})
		}
	}
	w.Flush()
	return b.String()
}

var texEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`,
	"{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`)

// csvMeanStd formats a cell's mean and std for CSV (empty for no runs;
// the std empty for one run).
func csvMeanStd(c Cell) (mean, std string) {
	if c.N() == 0 {
		return "", ""
	}
	if c.N() == 1 {
		return strconv.FormatFloat(c.Mean, 'g', 10, 64), "" // no spread from one seed
	}
	return strconv.FormatFloat(c.Mean, 'g', 10, 64), strconv.FormatFloat(c.Std, 'g', 10, 64)
}

// LaTeX renders a table as a booktabs tabular with the best entries bold.
func (t *Table) LaTeX(corner string) string {
	var b strings.Builder
	b.WriteString("\\begin{tabular}{l" + strings.Repeat("r", len(t.Columns)) + "}\n\\toprule\n")
	b.WriteString(texEscaper.Replace(corner))
	for _, c := range t.Columns {
		b.WriteString(" & " + texEscaper.Replace(c))
	}
	b.WriteString(" \\\\\n\\midrule\n")
	for _, r := range t.Rows {
		b.WriteString(texEscaper.Replace(r.Name))
		for _, c := range r.Cells {
			s := "--"
			if c.N() > 0 {
				s = meanPM(c, "$\\pm$")
				if c.Best {
					s = "\\textbf{" + s + "}"
				}
			}
			b.WriteString(" & " + s)
		}
		b.WriteString(" \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

func diagCell(c Cell) string {
	switch c.N() {
	case 0:
		return "–"
	case 1:
		return fmt.Sprintf("%.4g", c.Mean)
	}
	return fmt.Sprintf("%.4g ± %.2g", c.Mean, c.Std)
}

// Markdown renders the diagnostics table: one line per dataset × method,
// with the number of runs.
func (d *Diagnostics) Markdown() string {
	var b strings.Builder
	b.WriteString("| dataset | method | runs |")
	for _, t := range d.Titles {
		b.WriteString(" " + t + " |")
	}
	b.WriteString("\n|---|---|---:|" + strings.Repeat("---:|", len(d.Titles)) + "\n")
	for _, r := range d.Rows {
		n := 0
		for _, c := range r.Cells {
			n = max(n, c.N())
		}
		fmt.Fprintf(&b, "| %s | %s | %d |", r.Dataset, r.Method, n)
		for _, c := range r.Cells {
			b.WriteString(" " + diagCell(c) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// CSV renders the diagnostics in long form: one line per cell (dataset,
// method, statistic key, mean, std, n).
func (d *Diagnostics) CSV() string {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"dataset", "method", "statistic", "mean", "std", "n"})
	for _, r := range d.Rows {
		for j, c := range r.Cells {
			mean, std := csvMeanStd(c)
			_ = w.Write([]string{r.Dataset, r.Method, d.Columns[j], mean, std, strconv.Itoa(c.N())})
		}
	}
	w.Flush()
	return b.String()
}

func ci(c stats.CI) string {
	if math.IsNaN(c.Value) {
		return "–"
	}
	if math.IsNaN(c.Lo) {
		return fmt.Sprintf("%.3g", c.Value)
	}
	return fmt.Sprintf("%.3g [%.3g, %.3g]", c.Value, c.Lo, c.Hi)
}

// unresampled reports a statistic given without an interval because every
// dataset had one run (stats.Tasks.Resamplable).
func unresampled(c stats.CI) bool {
	return !math.IsNaN(c.Value) && math.IsNaN(c.Lo)
}

// singleRunNote explains a statistic shown without its interval.
const singleRunNote = "A value without an interval: every dataset has a single run of that method (of both methods, " +
	"for a probability of improvement), and a stratified bootstrap cannot resample one run, so it would only repeat " +
	"the value; more seeds give an interval."

// ordered reports a bootstrap interval of a probability of improvement
// collapsed onto 0 or 1 (fully ordered runs).
func ordered(c stats.CI) bool {
	return c.Lo == c.Hi && (c.Value == 0 || c.Value == 1)
}

// pvalue formats a p-value, marked ≈ when it is a Monte Carlo estimate.
func pvalue(p float64, exact bool) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case exact:
		return fmt.Sprintf("%.3g", p)
	}
	return fmt.Sprintf("≈%.3g", p)
}

// settingsNote says which training settings differ between datasets (a
// paragraph to follow the paper-format table), or "" when none do.
func (r *Report) settingsNote() string {
	return bulletNote("Datasets trained under different settings", "(the same method, other config values: these rows "+
		"follow different protocols, and aggregates over datasets pool them):", r.SettingDifferences)
}

// bulletNote renders a Markdown paragraph to follow a table, "**title**
// detail", then one bullet per item; "" when there are no items.
func bulletNote[T fmt.Stringer](title, detail string, items []T) string {
	if len(items) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n**" + title + "** " + detail + "\n\n")
	for _, it := range items {
		fmt.Fprintf(&b, "- %s\n", it.String())
	}
	return b.String()
}

// successNote names the datasets whose table score is a success rate in
// percent rather than a normalized score (a paragraph to follow the
// paper-format table), or "" when there are none.
func (r *Report) successNote() string {
	var ds []string
	for _, x := range r.Runs {
		if x.ScoredBySuccess && !slices.Contains(ds, x.Dataset) {
			ds = append(ds, x.Dataset)
		}
	}
	if len(ds) == 0 {
		return ""
	}
	return "\nScore of " + strings.Join(ds, ", ") + ": the success rate in percent (the env has a success test and no " +
		"reference returns), which the aggregates pool with the other rows' normalized scores.\n"
}

// datasetScoreName names the score of one dataset's runs, for its
// learning-curve axis, as scoreName names the report's.
func (r *Report) datasetScoreName(dataset string) string {
	return scoreNameOf(r.Runs, func(x Result) bool { return x.Dataset == dataset })
}

// scoreName names the main table's score: "normalized score", "success
// rate (%)" when every run is scored by its success test, and both when
// the runs mix them (successNote then says which rows are which).
func (r *Report) scoreName() string {
	return scoreNameOf(r.Runs, func(Result) bool { return true })
}

// scoreNameOf names the score of the runs that keep selects (see scoreName).
func scoreNameOf(runs []Result, keep func(Result) bool) string {
	success, normalized := false, false
	for _, x := range runs {
		if keep(x) {
			success, normalized = success || x.ScoredBySuccess, normalized || !x.ScoredBySuccess
		}
	}
	switch {
	case success && !normalized:
		return "success rate (%)"
	case success:
		return "normalized score or success rate (%)"
	}
	return "normalized score"
}

// capitalize upper-cases s's first letter.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Summary renders the aggregate statistics as Markdown.
func (r *Report) Summary() string {
	var b strings.Builder
	level := fmt.Sprintf("%.0f%%", 100*r.Settings.Level)
	score := "Final " + r.scoreName()
	if r.Settings.Last > 1 {
		score = fmt.Sprintf("%s, each run's mean of its last %d evaluations", capitalize(r.scoreName()), r.Settings.Last)
	}
	fmt.Fprintf(&b, "## %s (mean ± std over seeds)\n\n%s%s\n", score, r.Table.Markdown("dataset"), r.settingsNote()+r.successNote()+r.provenanceNote())
	if r.Success != nil {
		fmt.Fprintf(&b, "## Success rate, %% of final-evaluation episodes (mean ± std over seeds)\n\n%s\n", r.Success.Markdown(level, r.Settings.BootstrapReps, r.Settings.Seed))
	}
	if r.Magnitude != nil {
		fmt.Fprintf(&b, "## Scores beside the augmentation's size (mean ± std over seeds; ‖s̃ − s‖₂ over every training row, raw state units)\n\n%s\n", r.Magnitude.Markdown())
	}
	fmt.Fprintf(&b, "## Aggregates over all datasets × seeds (%s CIs, %d stratified bootstrap resamples, seed %d)\n\n",
		level, r.Settings.BootstrapReps, r.Settings.Seed)
	fmt.Fprintf(&b, "| method | runs | IQM | mean | P(method > %s) | p, method > %[1]s | p, method < %[1]s |\n|---|---:|---:|---:|---:|---:|---:|\n", r.Baseline)
	var degenerate, single bool
	for i, m := range r.IQM {
		single = single || unresampled(m.CI) || unresampled(r.Mean[i].CI)
		poi, pg, pl := "(baseline)", "", ""
		for _, p := range r.PoI {
			if p.Method == m.Method {
				poi = ci(p.CI)
				degenerate = degenerate || ordered(p.CI)
				single = single || unresampled(p.CI)
				if p.Test != nil {
					pg, pl = pvalue(p.Test.PGreater, p.Test.Exact), pvalue(p.Test.PLess, p.Test.Exact)
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", m.Method, m.Runs, ci(m.CI), ci(r.Mean[i].CI), poi, pg, pl)
	}
	if len(r.Pairs) > 0 {
		fmt.Fprintf(&b, "\n## Probability of improvement (%s CIs; datasets where both have runs)\n\n| comparison | runs | P(method > other) | p, method > other | p, method < other |\n|---|---:|---:|---:|---:|\n", level)
		for _, p := range r.Pairs {
			degenerate = degenerate || ordered(p.CI)
			single = single || unresampled(p.CI)
			fmt.Fprintf(&b, "| P(%s > %s) | %d vs %d | %s | %s | %s |\n", p.Method, p.Over, p.Runs, p.OverRuns, ci(p.CI),
				pvalue(p.Test.PGreater, p.Test.Exact), pvalue(p.Test.PLess, p.Test.Exact))
		}
	}
	if len(r.PoI) > 0 || len(r.Pairs) > 0 {
		b.WriteString("\np: one-sided p-values of a stratified permutation test of P(method > other) (the method labels " +
			"exchanged among each dataset's runs; on one dataset the exact Mann–Whitney U test), counted over all " +
			"relabellings, or estimated from " + fmt.Sprint(stats.RankTestDraws) + " random ones where marked ≈.")
		if degenerate {
			b.WriteString(" A bootstrap interval of [0, 0] or [1, 1] means every run of one method beat every run of " +
				"the other: each resample stays ordered, so with few seeds the interval overstates the certainty, " +
				"and the p-value is the number to read.")
		}
		b.WriteString("\n")
	}
	if single {
		b.WriteString("\n" + singleRunNote + "\n")
	}
	if len(r.MeanDifferences) > 0 {
		fmt.Fprintf(&b, "\n## Difference of means per dataset (Welch's t-test, %s CIs)\n\n"+
			"| comparison | dataset | runs | mean difference | %[1]s CI | t | df | p, two-sided | rank p, method > other | rank p, method < other |\n"+
			"|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", level)
		for _, d := range r.MeanDifferences {
			w := d.Welch
			fmt.Fprintf(&b, "| %s − %s | %s | %d vs %d | %+.1f | %s | %s | %s | %s | %s | %s |\n", d.Method, d.Over, d.Dataset, w.N, w.M, w.Diff,
				interval(w.Lo, w.Hi), orDash(w.T, "%.2f"), orDash(w.DF, "%.1f"), orDash(w.P, "%.3g"),
				pvalue(d.Rank.PGreater, d.Rank.Exact), pvalue(d.Rank.PLess, d.Rank.Exact))
		}
		b.WriteString("\nWelch's test assumes roughly normal seed-to-seed scores, which a few seeds cannot check; the rank " +
			"p-values (one-sided, the exact Mann–Whitney U test of the same runs on that dataset alone) assume nothing " +
			"about their shape, and with few seeds cannot go below 1 over the number of ways to split the runs (1/6 " +
			"for 2 + 2, 1/20 for 3 + 3). Cells where either method has fewer than two runs are left out; \"–\" where " +
			"both have no spread.\n")
	}
	if t := r.PairedMarkdown(); t != "" {
		fmt.Fprintf(&b, "\n## Paired differences by seed (%s CIs)\n\n%s", level, t)
	}
	if r.Ablations != nil {
		fmt.Fprintf(&b, "\n## Ablations (mean ± std over seeds)\n\n%s", r.Ablations.Markdown("variant"))
	}
	if r.Diagnostics != nil {
		fmt.Fprintf(&b, "\n## Training diagnostics (mean ± std over seeds of each run's mean over its last %.0f%% of logged steps; the critic loss peak is each run's largest logged critic loss, the critic loss median its median after the first %.0[1]f%% of logged steps)\n\n%s",
			100*DiagnosticWindow, r.Diagnostics.Markdown())
	}
	if r.BranchDiagnostics != nil {
		fmt.Fprintf(&b, "\n## Training diagnostics by batch branch (Koopman augmenters: each run's mean over its last %.0f%% of logged steps, on the batches that took the model shift and on those that took S4RL-N noise)\n\n%s%s",
			100*DiagnosticWindow, r.BranchDiagnostics.Markdown(), branchNote)
	}
	if t := r.ReferenceTable(); t != "" {
		fmt.Fprintf(&b, "\n## Ours beside published scores (different data: not comparable number for number)\n\n%s", t)
	}
	if len(r.InProgress) > 0 {
		fmt.Fprintf(&b, "\n## Runs in progress (learning curves only; not in any table or statistic)\n\n| dataset | method | seed | last evaluation step | score there |\n|---|---|---:|---:|---:|\n")
		for _, x := range r.InProgress {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f |\n", x.Dataset, x.Method, x.Seed, x.Steps, x.Score)
		}
	}
	return b.String()
}

// branchNote says where the branch table's branches come from.
const branchNote = "\nA batch's branch is the run's logged `model_batch`; for runs logged before it, the branch is inferred from " +
	"`shift_l2`: the noise branch's batch means form one tight cluster (σ·E‖z‖) well below the model branch's. Runs whose " +
	"shifts show no clear split are left out.\n"

// Write writes the report into dir: table.md/.csv/.tex, ablations.md/.csv/
// .tex (when there are ablations), diagnostics.md/.csv (when runs logged
// training statistics), diagnostics-branches.md/.csv (when Koopman runs'
// branches are known), magnitude.md/.csv (when runs recorded their
// augmentation size), success.md/.csv (when runs' envs have a success
// test), paired.md/.csv (the seed-by-seed comparisons), dose-response.csv
// and its figures (when an augmentation ran at several magnitudes),
// summary.md, runs.md/.csv (every run and the
// processes that trained it), report.json, and the figures
// (performance profiles, IQM intervals, one learning-curve plot per dataset,
// each as PNG and SVG). It returns the paths written.
func (r *Report) Write(dir string) ([]string, error) {
	var written []string
	put := func(name, text string) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	files := []struct{ name, text string }{
		{"table.md", r.Table.Markdown("dataset") + r.settingsNote() + r.successNote() + r.provenanceNote()},
		{"table.csv", r.Table.CSV("dataset", "method")},
		{"table.tex", r.Table.LaTeX("dataset")},
		{"summary.md", r.Summary()},
		{"runs.md", r.RunsMarkdown()},
		{"runs.csv", r.RunsCSV()},
	}
	if t := r.ReferenceTable(); t != "" {
		files = append(files, struct{ name, text string }{"table-vs-reference.md", t})
	}
	if len(r.Paired) > 0 {
		files = append(files, []struct{ name, text string }{
			{"paired.md", r.PairedMarkdown()},
			{"paired.csv", r.PairedCSV()},
		}...)
	}
	if len(r.DoseResponse) > 0 {
		files = append(files, struct{ name, text string }{"dose-response.csv", r.DoseCSV()})
	}
	if r.Ablations != nil {
		files = append(files, []struct{ name, text string }{
			{"ablations.md", r.Ablations.Markdown("variant")},
			{"ablations.csv", r.Ablations.CSV("variant", "dataset")},
			{"ablations.tex", r.Ablations.LaTeX("variant")},
		}...)
	}
	if r.Diagnostics != nil {
		files = append(files, []struct{ name, text string }{
			{"diagnostics.md", r.Diagnostics.Markdown()},
			{"diagnostics.csv", r.Diagnostics.CSV()},
		}...)
	}
	if r.Magnitude != nil {
		files = append(files, []struct{ name, text string }{
			{"magnitude.md", r.Magnitude.Markdown()},
			{"magnitude.csv", r.Magnitude.CSV()},
		}...)
	}
	if r.Success != nil {
		files = append(files, []struct{ name, text string }{
			{"success.md", r.Success.Markdown(fmt.Sprintf("%.0f%%", 100*r.Settings.Level), r.Settings.BootstrapReps, r.Settings.Seed)},
			{"success.csv", r.Success.Table.CSV("dataset", "method")},
		}...)
	}
	if r.BranchDiagnostics != nil {
		files = append(files, []struct{ name, text string }{
			{"diagnostics-branches.md", r.BranchDiagnostics.Markdown() + branchNote},
			{"diagnostics-branches.csv", r.BranchDiagnostics.CSV()},
		}...)
	}
	// Everything is rendered before the first file is written, so that a
	// report that cannot be encoded leaves no partial output behind.
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report.json: %w (nothing written)", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files = append(files, struct{ name, text string }{"report.json", string(js) + "\n"})
	for _, f := range files {
		if err := put(f.name, f.text); err != nil {
			return written, err
		}
	}
	figs, err := r.plots(dir)
	written = append(written, figs...)
	return written, err
}

// interval formats [lo, hi] with signs, or "–" when undefined.
func interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "–"
	}
	return fmt.Sprintf("[%+.1f, %+.1f]", lo, hi)
}

// orDash formats v with format, or "–" when it is undefined.
func orDash(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}
