package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/koopq/koopq/collect"
)

// Bad collect invocations fail with one clear error line and write nothing.
func TestCollectErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"collect", "hopper-medium-replay-v2", "--out", "d"}, []string{"replay buffer", "--from-run", "koopq collect --env hopper --run-dir"}},
		{[]string{"collect", "hopper-full-replay-v2", "--out", "d"}, []string{"replay buffer", "--from-run"}},
		{[]string{"collect", "hopper-medium-v0", "--out", "d"}, []string{"only v2"}},
		{[]string{"collect", "hopper-mediocre-v2", "--out", "d"}, []string{"hopper-mediocre-v2", "kind one of"}},
		{[]string{"collect", "hopper-random-v2", "nosuchenv-random-v2", "--out", "d"}, []string{"nosuchenv"}},
		{[]string{"collect", "hopper-random-v2", "--transitions", "0", "--out", "d"}, []string{"--transitions"}},
		{[]string{"collect", "hopper-random-v2", "--env", "hopper", "--out", "d"}, []string{"--env"}},
		{[]string{"collect", "--resume", "--out", "d"}, []string{"--run-dir"}},
		{[]string{"collect", "--run-dir", "r", "--resume"}, []string{"holds no run"}},
		{[]string{"collect", "--run-dir", "r"}, []string{"--env"}},
		{[]string{"collect", "--env", "hopper", "--run-dir", "r", "--sac-steps", "0"}, []string{"--sac-steps"}},
		{[]string{"collect", "hopper-medium-v2", "--from-run", "nothere", "--out", "d"}, []string{"--from-run", "holds no run"}},
		{[]string{"collect", "--from-run", "nothere"}, []string{"dataset names"}},
		// hopper-random-v2 would be written first; the missing policy of the
		// second dataset must stop the command before that.
		{[]string{"collect", "hopper-random-v2", "nosuchenv-medium-v2", "--out", "d"}, []string{"nosuchenv"}},
		{[]string{"collect", "hopper-random-v2", "ant-medium-v2", "--out", "d"}, []string{"no committed medium policy for ant"}},
		// --env with --resume of no run blamed --env, and an env without
		// reference returns sent the user to a flag that does not exist.
		{[]string{"collect", "--env", "pendulum", "--run-dir", "r", "--resume"}, []string{"holds no run to resume"}},
		{[]string{"collect", "--env", "mountaincar-continuous", "--run-dir", "r", "--sac-steps", "1000", "--snapshot-every", "500"},
			[]string{"has no reference returns", "use an env that has them: ", "hopper"}},
		{[]string{"collect", "--env", "mountaincar-continuous", "--run-dir", "r", "--sac-steps", "1000", "--snapshot-every", "500", "--medium-score", "50"},
			[]string{"has no reference returns"}},
		// SAC-run flags were silently ignored with dataset names.
		{[]string{"collect", "hopper-medium-v2", "--sac-steps", "5", "--out", "d"}, []string{"--sac-steps is not used with dataset names"}},
		// A discrete env was refused only after --out was made.
		{[]string{"collect", "--env", "cartpole", "--sac-steps", "1000", "--snapshot-every", "500", "--transitions", "100", "--out", "d"},
			[]string{"--env cartpole", "discrete"}},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			dir := t.TempDir()
			r := runCLI(t, dir, time.Minute, tc.args...)
			expectCLIError(t, r, tc.want...)
			if got := listTree(t, dir); len(got) != 0 {
				t.Errorf("failed command left %v", got)
			}
		})
	}
}

// koopq collect hopper-random-v2 writes a D4RL file without training, and
// the same command writes the same bytes again.
func TestCollectD4RLName(t *testing.T) {
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		out := filepath.Join(dir, []string{"a", "b"}[i])
		r := runCLI(t, dir, 2*time.Minute, "collect", "hopper-random-v2", "--transitions", "3000", "--seed", "2", "--out", out)
		if r.Code != 0 {
			t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stdout, "hopper-random-v2") || !strings.Contains(r.Stdout, "normalized") {
			t.Fatalf("summary missing:\n%s", r.Stdout)
		}
		files[i] = readFile(t, filepath.Join(out, "hopper-random-v2.hdf5"))
	}
	if string(files[0]) != string(files[1]) {
		t.Fatal("the same collect command wrote different bytes")
	}
	info := runCLI(t, dir, time.Minute, "dataset", "info", filepath.Join(dir, "a", "hopper-random-v2.hdf5"))
	if info.Code != 0 || !strings.Contains(info.Stdout, "normalized") || !strings.Contains(info.Stdout, "hopper-random-v2") {
		t.Fatalf("dataset info:\n%s%s", info.Stdout, info.Stderr)
	}

	// A later collection into the same directory adds to its summary
	// (collect-d4rl.json) instead of replacing it, and a dataset made again
	// replaces its own entry only.
	for _, c := range []struct {
		name, rows string
		want       map[string]int
	}{
		{"walker2d-random-v2", "300", map[string]int{"hopper-random-v2": 3000, "walker2d-random-v2": 300}},
		{"hopper-random-v2", "500", map[string]int{"hopper-random-v2": 500, "walker2d-random-v2": 300}},
	} {
		r := runCLI(t, dir, time.Minute, "collect", c.name, "--transitions", c.rows, "--out", filepath.Join(dir, "a"))
		if r.Code != 0 {
			t.Fatalf("collect %s: exit %d\n%s%s", c.name, r.Code, r.Stdout, r.Stderr)
		}
		var sum []collect.D4RLFile
		if err := json.Unmarshal(readFile(t, filepath.Join(dir, "a", collect.D4RLSummaryFile)), &sum); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, f := range sum {
			got[f.Name] = f.Rows
		}
		if !reflect.DeepEqual(got, c.want) || len(sum) != len(c.want) || sum[0].Name != "hopper-random-v2" {
			t.Errorf("after collect %s: summary %v (order %v), want %v", c.name, got, sum, c.want)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
