package dataset

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/koopq/koopq/internal/hdf5"
)

// Stats summarizes a list of numbers.
type Stats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"` // population standard deviation
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// StatsOf computes Stats over x (all zero for an empty x).
func StatsOf(x []float64) Stats {
	s := Stats{Count: len(x)}
	if len(x) == 0 {
		return s
	}
	s.Min, s.Max = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		s.Mean += v
		s.Min = math.Min(s.Min, v)
		s.Max = math.Max(s.Max, v)
	}
	s.Mean /= float64(len(x))
	for _, v := range x {
		s.Std += (v - s.Mean) * (v - s.Mean)
	}
	s.Std = math.Sqrt(s.Std / float64(len(x)))
	return s
}

// Info describes a dataset file: what `koopq dataset info` prints.
type Info struct {
	Path      string `json:"path"`
	Format    string `json:"format"` // "d4rl" or "minari"
	SizeBytes int64  `json:"size_bytes"`

	Rows       int         `json:"rows"`       // stored steps (D4RL rows; Minari total steps)
	Conversion Conversion  `json:"conversion"` // transitions kept/dropped under Options
	Options    ReadOptions `json:"options"`

	ObsDim              int  `json:"obs_dim"`
	ActDim              int  `json:"act_dim"`
	HasNextObservations bool `json:"has_next_observations"`
	HasTimeouts         bool `json:"has_timeouts"`

	Terminals int `json:"terminals"` // stored rows flagged terminal
	Timeouts  int `json:"timeouts"`  // stored rows flagged time-limit (truncation)

	Episodes         int   `json:"episodes"`          // including a trailing cut-off one
	TerminalEpisodes int   `json:"terminal_episodes"` // ended in a terminal state
	TimeoutEpisodes  int   `json:"timeout_episodes"`  // ended by the time limit
	Returns          Stats `json:"returns"`           // undiscounted episode returns over all stored steps
	Lengths          Stats `json:"lengths"`           // episode lengths in steps
	Rewards          Stats `json:"rewards"`           // per-step rewards of the stored rows

	// NormalizedReturns is Returns on the D4RL normalized scale
	// 100·(R − R_random)/(R_expert − R_random) for ScoreEnv. The dataset
	// package knows no reference returns; callers that do (koopq dataset
	// info, through eval.ReferenceFor) fill both fields. nil: unknown env.
	NormalizedReturns *Stats `json:"normalized_returns,omitempty"`
	ScoreEnv          string `json:"score_env,omitempty"`

	// Success summarizes infos/success (SuccessKey) for data that carry a
	// per-step success flag (koopq's manipulation datasets); nil for
	// others.
	Success *SuccessInfo `json:"success,omitempty"`

	Meta map[string]string `json:"meta"`
	Keys []Key             `json:"keys"`
}

// SuccessKey is the key of a per-step success flag [N]: nonzero where the
// task's success test held after the row's step (at next_observations).
const SuccessKey = "infos/success"

// SuccessInfo is how much of a dataset reached its task's goal.
type SuccessInfo struct {
	// Episodes and SuccessEpisodes count the episodes (as Info.Episodes
	// splits them) and those with the success flag set on any row.
	Episodes        int     `json:"episodes"`
	SuccessEpisodes int     `json:"success_episodes"`
	EpisodeFraction float64 `json:"episode_fraction"` // SuccessEpisodes / Episodes
	// Rows and SuccessRows count the stored rows and those flagged.
	Rows        int     `json:"rows"`
	SuccessRows int     `json:"success_rows"`
	RowFraction float64 `json:"row_fraction"` // SuccessRows / Rows
}

// successInfo summarizes the per-step success flags of the rows split into
// eps. success: [N].
func successInfo(success []float32, eps []Episode) *SuccessInfo {
	s := &SuccessInfo{Episodes: len(eps), Rows: len(success), SuccessRows: count1(success)}
	for _, e := range eps {
		if count1(success[e.Start:e.Start+e.Len]) > 0 {
			s.SuccessEpisodes++
		}
	}
	if s.Episodes > 0 {
		s.EpisodeFraction = float64(s.SuccessEpisodes) / float64(s.Episodes)
	}
	if s.Rows > 0 {
		s.RowFraction = float64(s.SuccessRows) / float64(s.Rows)
	}
	return s
}

