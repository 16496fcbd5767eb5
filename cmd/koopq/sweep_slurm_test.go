package main

// The Slurm integration test: a real single-node Slurm cluster (Debian's
// slurm-wlm and munge, installed by `make deps`) on 127.0.0.1 with its own
// munge socket, config and ports, runs a 4-task array of tiny trainings
// through `koopq sweep run --executor slurm`; one task is cancelled mid-run
// and the sweep resubmitted, and every run must end with the same results as
// the local executor's.

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slurmCluster is a running slurmctld + slurmd (+ munged) started by a test.
type slurmCluster struct {
	dir   string
	conf  string
	procs []*exec.Cmd
}

// env returns the environment for Slurm clients of this cluster.
func (c *slurmCluster) env() []string { return append(os.Environ(), "SLURM_CONF="+c.conf) }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond every 10 ms until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: not after %v (last: %s)", what, limit, last)
}

// startSlurm starts munged, slurmctld and slurmd in a temporary directory
// and stops them (by PID) when the test ends. Missing binaries fail the test:
// `make deps` installs slurm-wlm and munge.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	for _, b := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Fatalf("%s not found: install Debian's slurm-wlm and munge ('make deps' does)", b)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("the Slurm integration test runs its daemons as root (SlurmUser=root), as CI does")
	}
	// Unix socket paths must stay short: use a short temp dir.
	dir, err := os.MkdirTemp("", "kq-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &slurmCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	t.Cleanup(c.stop)

	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "munge.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge.sock")
	c.start(t, "munged", "--foreground", "--force", "--socket="+sock, "--key-file="+filepath.Join(dir, "munge.key"),
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--log-file="+filepath.Join(dir, "munged.log"),
		"--seed-file="+filepath.Join(dir, "munged.seed"))
	waitFor(t, "munged socket", 20*time.Second, func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, fmt.Sprint(err)
	})

	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	for _, d := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`ClusterName=koopqtest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
AuthType=auth/munge
AuthInfo=socket=%[4]s
CredType=cred/munge
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/slurmctld.log
SlurmdLogFile=%[5]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=5
MinJobAge=2
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[6]d RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, freePort(t), freePort(t), sock, dir, runtime.NumCPU())
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(t, "slurmctld", "-D", "-c", "-f", c.conf)
	c.start(t, "slurmd", "-D", "-f", c.conf)
	waitFor(t, "slurm node idle", 60*time.Second, func() (bool, string) {
		cmd := exec.Command("sinfo", "--noheader", "--format", "%T")
		cmd.Env = c.env()
		out, err := cmd.CombinedOutput()
		s := strings.TrimSpace(string(out))
		return err == nil && s == "idle", fmt.Sprintf("%s %v", s, err)
	})
	return c
}

// start runs a daemon in the foreground as a child of the test.
func (c *slurmCluster) start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	logf, err := os.Create(filepath.Join(c.dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	c.procs = append(c.procs, cmd)
}

// stop terminates the daemons by PID (newest first) and waits for them.
func (c *slurmCluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	c.procs = nil
}

// tinySweepSpec is 1 dataset × 2 methods × 2 seeds of a few-second training.
const tinySweepSpec = `name: slurmtest
datasets:
  - {name: pendulum-medium, env: pendulum, data: data/pendulum-medium.hdf5}
methods:
  - {name: CQL, augment: none}
  - {name: S4RL-N, augment: gaussian}
