package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/run"
)

// checkTable registers a command's table on a fresh flag set with its
// defaults, checks that the defaults pass its validation, that every row's
// flag is one of the command's flags with the same default and help, and
// that an out-of-range value of each checked row is refused naming the flag.
func checkTable[T any](t *testing.T, name string, cmd *cobra.Command, tab param.Table[T], def T) {
	t.Helper()
	var o T
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	if err := tab.Register(fs, &o, def); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := tab.Validate(&o); err != nil {
		t.Errorf("%s: defaults do not validate: %v", name, err)
	}
	seen := map[string]bool{}
	for _, r := range tab {
		if seen[r.Flag] {
			t.Errorf("%s: --%s twice", name, r.Flag)
		}
		seen[r.Flag] = true
		got, want := cmd.Flags().Lookup(r.Flag), fs.Lookup(r.Flag)
		if got == nil {
			t.Errorf("%s: the command has no --%s", name, r.Flag)
			continue
		}
		if got.DefValue != want.DefValue || got.Usage != r.Usage {
			t.Errorf("%s --%s: command default %q usage %q, table %q %q", name, r.Flag, got.DefValue, got.Usage, want.DefValue, r.Usage)
		}
		// A value just outside a numeric range is refused, naming the flag.
		var bad string
		switch {
		case r.Range.Equal(param.Positive), r.Range.Equal(param.OpenFraction), r.Range.Equal(param.OpenUnit):
			bad = "0"
		case r.Range.Equal(param.NonNegative):
			bad = "-1"
		case r.Range.Choices() != nil:
			bad = "no-such-choice"
		default:
			continue
		}
		if want.Value.Type() == "duration" {
			bad += "s"
		}
		if want.Value.Type() == "uint64" || want.Value.Type() == "bool" {
			continue
		}
		var p T
		fp := pflag.NewFlagSet(name, pflag.ContinueOnError)
		tab.MustRegister(fp, &p, def)
		if err := fp.Set(r.Flag, bad); err != nil {
			t.Errorf("%s --%s %s: %v", name, r.Flag, bad, err)
			continue
		}
		if err := tab.Validate(&p); err == nil || !strings.Contains(err.Error(), "--"+r.Flag) {
			t.Errorf("%s --%s %s: err %v, want one naming the flag", name, r.Flag, bad, err)
		}
	}
}

// Every command's table registers, its defaults validate, the command
// declares every row's flag with the table's default and help, and each
// range refuses a value outside it.
func TestParamTables(t *testing.T) {
	checkTable(t, "train", newTrainCmd(), run.TrainParams(), run.DefaultTrainConfig())
	checkTable(t, "koopman train", newKoopmanTrainCmd(), koopmanTrainParams(), defaultKoopmanTrainOptions())
	checkTable(t, "koopman inspect", newKoopmanInspectCmd(), koopmanInspectParams(), defaultKoopmanInspectOptions())
	checkTable(t, "collect", newCollectCmd(), collectParams(), defaultCollectOptions())
	checkTable(t, "eval", newEvalCmd(), evalParams(), defaultEvalOptions())
	checkTable(t, "fqe", newFQECmd(), fqeParams(), defaultFQEOptions())
	checkTable(t, "symcheck", newSymcheckCmd(), symcheckParams(), defaultSymcheckOptions())
	checkTable(t, "sweep plan", newSweepPlanCmd(), sweepPlanParams(), defaultSweepPlanOptions())
	checkTable(t, "sweep run", newSweepRunCmd(), sweepRunParams(), defaultSweepRunOptions())
	checkTable(t, "references", newReferencesCmd(), referencesParams(), defaultReferencesOptions())
	checkTable(t, "demo", newDemoCmd(), demoParams(), defaultDemoOptions())
	checkTable(t, "symmetries cartpole", newSymmetriesCartPoleCmd(), symmetriesCartPoleParams(), defaultSymmetriesCartPoleOptions())
	checkTable(t, "report", newReportCmd(), reportParams(), defaultReportOptions())
	checkTable(t, "serve", newServeCmd(), serveParams(), defaultServeOptions())
	checkTable(t, "export", newExportCmd(), exportParams(), defaultExportOptions())
	checkTable(t, "dataset info", newDatasetInfoCmd(), datasetInfoParams(), defaultDatasetInfoOptions())
}
