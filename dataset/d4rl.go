package dataset

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/koopq/koopq/internal/hdf5"
)

// ReadOptions control how a stored file becomes a Dataset of transitions.
// The zero value reproduces d4rl.qlearning_dataset(env) with its defaults.
type ReadOptions struct {
	// TerminateOnEnd is d4rl's terminate_on_end: keep the time-limit step of
	// each episode (whose s' is then the next episode's first state, exactly
	// as in d4rl) instead of dropping it.
	TerminateOnEnd bool `json:"terminate_on_end"`
	// UseNextObservations takes s' from the stored next_observations key
	// instead of observations[i+1]. Every row then is a true transition, so
	// time-limit steps and the last row are kept (TerminateOnEnd is moot),
	// and timeouts are passed through.
	UseNextObservations bool `json:"use_next_observations"`
	// DropInvalid drops transitions that touch a NaN/Inf value (in s, a, r,
	// s' or the terminal flag) instead of failing; Conversion.DroppedInvalid
	// and Meta["dropped_invalid"] say how many.
	DropInvalid bool `json:"drop_invalid"`
	// MaxEpisodeSteps is d4rl's env._max_episode_steps fallback, used only
	// when a file has no timeouts key (old D4RL v0 files): step
	// MaxEpisodeSteps-1 of each episode counts as a time-limit step. 0 with
	// no timeouts key is an error in d4rl mode.
	MaxEpisodeSteps int `json:"max_episode_steps"`
	// Infos also loads infos/* (qpos, qvel, action_log_probs, ...) into
	// Raw.Infos. The q-learning Dataset does not carry them.
	Infos bool `json:"infos"`
	// InProcess parses the file with libhdf5 inside this process. Use it
	// only for files you trust (ones koopq or h5py wrote on this machine):
	// libhdf5 1.10 crashes (SIGSEGV) or hangs on some corrupt or malicious
	// HDF5 files, and in-process that kills the whole program. By default
	// (false) the read runs in a child process (a fresh copy of the running
	// binary) that streams the arrays back, so such a file becomes an error
	// ("libhdf5 crashed while parsing the file ...; refused"). That costs
	// one process start (~0.1-0.3 s) plus a copy of the arrays through a
	// pipe.
	InProcess bool `json:"in_process,omitempty"`
	// Timeout bounds the child-process read: past it the child is killed
	// and the read fails (libhdf5 can loop forever on a damaged file). 0
	// means 1 minute plus 1 s per 2 MiB of file; negative means no limit.
	// Ignored with InProcess. The flag --read-timeout sets it; it does not
	// change what is read, so a run's config.json does not record it.
	Timeout time.Duration `json:"-"`
}

// Array is a stored numeric array converted to float32.
type Array struct {
	Data  []float32 // row-major
	Shape []int     // as stored
}

// Key describes one dataset stored in a file.
type Key struct {
	Name    string   `json:"name"`              // path in the file, e.g. "infos/qpos"
	Shape   []int    `json:"shape"`             // stored shape; [] for a scalar
	Dtype   string   `json:"dtype"`             // numpy-style: float32, bool, uint8, str, ...
	Chunks  []int    `json:"chunks,omitempty"`  // chunk shape, nil when contiguous
	Filters []string `json:"filters,omitempty"` // e.g. ["shuffle", "gzip"]
}

// Raw is a D4RL-layout file as stored: N rows, one per environment step in
// episode order, before the q-learning conversion.
type Raw struct {
	Path   string
	N      int // rows
	ObsDim int
	ActDim int

	Observations     []float32 // [N, ObsDim]
	Actions          []float32 // [N, ActDim]
	Rewards          []float32 // [N]
	NextObservations []float32 // [N, ObsDim]; nil when the file has no next_observations
	Terminals        []float32 // [N] 1 where the step ended in a true terminal state (stored bool, integer or float; nonzero = 1, NaN stays NaN)
	Timeouts         []float32 // [N] 1 where the time limit cut the episode; nil when the file has no timeouts

	Infos map[string]Array  // infos/* (only with ReadOptions.Infos), keyed without the "infos/" prefix
	Meta  map[string]string // metadata/* scalars and root attributes, keyed without the "metadata/" prefix
	Keys  []Key             // every dataset in the file
}

