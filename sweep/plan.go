package sweep

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/koopq/koopq/internal/plural"
)

// Speeds is the expected training speed (steps/s) of each run of a sweep,
// for 'sweep plan's estimate and 'sweep run --time-limit'. One number for
// every run is wrong by half for a mixed sweep (a KFC++ step runs the Koopman
// model's encoder and decoder on every batch and costs about 1.5 CQL steps),
// so each run takes its speed from the closest evidence, in this order: a
// speed given for its method; a speed given for every method; the median of
// the finished runs in the sweep directory with its dataset and method, then
// with its method, then (for an ablation) with its base method (an ablation
// of KFC++ runs at about KFC++'s speed), then with its augmentation, then of
// all finished runs; the spec's
// steps_per_second. Finished runs count with the speed of their last
// process (results.json's steps_per_second), whatever threads it had.
type Speeds struct {
	given    map[string]float64
	finished []finishedSpeed
	spec     float64
}

type finishedSpeed struct {
	dataset, method, augment string
	perSec                   float64
}

// Speed is one run's expected training speed and where it comes from.
type Speed struct {
	// PerSec is in steps/s; 0 when nothing is known.
	PerSec float64
	// Source says where PerSec comes from, for messages (e.g. "median of 2
	// finished CQL runs on hopper-medium").
	Source string
}

// NewSpeeds gathers the evidence for Speeds: given (from ParseSpeeds; may be
// nil), the finished runs among runs (the spec's whole expansion, not only
// the selected runs) in the sweep directory out ("": none), and s's
// steps_per_second (s may be nil).
func NewSpeeds(s *Spec, out string, runs []Run, given map[string]float64) Speeds {
	sp := Speeds{given: given}
	if s != nil {
		sp.spec = s.StepsPerSecond
	}
	if out != "" {
		for _, r := range runs {
			if st := RunStatus(out, r); st.State == Done && st.StepsPerSec > 0 {
				sp.finished = append(sp.finished, finishedSpeed{r.Dataset, r.Method, r.Augment, st.StepsPerSec})
			}
		}
	}
	return sp
}

// ParseSpeeds reads --steps-per-sec values: "N" (every method) or "NAME=N"
// (the method or ablation NAME of s), N a positive number of steps/s.
func ParseSpeeds(s *Spec, values []string) (map[string]float64, error) {
	var names []string
	for _, m := range s.Methods {
		names = append(names, m.Name)
	}
	for _, a := range s.Ablations {
		names = append(names, a.Name)
	}
	var p problems
	given := map[string]float64{}
	for _, v := range values {
		name, num := "", v
		if i := strings.LastIndex(v, "="); i >= 0 {
			name, num = v[:i], v[i+1:]
			if !slices.Contains(names, name) {
				p.add("--steps-per-sec %s: the spec has no method or ablation %q (it has %s)", v, name, strings.Join(names, ", "))
				continue
			}
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			p.add("--steps-per-sec %s: want a positive number of steps/s, or NAME=steps/s for one method", v)
			continue
		}
		if _, dup := given[name]; dup {
			what := "every method"
			if name != "" {
				what = name
			}
			p.add("--steps-per-sec %s: a speed for %s is given twice", v, what)
			continue
		}
		given[name] = f
	}
	return given, p.err()
}

// For is run r's expected speed.
func (sp Speeds) For(r Run) Speed {
	if v, ok := sp.given[r.Method]; ok {
		return Speed{v, "--steps-per-sec " + r.Method + "=…"}
	}
	if v, ok := sp.given[""]; ok {
		return Speed{v, "--steps-per-sec"}
	}
	// Each tier describes its runs as before + "run(s)" + after.
	tiers := []struct {
		keep          func(finishedSpeed) bool
		before, after string
	}{
		{func(f finishedSpeed) bool { return f.dataset == r.Dataset && f.method == r.Method }, r.Method + " ", " on " + r.Dataset},
		{func(f finishedSpeed) bool { return f.method == r.Method }, r.Method + " ", ""},
		{func(f finishedSpeed) bool { return r.Ablation && f.method == r.Base }, r.Base + " ", ", the ablation's base method"},
		{func(f finishedSpeed) bool { return f.augment == r.Augment }, "", " with augmentation " + r.Augment},
		{func(finishedSpeed) bool { return true }, "", " of any method"},
	}
	for _, t := range tiers {
		var v []float64
		for _, f := range sp.finished {
			if t.keep(f) {
				v = append(v, f.perSec)
			}
		}
		if len(v) > 0 {
			return Speed{median(v), fmt.Sprintf("median of %d finished %s%s%s", len(v), t.before, plural.Pick(len(v), "run", "runs"), t.after)}
		}
	}
	if sp.spec > 0 {
		return Speed{sp.spec, "the spec's steps_per_second"}
	}
	return Speed{}
}

