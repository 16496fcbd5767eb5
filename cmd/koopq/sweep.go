package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/env"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/suggest"
	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"
)

// specChecker validates spec entries against this binary: train flags by
// the train command's own flag set, envs and augmentations by their
// registries.
func specChecker() sweep.Checker {
	// flagOf checks a flag of 'koopq VERBS…': it must exist, its value must
	// parse, and where the verb's settings table has the flag (value given)
	// the value must lie in the row's range, as on the command line.
	flagOf := func(value func(name, v string) error, verbs ...string) func(name, value string) error {
		var cmd *cobra.Command
		for parent := rootCmd; parent != nil && len(verbs) > 0; verbs = verbs[1:] {
			var next *cobra.Command
			for _, c := range parent.Commands() {
				if c.Name() == verbs[0] {
					next = c
				}
			}
			parent, cmd = next, next
		}
		verb := ""
		if cmd != nil {
			verb = strings.TrimPrefix(cmd.CommandPath(), "koopq ")
		}
		return func(name, v string) error {
			if cmd == nil {
				return nil
			}
			f := cmd.Flags().Lookup(name)
			if f == nil {
				return fmt.Errorf("not a 'koopq %s' flag (see koopq %s --help)", verb, verb)
			}
			if err := value(name, v); !errors.Is(err, errNoRow) {
				return err
			}
			// A flag outside the verb's table: parse the value into the
			// command's own variable, which is harmless here, as this
			// process never runs that verb itself.
			fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.AddFlag(&pflag.Flag{Name: f.Name, Value: f.Value})
			return flagError(nil, fs.Parse([]string{"--" + name + "=" + v}))
		}
	}
	return sweep.Checker{
		Flag:             flagOf(tableValue(run.TrainParams(), run.DefaultTrainConfig()), "train"),
		CollectFlag:      flagOf(tableValue(collectParams(), defaultCollectOptions()), "collect"),
		KoopmanFlag:      flagOf(tableValue(koopmanTrainParams(), defaultKoopmanTrainOptions()), "koopman", "train"),
		KoopmanTrainFlag: isKoopmanTrainFlag,
		Train:            checkTrainArgs,
		NeedsKoopman:     augment.NeedsKoopman,
		Env: func(name string) error {
			if slices.Contains(env.Names(), name) {
				return nil
			}
			return fmt.Errorf("unknown env %q (known: %s)%s", name, strings.Join(env.Names(), ", "), suggest.Hint(name, env.Names()))
		},
		Augment: func(name string) error {
			if augment.Known(name) {
				return nil
			}
			return fmt.Errorf("unknown augment %q (known: %s)%s", name, strings.Join(augment.Names(), ", "), suggest.Hint(name, augment.Names()))
		},
	}
}

// isKoopmanTrainFlag reports whether name is a 'koopq koopman train' flag
// (sweep.Checker.KoopmanTrainFlag).
func isKoopmanTrainFlag(name string) bool {
	c, _, err := rootCmd.Find([]string{"koopman", "train"})
	return err == nil && c.Name() == "train" && c.Flags().Lookup(name) != nil
}

// expandChecker is the part of specChecker that shapes the runs a spec
// expands to (which runs use a Koopman model, and how a default one is
// trained), without the checks of flag values: what reading back a sweep's
// recorded spec needs (status, report) so that its runs are those 'sweep
// run' made, even when a later koopq checks the spec's flags otherwise.
func expandChecker() sweep.Checker {
	return sweep.Checker{KoopmanTrainFlag: isKoopmanTrainFlag, NeedsKoopman: augment.NeedsKoopman}
}

// tableValue checks one flag's value as the command line would: parsed
// into a fresh copy of def through t's own flag set, then checked against
// the row's range (Row.Check). A flag without a row in t passes here
// (errNoRow), to be parsed by the caller.
func tableValue[T any](t param.Table[T], def T) func(name, value string) error {
	return func(name, value string) error {
		row, ok := t.Lookup(name)
		if !ok {
			return errNoRow
		}
		v := def
		fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		t.MustRegister(fs, &v, def)
		if err := fs.Parse([]string{"--" + name + "=" + value}); err != nil {
			return flagError(nil, err)
		}
		return row.Check(&v)
	}
}

// errNoRow is tableValue's answer for a flag its table lacks.
var errNoRow = errors.New("no row")

// loadSpec reads and validates a spec file.
func loadSpec(path string) (*sweep.Spec, []sweep.Run, []byte, error) {
	s, runs, err := sweep.Load(path, specChecker())
	if err != nil {
		return nil, nil, nil, err
	}
	text, err := os.ReadFile(path)
	return s, runs, text, err
}

// sweepSpeeds is each run's expected training speed for 'sweep plan' and
// 'sweep run --time-limit': the --steps-per-sec values (flag), else what the
// finished runs of the spec's expansion all in out measured, else the spec's
// steps_per_second (see sweep.Speeds).
func sweepSpeeds(s *sweep.Spec, out string, all []sweep.Run, flag []string) (sweep.Speeds, error) {
	given, err := sweep.ParseSpeeds(s, flag)
	if err != nil {
		return sweep.Speeds{}, err
	}
	return sweep.NewSpeeds(s, out, all, given), nil
}

// signalContext is cancelled by SIGINT or SIGTERM; the first signal is
// announced on stderr.
func signalContext(parent context.Context, what string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			fmt.Fprintf(os.Stderr, "koopq: %v: %s\n", s, what)
			cancel()
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, cancel
}

