package sweep

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/internal/stheader"
)

// State is where a run stands.
type State string

// The states of a run. Partial and interrupted runs are pending: the next
// `sweep run` resumes them from their latest checkpoint.
const (
	Pending State = "pending"
	Running State = "running"
	Failed  State = "failed"
	Done    State = "done"
)

// Marker is a run slot's state.json, written by whoever executes the run.
type Marker struct {
	State    string    `json:"state"` // running, done, failed, interrupted
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	Executor string    `json:"executor"` // local, slurm (with job id), k8s
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
	Attempt  int       `json:"attempt"`
	ExitCode int       `json:"exit_code,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Status is one run's row in `sweep status`.
type Status struct {
	Run   Run
	State State
	// Partial is set for pending runs that have a checkpoint to resume from.
	Partial bool
	// Step is the last logged gradient step.
	Step int
	// Checkpoint is the gradient step of the run's checkpoint, the step a
	// partial run resumes from (0: no checkpoint, or one whose step cannot
	// be read). It can lag Step by up to the run's --checkpoint-every when
	// the trainer was killed without warning.
	Checkpoint int
	// LastScore is the normalized score of the latest evaluation (NaN: none),
	// or its success rate in percent when LastIsSuccess (an env with a
	// success test and no reference returns).
	LastScore     float64
	LastIsSuccess bool
	// StepsPerSec is the training speed (results.json for finished runs, the
	// last two metric rows otherwise; 0 unknown).
	StepsPerSec float64
	// TrainDir is the `koopq train` run directory ("" before the run starts).
	TrainDir string
	// Message explains failures, and notes a finished run whose recorded
	// steps or settings are not its spec's.
	Message string
	// OtherSpec marks a finished run whose sweep-run.json describes other
	// settings than the spec's run of its slot (a sweep of another spec
	// on the same directory made it).
	OtherSpec bool
}

// SlotDir is the directory of run r in the sweep directory out.
func SlotDir(out string, r Run) string { return filepath.Join(out, r.Name) }

// findTrainDir returns the train run directory inside a slot: the
// subdirectory holding config.json (the newest by name if several).
func findTrainDir(slot string) string {
	m, _ := filepath.Glob(filepath.Join(slot, "*", "config.json"))
	if len(m) == 0 {
		return ""
	}
	sort.Strings(m)
	return filepath.Dir(m[len(m)-1])
}

// resultInfo is the part of results.json the sweep reads.
type resultInfo struct {
	Steps       int          `json:"steps"`
	StepsPerSec float64      `json:"steps_per_second"`
	Final       historyPoint `json:"final_eval"`
}

// historyPoint is an evaluation as results.json and history.json record
// it: the normalized score, and for envs with a success test and no
// reference returns (manipulation) the success rate, a fraction.
type historyPoint struct {
	Step        int      `json:"step"`
	Normalized  *float64 `json:"normalized_score"`
	SuccessRate *float64 `json:"success_rate"`
}

// setScore sets s's LastScore from e: its normalized score, else its
// success rate in percent (LastIsSuccess), else nothing.
func (s *Status) setScore(e historyPoint) {
	switch {
	case e.Normalized != nil:
		s.LastScore, s.LastIsSuccess = *e.Normalized, false
	case e.SuccessRate != nil:
		s.LastScore, s.LastIsSuccess = 100**e.SuccessRate, true
	}
}

// ScoreText is LastScore as the status table and progress lines print
// it: "84.7" for a normalized score, "40.0%" for a success rate, "-" for
// none.
func (s Status) ScoreText() string {
	switch {
	case math.IsNaN(s.LastScore):
		return "-"
	case s.LastIsSuccess:
		return fmt.Sprintf("%.1f%%", s.LastScore)
	}
	return fmt.Sprintf("%.1f", s.LastScore)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func readMarker(slot string) (Marker, bool) {
	var m Marker
	if err := readJSON(filepath.Join(slot, "state.json"), &m); err != nil {
		return m, false
	}
	return m, true
}

// writeMarker writes state.json atomically.
func writeMarker(slot string, m Marker) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(slot, "state.json"), append(b, '\n'))
}

// writeAtomic replaces path with data atomically (internal/atomicfile).
func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, nil) }

// alive reports whether the marker's process still runs: on this host by
// its pid; on another host it is trusted.
func (m Marker) alive() bool {
	host, _ := os.Hostname()
	if m.Host != host {
		return true
	}
	if m.PID <= 0 {
		return false
	}
	err := syscall.Kill(m.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// lastMetrics returns the step and speed from the last rows of metrics.jsonl.
func lastMetrics(trainDir string) (step int, sps float64) {
	f, err := os.Open(filepath.Join(trainDir, "metrics.jsonl"))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	var prev, last map[string]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		var row map[string]float64
		if json.Unmarshal(sc.Bytes(), &row) != nil {
			continue
		}
		prev, last = last, row
	}
	if last == nil {
		return 0, 0
	}
	step = int(last["step"])
	if prev != nil {
		ds, dt := last["step"]-prev["step"], last["wall_seconds"]-prev["wall_seconds"]
		if ds > 0 && dt > 0 {
			sps = ds / dt
		}
	}
	return step, sps
}

// RunStatus inspects the slot of run r in out.
func RunStatus(out string, r Run) Status {
	st := Status{Run: r, State: Pending, LastScore: math.NaN()}
	slot := SlotDir(out, r)
	st.TrainDir = findTrainDir(slot)
	if st.TrainDir != "" {
		var res resultInfo
		if err := readJSON(filepath.Join(st.TrainDir, "results.json"), &res); err == nil {
			st.Step, st.StepsPerSec = res.Steps, res.StepsPerSec
			st.setScore(res.Final)
			if res.Steps >= r.Steps {
				st.State = Done
				if res.Steps != r.Steps {
					st.Message = fmt.Sprintf("trained %d steps, not the spec's %d (another spec's run?)", res.Steps, r.Steps)
				}
				if _, err := compareIdentity(slot, r); err != nil {
					// Made by a sweep of another spec on the same --out
					// (two started together): done, but not this spec's run.
					st.OtherSpec, st.Message = true, "made under another spec: "+strings.TrimPrefix(err.Error(), "run "+r.Name+": ")
				}
				return st
			}
		}
		var hist []historyPoint
		if readJSON(filepath.Join(st.TrainDir, "history.json"), &hist) == nil && len(hist) > 0 {
			st.setScore(hist[len(hist)-1])
		}
		step, sps := lastMetrics(st.TrainDir)
		if step > st.Step {
			st.Step, st.StepsPerSec = step, sps
		}
		if _, err := os.Stat(filepath.Join(st.TrainDir, "checkpoints", "latest.safetensors")); err == nil {
			st.Partial = true
			st.Checkpoint = checkpointStep(filepath.Join(st.TrainDir, "checkpoints", "latest.safetensors"))
		}
	}
	if m, ok := readMarker(slot); ok {
		switch m.State {
		case "running":
			if m.alive() {
				st.State = Running
			} else {
				st.Message = fmt.Sprintf("its process (%s pid %d) is gone: interrupted", m.Host, m.PID)
			}
		case "failed":
			st.State = Failed
			st.Message = m.Error
		case "interrupted":
			st.Message = "interrupted"
		}
	}
	return st
}

// checkpointStep reads the gradient step of a `koopq train` checkpoint from
// its header (the "state" metadata), without loading the weights; 0 when it
// cannot be read.
func checkpointStep(path string) int {
	h, err := stheader.Read(path)
	if err != nil {
		return 0
	}
	var state struct {
		Steps int `json:"steps"`
	}
	if json.Unmarshal([]byte(h.Meta["state"]), &state) != nil {
		return 0
	}
	return state.Steps
}

// resumeStep is the step the run stands at for the time it still needs: a
// running or finished run's last logged step; for a pending run (or a
// failed one that --retry-failed starts again) its checkpoint's step, where
// `koopq train --resume` continues, not its last logged one; without a
// checkpoint 0 (it starts over).
func (s Status) resumeStep() int {
	switch {
	case s.State == Running || s.State == Done:
		return s.Step
	case s.Partial && s.Checkpoint > 0:
		return s.Checkpoint
	case s.Partial:
		return s.Step // a checkpoint whose step could not be read
	}
	return 0
}

// progressLine is the line the local and Slurm executors print for an active
// run every --progress-every: step, score, the speed between its last two
// log rows and the training time left at that speed.
func progressLine(st Status) string {
	r := st.Run
	line := fmt.Sprintf("running %s  step %d/%d (%.0f%%)  score %s  %.1f steps/s", r.Name, st.Step, r.Steps,
		100*float64(st.Step)/float64(max(r.Steps, 1)), st.ScoreText(), st.StepsPerSec)
	if st.StepsPerSec > 0 && st.Step < r.Steps {
		line += fmt.Sprintf("  about %s of training left", FormatMinutes(timeLeft(r, st, st.StepsPerSec)))
	}
	return line
}

// Statuses inspects every run of a sweep.
func Statuses(out string, runs []Run) []Status {
	st := make([]Status, len(runs))
	for i, r := range runs {
		st[i] = RunStatus(out, r)
	}
	return st
}

// Counts tallies statuses by state.
func Counts(st []Status) map[State]int {
	c := map[State]int{}
	for _, s := range st {
		c[s.State]++
	}
	return c
}

// label is the status's state as the tables show it: "partial" for a
// pending run with a checkpoint to resume from.
func (s Status) label() string {
	if s.State == Pending && s.Partial {
		return "partial"
	}
	return string(s.State)
}

// FormatStatus renders statuses as a plain-text table.
func FormatStatus(st []Status) string {
	rows := [][]string{{"#", "run", "state", "step", "score", "steps/s", "note"}}
	for _, s := range st {
		score := s.ScoreText()
		sps := "-"
		if s.StepsPerSec > 0 {
			sps = fmt.Sprintf("%.1f", s.StepsPerSec)
		}
		msg := s.Message
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if s.State == Running && s.StepsPerSec > 0 && s.Step < s.Run.Steps {
			// Training steps only, at the speed between its last two log rows.
			eta := timeLeft(s.Run, s, s.StepsPerSec)
			msg = strings.TrimSpace(fmt.Sprintf("about %s of training left %s", FormatMinutes(eta), msg))
		}
		if s.State == Pending && s.Partial && s.Checkpoint > 0 {
			msg = strings.TrimSpace(fmt.Sprintf("resumes from its checkpoint at step %d %s", s.Checkpoint, msg))
		}
		if s.State == Pending && !s.Partial && s.Step > 0 {
			// Logs without a checkpoint: a run directory from git or another
			// machine, or a trainer killed before its first checkpoint.
			msg = strings.TrimSpace(fmt.Sprintf("no checkpoint: starts again from step 0 (its logs reach step %d) %s", s.Step, msg))
		}
		rows = append(rows, []string{fmt.Sprint(s.Run.Index), s.Run.Name, s.label(), fmt.Sprintf("%d/%d", s.Step, s.Run.Steps), score, sps, msg})
	}
	var b strings.Builder
	b.WriteString(formatTable(rows, []int{-4, -44, -8, 9, 9, 9, 0}))
	c := Counts(st)
	fmt.Fprintf(&b, "%s: %d done, %d running, %d failed, %d pending\n", plural.Count(len(st), "run"), c[Done], c[Running], c[Failed], c[Pending])
	if n := otherSpec(st); n > 0 {
		fmt.Fprintf(&b, "warning: %s finished under other settings than this spec (see the notes): %s not this spec's; "+
			"'koopq report' refuses to pool %s with this spec's runs\n", plural.Count(n, "run"), plural.Pick(n, "it is", "they are"), plural.Pick(n, "it", "them"))
	}
	if n := stepsDiffer(st); n > 0 {
		fmt.Fprintf(&b, "warning: %s trained a number of steps other than the spec's (see the notes): the spec may not be the one %s run with\n",
			plural.Count(n, "run"), plural.Pick(n, "it was", "they were"))
	}
	return b.String()
}

// otherSpec counts the finished runs made under another spec.
func otherSpec(st []Status) int {
	n := 0
	for _, s := range st {
		if s.OtherSpec {
			n++
		}
	}
	return n
}

// stepsDiffer counts the finished runs whose recorded steps are not their
// spec's.
func stepsDiffer(st []Status) int {
	n := 0
	for _, s := range st {
		if s.State == Done && s.Step != s.Run.Steps {
			n++
		}
	}
	return n
}

// formatTable lays rows (the first is the header) out as text columns. width
// gives each column's minimum width, negative for left-aligned, positive
// for right-aligned; a column grows to its longest cell, so that long run
// names and 100000/100000 step counts stay aligned. The last column is not
// padded, two spaces set it apart, and lines carry no trailing spaces.
func formatTable(rows [][]string, width []int) string {
	last := len(width) - 1
	w := make([]int, last)
	for c := range w {
		w[c] = max(width[c], -width[c])
		for _, r := range rows {
			w[c] = max(w[c], utf8.RuneCountInString(r[c]))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for c, cell := range r[:last] {
			if c > 0 {
				line.WriteByte(' ')
			}
			if width[c] < 0 {
				fmt.Fprintf(&line, "%-*s", w[c], cell)
			} else {
				fmt.Fprintf(&line, "%*s", w[c], cell)
			}
		}
		line.WriteString("  " + r[last])
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