// Conversion counts what the q-learning conversion kept and dropped.
type Conversion struct {
	Rows            int `json:"rows"`             // stored rows N
	Kept            int `json:"kept"`             // transitions in the Dataset
	DroppedTimeouts int `json:"dropped_timeouts"` // time-limit steps dropped (d4rl mode, TerminateOnEnd off)
	DroppedLast     int `json:"dropped_last"`     // the last row, which has no s' in d4rl mode (0 or 1)
	DroppedInvalid  int `json:"dropped_invalid"`  // transitions dropped for NaN/Inf (DropInvalid)
}

// errf formats an error that names the file and the key.
func errf(path, key, format string, a ...any) error {
	if key == "" {
		return fmt.Errorf("dataset %s: %s", path, fmt.Sprintf(format, a...))
	}
	return fmt.Errorf("dataset %s: key %q: %s", path, key, fmt.Sprintf(format, a...))
}

// wrapH5 rewrites an error from internal/hdf5 so that the file is named once.
func wrapH5(path, key string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "hdf5: ")
	msg = strings.TrimPrefix(msg, path+": ")
	if key != "" {
		msg = strings.TrimPrefix(msg, "/"+key+" ")
		msg = strings.TrimPrefix(msg, "/"+key+": ")
	}
	return errf(path, key, "%s", msg)
}

// readErr rewrites an error from reading key (rows of width values) so
// that a finite value beyond float32's range names its row instead of
// surfacing later as "NaN or Inf".
func readErr(path, key string, width int, err error) error {
	var re *hdf5.RangeError
	if errors.As(err, &re) {
		return errf(path, key, "row %d holds %g (stored as %s), out of float32 range (|x| ≤ 3.4e38): koopq reads data as float32",
			re.Index/max(width, 1), re.Value, re.Stored)
	}
	return wrapH5(path, key, err)
}

// openH5 opens path read-only with errors that name the file.
func openH5(path string) (*hdf5.File, error) {
	if err := precheckH5(path); err != nil {
		return nil, err
	}
	f, err := hdf5.Open(path)
	if err != nil {
		if !hdf5.Available { // not the file's fault
			return nil, fmt.Errorf("dataset %s: %w", path, err)
		}
		msg := err.Error()
		if strings.Contains(msg, "no HDF5 signature") {
			return nil, fmt.Errorf("dataset %s: not an HDF5 file", path)
		}
		if strings.Contains(msg, "unable to lock file") {
			return nil, fmt.Errorf("dataset %s: locked by another process (libhdf5 file locking: a program such as h5py has it open for writing); "+
				"close it there, or set HDF5_USE_FILE_LOCKING=FALSE to read it anyway", path)
		}
		return nil, fmt.Errorf("dataset %s: cannot open as HDF5 (truncated or corrupted?): %s", path,
			strings.TrimPrefix(strings.TrimPrefix(msg, "hdf5: open "+path), ": "))
	}
	return f, nil
}

// listKeys stats every dataset in f.
func listKeys(path string, f *hdf5.File) ([]Key, error) {
	names, err := f.Walk()
	if err != nil {
		return nil, wrapH5(path, "", err)
	}
	keys := make([]Key, 0, len(names))
	for _, n := range names {
		in, err := f.Stat(n)
		if err != nil {
			return nil, wrapH5(path, n, err)
		}
		keys = append(keys, Key{Name: n, Shape: in.Shape, Dtype: in.Type.String(), Chunks: in.Chunk, Filters: in.Filters})
	}
	return keys, nil
}

