package sweep

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MissingData lists the datasets of s whose files are missing under root and
// that have no collect settings to make them.
func MissingData(s *Spec, root string) []string {
	var out []string
	for _, d := range s.Datasets {
		p := Run{Data: d.Data}.ResolveData(root)
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			out = append(out, fmt.Sprintf("dataset %s: data %s is a directory", d.Name, p))
		case err != nil && d.Collect == nil:
			out = append(out, fmt.Sprintf("dataset %s: data %s: no such file (add collect: to the dataset to have the sweep make it)", d.Name, p))
		}
	}
	return out
}

// CollectMissing makes every missing dataset file that has collect settings
// by running `koopq collect` once per distinct command (datasets of one
// collect share it), with its output in <data dir>/collect.log. It fails
// when collect fails or does not produce the file.
func CollectMissing(ctx context.Context, s *Spec, root, koopq string, progress io.Writer) error {
	done := map[string]bool{}
	for _, d := range s.Datasets {
		p := Run{Data: d.Data}.ResolveData(root)
		if _, err := os.Stat(p); err == nil || d.Collect == nil {
			continue
		}
		args := d.CollectArgs(root)
		key := strings.Join(args, "\x00")
		if !done[key] {
			done[key] = true
			dir := filepath.Dir(p)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			logPath := filepath.Join(dir, "collect.log")
			logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			if progress != nil {
				fmt.Fprintf(progress, "collect %s: %s %s (log %s)\n", d.Name, koopq, strings.Join(args, " "), logPath)
			}
			cmd := exec.CommandContext(ctx, koopq, args...)
			cmd.Stdout, cmd.Stderr = logf, logf
			err = cmd.Run()
			logf.Close()
			if err != nil {
				return fmt.Errorf("dataset %s: koopq %s: %v: %s", d.Name, strings.Join(args, " "), err, logTail(logPath))
			}
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("dataset %s: koopq collect did not write %s", d.Name, p)
		}
	}
	return nil
}
