// Command koopq is the command-line front end of koopq: offline reinforcement
// learning with Koopman symmetries (KFC / KFC++). It parses flags, wires the
// packages together and prints; no algorithms live here. Each verb lives in
// its own file and registers itself on rootCmd in an init function.
package main

import (
	"fmt"
	"os"

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