// readSuccess reads SuccessKey from the D4RL file at path when it holds
// one with n rows (nil, nil when it holds none).
func readSuccess(path string, keys []Key, n int) ([]float32, error) {
	if _, ok := findKey(keys, SuccessKey); !ok {
		return nil, nil
	}
	f, err := openH5(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readVector(path, f, SuccessKey, n, true)
}

// Inspect reads the file at path (D4RL layout, or Minari: an HDF5 file with
// episode_<id> groups or a Minari dataset directory), converts it under
// opts exactly as ReadD4RL/ReadMinari would, and summarizes it. Any error
// those readers would return, Inspect returns too. Unless opts.InProcess is
// set, the whole inspection runs in a child process and only the summary
// comes back (see ReadOptions.InProcess).
func Inspect(path string, opts ReadOptions) (*Info, error) {
	if isolated(opts) {
		return inspectIsolated(path, opts)
	}
	return inspect(path, opts)
}

// inspect is Inspect in this process.
func inspect(path string, opts ReadOptions) (*Info, error) {
	format, err := detectFormat(path)
	if err != nil {
		return nil, err
	}
	in := &Info{Path: path, Format: format, Options: opts}
	var eps []Episode
	var rewards []float32
	switch format {
	case "d4rl":
		r, err := loadD4RL(path, opts)
		if err != nil {
			return nil, err
		}
		_, conv, err := r.QLearning(opts)
		if err != nil {
			return nil, err
		}
		in.Conversion = conv
		in.Rows, in.ObsDim, in.ActDim = r.N, r.ObsDim, r.ActDim
		in.HasNextObservations = r.NextObservations != nil
		in.HasTimeouts = r.Timeouts != nil
		in.Terminals, in.Timeouts = count1(r.Terminals), count1(r.Timeouts)
		in.Meta, in.Keys = r.Meta, r.Keys
		eps, rewards = r.EpisodesFor(opts), r.Rewards
		succ, err := readSuccess(path, r.Keys, r.N)
		if err != nil {
			return nil, err
		}
		if succ != nil {
			in.Success = successInfo(succ, eps)
		}
	case "minari":
		d, conv, ex, err := loadMinariInProcess(path, opts)
		if err != nil {
			return nil, err
		}
		in.Path = ex.h5
		in.Conversion = conv
		in.Rows, in.ObsDim, in.ActDim = conv.Rows, d.ObsDim, d.ActDim
		in.HasNextObservations, in.HasTimeouts = true, true
		in.Terminals, in.Timeouts = count1(d.Terminals), count1(d.Timeouts)
		in.Meta, in.Keys = d.Meta, ex.keys
		delete(in.Meta, "source")
		eps, rewards = ex.episodes, d.Rewards
	}
	if st, err := os.Stat(in.Path); err == nil {
		in.SizeBytes = st.Size()
	}
	in.Episodes = len(eps)
	rets := make([]float64, len(eps))
	lens := make([]float64, len(eps))
	for i, e := range eps {
		rets[i], lens[i] = e.Return, float64(e.Len)
		if e.Terminal {
			in.TerminalEpisodes++
		} else if e.Timeout {
			in.TimeoutEpisodes++
		}
	}
	in.Returns, in.Lengths = StatsOf(rets), StatsOf(lens)
	rw := make([]float64, 0, len(rewards))
	for _, r := range rewards {
		if !math.IsNaN(float64(r)) && !math.IsInf(float64(r), 0) {
			rw = append(rw, float64(r))
		}
	}
	in.Rewards = StatsOf(rw)
	return in, nil
}

func count1(x []float32) int {
	n := 0
	for _, v := range x {
		if v != 0 && !math.IsNaN(float64(v)) {
			n++
		}
	}
	return n
}

// Format tells what kind of dataset path holds, by its content: "d4rl" for
// a D4RL-layout HDF5 file (an observations key at the root), "minari" for a
// Minari dataset directory or a Minari HDF5 file (episode_<id> groups),
// whatever the file is called. Anything else is an error naming the keys
// the file has. Unless opts.InProcess is set, libhdf5 parses the file in a
// child process (see ReadOptions.InProcess).
func Format(path string, opts ReadOptions) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", statErr(path, err)
	}
	if st.IsDir() {
		return "minari", nil
	}
	if isolated(opts) {
		return formatIsolated(path, opts)
	}
	return detectFormat(path)
}

// Read reads the transitions of any dataset koopq takes, D4RL or Minari,
// told apart by Format (so a Minari file need not be named main_data.hdf5),
// with ReadD4RL or ReadMinari.
func Read(path string, opts ReadOptions) (*Dataset, error) {
	format, err := Format(path, opts)
	if err != nil {
		return nil, err
	}
	if format == "minari" {
		return ReadMinari(path, opts)
	}
	return ReadD4RL(path, opts)
}