seeds: [0, 1]
steps: 5000
preset: paper
eval: {every: 2500, episodes: 2}
flags: {hidden: [16, 16], batch: 32, bc-steps: 100, log-every: 250, checkpoint-every: 250}
threads: 1
`

// makeTinyData writes a small Pendulum dataset into dir/data.
func makeTinyData(t *testing.T, dir string) {
	t.Helper()
	r := runCLI(t, dir, 2*time.Minute, "collect", "--env", "pendulum", "--sac-steps", "600", "--transitions", "2000",
		"--snapshot-every", "200", "--hidden", "16,16", "--out", "data")
	if r.Code != 0 {
		t.Fatalf("collect: %d\n%s", r.Code, r.Stderr)
	}
}

// finalResults reads the results.json of every run of a sweep directory,
// keeping the fields that must not depend on where a run executed.
func finalResults(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "*", "*", "results.json"))
	res := map[string]map[string]any{}
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		slot := filepath.Base(filepath.Dir(filepath.Dir(p)))
		res[slot] = map[string]any{"final_eval": r["final_eval"], "history": r["history"], "steps": r["steps"],
			"last_stats": r["last_stats"], "seed": r["seed"]}
	}
	return res
}

func TestSweepSlurmMatchesLocal(t *testing.T) {
	work := t.TempDir()
	makeTinyData(t, work)
	if err := os.WriteFile(filepath.Join(work, "spec.yaml"), []byte(tinySweepSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	cluster := startSlurm(t)
	t.Logf("slurm cluster up in %.1fs", time.Since(t0).Seconds())

	// Slurm first (it holds the cores for a while), then the local reference.
	slurmOut := filepath.Join(work, "slurm")
	cmd := exec.Command(koopqBin, "sweep", "run", "spec.yaml", "--out", slurmOut, "--executor", "slurm", "--poll", "200ms", "--progress-every", "1s")
	cmd.Dir, cmd.Env = work, cluster.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	// Cancel task 1 as soon as its run has a checkpoint and before it ends.
	victim := filepath.Join(slurmOut, "pendulum-medium__cql__s1")
	waitFor(t, "task 1's first checkpoint", 90*time.Second, func() (bool, string) {
		m, _ := filepath.Glob(filepath.Join(victim, "*", "checkpoints", "latest.safetensors"))
		return len(m) > 0, stdout.String() + stderr.String()
	})
	// Freeze the trainer (its pid is in the run directory's lock file) so
	// that it cannot finish between this check and Slurm's signals however
	// loaded the machine is: the cancel's SIGTERM then finds it mid-run
	// (Slurm sends SIGCONT with it, or SIGKILL after KillWait).
	freezeTrainer(t, victim)
	if m, _ := filepath.Glob(filepath.Join(victim, "*", "results.json")); len(m) > 0 {
		t.Fatal("task 1 finished before it could be cancelled: make the runs longer")
	}
	jobID, err := os.ReadFile(filepath.Join(slurmOut, ".sweep", "slurm", "last-job"))
	if err != nil {
		t.Fatal(err)
	}
	scancel := exec.Command("scancel", strings.TrimSpace(string(jobID))+"_1")
	scancel.Env = cluster.env()
	if out, err := scancel.CombinedOutput(); err != nil {
		t.Fatalf("scancel: %v %s", err, out)
	}
	select {
	case err := <-waited:
		// The interrupted run is reported and the sweep exits 1.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "1 run of job") {
			t.Fatalf("first slurm sweep: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("first slurm sweep did not end\n%s", stdout.String())
	}
	t.Logf("first array job ended at %.1fs:\n%s", time.Since(t0).Seconds(), stdout.String())
	if m, _ := filepath.Glob(filepath.Join(victim, "*", "results.json")); len(m) > 0 {
		t.Fatal("the cancelled task finished anyway: the kill came too late to test resuming")
	}
	st := runCLIEnv(t, work, cluster.env(), time.Minute, "sweep", "status", slurmOut)
	if !strings.Contains(st.Stdout, "4 runs: 3 done, 0 running, 0 failed, 1 pending") || !strings.Contains(st.Stdout, "partial") {
		t.Errorf("status after the cancel:\n%s%s", st.Stdout, st.Stderr)
	}

	// Resubmitting runs only the unfinished task, which resumes.
	r := runCLIEnv(t, work, cluster.env(), 3*time.Minute, "sweep", "run", "spec.yaml", "--out", slurmOut, "--executor", "slurm", "--poll", "200ms")
	if r.Code != 0 || !strings.Contains(r.Stdout, "(1 task, array 1)") {
		t.Fatalf("resubmission: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	b, _ := os.ReadFile(filepath.Join(victim, "train.log"))
	if !strings.Contains(string(b), "train --resume") {
		t.Errorf("the resubmitted task did not resume:\n%s", b)
	}
	runDirs, _ := filepath.Glob(filepath.Join(victim, "run-*"))
	if len(runDirs) != 1 {
		t.Errorf("run directories of the resumed run: %v", runDirs)
	}

	t.Logf("resubmitted task done at %.1fs", time.Since(t0).Seconds())
	local := filepath.Join(work, "local")
	r = runCLI(t, work, 3*time.Minute, "sweep", "run", "spec.yaml", "--out", local, "--jobs", "2")
	if r.Code != 0 {
		t.Fatalf("local sweep: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("local sweep done at %.1fs", time.Since(t0).Seconds())
	got, want := finalResults(t, slurmOut), finalResults(t, local)
	if len(want) != 4 || len(got) != 4 {
		t.Fatalf("%d Slurm results, %d local results, want 4 each", len(got), len(want))
	}
	for name, w := range want {
		if !reflect.DeepEqual(got[name], w) {
			gj, _ := json.Marshal(got[name])
			wj, _ := json.Marshal(w)
			t.Errorf("run %s differs between Slurm and local:\nslurm %s\nlocal %s", name, gj, wj)
		}
	}
	// Every Slurm task left its log.
	logs, _ := filepath.Glob(filepath.Join(slurmOut, ".sweep", "slurm", "*_*.out"))
	if len(logs) != 5 {
		t.Errorf("slurm logs %v, want 4 tasks + 1 resubmitted", logs)
	}
}

// freezeTrainer stops (SIGSTOP) the training process of the sweep slot
// directory slot, found by the pid its run directory's lock file names. A
// trainer that has already ended is left to the caller's checks.
func freezeTrainer(t *testing.T, slot string) {
	t.Helper()
	locks, _ := filepath.Glob(filepath.Join(slot, "run-*", ".lock"))
	if len(locks) != 1 {
		t.Fatalf("lock files of %s: %v, want 1", slot, locks)
	}
	b, err := os.ReadFile(locks[0])
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Logf("no trainer pid in %s (%q): it has ended", locks[0], b)
		return
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Logf("SIGSTOP to trainer pid %d: %v", pid, err)
		return
	}
	// Never leave it stopped, whatever Slurm did: continued, it acts on the
	// signals it holds or finishes (harmless to a process long gone).
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
}

// runCLIEnv is runCLI with extra environment variables (KEY=VALUE) set for
// this one invocation.
func runCLIEnv(t *testing.T, dir string, env []string, limit time.Duration, args ...string) cliResult {
	t.Helper()
	type saved struct {
		val string
		ok  bool
	}
	old := map[string]saved{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, done := old[k]; !done {
			val, ok := os.LookupEnv(k)
			old[k] = saved{val, ok}
		}
		os.Setenv(k, v)
	}
	defer func() {
		for k, s := range old {
			if s.ok {
				os.Setenv(k, s.val)
			} else {
				os.Unsetenv(k)
			}
		}
	}()
	return runCLI(t, dir, limit, args...)
}
