// Package report turns finished koopq run directories into the paper's
// tables and into aggregate statistics as "Deep RL at the Edge of the
// Statistical Precipice" recommends: interquartile mean (IQM) with stratified
// bootstrap confidence intervals, probability of improvement over a baseline,
// performance profiles, and learning curves with confidence bands. It reads
// only files (results.json, history.json and a sweep's sweep-run.json) and
// imports no training package, so it works on results copied from anywhere.
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/koopq/koopq/rundir"
)

// Point is one evaluation of a learning curve.
type Point struct {
	Step  int     `json:"step"`
	Score float64 `json:"normalized_score"`
}

// Result is one finished run.
type Result struct {
	// Dir is the train run directory (holding results.json).
	Dir     string `json:"dir"`
	Dataset string `json:"dataset"`
	Method  string `json:"method"`
	Seed    uint64 `json:"seed"`
	// Ablation is set for a sweep's ablation runs, Base is then the method
	// the ablation varies.
	Ablation bool   `json:"ablation,omitempty"`
	Base     string `json:"base,omitempty"`
	Augment  string `json:"augment"`
	Steps    int    `json:"steps"`
	// Score is the final evaluation's normalized score; for a run whose
	// env has no reference returns but a success test (manipulation), its
	// success rate in percent (Success).
	Score float64 `json:"score"`
	// Success is the final evaluation's success rate in percent for runs
	// whose env has a per-step success test (final_eval's successes); nil,
	// and omitted, for others.
	Success *float64 `json:"success_rate,omitempty"`
	// ScoredBySuccess marks a run whose Score is its success rate (its env
	// has a success test but no reference returns).
	ScoredBySuccess bool `json:"scored_by_success,omitempty"`
	// Order is the run's index in its sweep (−1 outside a sweep); it orders
	// rows and columns as the spec lists them.
	Order int `json:"-"`
	// Sweep ranks the run's sweep directory (the parent of its slot) among
	// the sweeps collected, in the order they were found: the directories
	// given to Collect in turn, each walked in lexical order. Indices of
	// different specs are not comparable, so rows and columns follow one
	// sweep's spec order before the next sweep's. 0 outside a sweep.
	Sweep   int     `json:"-"`
	History []Point `json:"-"`
	// Train holds the run's logged training statistics by column name
	// (metrics.jsonl's keys, e.g. q_data = mean Q(s̃, a) on the dataset's
	// actions, alpha_prime = CQL's Lagrange multiplier α′, cql_gap), one
	// point per logged step with Score holding the value; nil when the
	// run logged none. step and wall_seconds are not statistics and are
	// left out.
	Train map[string][]Point `json:"-"`
	// ModelBatches says, for a Koopman augmenter's run, whether the batch
	// logged at each step took the model branch (true) or the S4RL-N noise
	// branch (false); nil for other runs and where the branches cannot be
	// told (see modelBatches).
	ModelBatches map[int]bool `json:"-"`
	// Precision is the GEMM input precision the run trained in ("f32",
	// "bf16"; empty for runs whose results.json predates it), by its
	// segments: a run resumed in another precision (--allow-backend-change)
	// is "mixed" followed by its segments' precisions in order, e.g. "mixed
	// f32/bf16", never the last process's alone.
	Precision string `json:"precision,omitempty"`
	// Final is the final evaluation's normalized score: Score, unless
	// Options.Last made Score a mean of the last evaluations.
	Final float64 `json:"final"`
	// Segments are the processes that trained a finished run, in order:
	// one for a run never interrupted, one more per resume.
	Segments []Segment `json:"segments,omitempty"`
	// Settings are the run's training settings from its config (nil when
	// results.json or config.json holds none): Build refuses a cell whose
	// runs differ in one and notes settings that differ between datasets.
	Settings Settings `json:"-"`
	// InProgress marks a run that has not finished (no results.json yet):
	// Score is its latest evaluation and it enters only the learning
	// curves (CollectOptions.InProgress).
	InProgress bool `json:"in_progress,omitempty"`
	// Magnitude holds the run's augmentation size from results.json
	// (MagnitudeColumns' keys it has; nil for runs from before them).
	Magnitude map[string]float64 `json:"magnitude,omitempty"`
	// Inputs are the fingerprints of the data and Koopman model the run
	// read (results.json's inputs; an in-progress run's inputs.json): Build
	// refuses a cell or row whose runs read different ones. Zero for runs
	// from before koopq recorded them, which are not compared.
	Inputs RunInputs `json:"inputs,omitzero"`
	// Reevaluated is the score of the run's final policy re-evaluated on
	// fresh episodes (Options.Reevaluations; Score's scale), the paired
	// comparisons' second measure; nil when none was given for the run.
	Reevaluated *float64 `json:"reevaluated,omitempty"`
}

