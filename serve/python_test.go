package serve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPythonClient runs examples/python/serve_client.py (standard library
// only) against a server: two episodes of a fake dynamics, a batched
// request and a bad one.
func TestPythonClient(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("the Python client example is tested with %s: %v", python, err)
	}
	path := writePolicy(t, t.TempDir(), 4, 2, []int{8})
	ts := startServer(t, path, DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "../examples/python/serve_client.py", "--url", ts.url, "--episodes", "2", "--steps", "20")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("serve_client.py: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var sum struct {
		Episodes        int       `json:"episodes"`
		Steps           int       `json:"steps"`
		Returns         []float64 `json:"returns"`
		BatchConsistent bool      `json:"batch_consistent"`
		LogStd          []float64 `json:"log_std"`
		BadRequest      string    `json:"bad_request"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("last line is not the JSON summary: %v\n%s", err, out)
	}
	if sum.Episodes != 2 || sum.Steps != 40 || len(sum.Returns) != 2 || !sum.BatchConsistent || len(sum.LogStd) != 2 {
		t.Errorf("summary %+v\n%s", sum, out)
	}
	if !strings.Contains(sum.BadRequest, "HTTP 400") || !strings.Contains(sum.BadRequest, "3 values, the policy takes 4") {
		t.Errorf("bad request answered %q", sum.BadRequest)
	}
	if !strings.Contains(string(out), "sha256 "+ts.s.Info().SHA256[:12]) {
		t.Errorf("client did not print the policy info:\n%s", out)
	}
	_, m := get(t, ts.url+"/metrics")
	if v := metricValue(t, m, `koopq_serve_requests_total{code="200",handler="act"}`); v != 42 {
		t.Errorf("%v actions answered, want 42 (40 steps, 2 probes)", v)
	}
}
