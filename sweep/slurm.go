package sweep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/koopq/koopq/internal/plural"
)

// SlurmOptions configures the Slurm executor.
type SlurmOptions struct {
	// Koopq is the koopq binary the tasks run (an absolute path on a file
	// system the nodes share).
	Koopq string
	// SpecFile is the pinned spec copy the tasks read (absolute).
	SpecFile string
	// DataRoot resolves relative dataset paths (absolute).
	DataRoot string
	// Threads per run (--cpus-per-task).
	Threads int
	// AllowDirty passes --allow-dirty to the tasks' 'koopq sweep exec',
	// as 'sweep run --allow-dirty' was given.
	AllowDirty bool
	// Wait follows the job until it leaves the queue; otherwise Submit
	// returns after sbatch.
	Wait bool
	// Poll is the interval between squeue calls (default 5 s).
	Poll time.Duration
	// Progress receives submission and state-change lines, and every
	// ProgressEvery (0: never) a line per running run with its step, score
	// and speed read from the run directories (nil: silent).
	Progress      io.Writer
	ProgressEvery time.Duration
}

// SlurmScript returns the sbatch array script running the runs with the
// given indices (one array task each; the task id is the run's index).
func SlurmScript(s *Spec, out string, indices []int, o SlurmOptions) string {
	var b strings.Builder
	threads := max(o.Threads, 1)
	logs := filepath.Join(out, ".sweep", "slurm")
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "# koopq sweep %q: %s, one array task per run (task id = run index in the spec).\n", s.Name, plural.Count(len(indices), "run"))
	b.WriteString("# Written by 'koopq sweep run --executor slurm'; resubmitting it is safe: done runs are skipped,\n")
	b.WriteString("# partial ones resume from their checkpoints (which also makes --requeue safe).\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=koopq-%s\n", s.Name)
	arr := compressRanges(indices)
	if s.Slurm.MaxParallel > 0 {
		arr += "%" + strconv.Itoa(s.Slurm.MaxParallel)
	}
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", arr)
	b.WriteString("#SBATCH --ntasks=1\n")
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", threads)
	if s.Slurm.Mem != "" {
		fmt.Fprintf(&b, "#SBATCH --mem=%s\n", s.Slurm.Mem)
	}
	if s.Slurm.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", s.Slurm.Time)
	}
	if s.Slurm.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", s.Slurm.Partition)
	}
	if s.Slurm.Account != "" {
		fmt.Fprintf(&b, "#SBATCH --account=%s\n", s.Slurm.Account)
	}
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(logs, "%A_%a.out"))
	fmt.Fprintf(&b, "#SBATCH --error=%s\n", filepath.Join(logs, "%A_%a.out"))
	b.WriteString("#SBATCH --requeue\n")
	b.WriteString("#SBATCH --signal=B:INT@120\n")
	for _, e := range s.Slurm.Extra {
		fmt.Fprintf(&b, "#SBATCH %s\n", e)
	}
	b.WriteString("set -eu\n")
	allow := ""
	if o.AllowDirty {
		allow = " --allow-dirty"
	}
	fmt.Fprintf(&b, "exec %s sweep exec --spec %s --out %s --data-root %s --threads %d%s --index \"$SLURM_ARRAY_TASK_ID\"\n",
		shellQuote(o.Koopq), shellQuote(o.SpecFile), shellQuote(out), shellQuote(o.DataRoot), threads, allow)
	return b.String()
}