// RunInputs are the input fingerprints the report compares.
type RunInputs struct {
	// DatasetContent is the sha256 of the transitions as the run read
	// them (what runs compare: a file rewritten with the same transitions
	// is the same data); DatasetFile the sha256 of the file as stored.
	DatasetContent string `json:"dataset_content_sha256,omitempty"`
	DatasetFile    string `json:"dataset_sha256,omitempty"`
	// Model and ModelPath fingerprint the Koopman model the augmenter used
	// (empty for augmentations without one).
	Model     string `json:"koopman_model_sha256,omitempty"`
	ModelPath string `json:"koopman_model,omitempty"`
	// SharedModel says the model is a file the run was given (its config's
	// koopman_model), not the koopman.safetensors it trained in its own
	// directory: seeds of one protocol share one given model, while runs
	// that train their own have one per seed.
	SharedModel bool `json:"shared_model,omitempty"`
}

// runInputs is in (inputs.json, results.json's inputs) as the report
// compares it; configModel is the run config's koopman_model (empty: the
// run trained its own model, rundir.KoopmanFile).
func runInputs(in rundir.Inputs, configModel string) RunInputs {
	out := RunInputs{DatasetContent: in.Dataset.ContentSHA256, DatasetFile: in.Dataset.SHA256}
	if m := in.KoopmanModel; m != nil && m.SHA256 != "" {
		out.Model, out.ModelPath = m.SHA256, m.Path
		own := configModel == "" && filepath.Base(m.Path) == rundir.KoopmanFile
		out.SharedModel = !own
	}
	return out
}

// Segment is one process's share of a run's training: steps [From, To),
// its wall time and where it ran. Known is false for a segment whose
// results.json entry carries no provenance (written by a binary from
// before segments recorded it).
type Segment struct {
	From    int     `json:"from_step"`
	To      int     `json:"to_step"`
	Seconds float64 `json:"wall_seconds"`
	Known   bool    `json:"known"`
	Host    string  `json:"host,omitempty"`
	// Commit is the koopq git commit that ran it ("+dirty" when the tree
	// had uncommitted changes, "+unstamped" when the binary had no VCS stamp
	// and the commit is the HEAD of the checkout it ran in).
	Commit string `json:"commit,omitempty"`
	// GEMM is the backend, precision and kernel ISA, e.g. "openblas f32 Zen".
	GEMM string `json:"gemm,omitempty"`
	// Precision is the GEMM input precision alone ("f32", "bf16").
	Precision string `json:"precision,omitempty"`
	// Backend is the GEMM backend and the instruction set it dispatched
	// to, e.g. "onednn avx512_core_bf16", "openblas Zen": what differs
	// between machines at one precision.
	Backend string `json:"backend,omitempty"`
	// Unsegmented marks the one segment of a results.json written before
	// koopq recorded segments: its provenance is the last process's, and a
	// resumed run's earlier processes and wall time are unknown, so it has
	// no speed (Seconds 0).
	Unsegmented bool `json:"unsegmented,omitempty"`
	// Moved lists the inputs the process read at another path than the one
	// before it (results.json segments[].moved: same content, checked).
	Moved []string `json:"moved,omitempty"`
	// Restarted says which logs of an earlier process without a checkpoint
	// this one replaced by training from step 0 (segments[].restarted).
	Restarted string `json:"restarted,omitempty"`
}

