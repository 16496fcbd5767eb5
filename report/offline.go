package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/rundir"
)

// FQEFile is the name of the off-policy estimate `koopq fqe --policy RUN
// --json RUN/fqe.json` leaves in a run directory; the offline ranking reads
// it.
const FQEFile = "fqe.json"

// OfflineRun is a finished run trained without a simulator (env none): it
// has offline diagnostics on held-out episodes and, when `koopq fqe` was
// run on it, an off-policy estimate of its value.
type OfflineRun struct {
	Dir     string `json:"dir"`
	Dataset string `json:"dataset"`
	Method  string `json:"method"`
	Seed    uint64 `json:"seed"`
	Steps   int    `json:"steps"`
	// Diagnostics are results.json's final offline diagnostics (q_data,
	// td_error, log_likelihood, action_mse on the held-out episodes).
	Diagnostics map[string]float64 `json:"diagnostics"`
	// FQE is the run's fqe.json estimate, nil when it has none.
	FQE *FQEEstimate `json:"fqe,omitempty"`
}

// FQEEstimate is the part of a run's fqe.json the ranking uses.
type FQEEstimate struct {
	// Value is the estimated discounted return from the data's initial
	// states; Low/High its bootstrap interval over episodes, FitLow/FitHigh
	// the 95% interval over independent fits (null for one fit).
	Value   float64  `json:"value"`
	Low     *float64 `json:"low"`
	High    *float64 `json:"high"`
	FitLow  *float64 `json:"fit_low"`
	FitHigh *float64 `json:"fit_high"`
	Fits    int      `json:"fits"`
	Gamma   float64  `json:"gamma"`
	Steps   int      `json:"steps"`
	// Normalized is the D4RL-scale rescaling of Value (null without
	// reference returns): for reading the scale, not for ranking.
	Normalized *float64 `json:"normalized"`
	// DataContentSHA256 fingerprints the data the estimate was fitted on.
	DataContentSHA256 string `json:"data_content_sha256"`
}

// OfflineRanking orders the offline runs of each dataset by their FQE
// value, best first; runs without fqe.json follow, unranked.
type OfflineRanking struct {
	Datasets []string                `json:"datasets"`
	Runs     map[string][]OfflineRun `json:"runs"` // by dataset, in rank order
}

// fqeFile is the part of `koopq fqe --json` output read here.
type fqeFile struct {
	PolicySHA256      string   `json:"policy_sha256"`
	DataContentSHA256 string   `json:"data_content_sha256"`
	Normalized        *float64 `json:"normalized"`
	Result            struct {
		Value   float64  `json:"value"`
		Low     *float64 `json:"low"`
		High    *float64 `json:"high"`
		FitLow  *float64 `json:"fit_low"`
		FitHigh *float64 `json:"fit_high"`
		Config  struct {
			Gamma float64 `json:"gamma"`
			Steps int     `json:"steps"`
			Fits  int     `json:"fits"`
		} `json:"config"`
	} `json:"result"`
}

// CollectOffline reads every finished run without a simulator under dirs
// (the runs Collect leaves out), with its fqe.json when present. An fqe.json
// is refused when it records no policy digest or one that is not the run's
// policy.safetensors (the estimate belongs to another policy: rerun fqe).
func CollectOffline(dirs ...string) ([]OfflineRun, error) {
	var out []OfflineRun
	seen := map[string]bool{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && (e.Name() == rundir.CheckpointsDir || e.Name() == ".sweep") {
				return filepath.SkipDir
			}
			if e.IsDir() || e.Name() != rundir.ResultsFile {
				return nil
			}
			dir := filepath.Dir(p)
			abs, _ := filepath.Abs(dir)
			if seen[abs] {
				return nil
			}
			seen[abs] = true
			r, ok, err := readOffline(dir)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, r)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	return out, nil
}

