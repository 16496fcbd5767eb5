package sweep

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// finish writes the files of a run that trained steps steps at sps steps/s
// into its slot in out, as 'koopq train' leaves them.
func finish(t *testing.T, out string, r Run, steps int, sps float64) {
	t.Helper()
	dir := filepath.Join(SlotDir(out, r), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"config.json":  "{}",
		"results.json": fmt.Sprintf(`{"steps": %d, "steps_per_second": %g}`, steps, sps),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runNamed(t *testing.T, runs []Run, dataset, method string, seed uint64) Run {
	t.Helper()
	for _, r := range runs {
		if r.Dataset == dataset && r.Method == method && r.Seed == seed {
			return r
		}
	}
	t.Fatalf("no run %s %s %d", dataset, method, seed)
	return Run{}
}

func TestSpeedsTakeTheClosestEvidence(t *testing.T) {
	s, runs := mustParse(t, testSpec, Checker{})
	out := t.TempDir()
	hopCQL3 := runNamed(t, runs, "hopper-medium", "CQL", 3)
	hopCQL1 := runNamed(t, runs, "hopper-medium", "CQL", 1)
	walkCQL3 := runNamed(t, runs, "walker-medium", "CQL", 3)
	hopKFC3 := runNamed(t, runs, "hopper-medium", "KFC++", 3)
	walkKFC3 := runNamed(t, runs, "walker-medium", "KFC++", 3)
	walkKFC1 := runNamed(t, runs, "walker-medium", "KFC++", 1)
	abl := runNamed(t, runs, "hopper-medium", "KFC++-p0", 3)

	// Nothing finished: the spec's steps_per_second, or nothing.
	if v := NewSpeeds(s, out, runs, nil).For(hopCQL3); v.PerSec != 0 {
		t.Errorf("no evidence: %+v", v)
	}
	s.StepsPerSecond = 5
	if v := NewSpeeds(s, out, runs, nil).For(hopCQL3); v.PerSec != 5 || v.Source != "the spec's steps_per_second" {
		t.Errorf("spec speed: %+v", v)
	}

	finish(t, out, hopCQL3, 1000, 20)
	finish(t, out, hopCQL1, 1000, 10)
	finish(t, out, walkKFC3, 1000, 8)
	finish(t, out, walkKFC1, 500, 99) // partial: not evidence
	sp := NewSpeeds(s, out, runs, nil)
	for _, c := range []struct {
		r      Run
		want   float64
		source string
	}{
		{hopCQL3, 15, "median of 2 finished CQL runs on hopper-medium"},
		{walkCQL3, 15, "median of 2 finished CQL runs"},
		{hopKFC3, 8, "median of 1 finished KFC++ run"},
		{walkKFC1, 8, "median of 1 finished KFC++ run on walker-medium"},
		{abl, 8, "median of 1 finished KFC++ run, the ablation's base method"},
	} {
		if v := sp.For(c.r); v.PerSec != c.want || v.Source != c.source {
			t.Errorf("%s: %+v, want %g (%s)", c.r.Name, v, c.want, c.source)
		}
	}
	// A run whose base method has no finished run takes its augmentation's
	// speed, else the median of all finished runs.
	other := abl
	other.Ablation, other.Base = false, ""
	if v := sp.For(other); v.PerSec != 8 || v.Source != "median of 1 finished run with augmentation kfc++" {
		t.Errorf("fallback to the augmentation: %+v", v)
	}
	other.Augment = "s4rl-n"
	if v := sp.For(other); v.PerSec != 10 || v.Source != "median of 3 finished runs of any method" {
		t.Errorf("fallback to all runs: %+v", v)
	}

	// Given speeds come first: one method's, then every method's.
	sp = NewSpeeds(s, out, runs, map[string]float64{"KFC++": 9})
	if v := sp.For(hopKFC3); v.PerSec != 9 {
		t.Errorf("given KFC++: %+v", v)
	}
	if v := sp.For(hopCQL3); v.PerSec != 15 {
		t.Errorf("CQL must stay measured: %+v", v)
	}
	sp = NewSpeeds(s, out, runs, map[string]float64{"KFC++": 9, "": 30})
	if sp.For(hopKFC3).PerSec != 9 || sp.For(hopCQL3).PerSec != 30 || sp.For(abl).PerSec != 30 {
		t.Errorf("given speeds: %+v %+v %+v", sp.For(hopKFC3), sp.For(hopCQL3), sp.For(abl))
	}

	d := strings.Join(NewSpeeds(s, out, runs, nil).Describe([]Run{hopCQL3, hopCQL1, abl}), "\n")
	want := "hopper-medium CQL: 15.0 steps/s (median of 2 finished CQL runs on hopper-medium)\n" +
		"hopper-medium KFC++-p0: 8.0 steps/s (median of 1 finished KFC++ run, the ablation's base method)"
	if d != want {
		t.Errorf("Describe:\n%s\nwant\n%s", d, want)
	}
}

func TestParseSpeeds(t *testing.T) {
	s, _ := mustParse(t, testSpec, Checker{})
	got, err := ParseSpeeds(s, []string{"12", "CQL=15.5", "KFC++-p0=3"})
	if err != nil || len(got) != 3 || got[""] != 12 || got["CQL"] != 15.5 || got["KFC++-p0"] != 3 {
		t.Errorf("ParseSpeeds = %v, %v", got, err)
	}
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"SAC=3"}, `no method or ablation "SAC" (it has CQL, KFC++, KFC++-p0)`},
		{[]string{"0"}, "--steps-per-sec 0: want a positive number"},
		{[]string{"-1"}, "--steps-per-sec -1: want a positive number"},
		{[]string{"CQL=fast"}, "--steps-per-sec CQL=fast: want a positive number"},
		{[]string{"NaN"}, "--steps-per-sec NaN: want a positive number"},
		{[]string{"+Inf"}, "--steps-per-sec +Inf: want a positive number"},
		{[]string{"CQL=1", "CQL=2"}, "a speed for CQL is given twice"},
		{[]string{"4", "5"}, "a speed for every method is given twice"},
	} {
		if _, err := ParseSpeeds(s, c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSpeeds(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

func TestCPUHours(t *testing.T) {
	runs := []Run{{Method: "CQL", Steps: 3600}, {Method: "KFC++", Steps: 7200}}
	// 10800 steps at 2 steps/s = 5400 s = 1.5 h per thread; 2 threads → 3 CPU-hours.
	if got, unknown := CPUHours(runs, NewSpeeds(nil, "", nil, map[string]float64{"": 2}), 2); got != 3 || unknown != 0 {
		t.Errorf("CPUHours = %v, %d; want 3, 0", got, unknown)
	}
	// Per method: 3600/1 + 7200/4 = 5400 s at one thread.
	if got, _ := CPUHours(runs, NewSpeeds(nil, "", nil, map[string]float64{"CQL": 1, "KFC++": 4}), 1); got != 1.5 {
		t.Errorf("CPUHours per method = %v, want 1.5", got)
	}
	if got, unknown := CPUHours(runs, NewSpeeds(nil, "", nil, map[string]float64{"CQL": 1}), 1); got != 1 || unknown != 1 {
		t.Errorf("one unknown speed: %v, %d; want 1, 1", got, unknown)
	}
	if got, unknown := CPUHours(runs, Speeds{}, 1); got != 0 || unknown != 2 {
		t.Errorf("unknown speeds must give 0, 2: %v, %d", got, unknown)
	}
}

// Schedule predicts RunLocal: the first free slot takes the next run, which
// starts if it ends by the limit (an end exactly at the limit fits) and is
// held otherwise; partial runs need only their steps left; runs of unknown
// speed make everything after them on their slot unpredictable; runs
// another process trains, and failed runs, take no slot.
func TestSchedule(t *testing.T) {
	runs := []Run{
		{Name: "a", Method: "A", Steps: 3600}, // 1 h
		{Name: "b", Method: "B", Steps: 3600}, // 30 min
		{Name: "c", Method: "A", Steps: 3600}, // 1 h
		{Name: "d", Method: "D", Steps: 3600}, // 15 min
	}
	sp := NewSpeeds(nil, "", nil, map[string]float64{"A": 1, "B": 2, "D": 4})
	type want struct {
		start, end time.Duration
		held       bool
	}
	check := func(name string, got []Planned, w []want) {
		t.Helper()
		if len(got) != len(w) {
			t.Fatalf("%s: %d planned, want %d", name, len(got), len(w))
		}
		for i := range w {
			if got[i].Start != w[i].start || got[i].End != w[i].end || got[i].Held != w[i].held || got[i].Unpredictable {
				t.Errorf("%s: run %s: %v–%v held %v unpredictable %v; want %v–%v held %v", name, got[i].Run.Name,
					got[i].Start, got[i].End, got[i].Held, got[i].Unpredictable, w[i].start, w[i].end, w[i].held)
			}
		}
	}
	m := time.Minute
	check("limit 1h30m", Schedule("", runs, sp, 2, 90*m, false),
		[]want{{0, 60 * m, false}, {0, 30 * m, false}, {30 * m, 90 * m, false}, {60 * m, 75 * m, false}})
	check("limit 1h20m", Schedule("", runs, sp, 2, 80*m, false),
		[]want{{0, 60 * m, false}, {0, 30 * m, false}, {30 * m, 30 * m, true}, {30 * m, 45 * m, false}})
	check("no limit, one slot", Schedule("", runs, sp, 1, 0, false),
		[]want{{0, 60 * m, false}, {60 * m, 90 * m, false}, {90 * m, 150 * m, false}, {150 * m, 165 * m, false}})

	// Unknown speed: the run starts, and its slot's later runs cannot be predicted.
	unk := append([]Run{{Name: "u", Method: "U", Steps: 100}}, runs[:2]...)
	got := Schedule("", unk, sp, 1, time.Hour, false)
	for _, p := range got {
		if !p.Unpredictable || p.Held {
			t.Errorf("after a run of unknown speed on the only slot: %s %+v", p.Run.Name, p)
		}
	}
	if got := Schedule("", unk, sp, 2, time.Hour, false); got[0].Unpredictable != true || got[1].Unpredictable || got[1].End != 60*m {
		t.Errorf("two slots, one taken by a run of unknown speed: %+v", got)
	}

	// A partial run (checkpoint at step 1800, logged to 2700) needs half
	// its time; a run another process trains and a failed run take no slot.
	out := t.TempDir()
	dir := filepath.Join(SlotDir(out, runs[0]), "run")
	os.MkdirAll(filepath.Join(dir, "checkpoints"), 0o755)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(`{"step":1800,"wall_seconds":1}`+"\n"+`{"step":2700,"wall_seconds":2}`+"\n"), 0o644)
	header := `{"__metadata__":{"state":"{\"steps\":1800}"}}`
	os.WriteFile(filepath.Join(dir, "checkpoints", "latest.safetensors"), append(binary.LittleEndian.AppendUint64(nil, uint64(len(header))), header...), 0o644)
	host, _ := os.Hostname()
	os.MkdirAll(SlotDir(out, runs[1]), 0o755)
	os.MkdirAll(SlotDir(out, runs[2]), 0o755)
	if err := writeMarker(SlotDir(out, runs[1]), Marker{State: "running", Host: host, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if err := writeMarker(SlotDir(out, runs[2]), Marker{State: "failed", Host: host, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	got = Schedule(out, runs, sp, 1, time.Hour, false)
	if got[0].Start != 0 || got[0].End != 30*m || got[0].Held {
		t.Errorf("partial run: %+v, want 0–30m", got[0])
	}
	if !got[1].Skipped || got[1].State != Running || !got[2].Skipped || got[2].State != Failed {
		t.Errorf("running and failed runs must be skipped: %+v %+v", got[1], got[2])
	}
	if got[3].Start != 30*m || got[3].End != 45*m {
		t.Errorf("the run after the skipped ones: %+v, want 30m–45m", got[3])
	}
	if got := Schedule(out, runs, sp, 1, 2*time.Hour, true); got[2].Skipped || got[2].Held || got[2].Start != 30*m || got[3].Start != 90*m {
		t.Errorf("--retry-failed schedules the failed run: %+v %+v", got[2], got[3])
	}
	text := FormatSchedule(Schedule(out, runs, sp, 1, time.Hour, false), time.Hour)
	for _, s := range []string{"0:00–0:30  a (1.0 steps/s)", "running      b: another process trains it", "failed       c:",
		"0:30–0:45  d (4.0 steps/s)", "2 runs start and finish within 1h, 0 held by the time limit, 2 skipped"} {
		if !strings.Contains(text, s) {
			t.Errorf("schedule text lacks %q:\n%s", s, text)
		}
	}
}

// sweep status tells how long a running run still trains, at the speed of
// its last two log rows.
func TestStatusTimeLeftOfRunningRun(t *testing.T) {
	r := Run{Name: "a", Steps: 10000}
	out := t.TempDir()
	dir := filepath.Join(SlotDir(out, r), "run")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
	// 1000 steps in 100 s: 10 steps/s; 6400 steps left → 640 s ≈ 11 min.
	os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(`{"step":2600,"wall_seconds":260}`+"\n"+`{"step":3600,"wall_seconds":360}`+"\n"), 0o644)
	host, _ := os.Hostname()
	if err := writeMarker(SlotDir(out, r), Marker{State: "running", Host: host, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if s := FormatStatus(Statuses(out, []Run{r})); !strings.Contains(s, "running  3600/10000") || !strings.Contains(s, "about 11m of training left") {
		t.Errorf("status:\n%s", s)
	}
	// The executors' progress line says the same.
	if s := progressLine(RunStatus(out, r)); s != "running a  step 3600/10000 (36%)  score -  10.0 steps/s  about 11m of training left" {
		t.Errorf("progress line %q", s)
	}
	if s := progressLine(Status{Run: r, Step: 3600, LastScore: 50}); s != "running a  step 3600/10000 (36%)  score 50.0  0.0 steps/s" {
		t.Errorf("progress line without a speed %q", s)
	}
}

// The status table's columns line up even when a run name is longer than
// the old fixed 44-character column and step counts reach 100000/100000:
// every row's score ends where the header's "score" ends.
func TestFormatStatusAlignsLongCells(t *testing.T) {
	long := "halfcheetah-medium-replay__kfcpp-residual-contact__s12"
	st := []Status{
		{Run: Run{Index: 0, Name: "a", Steps: 1000}, State: Pending, LastScore: math.NaN()},
		{Run: Run{Index: 12, Name: long, Steps: 100000}, State: Done, Step: 100000, LastScore: 84.8, StepsPerSec: 12.3},
		{Run: Run{Index: 3, Name: "b", Steps: 100000}, State: Failed, Step: 500, LastScore: 7, Message: "diverged\nmore"},
	}
	lines := strings.Split(strings.TrimSpace(FormatStatus(st)), "\n")
	if len(lines) != 5 {
		t.Fatalf("want header, 3 rows and a count line:\n%s", strings.Join(lines, "\n"))
	}
	end := strings.Index(lines[0], "score") + len("score")
	for i, want := range []string{"-", "84.8", "7.0"} {
		row := lines[i+1]
		if end > len(row) || !strings.HasSuffix(row[:end], " "+want) {
			t.Errorf("row %d: score %q does not end at column %d:\n%s\n%s", i, want, end, lines[0], row)
		}
	}
	if !strings.Contains(lines[2], long+" done") || !strings.HasSuffix(lines[3], "  diverged") {
		t.Errorf("table:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing space in %q", l)
		}
	}
}

// The plan table's columns line up when an ablation's method name, with its
// base in parentheses, is longer than the old fixed 12-character column.
func TestFormatPlanAlignsLongCells(t *testing.T) {
	runs := []Run{
		{Index: 0, Name: "hopper-medium__cql__s0", Dataset: "hopper-medium", Method: "CQL", Augment: "none", Steps: 100000},
		{Index: 51, Name: "hopper-medium__kfcpp-prediction__s2", Dataset: "hopper-medium", Method: "KFC++-prediction",
			Ablation: true, Base: "KFC++", Augment: "kfc++-prediction", Seed: 2, Steps: 100000, Preset: "paper"},
	}
	lines := strings.Split(strings.TrimSpace(FormatPlan(runs, "")), "\n")
	if len(lines) != 3 {
		t.Fatalf("want header and 2 rows:\n%s", strings.Join(lines, "\n"))
	}
	aug := strings.Index(lines[0], "augment")
	steps := strings.Index(lines[0], "steps") + len("steps")
	for i, want := range []string{"none", "kfc++-prediction"} {
		row := lines[i+1]
		if !strings.HasPrefix(row[aug:], want+" ") || !strings.HasSuffix(row[:steps], " 100000") {
			t.Errorf("row %d misaligned:\n%s\n%s", i, lines[0], row)
		}
	}
	if !strings.HasSuffix(lines[2], "  --preset=paper") || strings.HasSuffix(lines[1], " ") {
		t.Errorf("flags column:\n%s", strings.Join(lines, "\n"))
	}
}

// With a sweep directory, the plan table says where each run stands there:
// done (results.json with all steps), partial (a checkpoint), pending.
func TestFormatPlanStateColumn(t *testing.T) {
	out := t.TempDir()
	runs := []Run{{Index: 0, Name: "d", Steps: 100}, {Index: 1, Name: "p", Steps: 100}, {Index: 2, Name: "n", Steps: 100}}
	done := filepath.Join(SlotDir(out, runs[0]), "run")
	part := filepath.Join(SlotDir(out, runs[1]), "run", "checkpoints")
	for _, d := range []string{done, part} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(done, "config.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(done, "results.json"), []byte(`{"steps":100}`), 0o644)
	os.WriteFile(filepath.Join(filepath.Dir(part), "config.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(part, "latest.safetensors"), []byte("x"), 0o644)
	lines := strings.Split(strings.TrimSpace(FormatPlan(runs, out)), "\n")
	col := strings.Index(lines[0], "state")
	if col < 0 || len(lines) != 4 {
		t.Fatalf("no state column:\n%s", strings.Join(lines, "\n"))
	}
	for i, want := range []string{"done", "partial", "pending"} {
		if !strings.HasPrefix(lines[i+1][col:], want+" ") {
			t.Errorf("run %d: want %q in the state column:\n%s\n%s", i, want, lines[0], lines[i+1])
		}
	}
	if strings.Contains(FormatPlan(runs, ""), "state") {
		t.Error("state column without a sweep directory")
	}
}

func TestFormatMinutes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                            "0m",
		29 * time.Second:             "0m",
		31 * time.Second:             "1m",
		11 * time.Minute:             "11m",
		time.Hour:                    "1h",
		2*time.Hour + 47*time.Minute: "2h47m",
		2*time.Hour + 46*time.Minute + 40*time.Second: "2h47m",
		-90 * time.Minute: "-1h30m",
		100 * time.Hour:   "100h",
	} {
		if got := FormatMinutes(d); got != want {
			t.Errorf("FormatMinutes(%v) = %q, want %q", d, got, want)
		}
	}
}

// A partial run resumes from its checkpoint, not from its last logged step
// (after a kill -9 the log runs ahead by up to --checkpoint-every): the time
// it still needs, `sweep status` and an interruption's message count from
// the checkpoint's step, read from its header. A pending run without a
// checkpoint starts over and needs all its steps.
func TestPartialRunCountsFromItsCheckpoint(t *testing.T) {
	r := Run{Name: "a", Steps: 10000}
	out := t.TempDir()
	dir := filepath.Join(SlotDir(out, r), "run")
	os.MkdirAll(filepath.Join(dir, "checkpoints"), 0o755)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(`{"step":8000,"wall_seconds":800}`+"\n"+`{"step":9000,"wall_seconds":900}`+"\n"), 0o644)
	ckpt := filepath.Join(dir, "checkpoints", "latest.safetensors")
	header := `{"__metadata__":{"koopq.kind":"cql-learner","state":"{\"steps\":5000,\"log_alpha\":0}"}}`
	os.WriteFile(ckpt, append(binary.LittleEndian.AppendUint64(nil, uint64(len(header))), header...), 0o644)

	st := RunStatus(out, r)
	if st.State != Pending || !st.Partial || st.Step != 9000 || st.Checkpoint != 5000 {
		t.Fatalf("status %+v, want a partial run logged to 9000 with its checkpoint at 5000", st)
	}
	if got, want := timeLeft(r, st, 10), 500*time.Second; got != want {
		t.Errorf("time left %v, want %v (5000 steps from the checkpoint at 10 steps/s)", got, want)
	}
	if s := FormatStatus([]Status{st}); !strings.Contains(s, "partial") || !strings.Contains(s, "resumes from its checkpoint at step 5000") {
		t.Errorf("status table:\n%s", s)
	}
	if got := interruptedAt(Status{Step: 4000, Checkpoint: 4629}); got != 4629 {
		t.Errorf("interrupted at %d, want the checkpoint's 4629 (a signal checkpoints past the last log row)", got)
	}
	if got := interruptedAt(Status{Step: 4000}); got != 4000 {
		t.Errorf("interrupted without a checkpoint step: %d, want 4000", got)
	}

	// A failed run that --retry-failed starts again also resumes there.
	host, _ := os.Hostname()
	if err := writeMarker(SlotDir(out, r), Marker{State: "failed", Host: host, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	if st := RunStatus(out, r); st.State != Failed || timeLeft(r, st, 10) != 500*time.Second {
		t.Errorf("failed run with a checkpoint: %+v, time left %v, want 500s", st, timeLeft(r, st, 10))
	}
	os.Remove(filepath.Join(SlotDir(out, r), "state.json"))

	// A checkpoint whose header cannot be read: the last logged step, as before.
	os.WriteFile(ckpt, []byte("not a checkpoint"), 0o644)
	if st := RunStatus(out, r); !st.Partial || st.Checkpoint != 0 || timeLeft(r, st, 10) != 100*time.Second {
		t.Errorf("unreadable checkpoint: %+v, time left %v", st, timeLeft(r, st, 10))
	}
	// No checkpoint: the run starts over.
	os.Remove(ckpt)
	st = RunStatus(out, r)
	if st.Partial || timeLeft(r, st, 10) != 1000*time.Second {
		t.Errorf("no checkpoint: %+v, time left %v, want all 10000 steps", st, timeLeft(r, st, 10))
	}
	// The table says so: its logs reach 9000, but it resumes from nothing
	// (a run directory from git or another machine).
	if s := FormatStatus([]Status{st}); !strings.Contains(s, "no checkpoint: starts again from step 0 (its logs reach step 9000)") {
		t.Errorf("status table without a checkpoint:\n%s", s)
	}
}

// A speed so slow that a run's time left exceeds what a time.Duration
// holds (1e6 steps at 1e-4 steps/s is 1e10 s, past 292 years; at 1e-300
// steps/s far past) saturates: the run is held by any limit, never
// predicted to end in negative time.
func TestScheduleSaturatesHugeTimes(t *testing.T) {
	const longest = time.Duration(math.MaxInt64)
	runs := []Run{{Name: "a", Method: "A", Steps: 1000000}, {Name: "b", Method: "B", Steps: 1000000}}
	for _, v := range []float64{1e-4, 1e-300, 5e-324} {
		sp := NewSpeeds(nil, "", nil, map[string]float64{"": v})
		got := Schedule("", runs, sp, 2, 10*time.Minute, false)
		for _, p := range got {
			if !p.Held || p.Need != longest || p.Start != 0 {
				t.Errorf("%g steps/s: %s %+v, want held with the longest duration", v, p.Run.Name, p)
			}
		}
		text := FormatSchedule(got, 10*time.Minute)
		if !strings.Contains(text, "0 runs start and finish within 10m, 2 held") || !strings.Contains(text, "needs more than 290 years") ||
			strings.Contains(text, "-") && strings.Contains(text, ":-") {
			t.Errorf("%g steps/s: schedule\n%s", v, text)
		}
		// Without a limit the runs are planned to end at the saturated time, in order.
		got = Schedule("", runs, sp, 1, 0, false)
		if got[0].End != longest || got[0].Held || !got[1].Unpredictable {
			t.Errorf("%g steps/s, no limit: %+v", v, got)
		}
	}
	if d := timeLeft(runs[0], Status{}, 1e-300); d != longest {
		t.Errorf("timeLeft at 1e-300 steps/s = %v", d)
	}
	if d := timeLeft(runs[0], Status{}, 1000); d != 1000*time.Second {
		t.Errorf("timeLeft at 1000 steps/s = %v", d)
	}
}

// A manipulation run has no normalized score but a success rate: the
// status table and the progress line show it in percent, from results.json
// once done and from history.json while running; a locomotion run keeps
// its normalized score.
func TestStatusShowsSuccessRates(t *testing.T) {
	out := t.TempDir()
	host, _ := os.Hostname()
	write := func(r Run, name, body string) {
		dir := filepath.Join(SlotDir(out, r), "run")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done, running, loco := Run{Index: 0, Name: "push-done", Steps: 100}, Run{Index: 1, Name: "push-running", Steps: 100},
		Run{Index: 2, Name: "hopper", Steps: 100}
	for _, r := range []Run{done, running, loco} {
		write(r, "config.json", "{}")
	}
	write(done, "results.json", `{"steps": 100, "steps_per_second": 5, "final_eval": {"normalized_score": null, "success_rate": 0.4}}`)
	write(running, "history.json", `[{"step": 50, "normalized_score": null, "success_rate": 0.7}]`)
	write(running, "metrics.jsonl", `{"step":40,"wall_seconds":4}`+"\n"+`{"step":60,"wall_seconds":6}`+"\n")
	if err := writeMarker(SlotDir(out, running), Marker{State: "running", Host: host, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	write(loco, "results.json", `{"steps": 100, "steps_per_second": 5, "final_eval": {"normalized_score": 84.75}}`)
	st := Statuses(out, []Run{done, running, loco})
	table := FormatStatus(st)
	lines := strings.Split(table, "\n")
	for i, want := range []string{"push-done done 100/100 40.0%", "push-running running 60/100 70.0%", "hopper done 100/100 84.8"} {
		if f := strings.Fields(lines[i+1]); len(f) < 5 || strings.Join(f[1:5], " ") != want {
			t.Errorf("row %d: %q, want %q:\n%s", i, lines[i+1], want, table)
		}
	}
	if line := progressLine(st[1]); !strings.Contains(line, "score 70.0%") {
		t.Errorf("progress line %q", line)
	}
	if !st[0].LastIsSuccess || st[2].LastIsSuccess {
		t.Errorf("success flags %v %v, want true false", st[0].LastIsSuccess, st[2].LastIsSuccess)
	}
}
