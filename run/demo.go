package run

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/koopq/koopq/eval"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/internal/plural"
	"github.com/koopq/koopq/sac"
)

// DemoConfig is the built-in end-to-end experiment: collect datasets with
// SAC, train CQL with several augmentations on each, evaluate, tabulate.
type DemoConfig struct {
	Collect  sac.CollectConfig `json:"collect"`
	Datasets []string          `json:"datasets"` // which collected datasets to train on
	Methods  []string          `json:"methods"`  // --augment values
	Seeds    int               `json:"seeds"`    // CQL seeds per (dataset, method)
	Train    TrainConfig       `json:"train"`    // base CQL run (Data, Augment and seed are set per run)
}

// DefaultDemoConfig runs in a few minutes on a 2-core machine: Pendulum,
// SAC-collected medium and medium-replay data, CQL vs S4RL-N vs KFC++ with
// two seeds each, every run with the "pendulum" training preset (see
// pendulumPreset for its settings and why).
func DefaultDemoConfig() DemoConfig {
	c := DemoConfig{Datasets: []string{"medium", "medium-replay"}, Methods: []string{"cql", "gaussian", "kfc++"}, Seeds: 2}
	c.Collect = sac.CollectConfig{Env: "pendulum", SAC: sac.DefaultConfig(10000), EvalEvery: 1000, EvalEpisodes: 5,
		Transitions: 20000, MediumLevel: 1.0 / 3}
	c.Train, _ = Preset("pendulum")
	return c
}

// DemoCell is one (dataset, method) entry of the demo table.
type DemoCell struct {
	Dataset    string        `json:"dataset"`
	Method     string        `json:"method"`
	Returns    []float64     `json:"final_returns"` // one per seed
	Scores     []eval.Score  `json:"normalized_scores"`
	Mean       eval.Score    `json:"mean_normalized"`
	Std        eval.Score    `json:"std_normalized"`
	MeanReturn float64       `json:"mean_return"`
	Runs       []string      `json:"run_dirs"`
	Curves     [][]EvalPoint `json:"curves"`
}

// DemoResult is the demo's results.json.
type DemoResult struct {
	Config     DemoConfig     `json:"config"`
	Collect    *CollectResult `json:"collect"`
	Reference  eval.Reference `json:"reference"`
	Cells      []DemoCell     `json:"cells"`
	Provenance Provenance     `json:"provenance"`
	Seconds    float64        `json:"wall_seconds"`
}

