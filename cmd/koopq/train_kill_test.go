package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/run"
)

// TestTrainSurvivesKill9 kills `koopq train` with SIGKILL at least 20 times
// at seeded random moments, each followed by --resume. The moments are
// exact points chosen through run.CrashEnv with seeded random occurrences:
// after a step, between the two metric logs, before a checkpoint (plus the
// partial temporary file that a kill inside the checkpoint write leaves),
// inside atomic writes of config/metrics/history/results, after an
// evaluation, before and after the final evaluation, before results.json;
// and, after the last step, random delays. The run must end bit-identical to an uninterrupted
// one: policy.safetensors, the checkpoint and history.json byte for byte,
// metrics.csv and results.json apart from their timing fields; and no file
// may be corrupt at any moment in between.
func TestTrainSurvivesKill9(t *testing.T) {
	tmp := t.TempDir()
	data := writePendulumData(t, filepath.Join(tmp, "p.hdf5"), 400, 7)
	const total = 600
	args := func(out string) []string {
		return tinyTrain(data, out, "k", "--steps", fmt.Sprint(total), "--bc-steps", "30", "--eval-every", "100",
			"--log-every", "3", "--checkpoint-every", "5", "--quiet")
	}
	ref := filepath.Join(tmp, "ref")
	t0 := time.Now()
	if r := runCLI(t, tmp, 2*time.Minute, args(ref)...); r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	// Random kill delays after the last step are fractions of an
	// uninterrupted run's duration W, so that they land inside this
	// machine's run at any speed.
	W := time.Since(t0)
	refDir := runDir(t, ref)

	out := filepath.Join(tmp, "killed")
	rng := rand.New(rand.NewPCG(killSeed, 12))
	dir := ""
	// start runs one process: a fresh run until the run directory has a
	// config.json, --resume afterwards. crash is a CrashEnv value or "";
	// delay > 0 kills the process after that long. It reports whether the
	// process died of SIGKILL.
	start := func(crash string, delay time.Duration) bool {
		t.Helper()
		var a []string
		if dir == "" {
			if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) == 1 {
				if _, err := os.Stat(filepath.Join(m[0], "config.json")); err == nil {
					dir = m[0]
				} else {
					// Killed between creating the directory and writing its
					// config: nothing was trained; start over.
					os.RemoveAll(m[0])
				}
			}
		}
		if dir == "" {
			a = args(out)
		} else {
			a = []string{"train", "--resume", dir, "--quiet"}
		}
		cmd := exec.Command(koopqBin, a...)
		cmd.Dir = tmp
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Env = os.Environ()
		if crash != "" {
			cmd.Env = append(cmd.Env, run.CrashEnv+"="+crash)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var timer *time.Timer
		if strings.HasSuffix(crash, ":STOP") {
			// Wait until the process has frozen itself at the crash point,
			// let it go on, and kill it delay later.
			waitStopped(t, cmd.Process.Pid)
			cmd.Process.Signal(syscall.SIGCONT)
			timer = time.AfterFunc(delay, func() { cmd.Process.Kill() })
		} else if delay > 0 {
			timer = time.AfterFunc(delay, func() { cmd.Process.Kill() })
		}
		err := cmd.Wait()
		if timer != nil {
			timer.Stop()
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
		if err != nil {
			t.Fatalf("koopq %s (crash %q): %v\n%s", strings.Join(a, " "), crash, err, stderr.String())
		}
		return false
	}
	// progress is the last logged step (an upper bound of the checkpoint's).
	progress := func() int {
		if dir == "" {
			return 0
		}
		f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
		if err != nil {
			return 0
		}
		defer f.Close()
		last := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var row map[string]float64
			if json.Unmarshal(sc.Bytes(), &row) == nil {
				last = int(row["step"])
			}
		}
		return last
	}
	// checkFiles asserts that every JSON file of the run parses and that
	// results.json, when present, is complete.
	checkFiles := func(when string) {
		t.Helper()
		if dir == "" {
			return
		}
		for _, f := range []string{"config.json", "history.json", "results.json"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if os.IsNotExist(err) {
				continue
			}
			var v any
			if err != nil || json.Unmarshal(b, &v) != nil {
				t.Fatalf("%s: %s is corrupt: %v\n%s", when, f, err, b)
			}
		}
	}
	plantPartialCheckpoint := func(k int) {
		if dir == "" {
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, "checkpoints", "latest.safetensors"))
		if err != nil {
			return
		}
		p := filepath.Join(dir, "checkpoints", fmt.Sprintf(".tmp-latest.safetensors-%d", k))
		if err := os.WriteFile(p, b[:len(b)/3], 0o600); err != nil {
			t.Fatal(err)
		}
	}

	kills, finalKills, midWrite := 0, 0, 0
	var log []string
	// Phase 1: 16 kills during training at seeded random points and
	// occurrences. Each advances the run by at most 30 steps (an in-loop
	// evaluation kill by at most 100, chosen only below step 400), so
	// training never reaches its end here.
	for attempt := 0; kills < 16; attempt++ {
		if attempt > 100 {
			t.Fatalf("phase 1 did not finish: %v", log)
		}
		var crash string
		var delay time.Duration
		switch c := rng.IntN(8); {
		case progress() > 500:
			crash = "atomic:1"
		case c <= 1:
			crash = fmt.Sprintf("step:%d", 1+rng.IntN(30))
		case c == 2:
			crash = fmt.Sprintf("metrics:%d", 1+rng.IntN(10))
		case c == 3:
			crash = fmt.Sprintf("checkpoint:%d", 1+rng.IntN(6))
		case c == 4 && progress() < 400:
			crash = "eval:1"
		case c == 4:
			crash = fmt.Sprintf("atomic:%d", 1+rng.IntN(2))
		case c >= 5:
			// Freeze after a step whose checkpoint comes next (a resumed
			// process starts after a multiple of 5), then kill at a random
			// moment within 2 ms: most such kills land inside the
			// checkpoint write (the test logs how many left its partial
			// temporary file).
			crash = fmt.Sprintf("step:%d:STOP", 5*(1+rng.IntN(4)))
			delay = time.Duration(rng.IntN(2000)) * time.Microsecond
		default:
			crash = fmt.Sprintf("atomic:%d", 1+rng.IntN(2))
		}
		if start(crash, delay) {
			kills++
			if m, _ := filepath.Glob(filepath.Join(dir, "checkpoints", ".tmp-*")); dir != "" && len(m) > 0 {
				midWrite++
			}
			log = append(log, fmt.Sprintf("%s@%d", killLabel(crash, delay), progress()))
			if strings.HasPrefix(crash, "checkpoint") {
				plantPartialCheckpoint(kills)
			}
		}
		checkFiles("after " + killLabel(crash, delay))
	}
	// Phase 2: kills after the last step: before the final evaluation, after
	// it, inside the history/results writes, before results.json, and at
	// random delays, until at least 24 kills in all.
	finalPoints := []string{"final:1", "eval:1", "atomic:3", "policy:1", "atomic:4", "atomic:1", "final:1"}
	for i := 0; kills < 24 || i < len(finalPoints); i++ {
		if i > 60 {
			t.Fatalf("phase 2 did not finish: %v", log)
		}
		crash, delay := "", time.Duration(0)
		if i < len(finalPoints) {
			crash = finalPoints[i]
		} else {
			delay = time.Duration(rng.Float64() * float64(W))
		}
		if !start(crash, delay) {
			if crash != "" {
				t.Fatalf("crash point %s was not reached (log %v)", crash, log)
			}
			break // a random delay outlasted the run: it finished
		}
		kills++
		log = append(log, killLabel(crash, delay)+"@end")
		if i < len(finalPoints) && i > 0 {
			finalKills++ // after the first "final:1", the checkpoint holds the last step
		}
		checkFiles("after " + killLabel(crash, delay))
	}
	if start("", 0) {
		t.Fatal("the last resume was killed")
	}
	t.Logf("%d kills (%d after the last step, %d inside a checkpoint write): %v", kills, finalKills, midWrite, log)
	if kills < 20 || finalKills < 5 {
		t.Fatalf("only %d kills, %d after the last step", kills, finalKills)
	}
	for _, sub := range []string{"", "checkpoints"} {
		if m, _ := filepath.Glob(filepath.Join(dir, sub, ".tmp-*")); len(m) > 0 {
			t.Errorf("temporary files left: %v", m)
		}
	}
	compareRuns(t, refDir, dir)
	for _, f := range []string{"metrics.jsonl"} {
		a, b := jsonlNoTiming(t, filepath.Join(refDir, f)), jsonlNoTiming(t, filepath.Join(dir, f))
		if a != b {
			t.Errorf("%s differs:\n%s\nvs\n%s", f, a, b)
		}
	}
	// And resuming the finished run once more is a no-op.
	before, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	r := runCLI(t, tmp, time.Minute, "train", "--resume", dir)
	after, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "already finished") || !bytes.Equal(before, after) {
		t.Fatalf("resuming the finished run: code %d, results changed %v\n%s", r.Code, !bytes.Equal(before, after), r.Stderr)
	}
}

// killSeed seeds the kill schedule.
var killSeed uint64 = 2026

// jsonlNoTiming returns metrics.jsonl rows without wall_seconds.
func jsonlNoTiming(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row map[string]float64
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		delete(row, "wall_seconds")
		j, _ := json.Marshal(row)
		out = append(out, string(j))
	}
	return strings.Join(out, "\n")
}

// killLabel names a kill for the test log: the crash point and/or the delay.
func killLabel(crash string, delay time.Duration) string {
	switch {
	case crash == "":
		return delay.Round(time.Millisecond).String()
	case delay > 0:
		return crash + "+" + delay.Round(10*time.Microsecond).String()
	}
	return crash
}

// waitStopped waits until process pid is stopped (state T in
// /proc/pid/stat), failing the test after a minute.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("process %d: %v", pid, err)
		}
		// The state follows the parenthesized command name.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && b[i+2] == 'T' {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d did not stop", pid)
}