// compressRanges writes sorted indices as Slurm's array syntax (0-3,7,9-10).
func compressRanges(idx []int) string {
	s := append([]int(nil), idx...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SlurmJob is a submitted array job.
type SlurmJob struct {
	ID     string
	Script string
	Runs   []Run
}

// SubmitSlurm writes the array script for runs under out/.sweep/slurm and
// submits it with sbatch; with o.Wait it then follows the job with squeue
// until no task is left in the queue and returns the summary read from the
// run directories.
func SubmitSlurm(ctx context.Context, s *Spec, out string, runs []Run, o SlurmOptions) (*SlurmJob, Summary, error) {
	var sum Summary
	if len(runs) == 0 {
		return nil, sum, nil
	}
	dir := filepath.Join(out, ".sweep", "slurm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, sum, err
	}
	idx := make([]int, len(runs))
	for i, r := range runs {
		idx[i] = r.Index
		// Slots exist before the tasks start, so status sees them as pending.
		if err := os.MkdirAll(SlotDir(out, r), 0o755); err != nil {
			return nil, sum, err
		}
		if err := checkIdentity(SlotDir(out, r), r); err != nil {
			return nil, sum, err
		}
	}
	script := SlurmScript(s, out, idx, o)
	path := filepath.Join(dir, fmt.Sprintf("array-%s.sbatch", time.Now().UTC().Format("20060102-150405.000")))
	if err := writeAtomic(path, []byte(script)); err != nil {
		return nil, sum, err
	}
	cmd := exec.CommandContext(ctx, "sbatch", "--parsable", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, sum, fmt.Errorf("sbatch %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";")
	if _, err := strconv.Atoi(id); err != nil {
		return nil, sum, fmt.Errorf("sbatch %s: unexpected output %q", path, stdout.String())
	}
	job := &SlurmJob{ID: id, Script: path, Runs: runs}
	if err := writeAtomic(filepath.Join(dir, "last-job"), []byte(id+"\n")); err != nil {
		return job, sum, err
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "slurm: submitted array job %s (%s, array %s), script %s, logs %s\n",
			id, plural.Count(len(runs), "task"), compressRanges(idx), path, filepath.Join(dir, id+"_<task>.out"))
	}
	if !o.Wait {
		return job, sum, nil
	}
	var tick func()
	if o.Progress != nil && o.ProgressEvery > 0 {
		last := time.Now()
		tick = func() {
			if time.Since(last) < o.ProgressEvery {
				return
			}
			last = time.Now()
			for _, r := range runs {
				if st := RunStatus(out, r); st.State == Running {
					fmt.Fprintln(o.Progress, progressLine(st))
				}
			}
		}
	}
	if err := FollowSlurm(ctx, job.ID, o.Poll, o.Progress, tick); err != nil {
		return job, sum, err
	}
	for _, r := range runs {
		st := RunStatus(out, r)
		switch st.State {
		case Done:
			sum.Done++
		case Failed:
			sum.Failed++
			sum.Errors = append(sum.Errors, fmt.Sprintf("run %s (task %s_%d): %s", r.Name, id, r.Index, firstLine(st.Message)))
		default:
			sum.Failed++
			msg := st.Message
			if msg == "" {
				msg = "did not finish"
			}
			sum.Errors = append(sum.Errors, fmt.Sprintf("run %s (task %s_%d): %s; see %s", r.Name, id, r.Index, msg,
				filepath.Join(dir, fmt.Sprintf("%s_%d.out", id, r.Index))))
		}
	}
	return job, sum, nil
}

// SlurmTasks returns the queued or running tasks of an array job as task
// id → state (PENDING, RUNNING, COMPLETING, ...), from squeue.
func SlurmTasks(ctx context.Context, jobID string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, "squeue", "--noheader", "--array", "--jobs", jobID, "--format", "%i|%T")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// squeue rejects the id of a job that has left the queue.
		if strings.Contains(stderr.String(), "Invalid job id") {
			return map[string]string{}, nil
		}
		return nil, fmt.Errorf("squeue: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	tasks := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if id, state, ok := strings.Cut(strings.TrimSpace(l), "|"); ok {
			tasks[id] = state
		}
	}
	return tasks, nil
}

// FollowSlurm polls squeue until the job has no task left in the queue,
// printing every change of a task's state; tick (if not nil) is called after
// every poll.
func FollowSlurm(ctx context.Context, jobID string, poll time.Duration, progress io.Writer, tick func()) error {
	if poll <= 0 {
		poll = 5 * time.Second
	}
	seen := map[string]string{}
	for {
		tasks, err := SlurmTasks(ctx, jobID)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(tasks))
		for id := range tasks {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if seen[id] != tasks[id] && progress != nil {
				fmt.Fprintf(progress, "slurm: task %s %s\n", id, strings.ToLower(tasks[id]))
			}
		}
		for id := range seen {
			if _, still := tasks[id]; !still && progress != nil {
				fmt.Fprintf(progress, "slurm: task %s left the queue\n", id)
			}
		}
		seen = tasks
		if len(tasks) == 0 {
			return nil
		}
		if tick != nil {
			tick()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped following job %s (it keeps running; 'scancel %s' stops it): %w", jobID, jobID, ctx.Err())
		case <-time.After(poll):
		}
	}
}
