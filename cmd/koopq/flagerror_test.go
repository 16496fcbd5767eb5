package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestEveryBadFlagValueIsExplained: for every flag of every koopq command,
// a value its type cannot parse gives an error that names the flag and the
// form it wants, never the raw text of Go's parser (strconv...).
func TestEveryBadFlagValueIsExplained(t *testing.T) {
	checked := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			typ := fl.Value.Type()
			if typ == "string" || typ == "stringSlice" || typ == "stringArray" || typ == "count" {
				return // every text parses
			}
			// Parse a value no numeric, boolean or duration type accepts on a
			// copy of the flag, so the commands' own flags stay untouched.
			fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
			fs.AddFlag(&pflag.Flag{Name: fl.Name, Value: fl.Value, DefValue: fl.DefValue})
			old := fl.Value.String()
			err := fs.Parse([]string{"--" + fl.Name + "=x#y"})
			defer fl.Value.Set(old)
			var iv *pflag.InvalidValueError
			if !errors.As(err, &iv) {
				t.Errorf("%s --%s (%s) accepted x#y (err %v)", c.CommandPath(), fl.Name, typ, err)
				return
			}
			msg := flagError(c, err).Error()
			named := strings.HasPrefix(msg, "--"+fl.Name+" x#y: ") || strings.HasPrefix(msg, "--"+fl.Name+"=x#y: ")
			if strings.Contains(msg, "strconv") || strings.Contains(msg, "invalid argument") || !named {
				t.Errorf("%s --%s (%s): %q", c.CommandPath(), fl.Name, typ, msg)
			}
			checked[typ] = true
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCmd)
	for _, typ := range []string{"int", "uint64", "float64", "bool", "intSlice", "float64Slice", "uints"} {
		if !checked[typ] {
			t.Errorf("no flag of type %s was probed (checked %v)", typ, checked)
		}
	}
}
