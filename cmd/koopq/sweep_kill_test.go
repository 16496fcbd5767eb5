package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/sweep"
)

// childrenOf lists the processes whose parent is pid, with their command
// lines (from /proc).
func childrenOf(pid int) map[int]string {
	kids := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: the fields after the last ')'.
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		kids[p] = strings.ReplaceAll(string(cmd), "\x00", " ")
	}
	return kids
}

// gone reports whether process pid has ended (no /proc entry, or a zombie
// waiting to be reaped).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// killSweepWhen starts 'koopq sweep run args' in work, waits until one of
// its children satisfies match, sends the sweep sig and checks that its
// children end with it. It returns the sweep's exit code and stderr.
func killSweepWhen(t *testing.T, work string, sig syscall.Signal, what string, match func(cmdline string) bool, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(koopqBin, append([]string{"sweep", "run"}, args...)...)
	cmd.Dir = work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var kids map[int]string
	waitFor(t, what, 3*time.Minute, func() (bool, string) {
		kids = childrenOf(cmd.Process.Pid)
		for _, c := range kids {
			if match(c) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("children %v", kids)
	})
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for pid, c := range kids {
		waitFor(t, fmt.Sprintf("child %d (%s) of the stopped sweep to end", pid, c), 30*time.Second, func() (bool, string) {
			return gone(pid), ""
		})
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// kill -9 of 'sweep run' takes its collect and its trainers with it: no
// orphan keeps writing, and the rerun neither marks a run failed nor
// collects a dataset twice at once; it finishes the sweep. A sweep stopped
// by SIGTERM exits with the resumable status of 'koopq train'.
func TestSweepKill9LeavesNoOrphans(t *testing.T) {
	work := t.TempDir()
	spec := strings.Replace(tinySweepSpec, "seeds: [0, 1]", "seeds: [0]", 1)
	spec = strings.Replace(spec, "  - {name: S4RL-N, augment: gaussian}\n", "", 1)
	spec = strings.Replace(spec, "data: data/pendulum-medium.hdf5}",
		"data: data/pendulum-medium.hdf5, collect: {sac-steps: 1500, transitions: 2000, snapshot-every: 200, hidden: [16, 16]}}", 1)
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "sw")
	args := []string{"spec.yaml", "--out", out, "--jobs", "1"}
	killSweepWhen(t, work, syscall.SIGKILL, "collect started", func(c string) bool { return strings.Contains(c, " collect ") }, args...)
	// An orphaned collect would have gone on to write the dataset.
	if _, err := os.Stat(filepath.Join(work, "data", "pendulum-medium.hdf5")); !os.IsNotExist(err) {
		t.Fatalf("the killed sweep's collect went on: %v", err)
	}
	slot := filepath.Join(out, "pendulum-medium__cql__s0")
	killSweepWhen(t, work, syscall.SIGKILL, "trainer checkpointed", func(c string) bool {
		m, _ := filepath.Glob(filepath.Join(slot, "*", "checkpoints", "latest.safetensors"))
		return strings.Contains(c, " train ") && len(m) > 0
	}, args...)
	// An orphaned trainer would have finished the run.
	if m, _ := filepath.Glob(filepath.Join(slot, "*", "results.json")); len(m) != 0 {
		t.Fatalf("the killed sweep's trainer went on: %v", m)
	}

	// SIGTERM (as SIGINT): the trainer checkpoints, and the sweep exits with
	// train's resumable status, not 1.
	code, stderr := killSweepWhen(t, work, syscall.SIGTERM, "trainer resumed", func(c string) bool { return strings.Contains(c, " train --resume ") }, args...)
	if code != sweep.ExitInterrupted || !strings.Contains(stderr, "1 run interrupted") {
		t.Fatalf("sweep stopped by SIGTERM: exit %d, want %d\n%s", code, sweep.ExitInterrupted, stderr)
	}

	r := runCLI(t, work, 3*time.Minute, append([]string{"sweep", "run"}, args...)...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "1 done, 0 skipped, 0 failed, 0 interrupted") || strings.Contains(r.Stdout, "FAILED") {
		t.Fatalf("rerun after kill -9: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	b, _ := os.ReadFile(filepath.Join(slot, "train.log"))
	if !strings.Contains(string(b), "train --resume") || strings.Contains(string(b), "in use by another koopq process") {
		t.Errorf("train.log:\n%s", b)
	}
}
