package run

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// The demo pipeline runs end to end at toy scale and writes its table,
// figure and results.
func TestDemoPipeline(t *testing.T) {
	cfg := DefaultDemoConfig()
	cfg.Collect.SAC.TotalSteps = 1200
	cfg.Collect.SAC.StartSteps = 500
	cfg.Collect.SAC.Net.Hidden = []int{32, 32}
	cfg.Collect.EvalEvery = 400
	cfg.Collect.EvalEpisodes = 1
	cfg.Collect.Transitions = 1000
	cfg.Datasets = []string{"medium"}
	cfg.Methods = []string{"none", "kfc++"}
	cfg.Seeds = 1
	cfg.Train.CQL.Steps = 60
	cfg.Train.CQL.BCSteps = 20
	cfg.Train.CQL.Net.Hidden = []int{16, 16}
	cfg.Train.CQL.Batch = 32
	cfg.Train.EvalEvery = 30
	cfg.Train.EvalEpisodes = 2
	cfg.Train.KoopmanHidden = []int{16, 16}
	cfg.Train.KoopmanTrain.MaxEpochs = 2
	out := t.TempDir()
	var stages []string // in the order they first reported
	res, err := Demo(context.Background(), cfg, out, io.Discard, func(stage string, _, _ int, _ string) {
		if !slices.Contains(stages, stage) {
			stages = append(stages, stage)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	wantStages := []string{"random", "sac", "medium", "expert", "koopman medium", "medium/none/s0 bc", "medium/none/s0 cql",
		"medium/kfc++/s0 precompute", "medium/kfc++/s0 bc", "medium/kfc++/s0 cql"}
	if !slices.Equal(stages, wantStages) {
		t.Errorf("progress stages %q, want %q", stages, wantStages)
	}
	if len(res.Cells) != 2 || len(res.Cells[1].Scores) != 1 {
		t.Fatalf("cells %+v", res.Cells)
	}
	table, err := os.ReadFile(out + "/table.md")
	if err != nil || !strings.Contains(string(table), "KFC++") || !strings.Contains(string(table), "pendulum-medium") {
		t.Fatalf("table.md: %v\n%s", err, table)
	}
	png, err := os.ReadFile(out + "/curves.png")
	if err != nil || len(png) < 1000 || string(png[1:4]) != "PNG" {
		t.Fatalf("curves.png missing or not a PNG (%d bytes, %v)", len(png), err)
	}
	for _, f := range []string{"results.json", "data/collect.json", "data/pendulum-medium.hdf5", "koopman-medium.safetensors"} {
		if _, err := os.Stat(out + "/" + f); err != nil {
			t.Errorf("missing %s", f)
		}
	}
}