// StepsPerSec is the segment's training speed (steps/s, evaluations
// included); NaN without a wall time.
func (s Segment) StepsPerSec() float64 {
	if s.Seconds <= 0 {
		return math.NaN()
	}
	return float64(s.To-s.From) / s.Seconds
}

// segmentOf describes p's process for steps [from, to); p nil: a process
// whose provenance was not recorded.
func segmentOf(p *rundir.Provenance, from, to int, seconds float64) Segment {
	s := Segment{From: from, To: to, Seconds: seconds, Known: p != nil}
	if p == nil {
		return s
	}
	s.Host, s.Commit = p.Hostname, p.Commit
	if len(s.Commit) > 7 {
		s.Commit = s.Commit[:7]
	}
	if p.Dirty {
		s.Commit += "+dirty"
	}
	if p.CommitSource == "checkout" {
		s.Commit += "+unstamped"
	}
	s.Precision = p.BLASPrecision
	s.GEMM = strings.Join(strings.Fields(strings.Join([]string{p.BLAS, p.BLASPrecision, p.BLASISA}, " ")), " ")
	s.Backend = strings.Join(strings.Fields(p.BLAS+" "+p.BLASISA), " ")
	return s
}

// CollectOptions says which runs Collect reads.
type CollectOptions struct {
	// InProgress also reads unfinished runs (a config.json and a
	// history.json with at least one evaluation, no results.json), for
	// learning curves of runs still training.
	InProgress bool
	// OnSkip, when set, hears of each run left out because it was trained
	// without a simulator (env "none"): it has offline diagnostics, no score.
	OnSkip func(dir string)
}

// envNone is the env of runs trained without a simulator (run.EnvNone):
// they have offline diagnostics (results.json "offline") and no score.
const envNone = "none"

// ErrOnlyOffline is wrapped by Collect's error when every run it found was
// trained without a simulator: they have no score for the tables, but
// CollectOffline and RankOffline rank them by their FQE estimates.
var ErrOnlyOffline = errors.New("only runs without a simulator")

// errNoSimulator marks a run trained without a simulator.
var errNoSimulator = errors.New("trained without a simulator (env none): no score")

// resultsFile is results.json as the report reads it: rundir's record with
// the config read as runConfig, the offline diagnostics as numbers by key
// and the learner's statistics left raw.
type resultsFile = rundir.Results[runConfig, json.RawMessage, json.RawMessage, map[string]float64]

// runConfig is the part of a run's config (config.json, results.json's
// config: run.TrainConfig, which report does not import) the report reads:
// its labels and its Settings.
type runConfig struct {
	Env, Data, Augment, KoopmanModel string
	Settings                         Settings
}

