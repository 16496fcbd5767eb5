package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Prepare trains a missing shared Koopman model and continues an
// interrupted training (<model>.ckpt present) with --resume instead of
// running `koopq koopman train` into its "use --resume" refusal.
func TestPrepareResumesKoopmanTraining(t *testing.T) {
	text := strings.Replace(testSpec, "data: data/hopper-medium.hdf5}",
		"data: data/hopper-medium.hdf5, koopman: {model: models/h.safetensors, seed: 0}}", 1)
	s, _ := mustParse(t, text, Checker{})
	for _, interrupted := range []bool{false, true} {
		root := t.TempDir()
		for _, dir := range []string{"data", "models"} {
			if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, "data", "hopper-medium.hdf5"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		model := filepath.Join(root, "models", "h.safetensors")
		if interrupted {
			if err := os.WriteFile(model+".ckpt", []byte("state"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// A stand-in for koopq: records its arguments, writes the --out file.
		fake := filepath.Join(root, "koopq")
		script := "#!/bin/sh\necho \"$@\" > " + filepath.Join(root, "args") +
			"\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then : > \"$2\"; fi; shift; done\n"
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		s.Datasets[1].Data = filepath.Join(root, "data", "hopper-medium.hdf5") // the other dataset exists too
		if failed := Prepare(context.Background(), s, root, fake, nil); len(failed) != 0 {
			t.Fatalf("interrupted=%v: %v", interrupted, failed)
		}
		args, err := os.ReadFile(filepath.Join(root, "args"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(args), "--resume"); got != interrupted {
			t.Errorf("interrupted=%v: koopq %s", interrupted, args)
		}
		if !strings.HasPrefix(string(args), "koopman train --data "+filepath.Join(root, "data", "hopper-medium.hdf5")) {
			t.Errorf("koopq %s", args)
		}
	}
}