// readOffline reads dir's results.json; ok is false for a run with a
// simulator.
func readOffline(dir string) (OfflineRun, bool, error) {
	var rf resultsFile
	path := filepath.Join(dir, rundir.ResultsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return OfflineRun{}, false, err
	}
	if err := json.Unmarshal(b, &rf); err != nil {
		return OfflineRun{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if rf.Config.Env != envNone {
		return OfflineRun{}, false, nil
	}
	r := Result{Precision: rf.Provenance.BLASPrecision}
	if err := label(&r, dir, rf.Config.Data, rf.Config.Augment); err != nil {
		return OfflineRun{}, false, err
	}
	run := OfflineRun{Dir: dir, Dataset: r.Dataset, Method: r.Method, Seed: rf.Seed, Steps: rf.Steps, Diagnostics: map[string]float64{}}
	for _, k := range offlineColumns {
		if rf.Offline == nil {
			break
		}
		if v, ok := (*rf.Offline)[k]; ok {
			run.Diagnostics[k] = v
		}
	}
	est, err := readFQE(dir)
	if err != nil {
		return OfflineRun{}, false, err
	}
	run.FQE = est
	return run, true, nil
}

// readFQE reads dir's fqe.json (nil, nil when there is none) and checks
// that it estimates dir's policy.safetensors.
func readFQE(dir string) (*FQEEstimate, error) {
	path := filepath.Join(dir, FQEFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f fqeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.PolicySHA256 == "" {
		return nil, fmt.Errorf("%s records no policy_sha256 (written by a koopq fqe older than the ranking): rerun "+
			"koopq fqe --policy %s --data DATA --json %s", path, dir, path)
	}
	pf, err := fingerprint.Of(filepath.Join(dir, rundir.PolicyFile))
	if err != nil {
		return nil, fmt.Errorf("%s: the run's policy: %w", path, err)
	}
	if pf.SHA256 != f.PolicySHA256 {
		return nil, fmt.Errorf("%s estimates a policy with sha256 %s, but the run's policy.safetensors is %s: "+
			"the estimate is stale; rerun koopq fqe --policy %s --data DATA --json %s",
			path, fingerprint.Short(f.PolicySHA256), pf.Short(), dir, path)
	}
	if math.IsNaN(f.Result.Value) || math.IsInf(f.Result.Value, 0) {
		return nil, fmt.Errorf("%s: value %v is not finite", path, f.Result.Value)
	}
	return &FQEEstimate{Value: f.Result.Value, Low: f.Result.Low, High: f.Result.High, FitLow: f.Result.FitLow, FitHigh: f.Result.FitHigh,
		Fits: max(1, f.Result.Config.Fits), Gamma: f.Result.Config.Gamma, Steps: f.Result.Config.Steps,
		Normalized: f.Normalized, DataContentSHA256: f.DataContentSHA256}, nil
}

// offlineColumns are the offline diagnostics the ranking shows, in order.
var offlineColumns = []string{"td_error", "q_data", "log_likelihood", "action_mse"}

// RankOffline orders each dataset's runs by FQE value, best first (ties by
// directory), runs without an estimate last. The estimates ranked together
// must be comparable: the same data (content sha256), discount and steps;
// otherwise it is an error naming the two runs.
func RankOffline(runs []OfflineRun) (*OfflineRanking, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no run trained without a simulator")
	}
	rk := &OfflineRanking{Runs: map[string][]OfflineRun{}}
	for _, r := range runs {
		if _, ok := rk.Runs[r.Dataset]; !ok {
			rk.Datasets = append(rk.Datasets, r.Dataset)
		}
		rk.Runs[r.Dataset] = append(rk.Runs[r.Dataset], r)
	}
	slices.Sort(rk.Datasets)
	for _, ds := range rk.Datasets {
		rs := rk.Runs[ds]
		var first *OfflineRun
		for i := range rs {
			e := rs[i].FQE
			if e == nil {
				continue
			}
			if first == nil {
				first = &rs[i]
				continue
			}
			f := first.FQE
			if e.DataContentSHA256 != f.DataContentSHA256 || e.Gamma != f.Gamma || e.Steps != f.Steps {
				return nil, fmt.Errorf("report: dataset %s: the FQE estimates of %s (data %s, γ %g, %d steps) and %s (data %s, γ %g, %d steps) "+
					"are not comparable: rerun koopq fqe with the same data and settings on both",
					ds, first.Dir, fingerprint.Short(f.DataContentSHA256), f.Gamma, f.Steps, rs[i].Dir, fingerprint.Short(e.DataContentSHA256), e.Gamma, e.Steps)
			}
		}
		slices.SortStableFunc(rs, func(a, b OfflineRun) int {
			switch {
			case a.FQE != nil && b.FQE == nil:
				return -1
			case a.FQE == nil && b.FQE != nil:
				return 1
			case a.FQE != nil && a.FQE.Value != b.FQE.Value:
				if a.FQE.Value > b.FQE.Value {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Dir, b.Dir)
		})
	}
	return rk, nil
}

// Markdown renders the ranking: per dataset, rank, method, seed, FQE value
// with its intervals, and the offline diagnostics.
func (rk *OfflineRanking) Markdown() string {
	var b strings.Builder
	b.WriteString("# Runs without a simulator, ranked by Fitted Q Evaluation\n\n")
	b.WriteString("FQE value: estimated discounted return from the data's initial states (`koopq fqe`), the mean over its fits; " +
		"episodes: bootstrap interval over initial states; fits: 95% t-interval over independent fits (— for one fit). " +
		"Diagnostics are each run's final offline diagnostics on its held-out episodes. " +
		"FQE ranks coarsely (docs/ope.md): read close values as ties.\n")
	for _, ds := range rk.Datasets {
		fmt.Fprintf(&b, "\n## %s\n\n| rank | method | seed | FQE value | episodes | fits | %s | run |\n|---|---|---|---|---|---|%s---|\n",
			ds, strings.Join(offlineColumns, " | "), strings.Repeat("---|", len(offlineColumns)))
		for i, r := range rk.Runs[ds] {
			rank, val, ep, fits := "—", "no fqe.json", "—", "—"
			if e := r.FQE; e != nil {
				rank, val = fmt.Sprint(i+1), fmt.Sprintf("%.2f (%d×, γ %g)", e.Value, e.Fits, e.Gamma)
				if e.Low != nil && e.High != nil {
					ep = fmt.Sprintf("[%.2f, %.2f]", *e.Low, *e.High)
				}
				if e.FitLow != nil && e.FitHigh != nil {
					fits = fmt.Sprintf("[%.2f, %.2f]", *e.FitLow, *e.FitHigh)
				}
			}
			cols := make([]string, len(offlineColumns))
			for j, k := range offlineColumns {
				cols[j] = "—"
				if v, ok := r.Diagnostics[k]; ok {
					cols[j] = fmt.Sprintf("%.4g", v)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", rank, r.Method, r.Seed, val, ep, fits, strings.Join(cols, " | "), r.Dir)
		}
	}
	return b.String()
}

// Write writes offline.md and offline.json into dir (created if needed)
// and returns their paths.
func (rk *OfflineRanking) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(rk, "", "  ")
	if err != nil {
		return nil, err
	}
	md := filepath.Join(dir, "offline.md")
	jp := filepath.Join(dir, "offline.json")
	if err := atomicfile.Write(md, []byte(rk.Markdown()), nil); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(jp, append(js, '\n'), nil); err != nil {
		return nil, err
	}
	return []string{md, jp}, nil
}