// koopqBinary is the koopq binary the runs execute: --koopq, which must be
// an executable file (checked before anything starts), else this one.
func koopqBinary(flag string) (string, error) {
	if flag == "" {
		return os.Executable()
	}
	p, err := filepath.Abs(flag)
	if err != nil {
		return "", fmt.Errorf("--koopq %s: %w", flag, err)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("--koopq %s: %w", flag, unwrapPathErr(err))
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("--koopq %s: not a file (want the koopq binary the runs execute)", flag)
	case st.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("--koopq %s: not executable (want the koopq binary the runs execute)", flag)
	}
	return p, nil
}

// unstampedWarning is the warning sweep run prints before it launches runs
// with a koopq binary that carries no VCS stamp: such runs record the HEAD
// of the checkout they run in as their commit, which is the binary's code
// only if it was built from that HEAD. "" for a stamped binary, or when the
// build info cannot be read (koopqBinary's caller finds a missing binary).
func unstampedWarning(bin string) string {
	if ok, err := version.Stamped(bin); err != nil || ok {
		return ""
	}
	return fmt.Sprintf("warning: %s has no VCS stamp: its runs will record the HEAD of the checkout they run in (if any) as their commit, "+
		"not the code it was built from; 'make build' (go build -buildvcs=true in a git checkout) stamps it", bin)
}

func sweepAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// newSweepCmd makes 'koopq sweep' and its subcommands plan, run, status
// and exec.
func newSweepCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run grids of trainings (datasets × methods × seeds) from a spec file: plan, run, status",
		Long: `A sweep spec (YAML) lists datasets, methods (an augmentation plus train flags) and seeds, the number of
steps, evaluation settings, named flag sets and explicit extra runs (ablations). Every run is an ordinary
'koopq train' run directory named <dataset>__<method>__s<seed> under the sweep directory, so a sweep is
resumable: finished runs are skipped, partial runs resume from their checkpoints, failed runs are reported
and retried with --retry-failed. See examples/smoke.yaml.`,
	}
	cmd.AddCommand(newSweepPlanCmd(), newSweepRunCmd(), newSweepStatusCmd(), newSweepExecCmd())
	return cmd
}

func sweepFirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// sweepRuns returns the runs of the sweep in dir from its spec copy.
func sweepRuns(dir string) (*sweep.Spec, []sweep.Run, error) {
	p := filepath.Join(dir, ".sweep", "spec.yaml")
	if _, err := os.Stat(p); err != nil {
		return nil, nil, fmt.Errorf("%s is not a sweep directory (no .sweep/spec.yaml; 'koopq sweep run SPEC --out %s' makes one)", dir, dir)
	}
	return sweep.Load(p, expandChecker())
}

// selectionFlags adds --datasets, --methods and --seeds, which pick a subset
// of a spec's runs (sweep.Selection), and --order, the order they start in.
// sweepDataRoot is the absolute directory a sweep's relative dataset and
// model paths are read from: --data-root when given, else the spec's
// directory (the same for plan, run and exec).
func sweepDataRoot(specPath, dataRoot string) string {
	if dataRoot == "" {
		return filepath.Dir(sweepAbs(specPath))
	}
	return sweepAbs(dataRoot)
}

func selectionFlags(f *pflag.FlagSet, sel *sweep.Selection, order *string) {
	f.StringVar(order, "order", sweep.OrderSpec, "start order: spec (dataset, method, seed) or seeds (every run of a seed before the next seed; "+
		"datasets and methods in the order --datasets/--methods list them); "+
		"either way, runs with a checkpoint to resume start before the others")
	f.StringSliceVar(&sel.Datasets, "datasets", nil, "only the runs of these datasets (names from the spec, comma-separated)")
	f.StringSliceVar(&sel.Methods, "methods", nil, "only the runs of these methods or ablations (names from the spec)")
	f.Var(newSeedList(&sel.Seeds), "seeds", "only the runs with these seeds, e.g. 0 or 0,1")
}

// seedList is a comma-separated list of seeds as a flag value (pflag has no
// uint64 list).
type seedList struct{ p *[]uint64 }

func newSeedList(p *[]uint64) seedList { return seedList{p} }

func (l seedList) String() string {
	parts := make([]string, len(*l.p))
	for i, v := range *l.p {
		parts[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(parts, ",")
}

func (l seedList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a seed (a non-negative integer)", f)
		}
		*l.p = append(*l.p, n)
	}
	return nil
}

func (l seedList) Type() string { return "uints" }

// needsKoopman reports whether any of runs uses a Koopman augmentation
// (and so a precompute cache).
func needsKoopman(runs []sweep.Run) bool {
	for _, r := range runs {
		if augment.NeedsKoopman(r.Augment) {
			return true
		}
	}
	return false
}

// limitText writes a --time-limit back: whole minutes as "2h40m", anything
// finer as given (Duration.String).
func limitText(d time.Duration) string {
	if d%time.Minute == 0 {
		return sweep.FormatMinutes(d)
	}
	return d.String()
}

// sortedErrors is the messages of errs (keyed by dataset name) in name
// order, for output that does not change from one call to the next.
func sortedErrors(errs map[string]error) []string {
	names := slices.Sorted(maps.Keys(errs))
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = errs[n].Error()
	}
	return out
}
