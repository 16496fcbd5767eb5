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

// MissingData lists the datasets of runs (runs of s) whose files are missing
// under root and that have no collect settings to make them.
func MissingData(s *Spec, runs []Run, root string) []string {
	used := map[string]bool{}
	for _, r := range runs {
		used[r.Dataset] = true
	}
	var out []string
	for _, d := range s.Datasets {
		if !used[d.Name] {
			continue
		}
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

// Prepare makes what runs (runs of s, all or a Selection of them) need before
// they start, under root: every missing dataset file of theirs that has
// collect settings (`koopq collect`, once per distinct command, log
// <data dir>/collect.log), then every missing shared Koopman model
// (datasets[].koopman: `koopq koopman train`, log <model>.log; with --resume
// when <model>.ckpt shows an interrupted training) that one of them uses:
// selecting only CQL runs trains no model.
// A dataset that cannot be prepared does not stop the others: its error is
// returned under its name, and the caller leaves that dataset's runs
// pending (e.g. a dataset whose behaviour policy is not committed yet; the
// same sweep command makes it once the policy exists). A cancelled ctx
// stops preparing; the datasets not prepared are returned.
func Prepare(ctx context.Context, s *Spec, runs []Run, root, koopq string, progress io.Writer) map[string]error {
	failed := map[string]error{}
	used, needsModel := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		used[r.Dataset] = true
		if r.Koopman != "" {
			needsModel[r.Dataset] = true
		}
	}
	collected := map[string]error{}
	for _, d := range s.Datasets {
		p := resolve(root, d.Data)
		if _, err := os.Stat(p); err == nil || d.Collect == nil || !used[d.Name] {
			continue
		}
		args := d.CollectArgs(root)
		key := strings.Join(args, "\x00")
		err, done := collected[key]
		if !done {
			err = runTool(ctx, koopq, args, filepath.Join(filepath.Dir(p), "collect.log"), "collect "+d.Name, progress)
			collected[key] = err
		}
		if err == nil {
			if _, serr := os.Stat(p); serr != nil {
				err = fmt.Errorf("koopq collect did not write %s", p)
			}
		}
		if err != nil {
			failed[d.Name] = fmt.Errorf("dataset %s: %w", d.Name, err)
		}
	}
	for _, d := range s.Datasets {
		model, ok := d.KoopmanModel()
		if !ok || !needsModel[d.Name] || failed[d.Name] != nil {
			continue
		}
		p := resolve(root, model)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		args := d.KoopmanArgs(root)
		if _, err := os.Stat(p + ".ckpt"); err == nil {
			// An earlier sweep was stopped during this training: continue it.
			args = append(args, "--resume")
		}
		err := runTool(ctx, koopq, args, p+".log", "koopman "+d.Name, progress)
		if err == nil {
			if _, serr := os.Stat(p); serr != nil {
				err = fmt.Errorf("koopq koopman train did not write %s", p)
			}
		}
		if err != nil {
			failed[d.Name] = fmt.Errorf("dataset %s: Koopman model: %w", d.Name, err)
		}
	}
	return failed
}

// runTool runs `koopq args...` with its output appended to logPath.
func runTool(ctx context.Context, koopq string, args []string, logPath, what string, progress io.Writer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if progress != nil {
		fmt.Fprintf(progress, "%s: %s %s (log %s)\n", what, koopq, strings.Join(args, " "), logPath)
	}
	cmd := exec.CommandContext(ctx, koopq, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	logf.Close()
	if err != nil {
		return fmt.Errorf("koopq %s: %v: %s", strings.Join(args, " "), err, logTail(logPath))
	}
	return nil
}

// WithoutDatasets returns the runs whose dataset is not a key of skip.
func WithoutDatasets(runs []Run, skip map[string]error) []Run {
	if len(skip) == 0 {
		return runs
	}
	var out []Run
	for _, r := range runs {
		if _, bad := skip[r.Dataset]; !bad {
			out = append(out, r)
		}
	}
	return out
}