// UnmarshalJSON reads the labels and the Settings (settingsOf) of one
// config record.
func (c *runConfig) UnmarshalJSON(b []byte) error {
	var p struct {
		Env          string `json:"env"`
		Data         string `json:"data"`
		Augment      string `json:"augment"`
		KoopmanModel string `json:"koopman_model"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	s, err := settingsOf(b)
	if err != nil {
		return err
	}
	*c = runConfig{Env: p.Env, Data: p.Data, Augment: p.Augment, KoopmanModel: p.KoopmanModel, Settings: s}
	return nil
}

// Collect finds every results.json under the given directories (a sweep
// directory, run directories, or parents of either) and reads the runs.
// Labels come from a sweep's sweep-run.json beside the run directory when
// present; otherwise the dataset is the data file's base name and the method
// the augmentation, followed by " bf16" for runs whose GEMMs ran in bf16
// mixed precision (so both precisions of one method are compared side by
// side) and by e.g. " mixed f32/bf16" for runs resumed in another
// precision. Runs without a normalized score (an env with no
// reference returns) are an error: the tables would be meaningless.
func Collect(dirs ...string) ([]Result, error) { return CollectWith(CollectOptions{}, dirs...) }

// CollectWith is Collect with options.
func CollectWith(o CollectOptions, dirs ...string) ([]Result, error) {
	var out []Result
	seen := map[string]bool{}
	sweeps := map[string]int{}
	offline := 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("report: %s is not a directory", d)
		}
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && (e.Name() == rundir.CheckpointsDir || e.Name() == ".sweep") {
				return filepath.SkipDir
			}
			if e.IsDir() || (e.Name() != rundir.ResultsFile && !(o.InProgress && e.Name() == rundir.HistoryFile)) {
				return nil
			}
			abs, _ := filepath.Abs(filepath.Dir(p))
			if seen[abs] {
				return nil
			}
			read := readRun
			if e.Name() == rundir.HistoryFile {
				if _, err := os.Stat(filepath.Join(filepath.Dir(p), rundir.ResultsFile)); err == nil {
					return nil // finished: read through its results.json
				}
				read = readInProgress
			}
			seen[abs] = true
			r, err := read(filepath.Dir(p))
			if errors.Is(err, errNoSimulator) {
				offline++
				if o.OnSkip != nil {
					o.OnSkip(filepath.Dir(p))
				}
				return nil
			}
			if err != nil {
				return err
			}
			if r.Order >= 0 {
				root := filepath.Dir(filepath.Dir(abs))
				if _, ok := sweeps[root]; !ok {
					sweeps[root] = len(sweeps)
				}
				r.Sweep = sweeps[root]
			}
			out = append(out, r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	if len(out) == 0 && offline > 0 {
		return nil, fmt.Errorf("report: no run with a score under %s: the %d found were trained without a simulator (--env none) "+
			"and have only offline diagnostics (results.json \"offline\", history.json): %w", strings.Join(dirs, ", "), offline, ErrOnlyOffline)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("report: no results.json under %s (runs that have not finished have none)", strings.Join(dirs, ", "))
	}
	return out, nil
}

func readRun(dir string) (Result, error) {
	path := filepath.Join(dir, rundir.ResultsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	var rf resultsFile
	rf.Final.Normalized = rundir.Score(math.NaN()) // a final_eval without the key has no score
	if err := json.Unmarshal(b, &rf); err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	cfg := rf.Config
	if cfg.Env == envNone {
		return Result{}, errNoSimulator
	}
	r := Result{Dir: dir, Seed: rf.Seed, Steps: rf.Steps, Augment: rundir.MethodLabel(cfg.Augment), Order: -1,
		Settings: cfg.Settings, Inputs: runInputs(rf.Inputs, cfg.KoopmanModel)}
	success := math.NaN() // no success test
	if len(rf.Final.Successes) > 0 {
		success = float64(rf.Final.SuccessRate)
		sr := 100 * success
		r.Success = &sr
	}
	normalized := float64(rf.Final.Normalized)
	r.Score = scoreOn(normalized, success)
	r.ScoredBySuccess = math.IsNaN(normalized) && r.Success != nil // no reference returns: the success rate is the run's score
	r.Final = r.Score
	r.Magnitude = readMagnitude(b)
	for _, sg := range rf.Segments {
		seg := segmentOf(sg.Provenance, sg.FromStep, sg.ToStep, sg.WallSeconds)
		seg.Moved, seg.Restarted = sg.Moved, sg.Restarted
		r.Segments = append(r.Segments, seg)
	}
	if len(r.Segments) == 0 { // written before segments: one process, the top-level provenance
		p := &rf.Provenance
		if *p == (rundir.Provenance{}) {
			p = nil // written before provenance
		}
		sg := segmentOf(p, 0, rf.Steps, 0)
		sg.Unsegmented = true
		r.Segments = []Segment{sg}
	}
	if r.Precision = precisionOf(r.Segments); r.Precision == "" {
		r.Precision = rf.Provenance.BLASPrecision
	}
	if math.IsNaN(r.Score) && rf.Final.Episodes == 0 {
		return r, fmt.Errorf("%s: records no final evaluation (final_eval missing or of 0 episodes); koopq train writes it last", path)
	}
	if math.IsNaN(r.Score) {
		return r, fmt.Errorf("%s: no normalized score (env %q has no reference returns and no success test)", path, cfg.Env)
	}
	r.History = historyPoints(rf.History)
	if err := label(&r, dir, cfg.Data, cfg.Augment); err != nil {
		return r, err
	}
	return r, nil
}

// scoreOn puts an evaluation on Result.Score's scale: its normalized score
// when the env has reference returns, else its success rate (a fraction,
// NaN when the env has no success test) in percent; NaN for neither. Every
// score the report reads (final, history, re-evaluation) goes through it.
func scoreOn(normalized, success float64) float64 {
	if !math.IsNaN(normalized) {
		return normalized
	}
	return 100 * success
}

// historyPoints are the evaluations of h that have a score: a normalized
// score, or else a success rate (in percent, as Result.Score).
func historyPoints(h []rundir.HistoryPoint[json.RawMessage]) []Point {
	var out []Point
	for _, p := range h {
		success := math.NaN()
		if p.SuccessRate != nil {
			success = float64(*p.SuccessRate)
		}
		v := scoreOn(float64(p.Normalized), success)
		if !math.IsNaN(v) {
			out = append(out, Point{Step: p.Step, Score: v})
		}
	}
	return out
}

// precisionOf is the GEMM precision of a run trained by segs: the one
// precision its known segments share, or "mixed " and each precision in
// order of first use ("mixed f32/bf16"); "" when none is recorded.
func precisionOf(segs []Segment) string {
	var ps []string
	for _, s := range segs {
		if s.Known && s.Precision != "" && !slices.Contains(ps, s.Precision) {
			ps = append(ps, s.Precision)
		}
	}
	switch len(ps) {
	case 0:
		return ""
	case 1:
		return ps[0]
	}
	return "mixed " + strings.Join(ps, "/")
}

// readInProgress reads an unfinished run: config.json for its labels,
// history.json for its evaluations so far (Score: the latest), inputs.json
// (when there) for its input fingerprints.
func readInProgress(dir string) (Result, error) {
	var cfg struct {
		Env          string `json:"env"`
		Data         string `json:"data"`
		Augment      string `json:"augment"`
		KoopmanModel string `json:"koopman_model"`
		CQL          struct {
			Seed uint64 `json:"seed"`
		} `json:"cql"`
	}
	var hist []rundir.HistoryPoint[json.RawMessage]
	var settings Settings
	for name, v := range map[string]any{rundir.ConfigFile: &cfg, rundir.HistoryFile: &hist} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return Result{}, err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return Result{}, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		if name == rundir.ConfigFile {
			if settings, err = settingsOf(b); err != nil {
				return Result{}, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
			}
		}
	}
	if cfg.Env == envNone {
		return Result{}, errNoSimulator
	}
	r := Result{Dir: dir, Seed: cfg.CQL.Seed, Augment: rundir.MethodLabel(cfg.Augment), Score: math.NaN(), Order: -1, InProgress: true, Settings: settings}
	if b, err := os.ReadFile(filepath.Join(dir, rundir.InputsFile)); err == nil {
		var in rundir.Inputs
		if err := json.Unmarshal(b, &in); err != nil {
			return Result{}, fmt.Errorf("%s: %w", filepath.Join(dir, rundir.InputsFile), err)
		}
		r.Inputs = runInputs(in, cfg.KoopmanModel)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Result{}, err
	}
	if r.History = historyPoints(hist); len(r.History) > 0 {
		last := r.History[len(r.History)-1]
		r.Steps, r.Score = last.Step, last.Score
	}
	if len(r.History) == 0 {
		return r, fmt.Errorf("%s: no normalized evaluation yet (env %q)", filepath.Join(dir, rundir.HistoryFile), cfg.Env)
	}
	if err := label(&r, dir, cfg.Data, cfg.Augment); err != nil {
		return r, err
	}
	if r.Order >= 0 {
		var sr rundir.SweepRun
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), rundir.SweepRunFile)); err == nil && json.Unmarshal(b, &sr) == nil {
			r.Seed = sr.Seed
		}
	}
	return r, nil
}

// label names r's dataset and method from a sweep's sweep-run.json beside
// the run directory, else from the data file and augmentation (" bf16"
// appended for bf16 runs, " mixed f32/bf16" and the like for runs resumed
// in another precision), and reads the run's logged Q values.
func label(r *Result, dir, data, augment string) error {
	var sr rundir.SweepRun
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), rundir.SweepRunFile)); err == nil && json.Unmarshal(b, &sr) == nil && sr.Method != "" {
		r.Dataset, r.Method, r.Ablation, r.Base, r.Order = sr.Dataset, sr.Method, sr.Ablation, sr.Base, sr.Index
	} else {
		base := filepath.Base(data)
		r.Dataset = strings.TrimSuffix(base, filepath.Ext(base))
		r.Method = rundir.MethodLabel(augment)
		if r.Precision == "bf16" || strings.HasPrefix(r.Precision, "mixed ") {
			r.Method += " " + r.Precision
		}
	}
	var err error
	if r.Train, err = readTrain(dir); err != nil {
		return err
	}
	r.ModelBatches = modelBatches(r.Augment, r.Train)
	return nil
}

// Branch inference for runs logged before model_batch: the noise branch
// moves every state by N(0, σ²I_S), so its batch mean ‖s̃ − s‖ is σ·E[χ_S]
// up to a fraction of a percent (0.0094–0.0100 on hopper's 100 logged
// batches), while the model branch adds at least the autoencoder's
// reconstruction error (≥ 0.046 on the study's runs). Rows split at the
// widest gap between sorted shifts when it is at least branchGap and the
// lower cluster is tight (max/min at most noiseSpread); otherwise the
// branches are unknown.
const (
	branchGap   = 2.0
	noiseSpread = 1.2
)

// modelBatches tells, per logged step, which branch a Koopman augmenter's
// batch took: exactly from the model_batch column (koopq logs it since
// 2026-11-27), else inferred from shift_l2 as above (a run resumed by a
// koopq that logs it has it for its later rows only: the earlier ones are
// inferred). Runs of the augmenters that have no branches (none, gaussian,
// s4rl-adv), and runs neither logged nor separable, give nil.
func modelBatches(augment string, train map[string][]Point) map[int]bool {
	switch augment {
	case "", "cql", "none", "gaussian", "s4rl-adv":
		return nil
	}
	out := inferBranches(train[rundir.ShiftL2])
	for _, p := range train[rundir.ModelBatch] {
		if out == nil {
			out = map[int]bool{}
		}
		out[p.Step] = p.Score == 1
	}
	return out
}

// inferBranches splits logged batch shifts into the noise branch (false)
// and the model branch (true), or gives nil when they show no clear split.
func inferBranches(shift []Point) map[int]bool {
	var v []float64
	for _, p := range shift {
		if !(p.Score > 0) { // a zero or NaN row: nothing to classify by
			return nil
		}
		v = append(v, p.Score)
	}
	if len(v) < 2 {
		return nil
	}
	slices.Sort(v)
	cut, ratio := 0, 0.0 // v[:cut] are the noise branch
	for i := 1; i < len(v); i++ {
		if q := v[i] / v[i-1]; q > ratio {
			cut, ratio = i, q
		}
	}
	if ratio < branchGap || v[cut-1]/v[0] > noiseSpread {
		return nil
	}
	out := map[int]bool{}
	for _, p := range shift {
		out[p.Step] = p.Score > v[cut-1]
	}
	return out
}

// readTrain reads a run's logged training statistics from metrics.jsonl
// (the record) and metrics.csv (what a results directory keeps when only
// the small files were copied; it has the same rows, exact since
// 2026-12-02, with 8 significant digits before): a step the JSONL has
// comes from it, a step only the CSV has (an empty or truncated JSONL)
// from the CSV. Neither file (a run with --log-every 0) gives nil. A line
// that does not parse is an error naming the file and line: a truncated or
// edited log must not silently shorten a curve.
func readTrain(dir string) (map[string][]Point, error) {
	jp := filepath.Join(dir, rundir.MetricsJSONL)
	b, err := os.ReadFile(jp)
	if errors.Is(err, fs.ErrNotExist) {
		return readTrainCSV(filepath.Join(dir, rundir.MetricsCSV), nil)
	} else if err != nil {
		return nil, err
	}
	out := map[string][]Point{}
	steps := map[int]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", jp, i+1, err)
		}
		step, ok := row[rundir.Step].(float64)
		if !ok || step != math.Trunc(step) {
			return nil, fmt.Errorf("%s:%d: no integer \"step\"", jp, i+1)
		}
		steps[int(step)] = true
		for k, v := range row {
			if f, ok := v.(float64); ok && !notStatistic(k) {
				out[k] = append(out[k], Point{Step: int(step), Score: f})
			}
		}
	}
	fromCSV, err := readTrainCSV(filepath.Join(dir, rundir.MetricsCSV), steps)
	if err != nil {
		return nil, err
	}
	for k, pts := range fromCSV {
		out[k] = append(out[k], pts...)
	}
	return sortedByStep(out), nil
}

// readTrainCSV reads metrics.csv for readTrain, leaving out the rows of
// the steps in skip (those metrics.jsonl has); an empty field is a column
// that row did not log. An unterminated last line while metrics.jsonl is
// there (skip non-nil) is a write in progress, not yet a row, and is left
// out.
func readTrainCSV(path string, skip map[int]bool) (map[string][]Point, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	if skip != nil && len(b) > 0 && b[len(b)-1] != '\n' {
		b = b[:bytes.LastIndexByte(b, '\n')+1]
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	head, stepCol := rows[0], -1
	for j, h := range head {
		if h == rundir.Step {
			stepCol = j
		}
	}
	if stepCol < 0 {
		return nil, fmt.Errorf("%s: no \"step\" column in %q", path, strings.Join(head, ","))
	}
	out := map[string][]Point{}
	for i, row := range rows[1:] {
		step, err := strconv.Atoi(row[stepCol])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: step: %w", path, i+2, err)
		}
		if skip[step] {
			continue
		}
		for j, v := range row {
			if j == stepCol || v == "" || notStatistic(head[j]) {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", path, i+2, head[j], err)
			}
			out[head[j]] = append(out[head[j]], Point{Step: step, Score: x})
		}
	}
	return sortedByStep(out), nil
}

// notStatistic names the logged columns that are bookkeeping, not training
// statistics (rundir.Step, rundir.WallSeconds).
func notStatistic(col string) bool { return !rundir.IsStatistic(col) }

// sortedByStep orders every series of m by step; an empty m is nil.
func sortedByStep(m map[string][]Point) map[string][]Point {
	if len(m) == 0 {
		return nil
	}
	for _, pts := range m {
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].Step < pts[j].Step })
	}
	return m
}

// order returns the distinct values of key over rs, in the order of their
// first appearance in the sweeps' specs (sweep rank, then index within the
// sweep), then by name for runs outside a sweep.
func order(rs []Result, key func(Result) string) []string {
	type pos struct{ sweep, index int }
	before := func(a, b pos) bool { return a.sweep < b.sweep || a.sweep == b.sweep && a.index < b.index }
	first := map[string]pos{}
	for _, r := range rs {
		k := key(r)
		p := pos{r.Sweep, r.Order}
		if r.Order < 0 {
			p = pos{math.MaxInt32, math.MaxInt32}
		}
		if v, ok := first[k]; !ok || before(p, v) {
			first[k] = p
		}
	}
	out := make([]string, 0, len(first))
	for k := range first {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := first[out[i]], first[out[j]]; a != b {
			return before(a, b)
		}
		return out[i] < out[j]
	})
	return out
}
