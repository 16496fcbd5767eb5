// Command koopq is the command-line front end of koopq: offline reinforcement
// learning with Koopman symmetries (KFC / KFC++). It parses flags, wires the
// packages together and prints; no algorithms live here. Each verb lives in
// its own file and registers itself on rootCmd in an init function.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	_ "github.com/koopq/koopq/env/classic" // registers cartpole, pendulum, mountaincar-continuous, ...
	_ "github.com/koopq/koopq/env/mujoco"  // registers hopper, halfcheetah, walker2d, ant
)

var rootCmd = &cobra.Command{
	Use:           "koopq",
	Short:         "Offline RL with Koopman symmetries (KFC, KFC++) on top of CQL",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "koopq:", err)
		os.Exit(1)
	}
}

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
