package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/lockfile"
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

// DataCheck checks a dataset file that exists before the runs that read it
// start, against env, the simulator the spec gives its dataset (e.g. that
// the file does not record another env); nil when it fits. The sweep
// package reads no dataset itself: the command passes its check.
type DataCheck func(path, env string) error

// CheckData runs check on the data file of every dataset that runs use and
// that exists under root (a missing one is MissingData's or Prepare's),
// once per dataset. Errors are keyed by dataset name, as Prepare's: the
// caller leaves those datasets' runs pending, and sweep plan lists them
// as runs that cannot run, before any run trains on data of another env.
func CheckData(runs []Run, root string, check DataCheck) map[string]error {
	failed := map[string]error{}
	seen := map[string]bool{}
	for _, r := range runs {
		if seen[r.Dataset] {
			continue
		}
		seen[r.Dataset] = true
		p := r.ResolveData(root)
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue // MissingData's
		}
		if err := check(p, r.Env); err != nil {
			failed[r.Dataset] = fmt.Errorf("dataset %s: %w", r.Dataset, err)
		}
	}
	return failed
}

// The kinds of PrepStep.
const (
	PrepCollect = "collect" // a dataset file, by `koopq collect`
	PrepKoopman = "koopman" // a shared Koopman model, by `koopq koopman train`
)

// PrepStep is one thing Prepare makes before the runs start: a dataset file
// (`koopq collect`) or a shared Koopman model (`koopq koopman train`).
type PrepStep struct {
	// Kind is PrepCollect or PrepKoopman.
	Kind string
	// Datasets are the spec datasets the step serves (a collect command
	// shared by several datasets runs once); a failed step fails them all.
	Datasets []string
	// Path is the file the step must leave behind (absolute when root is).
	Path string
	// Args are the koopq arguments that make it.
	Args []string
	// Log is where the command's output goes.
	Log string
	// Block is the digest of the spec block that makes the file (see
	// Made), recorded beside it once made; "" for default Koopman models
	// (their file name carries their settings).
	Block string
}

// String describes the step for plans and progress lines.
func (p PrepStep) String() string {
	return p.Kind + " " + strings.Join(p.Datasets, ", ")
}

// verb is the koopq command of the step ("collect", "koopman train").
func (p PrepStep) verb() string {
	if p.Kind == PrepKoopman {
		return "koopman train"
	}
	return "collect"
}

// Preparation lists, in the order Prepare runs them, the steps that make
// what runs (runs of s, all or a Selection of them) need under root and do
// not find there: every missing dataset file with collect settings (once per
// distinct command), then every missing shared Koopman model
// (datasets[].koopman, or a dataset's default model) that one of the runs uses, with --resume when
// <model>.ckpt shows an interrupted training. Selecting only CQL runs lists
// no model; datasets without runs in runs are left out.
func Preparation(s *Spec, runs []Run, root string) []PrepStep {
	used, needsModel := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		used[r.Dataset] = true
		if r.Koopman != "" {
			needsModel[r.Dataset] = true
		}
	}
	var steps []PrepStep
	collect := map[string]int{} // command → index in steps
	for _, d := range s.Datasets {
		p := resolve(root, d.Data)
		if _, err := os.Stat(p); err == nil || d.Collect == nil || !used[d.Name] {
			continue
		}
		args := d.CollectArgs(root)
		key := strings.Join(args, "\x00")
		if i, ok := collect[key]; ok {
			steps[i].Datasets = append(steps[i].Datasets, d.Name)
			continue
		}
		collect[key] = len(steps)
		steps = append(steps, PrepStep{Kind: PrepCollect, Datasets: []string{d.Name}, Path: p, Args: args,
			Log: filepath.Join(filepath.Dir(p), "collect.log"), Block: madeBlock(d, PrepCollect)})
	}
	for _, d := range s.Datasets {
		model, ok := d.KoopmanModel()
		if !ok || !needsModel[d.Name] {
			continue
		}
		p := resolve(root, model)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		steps = append(steps, PrepStep{Kind: PrepKoopman, Datasets: []string{d.Name}, Path: p, Args: resumeKoopman(d.KoopmanArgs(root), p), Log: p + ".log",
			Block: madeBlock(d, PrepKoopman)})
	}
	made := map[string]bool{}
	for _, r := range runs { // default shared models (datasets without koopman:), in run order
		if !r.KoopmanDefault || made[r.Koopman] {
			continue
		}
		made[r.Koopman] = true
		if _, err := os.Stat(resolve(root, r.Koopman)); err == nil {
			continue
		}
		steps = append(steps, r.KoopmanStep(root))
	}
	return steps
}

