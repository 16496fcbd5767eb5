// Command koopq is the command-line front end of koopq: offline reinforcement
// learning with Koopman symmetries (KFC / KFC++). It parses flags, wires the
// packages together and prints; no algorithms live here. Each verb lives in
// its own file, made by a constructor (newCollectCmd, ...) that main's init
// adds to rootCmd: no other file registers a command.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/run"
	"github.com/koopq/koopq/sweep"

	_ "github.com/koopq/koopq/env/classic" // registers cartpole, pendulum, mountaincar-continuous, ...
	_ "github.com/koopq/koopq/env/manip"   // registers the metaworld-* tasks
	_ "github.com/koopq/koopq/env/mujoco"  // registers hopper, halfcheetah, walker2d, ant
	_ "github.com/koopq/koopq/env/panda"   // registers robosuite-lift
)

var rootCmd = &cobra.Command{
	Use:           "koopq",
	Short:         "Offline RL with Koopman symmetries (KFC, KFC++) on top of CQL",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// GEMM backend and precision, persistent on every verb; empty = the
// environment (KOOPQ_BACKEND, KOOPQ_PRECISION), then the fastest backend
// present with f32. They apply to every GEMM: CQL, SAC and Koopman training.
var gemmBackend, gemmPrecision string

// cpuProfile is --cpuprofile: a file that receives a pprof CPU profile of
// the whole command (read it with 'go tool pprof koopq FILE').
var cpuProfile string

func init() {
	pf := rootCmd.PersistentFlags()
	pf.StringVar(&gemmBackend, "backend", "", "GEMM backend: "+strings.Join(blas.Available(), ", ")+" (default: $"+blas.EnvBackend+", else the fastest present)")
	pf.StringVar(&gemmPrecision, "precision", "", "GEMM input precision: f32, or bf16 mixed precision (onednn only; default: $"+blas.EnvPrecision+", else f32)")
	// Run this hook even when a verb has its own PersistentPreRun.
	cobra.EnableTraverseRunHooks = true
	pf.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file (pprof format: go tool pprof koopq FILE)")
	rootCmd.SetFlagErrorFunc(flagError)
	rootCmd.AddCommand(newCollectCmd(), newDatasetCmd(), newDemoCmd(), newDocsCmd(), newEvalCmd(), newExportCmd(),
		newFQECmd(), newKoopmanCmd(), newReferencesCmd(), newReportCmd(), newServeCmd(), newSweepCmd(),
		newSymcheckCmd(), newSymmetriesCmd(), newTrainCmd())
	setVersionFlag(rootCmd)
	rootCmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := configureGEMM(); err != nil {
			return err
		}
		if w := blas.Warning(); w != "" {
			fmt.Fprintln(os.Stderr, "koopq: warning:", w)
		}
		return startCPUProfile(cpuProfile)
	}
}

// flagError rewrites pflag's errors about bad flag values, which quote Go's
// parser ("strconv.Atoi: parsing ..."), into ones that name the flag and
// the form it wants. Other flag errors pass through.
func flagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	fl, v := iv.GetFlag(), iv.GetValue()
	if fl.Name == "seed" && strings.ContainsAny(v, ", ") {
		return fmt.Errorf("--seed %s: --seed takes one seed; for several runs, one per seed, use --seeds %s", v, v)
	}
	switch fl.Value.Type() {
	case "intSlice":
		return fmt.Errorf("--%s %s: want comma-separated widths, e.g. 256,256", fl.Name, v)
	case "uint64", "uint":
		return fmt.Errorf("--%s %s: want a whole number ≥ 0", fl.Name, v)
	case "int", "int64":
		return fmt.Errorf("--%s %s: want a whole number", fl.Name, v)
	case "uintSlice", "uint64Slice":
		return fmt.Errorf("--%s %s: want comma-separated whole numbers ≥ 0, e.g. 0,1,2", fl.Name, v)
	case "float64", "float32":
		return fmt.Errorf("--%s %s: want a number", fl.Name, v)
	case "float64Slice", "float32Slice":
		return fmt.Errorf("--%s %s: want comma-separated numbers, e.g. 2.6e-4,1e-3", fl.Name, v)
	case "duration":
		return fmt.Errorf("--%s %s: want a duration, e.g. 90s, 30m, 2h", fl.Name, v)
	case "bool":
		return fmt.Errorf("--%s=%s: want true or false", fl.Name, v)
	}
	if cause := errors.Unwrap(iv); cause != nil { // koopq's own flag types explain themselves
		return fmt.Errorf("--%s %s: %w", fl.Name, v, cause)
	}
	return err
}

// profileFile is the open --cpuprofile file while the profile runs.
var profileFile *os.File

// startCPUProfile starts the --cpuprofile profile (path "" : none); main
// stops it when the verb returns, whatever it returned.
func startCPUProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	profileFile = f
	return nil
}

// stopCPUProfile ends the --cpuprofile profile, if one runs, and reports a
// failure to write it.
func stopCPUProfile() {
	if profileFile == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := profileFile.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "koopq: --cpuprofile:", err)
	}
	profileFile = nil
}

// configureGEMM applies --backend/--precision before any verb runs, so a bad
// value is an error naming the flag and nothing has been written yet.
func configureGEMM() error { return blas.Configure(gemmBackend, gemmPrecision) }

func main() {
	err := rootCmd.Execute()
	if err == nil {
		err = versionErr
	}
	stopCPUProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "koopq:", err)
		var ir *run.Interrupted
		var re *resumableError
		if errors.As(err, &ir) || errors.As(err, &re) {
			os.Exit(sweep.ExitInterrupted) // resumable: sweeps retry it
		}
		os.Exit(1)
	}
}

// resumableError marks a command stopped by a signal after it saved a
// checkpoint that the same command with --resume continues; like a
// run.Interrupted it exits with sweep.ExitInterrupted, so sweeps retry it.
type resumableError struct{ err error }

func (e *resumableError) Error() string { return e.err.Error() }
func (e *resumableError) Unwrap() error { return e.err }

// groupCommand makes a command that only holds subcommands: without
// arguments it prints its help; an unknown subcommand is an error (cobra
// would otherwise print the help and exit 0).
func groupCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			var names []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			return fmt.Errorf("unknown %s command %q (want %s)", cmd.Name(), args[0], strings.Join(names, ", "))
		},
	}
}