// Demo runs the built-in experiment under outDir and writes results.json,
// table.md and curves.png there. log receives human-readable progress lines;
// progress drives a bar for the current stage.
func Demo(ctx context.Context, cfg DemoConfig, outDir string, log io.Writer, progress meter.Staged) (*DemoResult, error) {
	start := time.Now()
	// Check the training settings of every method before the long collection.
	for _, m := range cfg.Methods {
		t := cfg.Train
		t.Augment, t.Data = m, "collected"
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	fmt.Fprintf(log, "[1/3] collecting %s datasets with SAC (%d env steps, %d transitions each)\n", cfg.Collect.Env, cfg.Collect.SAC.TotalSteps, cfg.Collect.Transitions)
	data, col, err := Collect(ctx, cfg.Collect, filepath.Join(outDir, "data"), progress)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "      behaviour policies: random %.1f, medium %.1f, expert %.1f\n", col.Info.RandomReturn, col.Info.Medium.Return, col.Info.Expert.Return)
	res := &DemoResult{Config: cfg, Collect: col, Reference: eval.References[cfg.Collect.Env], Provenance: CurrentProvenance()}

	// Step 1 once per dataset: the Koopman models the KFC runs share.
	models := map[string]string{}
	needs := false
	for _, m := range cfg.Methods {
		needs = needs || strings.HasPrefix(m, "kfc") || m == "vae-noise" || m == "fwd-prediction"
	}
	if needs {
		for i, name := range cfg.Datasets {
			d, ok := data[name]
			if !ok {
				return nil, fmt.Errorf("demo: no collected dataset %q", name)
			}
			fmt.Fprintf(log, "[2/3] Koopman model %d/%d on %s (%d transitions)\n", i+1, len(cfg.Datasets), name, d.Len())
			tc := cfg.Train.KoopmanTrain
			m, err := TrainKoopman(ctx, d, tc, cfg.Train.KoopmanHidden, cfg.Train.KoopmanLatent, "", meter.Stage(progress, "koopman "+name))
			if err != nil {
				return nil, err
			}
			p := filepath.Join(outDir, "koopman-"+name+".safetensors")
			if err := m.Save(p, map[string]string{"dataset": col.Files[name]}); err != nil {
				return nil, err
			}
			models[name] = p
		}
	}

	total := len(cfg.Datasets) * len(cfg.Methods) * cfg.Seeds
	k := 0
	for _, name := range cfg.Datasets {
		for _, method := range cfg.Methods {
			cell := DemoCell{Dataset: name, Method: method}
			for s := 0; s < cfg.Seeds; s++ {
				k++
				t := cfg.Train
				t.Data, t.Augment = col.Files[name], method
				t.CQL.Seed, t.KoopmanTrain.Seed = uint64(s), uint64(s)
				t.KoopmanModel = models[name]
				dir, err := NewDir(filepath.Join(outDir, "runs"), fmt.Sprintf("%s-%s-s%d", name, method, s))
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(log, "[3/3] run %d/%d: CQL on %s-%s, augment %s, seed %d\n", k, total, cfg.Collect.Env, name, method, s)
				r, err := TrainWith(ctx, t, dir, data[name], TrainOptions{Progress: meter.Within(progress, fmt.Sprintf("%s/%s/s%d", name, method, s))})
				if err != nil {
					return nil, err
				}
				cell.Returns = append(cell.Returns, r.Final.Mean)
				cell.Scores = append(cell.Scores, r.Final.Normalized)
				cell.Runs = append(cell.Runs, dir.Path)
				cell.Curves = append(cell.Curves, r.History)
			}
			scores := make([]float64, len(cell.Scores))
			for i, v := range cell.Scores {
				scores[i] = float64(v)
			}
			m, sd := eval.MeanStd(scores)
			cell.Mean, cell.Std = eval.Score(m), eval.Score(sd)
			cell.MeanReturn, _ = eval.MeanStd(cell.Returns)
			res.Cells = append(res.Cells, cell)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	d := &Dir{Path: outDir}
	if err := d.WriteJSON("results.json", res); err != nil {
		return nil, err
	}
	table := DemoTable(res)
	if err := WriteFileAtomic(d.File("table.md"), []byte(table)); err != nil {
		return nil, err
	}
	if err := PlotDemoCurves(res, d.File("curves.png")); err != nil {
		return nil, err
	}
	return res, nil
}

// methodLabel names augmentations as the paper's tables do.
func methodLabel(m string) string {
	switch m {
	case "cql", "none":
		return "CQL"
	case "gaussian":
		return "S4RL-N"
	case "s4rl-adv":
		return "S4RL-Adv"
	case "kfc":
		return "KFC"
	case "kfc++":
		return "KFC++"
	}
	return m
}

// DemoTable renders normalized scores (mean ± std over seeds) as a Markdown
// table: one row per dataset, one column per method, the best mean in bold.
func DemoTable(r *DemoResult) string {
	var b strings.Builder
	env := r.Config.Collect.Env
	fmt.Fprintf(&b, "| dataset |")
	for _, m := range r.Config.Methods {
		fmt.Fprintf(&b, " %s |", methodLabel(m))
	}
	b.WriteString("\n|---|")
	for range r.Config.Methods {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, name := range r.Config.Datasets {
		best := math.Inf(-1)
		for _, c := range r.Cells {
			if c.Dataset == name {
				best = math.Max(best, float64(c.Mean))
			}
		}
		fmt.Fprintf(&b, "| %s-%s |", env, name)
		for _, c := range r.Cells {
			if c.Dataset != name {
				continue
			}
			cell := fmt.Sprintf("%.1f ± %.1f", c.Mean, c.Std)
			if math.IsNaN(float64(c.Mean)) {
				cell = fmt.Sprintf("return %.1f", c.MeanReturn)
			} else if float64(c.Mean) == best {
				cell = "**" + cell + "**"
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nNormalized score 100·(R − R_random)/(R_expert − R_random), R_random = %.1f, R_expert = %.1f (%s);\n",
		r.Reference.Random, r.Reference.Expert, r.Reference.Source)
	fmt.Fprintf(&b, "mean ± std over %s of the final %d-episode evaluation after %d CQL steps.\n",
		plural.Count(r.Config.Seeds, "seed"), r.Config.Train.EvalEpisodes, r.Config.Train.CQL.Steps)
	return b.String()
}
