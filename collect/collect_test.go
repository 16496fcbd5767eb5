package collect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/koopq/koopq/dataset"
	_ "github.com/koopq/koopq/env/mujoco"
	"github.com/koopq/koopq/sac"
)

// tinySACRun makes a finished 3000-step hopper SAC run (32×32 networks)
// whose first snapshot (step 1000) is its medium policy.
func tinySACRun(t *testing.T) string {
	t.Helper()
	c := sac.DefaultRunConfig("hopper", -1e9)
	c.SAC.TotalSteps, c.SAC.StartSteps, c.SAC.Batch, c.SAC.Seed = 3000, 500, 64, 5
	c.SAC.Net.Hidden = []int{32, 32}
	c.SnapshotEvery, c.CheckpointEvery, c.EvalEpisodes = 1000, 1000, 1
	dir := t.TempDir()
	if _, err := sac.StartRun(context.Background(), c, dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

var allKinds = []string{"hopper-random-v2", "hopper-medium-v2", "hopper-expert-v2", "hopper-medium-expert-v2",
	"hopper-medium-replay-v2", "hopper-full-replay-v2"}

// TestD4RLDatasetsDeterministic: writing every dataset kind twice with the
// same seed gives identical files; another seed gives different rollouts.
func TestD4RLDatasetsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("SAC run")
	}
	runDir := tinySACRun(t)
	write := func(seed uint64) string {
		out := t.TempDir()
		if _, err := WriteD4RLDatasets(context.Background(), allKinds, D4RLOptions{Out: out, Transitions: 1500, Seed: seed, FromRun: runDir}, nil); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, c := write(3), write(3), write(4)
	for _, n := range allKinds {
		fa, _ := os.ReadFile(filepath.Join(a, n+".hdf5"))
		fb, _ := os.ReadFile(filepath.Join(b, n+".hdf5"))
		fc, _ := os.ReadFile(filepath.Join(c, n+".hdf5"))
		if len(fa) == 0 || !bytes.Equal(fa, fb) {
			t.Fatalf("%s: two writes with seed 3 differ (%d vs %d bytes)", n, len(fa), len(fb))
		}
		replay := strings.Contains(n, "replay")
		if !replay && bytes.Equal(fa, fc) {
			t.Fatalf("%s: seeds 3 and 4 gave identical files", n)
		}
	}
}

// TestD4RLDatasetsLoadWithH5py: h5py reads every kind under D4RL's key names
// and dtypes; D4RL's qlearning_dataset conventions hold (rows in episode
// order, so observations[i+1] is s' wherever neither flag is set; terminals
// and timeouts exclusive; episodes ≤ 1000 steps; infos/qpos is the state of
// s_t); and the sizes follow D4RL's recipe.
func TestD4RLDatasetsLoadWithH5py(t *testing.T) {
	if testing.Short() {
		t.Skip("SAC run")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import h5py, numpy").Run(); err != nil {
		t.Skip("python3 with h5py not available:", err)
	}
	runDir := tinySACRun(t)
	out := t.TempDir()
	files, err := WriteD4RLDatasets(context.Background(), allKinds, D4RLOptions{Out: out, Transitions: 1500, Seed: 1, FromRun: runDir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, mi, err := RunMedium(runDir, "", 0, 0)
	if err != nil || mi != 0 {
		t.Fatalf("medium snapshot %d, %v; want the first", mi, err)
	}
	script := `
import sys, json, h5py, numpy as np
out, obs = {}, {}
for path in sys.argv[1:]:
    with h5py.File(path, "r") as f:
        o, a, r = f["observations"][:], f["actions"][:], f["rewards"][:]
        no, te, to = f["next_observations"][:], f["terminals"][:], f["timeouts"][:]
        qp, qv, lp = f["infos/qpos"][:], f["infos/qvel"][:], f["infos/action_log_probs"][:]
        n = len(r)
        assert o.dtype == np.float32 and o.shape == (n, 11), o.shape
        assert a.dtype == np.float32 and a.shape == (n, 3) and np.all(np.abs(a) <= 1)
        assert r.dtype == np.float32 and no.shape == (n, 11)
        assert te.dtype == np.bool_ and to.dtype == np.bool_
        assert qp.shape == (n, 6) and qv.shape == (n, 6) and lp.shape == (n,)
        assert not np.any(te & to)
        assert to[-1] or te[-1], "last row must end an episode"
        ends = np.flatnonzero(te | to)
        lengths = np.diff(np.concatenate([[-1], ends]))
        assert lengths.max() <= 1000, lengths.max()
        # hopper: observation = qpos[1:] | clip(qvel, -10, 10); qpos is s_t's state
        assert np.array_equal(o[:, :5], qp[:, 1:].astype(np.float32))
        # d4rl.qlearning_dataset: i in 0..n-2, skip timeouts, s' = observations[i+1]
        keep = [i for i in range(n - 1) if not to[i]]
        cont = [i for i in keep if not te[i]]
        assert np.array_equal(o[[i + 1 for i in cont]], no[cont]), "rows not in episode order"
        meta = {k: f["metadata/" + k][()].decode() for k in f["metadata"]}
        obs[path.split("/")[-1]] = (o, te | to)
        out[path.split("/")[-1]] = {"n": n, "qlearning": len(keep), "terminals": int(te[:n-1][[not x for x in to[:n-1]]].sum()), "meta": meta}
# D4RL's stitch: medium cut after its last complete episode, then expert
mo, mend = obs["hopper-medium-v2.hdf5"]
k = np.flatnonzero(mend)[-1] + 1
me = obs["hopper-medium-expert-v2.hdf5"][0]
assert np.array_equal(me, np.concatenate([mo[:k], obs["hopper-expert-v2.hdf5"][0]])), "medium-expert is not medium[:k] + expert"
print(json.dumps(out))
`
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c", script}, paths...)...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("h5py: %v\n%s", err, b)
	}
	var got map[string]struct {
		N, Qlearning, Terminals int
		Meta                    map[string]string
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	med := got["hopper-medium-v2.hdf5"]
	for _, f := range files {
		g := got[filepath.Base(f.Path)]
		if g.Meta["env"] != "hopper" || g.Meta["dataset"] != f.Name || g.Meta["seed"] != "1" || g.Meta["koopq_version"] == "" || g.Meta["policy"] == "" {
			t.Fatalf("%s: metadata %v", f.Name, g.Meta)
		}
		// koopq's reader applies the same conversion.
		d, err := dataset.ReadD4RL(f.Path, dataset.ReadOptions{InProcess: true})
		if err != nil {
			t.Fatal(err)
		}
		if d.Len() != g.Qlearning {
			t.Fatalf("%s: koopq reads %d transitions, d4rl.qlearning_dataset convention gives %d", f.Name, d.Len(), g.Qlearning)
		}
		want := map[string]int{"hopper-random-v2": 1500, "hopper-medium-v2": 1500, "hopper-expert-v2": 1500,
			"hopper-medium-replay-v2": info.Snapshots[mi].ReplayLen, "hopper-full-replay-v2": 3000}
		if w, ok := want[f.Name]; ok && g.N != w {
			t.Fatalf("%s: %d rows, want %d", f.Name, g.N, w)
		}
	}
	if me := got["hopper-medium-expert-v2.hdf5"]; me.N <= 1500 || me.N > 3000 || me.N < med.N {
		t.Fatalf("medium-expert has %d rows (medium %d, expert 1500)", me.N, med.N)
	}
}

// TestExportPolicies: a run's medium and expert actors land in the target
// directory with manifest entries whose hashes match the files.
func TestExportPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("SAC run")
	}
	runDir := tinySACRun(t)
	dst := t.TempDir()
	es, err := ExportPolicies(runDir, dst, "", 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Role != "medium" || es[1].Role != "expert" || es[1].SACSteps != 3000 || es[0].SACSteps != 1000 {
		t.Fatalf("exported %+v", es)
	}
	var m []map[string]any
	b, err := os.ReadFile(filepath.Join(dst, "manifest.json"))
	if err != nil || json.Unmarshal(b, &m) != nil || len(m) != 2 {
		t.Fatalf("manifest: %s %v", b, err)
	}
	for _, e := range es {
		f, err := os.ReadFile(filepath.Join(dst, e.File))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(f)
		if hex.EncodeToString(sum[:]) != e.SHA256 {
			t.Fatalf("%s: hash mismatch", e.File)
		}
		if _, _, err := sac.ReadPolicy(filepath.Join(dst, e.File)); err != nil {
			t.Fatal(err)
		}
	}
	// Exporting again replaces, not duplicates, the entries.
	if _, err := ExportPolicies(runDir, dst, "", 0, 0, ""); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(dst, "manifest.json"))
	if json.Unmarshal(b, &m) != nil || len(m) != 2 {
		t.Fatalf("re-export: %s", b)
	}
}

// TestExportBestExpert: --expert-by best exports the snapshot with the
// highest re-measured stochastic return (checked against every snapshot's
// return measured here), records that return, and a bad rule is refused
// before anything is written.
func TestExportBestExpert(t *testing.T) {
	if testing.Short() {
		t.Skip("SAC run")
	}
	runDir := tinySACRun(t)
	info, err := sac.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	best, bestR := "", math.Inf(-1)
	for _, s := range info.Snapshots {
		r, err := sac.PolicyReturn("hopper", filepath.Join(runDir, s.File), 4, info.Config.SAC.Seed, true)
		if err != nil {
			t.Fatal(err)
		}
		if r > bestR {
			best, bestR = s.File, r
		}
	}
	dst := t.TempDir()
	es, err := ExportPolicies(runDir, dst, "", 0, 4, "best")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(runDir, best))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(want)
	ex := es[len(es)-1]
	if ex.Role != "expert" || ex.SHA256 != hex.EncodeToString(sum[:]) || ex.StochReturn != bestR || !strings.Contains(ex.Made, "expert: the best of") {
		t.Fatalf("expert %+v; want the file %s (stochastic return %v)", ex, best, bestR)
	}
	bad := filepath.Join(t.TempDir(), "out")
	if _, err := ExportPolicies(runDir, bad, "", 0, 4, "bestest"); err == nil || !strings.Contains(err.Error(), "bestest") {
		t.Fatalf("bad rule: %v", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatalf("a refused export created %s", bad)
	}
}

// RecordD4RLFiles keeps every dataset recorded in a directory's summary:
// later and concurrent records add entries, a dataset recorded again
// replaces its own, and a summary that is not a list is refused unchanged.
func TestRecordD4RLFiles(t *testing.T) {
	dir := t.TempDir()
	read := func() []D4RLFile {
		t.Helper()
		var fs []D4RLFile
		b, err := os.ReadFile(filepath.Join(dir, D4RLSummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &fs); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	if _, err := RecordD4RLFiles(dir, []D4RLFile{{Name: "walker2d-medium-v2", Rows: 1}, {Name: "hopper-medium-v2", Rows: 1}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := RecordD4RLFiles(dir, []D4RLFile{{Name: fmt.Sprintf("env%d-medium-v2", i), Rows: i}})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := RecordD4RLFiles(dir, []D4RLFile{{Name: "hopper-medium-v2", Rows: 2}}); err != nil {
		t.Fatal(err)
	}
	fs := read()
	if len(fs) != 10 {
		t.Fatalf("%d entries, want 10: %v", len(fs), fs)
	}
	for i, f := range fs {
		if i > 0 && fs[i-1].Name >= f.Name {
			t.Errorf("entries not sorted by name: %q before %q", fs[i-1].Name, f.Name)
		}
		if f.Name == "hopper-medium-v2" && f.Rows != 2 || f.Name == "walker2d-medium-v2" && f.Rows != 1 {
			t.Errorf("entry %+v", f)
		}
	}
	bad := []byte(`{"name": "not a list"}`)
	if err := os.WriteFile(filepath.Join(dir, D4RLSummaryFile), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RecordD4RLFiles(dir, []D4RLFile{{Name: "x-medium-v2"}}); err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("summary that is not a list: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, D4RLSummaryFile)); !bytes.Equal(b, bad) {
		t.Errorf("the refused summary was changed: %s", b)
	}
}