func findKey(keys []Key, name string) (Key, bool) {
	for _, k := range keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// readMatrix reads key as float32 and checks it is [rows, width>0]; rows < 0
// means any. With vector, shape (rows,) is accepted as width 1.
func readMatrix(path string, f *hdf5.File, key string, rows int, vector ...bool) ([]float32, int, int, error) {
	if f.Kind(key) != hdf5.KindDataset {
		if f.Has(key) {
			return nil, 0, 0, errf(path, key, "is a group, want an array of shape (N, dim)")
		}
		return nil, 0, 0, errf(path, key, "missing")
	}
	in, err := f.Stat(key)
	if err != nil {
		return nil, 0, 0, wrapH5(path, key, err)
	}
	if len(vector) > 0 && vector[0] && len(in.Shape) == 1 {
		in.Shape = append(in.Shape, 1)
	}
	if len(in.Shape) != 2 {
		return nil, 0, 0, errf(path, key, "has rank %d (shape %s), want 2: (N, dim)", len(in.Shape), hdf5.ShapeString(in.Shape))
	}
	if in.Shape[1] < 1 {
		return nil, 0, 0, errf(path, key, "has shape %s: zero-width rows", hdf5.ShapeString(in.Shape))
	}
	if rows >= 0 && in.Shape[0] != rows {
		return nil, 0, 0, errf(path, key, "has %d rows, want %d like observations", in.Shape[0], rows)
	}
	if in.Type.Class != hdf5.ClassFloat && in.Type.Class != hdf5.ClassInteger {
		return nil, 0, 0, errf(path, key, "is stored as %s, want a numeric array", in.Type)
	}
	x, shape, err := f.ReadFloat32(key)
	if err != nil {
		return nil, 0, 0, readErr(path, key, in.Shape[1], err)
	}
	if len(x) != in.Shape[0]*in.Shape[1] || shapeLen(shape) != len(x) {
		return nil, 0, 0, errf(path, key, "changed shape while reading")
	}
	return x, in.Shape[0], in.Shape[1], nil
}

// readVector reads key as float32 of shape (rows,) or (rows, 1). Booleans
// and integers become 0/1 or their value; flag=true maps nonzero to 1 (NaN
// stays NaN so that validation can see it).
func readVector(path string, f *hdf5.File, key string, rows int, flag bool) ([]float32, error) {
	if f.Kind(key) != hdf5.KindDataset {
		if f.Has(key) {
			return nil, errf(path, key, "is a group, want an array of shape (N,)")
		}
		return nil, errf(path, key, "missing")
	}
	in, err := f.Stat(key)
	if err != nil {
		return nil, wrapH5(path, key, err)
	}
	if !(len(in.Shape) == 1 || (len(in.Shape) == 2 && in.Shape[1] == 1)) {
		return nil, errf(path, key, "has shape %s, want (N,) or (N, 1)", hdf5.ShapeString(in.Shape))
	}
	if in.Shape[0] != rows {
		return nil, errf(path, key, "has %d rows, want %d like observations", in.Shape[0], rows)
	}
	var out []float32
	switch {
	case in.Type.Class == hdf5.ClassEnum && in.Type.Bool:
		b, _, err := f.ReadBool(key)
		if err != nil {
			return nil, wrapH5(path, key, err)
		}
		out = make([]float32, len(b))
		for i, v := range b {
			if v {
				out[i] = 1
			}
		}
	case in.Type.Class == hdf5.ClassFloat || in.Type.Class == hdf5.ClassInteger:
		out, _, err = f.ReadFloat32(key)
		if err != nil {
			return nil, readErr(path, key, 1, err)
		}
		if flag {
			for i, v := range out {
				if v != 0 && !math.IsNaN(float64(v)) {
					out[i] = 1
				}
			}
		}
	default:
		return nil, errf(path, key, "is stored as %s, want bool or a number", in.Type)
	}
	if len(out) != rows {
		return nil, errf(path, key, "changed shape while reading")
	}
	return out, nil
}

// readMeta collects scalar metadata/* datasets and root attributes.
func readMeta(path string, f *hdf5.File, keys []Key, prefix string) map[string]string {
	meta := map[string]string{}
	for _, k := range keys {
		if !strings.HasPrefix(k.Name, prefix) {
			continue
		}
		if n := shapeLen(k.Shape); n != 1 {
			continue // policy weights and other arrays: listed in Keys only
		}
		v, _, err := f.ReadAny(k.Name)
		if err != nil {
			continue
		}
		meta[strings.TrimPrefix(k.Name, prefix)] = formatValue(v)
	}
	if names, err := f.AttrNames(""); err == nil {
		for _, a := range names {
			v, shape, err := f.ReadAttr("", a)
			if err != nil || shapeLen(shape) > 16 {
				continue
			}
			if _, dup := meta[a]; !dup {
				meta[a] = formatValue(v)
			}
		}
	}
	return meta
}

func shapeLen(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// formatValue renders a value from hdf5.ReadAny as text.
func formatValue(v any) string {
	var parts []string
	switch x := v.(type) {
	case []string:
		parts = x
	case []float64:
		for _, f := range x {
			parts = append(parts, strconv.FormatFloat(f, 'g', -1, 64))
		}
	case []int64:
		for _, i := range x {
			parts = append(parts, strconv.FormatInt(i, 10))
		}
	case []bool:
		for _, b := range x {
			parts = append(parts, strconv.FormatBool(b))
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// LoadD4RL reads a D4RL-layout HDF5 file (observations, actions, rewards,
// terminals, timeouts, optional next_observations, infos/*, metadata/*)
// without converting it. It checks that required keys exist, ranks are
// right and all row counts agree; finiteness is checked by QLearning.
// Every error names the file and the key. Unless opts.InProcess is set,
// libhdf5 parses the file in a child process (see ReadOptions.InProcess).
func LoadD4RL(path string, opts ReadOptions) (*Raw, error) {
	if isolated(opts) {
		return loadD4RLIsolated(path, opts)
	}
	return loadD4RL(path, opts)
}

// loadD4RL is LoadD4RL in this process.
func loadD4RL(path string, opts ReadOptions) (*Raw, error) {
	f, err := openH5(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	keys, err := listKeys(path, f)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errf(path, "", "the file holds no datasets (want observations, actions, rewards, terminals, timeouts)")
	}
	r := &Raw{Path: path, Keys: keys}
	if r.Observations, r.N, r.ObsDim, err = readMatrix(path, f, "observations", -1); err != nil {
		return nil, err
	}
	if r.N == 0 {
		return nil, errf(path, "observations", "has 0 rows: no transitions")
	}
	if r.Actions, _, r.ActDim, err = readMatrix(path, f, "actions", r.N); err != nil {
		return nil, err
	}
	if r.Rewards, err = readVector(path, f, "rewards", r.N, false); err != nil {
		return nil, err
	}
	if r.Terminals, err = readVector(path, f, "terminals", r.N, true); err != nil {
		return nil, err
	}
	if f.Has("timeouts") {
		if r.Timeouts, err = readVector(path, f, "timeouts", r.N, true); err != nil {
			return nil, err
		}
	}
	if f.Has("next_observations") {
		var w int
		if r.NextObservations, _, w, err = readMatrix(path, f, "next_observations", r.N); err != nil {
			return nil, err
		}
		if w != r.ObsDim {
			return nil, errf(path, "next_observations", "has width %d, observations %d", w, r.ObsDim)
		}
	}
	if opts.Infos {
		r.Infos = map[string]Array{}
		for _, k := range keys {
			if !strings.HasPrefix(k.Name, "infos/") {
				continue
			}
			name := strings.TrimPrefix(k.Name, "infos/")
			required := name == "qpos" || name == "qvel" || name == "action_log_probs"
			if len(k.Shape) == 0 || k.Shape[0] != r.N {
				if required {
					return nil, errf(path, k.Name, "has shape %s, want %d rows like observations", hdf5.ShapeString(k.Shape), r.N)
				}
				continue
			}
			x, shape, err := f.ReadFloat32(k.Name)
			if err != nil {
				if required {
					return nil, wrapH5(path, k.Name, err)
				}
				continue
			}
			r.Infos[name] = Array{Data: x, Shape: shape}
		}
	}
	r.Meta = readMeta(path, f, keys, "metadata/")
	return r, nil
}

func finite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// invalidKey returns the first key whose values used by the transition
// (row i, successor row from next/j) are not finite, or "".
func (r *Raw) invalidKey(i int, next []float32, j int) string {
	o, a := r.ObsDim, r.ActDim
	switch {
	case !finite(r.Observations[i*o : (i+1)*o]):
		return "observations"
	case !finite(r.Actions[i*a : (i+1)*a]):
		return "actions"
	case !finite(r.Rewards[i : i+1]):
		return "rewards"
	case !finite(next[j*o : (j+1)*o]):
		if &next[0] == &r.Observations[0] {
			return "observations"
		}
		return "next_observations"
	case math.IsNaN(float64(r.Terminals[i])):
		return "terminals"
	case r.Timeouts != nil && math.IsNaN(float64(r.Timeouts[i])):
		return "timeouts"
	}
	return ""
}

// timeLimitRows marks the rows d4rl's qlearning_dataset treats as
// time-limit steps ([N], nonzero = time limit): the stored timeouts, or,
// for files without them, d4rl's episode_step fallback with
// opts.MaxEpisodeSteps (nil when neither is there). The fallback counts
// steps as d4rl does, quirk included: after a terminal (and, with
// TerminateOnEnd, after a kept time-limit step) the count restarts at 1,
// after a dropped time-limit step at 0.
func (r *Raw) timeLimitRows(opts ReadOptions) []float32 {
	if r.Timeouts != nil || opts.MaxEpisodeSteps <= 0 {
		return r.Timeouts
	}
	rows := make([]float32, r.N)
	step := 0
	for i := range rows {
		final := step == opts.MaxEpisodeSteps-1
		if final {
			rows[i] = 1
		}
		if final && !opts.TerminateOnEnd {
			step = 0
			continue
		}
		if final || (r.Terminals[i] != 0 && !math.IsNaN(float64(r.Terminals[i]))) {
			step = 0
		}
		step++
	}
	return rows
}

// QLearning converts the stored rows into transitions.
//
// Default (d4rl mode) is identical to d4rl.qlearning_dataset: for
// i = 0..N-2, s' = observations[i+1], done = terminals[i]; a row with
// timeouts[i] set is dropped (kept with TerminateOnEnd) and the last row is
// dropped. Files without timeouts use d4rl's episode_step fallback with
// MaxEpisodeSteps. In the returned Dataset, Timeouts marks the last kept
// transition of an episode whose time-limit step was dropped, so episode
// boundaries survive the conversion (d4rl returns no timeouts at all).
//
// With UseNextObservations, every row i = 0..N-1 becomes (s_i, a_i, r_i,
// next_observations[i], terminals[i], timeouts[i]).
//
// Transitions touching NaN/Inf are an error naming the key and row, or are
// dropped and counted with DropInvalid.
func (r *Raw) QLearning(opts ReadOptions) (*Dataset, Conversion, error) {
	conv := Conversion{Rows: r.N}
	o, a := r.ObsDim, r.ActDim
	d := &Dataset{ObsDim: o, ActDim: a, Meta: map[string]string{}}
	for k, v := range r.Meta {
		d.Meta[k] = v
	}
	d.Meta["source"] = r.Path
	next, shift := r.Observations, 1
	last := r.N - 1
	if opts.UseNextObservations {
		if r.NextObservations == nil {
			return nil, conv, errf(r.Path, "next_observations", "missing, but --use-next-observations (ReadOptions.UseNextObservations) was asked for")
		}
		next, shift, last = r.NextObservations, 0, r.N
	} else {
		if r.Timeouts == nil && opts.MaxEpisodeSteps <= 0 {
			return nil, conv, errf(r.Path, "timeouts", "missing; d4rl then needs the episode time limit: give --max-episode-steps N (ReadOptions.MaxEpisodeSteps; 1000 for the MuJoCo locomotion tasks) or --use-next-observations")
		}
		conv.DroppedLast = 1
	}
	// Preallocate for the common case of few drops.
	d.Observations = make([]float32, 0, last*o)
	d.NextObservations = make([]float32, 0, last*o)
	d.Actions = make([]float32, 0, last*a)
	d.Rewards = make([]float32, 0, last)
	d.Terminals = make([]float32, 0, last)
	d.Timeouts = make([]float32, 0, last)

	var finals []float32 // d4rl mode: the time-limit rows
	if !opts.UseNextObservations {
		finals = r.timeLimitRows(opts)
	}
	// An episode that ends at a dropped row (a time-limit step, or an
	// invalid row) has its end marked on its last kept transition, so that
	// episode boundaries survive the conversion. ep counts the episodes
	// ended so far; keptEp is the episode of the last kept transition.
	ep, keptEp := 0, -1
	endAtDropped := func() {
		if k := len(d.Timeouts) - 1; keptEp == ep && d.Terminals[k] == 0 {
			d.Timeouts[k] = 1
		}
		ep++
	}
	for i := 0; i < last; i++ {
		done := r.Terminals[i] != 0 && !math.IsNaN(float64(r.Terminals[i]))
		timeout := float32(0)
		if !opts.UseNextObservations {
			if math.IsNaN(float64(finals[i])) { // a stored timeout (the fallback makes none)
				if !opts.DropInvalid {
					return nil, conv, errf(r.Path, "timeouts", "row %d holds NaN or Inf (transition %d); use --drop-invalid (ReadOptions.DropInvalid) to drop such transitions", i, i)
				}
				conv.DroppedInvalid++
				endAtDropped() // as SplitEpisodes reads it: nonzero ends the episode
				continue
			}
			final := finals[i] != 0
			if !opts.TerminateOnEnd && final {
				conv.DroppedTimeouts++
				endAtDropped()
				continue
			}
			if final {
				timeout = 1
			}
		} else if r.Timeouts != nil && r.Timeouts[i] != 0 {
			timeout = 1
		}
		if key := r.invalidKey(i, next, i+shift); key != "" {
			if !opts.DropInvalid {
				row := i
				if key == "observations" && finite(r.Observations[i*o:(i+1)*o]) {
					row = i + shift
				}
				return nil, conv, errf(r.Path, key, "row %d holds NaN or Inf (transition %d); use --drop-invalid (ReadOptions.DropInvalid) to drop such transitions", row, i)
			}
			conv.DroppedInvalid++
			if done || timeout != 0 {
				endAtDropped()
			}
			continue
		}
		d.Observations = append(d.Observations, r.Observations[i*o:(i+1)*o]...)
		d.NextObservations = append(d.NextObservations, next[(i+shift)*o:(i+shift+1)*o]...)
		d.Actions = append(d.Actions, r.Actions[i*a:(i+1)*a]...)
		d.Rewards = append(d.Rewards, r.Rewards[i])
		if done {
			d.Terminals = append(d.Terminals, 1)
		} else {
			d.Terminals = append(d.Terminals, 0)
		}
		d.Timeouts = append(d.Timeouts, timeout)
		keptEp = ep
		if done || timeout != 0 {
			ep++
		}
	}
	conv.Kept = d.Len()
	if conv.DroppedInvalid > 0 {
		d.Meta["dropped_invalid"] = strconv.Itoa(conv.DroppedInvalid)
	}
	if conv.Kept == 0 {
		return nil, conv, errf(r.Path, "", "no transitions left after conversion (%d rows, %d time-limit steps dropped, %d invalid dropped)",
			r.N, conv.DroppedTimeouts, conv.DroppedInvalid)
	}
	return d, conv, nil
}

// ReadD4RL reads a D4RL-layout HDF5 file and converts it to transitions
// with the conventions of d4rl.qlearning_dataset (see Raw.QLearning and
// ReadOptions). Meta holds metadata/*, root attributes, "source" (the path)
// and, when transitions were dropped as invalid, "dropped_invalid".
func ReadD4RL(path string, opts ReadOptions) (*Dataset, error) {
	r, err := LoadD4RL(path, opts)
	if err != nil {
		return nil, err
	}
	d, _, err := r.QLearning(opts)
	return d, err
}
