package main

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/param"
	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/onnx"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/sac"
)

// exportOptions holds the flag values of 'koopq export'.
type exportOptions struct {
	policy     string
	out        string
	stochastic bool
}

// newExportCmd makes 'koopq export'.
func newExportCmd() *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export a trained policy as an ONNX model (normalization, MLP, tanh and rescaling inside)",
		Long: "export writes the deterministic actor of a policy.safetensors as an ONNX model (opset 13): input\n" +
			"'observation' [batch, obs_dim] in raw env units, output 'action' [batch, act_dim] in the env's\n" +
			"action units; the batch dimension is dynamic. --stochastic adds a second output 'log_std'\n" +
			"[batch, act_dim], the Gaussian's log σ before the tanh. docs/policy-format.md describes both\n" +
			"formats. --policy is a policy file or a run directory (its policy.safetensors).",
		Example: "  koopq export --policy runs/hopper-kfcpp --out hopper.onnx",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	exportParams().MustRegister(cmd.Flags(), o, defaultExportOptions())
	return cmd
}

// defaultExportOptions is the flag defaults (policy.onnx).
func defaultExportOptions() exportOptions {
	return exportOptions{out: "policy.onnx"}
}

// exportParams is the table of 'koopq export' settings (files and a
// switch: no ranges; validate checks the files).
func exportParams() param.Table[exportOptions] {
	type o = exportOptions
	return param.Table[o]{
		param.New("policy", "", "policy file (policy.safetensors) or a run directory holding one", func(o *o) any { return &o.policy }, param.AnyValue),
		param.New("out", "", "ONNX file to write", func(o *o) any { return &o.out }, param.AnyValue),
		param.New("stochastic", "", "add the log-σ head as a second output 'log_std'", func(o *o) any { return &o.stochastic }, param.AnyValue),
	}
}

// validate checks that --policy is given and --out can be written; run
// checks the policy itself.
func (o *exportOptions) validate() error {
	if o.policy == "" {
		return fmt.Errorf("--policy is required: a policy.safetensors or a run directory")
	}
	return needOutFile("out", o.out, inFile{"policy", o.policy})
}

// run writes the ONNX model of the policy to --out.
func (o *exportOptions) run() error {
	path, err := rundir.PolicyPath(o.policy)
	if err != nil {
		return fmt.Errorf("--policy %w", err)
	}
	p, meta, err := sac.ReadPolicy(path)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	envName := meta["env"]
	fp, err := fingerprint.Of(path)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	v := version.Get()
	b, err := onnx.ExportPolicy(p, onnx.Options{Stochastic: o.stochastic, Version: v.String(), Metadata: [][2]string{
		{"koopq.kind", "policy"}, {"koopq.commit", v.Commit}, {"env", envName},
		{"obs_dim", strconv.Itoa(p.Actor.In())}, {"act_dim", strconv.Itoa(p.ActDim)},
		{"source", filepath.Base(path)}, {"source_sha256", fp.SHA256},
	}})
	if err != nil {
		return fmt.Errorf("--policy %s: %w", path, err)
	}
	if err := atomicfile.Write(o.out, b, nil); err != nil {
		return fmt.Errorf("--out %s: %w", o.out, err)
	}
	outputs := "action"
	if o.stochastic {
		outputs += ", log_std"
	}
	env := envName
	if env == "" {
		env = "no env"
	}
	fmt.Printf("wrote %s: %s policy %d → %d (outputs %s), %d bytes, from %s (sha256 %s)\n",
		o.out, env, p.Actor.In(), p.ActDim, outputs, len(b), path, fp.Short())
	return nil
}