// detectFormat tells a D4RL file from a Minari file or directory.
func detectFormat(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", statErr(path, err)
	}
	if st.IsDir() {
		return "minari", nil
	}
	f, err := openH5(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if f.Has("observations") {
		return "d4rl", nil
	}
	if eps, err := minariEpisodes(f); err == nil && len(eps) > 0 {
		return "minari", nil
	}
	names, _ := f.Members()
	if len(names) == 0 {
		return "", errf(path, "", "the file holds no datasets (want D4RL keys observations, actions, rewards, terminals, timeouts, or Minari episode_<id> groups)")
	}
	if len(names) > 10 {
		names = append(names[:10], "...")
	}
	return "", errf(path, "observations", "missing: neither D4RL (observations, actions, ...) nor Minari (episode_<id> groups); top-level keys: %s", strings.Join(names, ", "))
}

// humanBytes formats a byte count with binary units.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// WriteText prints in as a human-readable report.
func (in *Info) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("file         %s (%s, %s)\n", in.Path, humanBytes(in.SizeBytes), in.Format)
	p("dims         observations %d, actions %d\n", in.ObsDim, in.ActDim)
	c := in.Conversion
	mode := "d4rl qlearning_dataset (s' = observations[i+1])"
	switch {
	case in.Format == "minari":
		mode = "minari (s' = observations[t+1] within each episode)"
	case in.Options.UseNextObservations:
		mode = "stored next_observations"
	case in.Options.TerminateOnEnd:
		mode = "d4rl qlearning_dataset, terminate_on_end"
	}
	p("rows         %d stored\n", in.Rows)
	p("transitions  %d after %s", c.Kept, mode)
	var drops []string
	if c.DroppedTimeouts > 0 {
		drops = append(drops, fmt.Sprintf("%d time-limit steps", c.DroppedTimeouts))
	}
	if c.DroppedLast > 0 {
		drops = append(drops, "the last row")
	}
	if c.DroppedInvalid > 0 {
		drops = append(drops, fmt.Sprintf("%d with NaN/Inf", c.DroppedInvalid))
	}
	if len(drops) > 0 {
		p("; dropped %s", strings.Join(drops, ", "))
	}
	p("\n")
	to := fmt.Sprint(in.Timeouts)
	if !in.HasTimeouts {
		to = "absent"
	}
	p("flags        terminals %d, timeouts %s, next_observations %s\n", in.Terminals, to, map[bool]string{true: "stored", false: "absent"}[in.HasNextObservations])
	other := in.Episodes - in.TerminalEpisodes - in.TimeoutEpisodes
	p("episodes     %d (%d terminal, %d time-limit, %d cut by the end of the data)\n", in.Episodes, in.TerminalEpisodes, in.TimeoutEpisodes, other)
	st := func(name string, s Stats) {
		p("%-12s mean %.4g  std %.4g  min %.4g  max %.4g\n", name, s.Mean, s.Std, s.Min, s.Max)
	}
	st("returns", in.Returns)
	if ns := in.NormalizedReturns; ns != nil {
		p("%-12s mean %.4g  std %.4g  min %.4g  max %.4g  (normalized score, %s references)\n", "normalized", ns.Mean, ns.Std, ns.Min, ns.Max, in.ScoreEnv)
	}
	if sc := in.Success; sc != nil {
		p("%-12s %d of %d episodes (%.1f%%) reach the goal at some step; %d of %d rows (%.1f%%) are at the goal (%s)\n", "success",
			sc.SuccessEpisodes, sc.Episodes, 100*sc.EpisodeFraction, sc.SuccessRows, sc.Rows, 100*sc.RowFraction, SuccessKey)
	}
	st("lengths", in.Lengths)
	st("rewards", in.Rewards)
	if len(in.Meta) > 0 {
		p("metadata\n")
		keys := make([]string, 0, len(in.Meta))
		for k := range in.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := in.Meta[k]
			if len(v) > 100 {
				v = v[:97] + "..."
			}
			p("  %-22s %s\n", k, v)
		}
	}
	p("keys (%d)\n", len(in.Keys))
	shown := in.Keys
	if len(shown) > 40 {
		shown = shown[:30]
	}
	for _, k := range shown {
		layout := "contiguous"
		if k.Chunks != nil {
			layout = "chunks " + hdf5.ShapeString(k.Chunks)
		}
		if len(k.Filters) > 0 {
			layout += " " + strings.Join(k.Filters, "+")
		}
		p("  %-28s %-14s %-8s %s\n", k.Name, hdf5.ShapeString(k.Shape), k.Dtype, layout)
	}
	if len(shown) < len(in.Keys) {
		p("  ... %d more\n", len(in.Keys)-len(shown))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