// Prepare makes what runs need before they start, under root: the steps of
// Preparation, in order (collect logs go to <data dir>/collect.log, Koopman
// trainings to <model>.log).
// A dataset that cannot be prepared does not stop the others: its error is
// returned under its name, and the caller leaves that dataset's runs
// pending (e.g. a dataset whose behaviour policy is not committed yet; the
// same sweep command makes it once the policy exists); its Koopman model is
// not trained. A file found already at a path a block would make is
// adopted only if fits (nil: no check) finds it is what the block makes.
// A cancelled ctx stops preparing; the datasets not prepared are returned.
func Prepare(ctx context.Context, s *Spec, runs []Run, root, koopq string, fits AdoptCheck, progress io.Writer) map[string]error {
	failed := checkPrepared(s, runs, root, fits, progress) // files made under other spec blocks, or found there
	for _, st := range Preparation(s, runs, root) {
		if failed[st.Datasets[0]] != nil {
			continue
		}
		err := prepareStep(ctx, st, koopq, progress)
		for _, name := range st.Datasets {
			switch {
			case err == nil:
			case st.Kind == PrepKoopman:
				failed[name] = fmt.Errorf("dataset %s: Koopman model: %w", name, err)
			default:
				failed[name] = fmt.Errorf("dataset %s: %w", name, err)
			}
		}
	}
	// A model found before its dataset existed is checked now that the
	// dataset is made (the files checked before pass again at once).
	for name, err := range checkPrepared(s, WithoutDatasets(runs, failed), root, fits, progress) {
		failed[name] = err
	}
	return failed
}

// resumeKoopman returns the `koopq koopman train` arguments args with
// --resume added when an earlier training of model was stopped (its
// <model>.ckpt exists), so that it continues instead of being refused.
func resumeKoopman(args []string, model string) []string {
	if _, err := os.Stat(model + ".ckpt"); err != nil || slices.Contains(args, "--resume") {
		return args
	}
	return append(slices.Clone(args), "--resume")
}

// prepareStep runs one preparation step under a lock on its output
// (<dir>/.<name>.prepare.lock), so that sweep processes sharing a data root
// (several `sweep run` on one --out, started together) make each dataset
// and Koopman model once: a process that finds the lock held says so and
// waits (a cancelled ctx stops the wait); once it holds the lock, a file the
// other made is not made again, and a training the other left interrupted
// is resumed.
func prepareStep(ctx context.Context, st PrepStep, koopq string, progress io.Writer) error {
	if err := os.MkdirAll(filepath.Dir(st.Path), 0o755); err != nil {
		return err
	}
	lock := filepath.Join(filepath.Dir(st.Path), "."+filepath.Base(st.Path)+".prepare.lock")
	lockF, unlock, holder, err := lockfile.TryLockFile(lock)
	if errors.Is(err, lockfile.ErrBusy) {
		if progress != nil {
			fmt.Fprintf(progress, "%s: waiting for another process (pid %s) that is making %s\n", st, holder, st.Path)
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for errors.Is(err, lockfile.ErrBusy) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
			lockF, unlock, _, err = lockfile.TryLockFile(lock)
		}
	}
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(st.Path); err == nil {
		if progress != nil {
			fmt.Fprintf(progress, "%s: made by another process: %s\n", st, st.Path)
		}
		return nil
	}
	args := st.Args
	if st.Kind == PrepKoopman {
		args = resumeKoopman(args, st.Path) // the other process may have been stopped during the training
	}
	if err := runTool(ctx, koopq, args, st.Log, st.String(), progress, lockF); err != nil {
		return err
	}
	f, err := fingerprint.Of(st.Path)
	if err != nil {
		return fmt.Errorf("koopq %s did not write %s: %w", st.verb(), st.Path, err)
	}
	if st.Block != "" {
		return writeMade(st.Path, Made{Kind: st.Kind, Block: st.Block, SHA256: f.SHA256})
	}
	return nil
}

// runTool runs `koopq args...` with its output appended to logPath; the
// child inherits lock, the lock on what it makes (see runChild).
func runTool(ctx context.Context, koopq string, args []string, logPath, what string, progress io.Writer, lock *os.File) error {
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
	err = runChild(cmd, lock)
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