// Describe lists the speed of each dataset and method among runs, in run
// order, one line each ("hopper-medium CQL: 15.7 steps/s (…)").
func (sp Speeds) Describe(runs []Run) []string {
	var lines []string
	seen := map[[2]string]bool{}
	for _, r := range runs {
		k := [2]string{r.Dataset, r.Method}
		if seen[k] {
			continue
		}
		seen[k] = true
		if v := sp.For(r); v.PerSec > 0 {
			lines = append(lines, fmt.Sprintf("%s %s: %.1f steps/s (%s)", r.Dataset, r.Method, v.PerSec, v.Source))
		} else {
			lines = append(lines, fmt.Sprintf("%s %s: steps/s unknown", r.Dataset, r.Method))
		}
	}
	return lines
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// CPUHours estimates the cost of runs: Σ steps / (each run's speed), times
// the threads each run holds, in hours, and how many runs have no known
// speed (left out of the sum). Evaluation time is not included.
func CPUHours(runs []Run, sp Speeds, threads int) (float64, int) {
	total, unknown := 0.0, 0
	for _, r := range runs {
		v := sp.For(r).PerSec
		if !(v > 0) {
			unknown++
			continue
		}
		total += float64(r.Steps) / v
	}
	return total * float64(max(threads, 1)) / 3600, unknown
}

// FormatPlan renders the run list of a spec as a plain-text table. With a
// sweep directory out (may be ""), a state column says where each run
// stands there (done, partial, running, failed, pending), as 'sweep status'
// does.
func FormatPlan(runs []Run, out string) string {
	head := []string{"#", "run", "dataset", "method", "augment", "seed", "steps", "extra flags"}
	width := []int{-4, -44, -20, -12, -10, 5, 9, 0}
	if out != "" {
		head = append(head[:2], append([]string{"state"}, head[2:]...)...)
		width = append(width[:2], append([]int{-8}, width[2:]...)...)
	}
	rows := [][]string{head}
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
		row := []string{fmt.Sprint(r.Index), r.Name, r.Dataset, method, r.Augment,
			fmt.Sprint(r.Seed), fmt.Sprint(r.Steps), strings.Join(fl, " ")}
		if out != "" {
			row = append(row[:2], append([]string{RunStatus(out, r).label()}, row[2:]...)...)
		}
		rows = append(rows, row)
	}
	return formatTable(rows, width)
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

// timeLeft is the time run r still trains at perSec steps/s (> 0): its
// steps beyond where its status st stands (Status.resumeStep: a running
// run's last logged step, a pending one's checkpoint; the zero Status: all
// of them). 'sweep run --time-limit', Schedule and 'sweep status' use it.
// A time beyond what a Duration holds (about 292 years: 1e6 steps at
// 1e-4 steps/s) saturates at maxDuration rather than wrapping negative.
func timeLeft(r Run, st Status, perSec float64) time.Duration {
	ns := float64(max(r.Steps-st.resumeStep(), 0)) / perSec * float64(time.Second)
	if !(ns < float64(maxDuration)) { // also NaN
		return maxDuration
	}
	return time.Duration(ns)
}

// maxDuration is the longest time.Duration: "never" in time arithmetic.
const maxDuration = time.Duration(math.MaxInt64)

// needText writes a run's time left: "about 2h47m", or for a saturated
// time "more than 290 years".
func needText(d time.Duration) string {
	if d >= maxDuration {
		return "more than 290 years"
	}
	return "about " + FormatMinutes(d)
}

// addSat is a + b for non-negative durations, saturating at maxDuration.
func addSat(a, b time.Duration) time.Duration {
	if a > maxDuration-b {
		return maxDuration
	}
	return a + b
}

// Planned is one run's place in a predicted local schedule (Schedule).
type Planned struct {
	Run Run
	// Start and End are offsets from the start of the sweep. Need is the
	// time its steps left take at Speed.
	Start, End, Need time.Duration
	// Speed is the run's expected steps/s (Speeds.For); 0 when unknown.
	Speed float64
	// Held: it would not finish before the time limit, so 'sweep run'
	// does not start it (Start is when a slot would have been free).
	Held bool
	// Unpredictable: its start or end cannot be predicted, because its
	// own speed, or that of a run before it on every slot, is unknown
	// ('sweep run' starts a run of unknown speed whatever the limit).
	Unpredictable bool
	// Skipped is set for runs 'sweep run' leaves alone and that take no
	// slot: State says why (Running: another process trains it; Failed:
	// it failed before, and only --retry-failed starts it again).
	Skipped bool
	State   State
}

// Schedule predicts what 'sweep run' (RunLocal) does with runs, in its
// order (partial runs first, ResumeFirst), jobs at a time under a time
// limit (0: none): each run goes to the slot that frees first, and starts
// there if its steps left (the total minus what its run directory in out
// has logged) at its expected speed end before the limit; otherwise it is
// held, and that slot takes the next run.
// Runs that another process is training, and failed runs unless
// retryFailed, are skipped as 'sweep run' skips them.
// Like RunLocal's own check it counts training steps only (no evaluation,
// Koopman precompute or preparation), so real runs end somewhat later.
func Schedule(out string, runs []Run, sp Speeds, jobs int, limit time.Duration, retryFailed bool) []Planned {
	const never = maxDuration
	free := make([]time.Duration, max(jobs, 1))
	var plan []Planned
	ordered, _ := ResumeFirst(out, runs)
	for _, r := range ordered {
		p := Planned{Run: r, Speed: sp.For(r).PerSec, State: Pending}
		var st Status
		if out != "" {
			st = RunStatus(out, r)
			if p.State = st.State; st.State == Running || (st.State == Failed && !retryFailed) {
				p.Skipped = true
				plan = append(plan, p)
				continue
			}
		}
		slot := 0
		for i, t := range free {
			if t < free[slot] {
				slot = i
			}
		}
		p.Start = free[slot]
		switch {
		case p.Start == never:
			p.Unpredictable = true
		case !(p.Speed > 0):
			p.Unpredictable, free[slot] = true, never
		default:
			p.Need = timeLeft(r, st, p.Speed)
			p.End = addSat(p.Start, p.Need)
			if limit > 0 && (p.End > limit || p.End == maxDuration) {
				p.Held, p.End = true, p.Start
			} else {
				free[slot] = p.End
			}
		}
		plan = append(plan, p)
	}
	return plan
}

// FormatSchedule renders a Schedule: one line per run (start and end as
// offsets, or why it is held) and a count.
func FormatSchedule(plan []Planned, limit time.Duration) string {
	var b strings.Builder
	hm := func(d time.Duration) string {
		d = d.Round(time.Minute)
		return fmt.Sprintf("%d:%02d", int(d.Hours()), int(d.Minutes())%60)
	}
	var started, held, unknown, skipped int
	for _, p := range plan {
		if p.Skipped {
			skipped++
		}
		switch {
		case p.Skipped && p.State == Running:
			fmt.Fprintf(&b, "  running      %s: another process trains it; skipped\n", p.Run.Name)
		case p.Skipped:
			fmt.Fprintf(&b, "  failed       %s: failed before; skipped (--retry-failed starts it again)\n", p.Run.Name)
		case p.Unpredictable:
			unknown++
			fmt.Fprintf(&b, "  ?            %s: no steps/s known for it or for a run before it on every slot\n", p.Run.Name)
		case p.Held:
			held++
			fmt.Fprintf(&b, "  hold         %s: needs %s at %.1f steps/s from %s, past the limit\n",
				p.Run.Name, needText(p.Need), p.Speed, hm(p.Start))
		default:
			started++
			fmt.Fprintf(&b, "  %6s–%-6s%s (%.1f steps/s)\n", hm(p.Start), hm(p.End), p.Run.Name, p.Speed)
		}
	}
	fmt.Fprintf(&b, "%s start and finish", plural.Count(started, "run"))
	if limit > 0 {
		fmt.Fprintf(&b, " within %s", FormatMinutes(limit))
	}
	fmt.Fprintf(&b, ", %d held by the time limit", held)
	if unknown > 0 {
		fmt.Fprintf(&b, ", %d unpredictable (give --steps-per-sec)", unknown)
	}
	if skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", skipped)
	}
	b.WriteString(" (training steps only: evaluation and Koopman precompute make real runs end later)\n")
	return b.String()
}

// FormatMinutes writes d rounded to the minute as hours and minutes without
// the zero fields Go's Duration.String adds: "2h47m", "1h", "11m", "0m".
// Durations in sweep messages are estimates; seconds would be noise.
func FormatMinutes(d time.Duration) string {
	m := int64(d.Round(time.Minute) / time.Minute)
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	switch h, mm := m/60, m%60; {
	case h == 0:
		return fmt.Sprintf("%s%dm", sign, mm)
	case mm == 0:
		return fmt.Sprintf("%s%dh", sign, h)
	default:
		return fmt.Sprintf("%s%dh%dm", sign, h, mm)
	}
}
