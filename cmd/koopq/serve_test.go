package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/sac"
)

func TestServeBadInput(t *testing.T) {
	fx := fixtures(t)
	runFailures(t, []cliCase{
		{"no-policy", []string{"serve"}, []string{"--policy"}},
		{"policy-missing", []string{"serve", "--policy", "nope.safetensors"}, []string{"--policy", "nope.safetensors", "no such file"}},
		{"policy-empty-dir", []string{"serve", "--policy", fx.SubDir}, []string{"--policy", fx.SubDir, "without policy.safetensors"}},
		{"policy-symlink-loop", []string{"serve", "--policy", fx.Loop}, []string{"--policy", "too many levels of symbolic links"}},
		{"policy-is-koopman-model", []string{"serve", "--policy", fx.Model}, []string{fx.Model, "not a koopq policy"}},
		{"max-batch-0", []string{"serve", "--policy", fx.PendulumPolicy, "--max-batch", "0"}, []string{"max batch 0"}},
		{"max-wait-negative", []string{"serve", "--policy", fx.PendulumPolicy, "--max-wait", "-1ms"}, []string{"max wait -1ms"}},
		{"max-body-tiny", []string{"serve", "--policy", fx.PendulumPolicy, "--max-body", "1"}, []string{"max body 1"}},
		{"bad-addr", []string{"serve", "--policy", fx.PendulumPolicy, "--addr", "127.0.0.1:99999"}, []string{"--addr"}},
		{"drain-0", []string{"serve", "--policy", fx.PendulumPolicy, "--drain-timeout", "0s"}, []string{"--drain-timeout"}},
	})
}

// TestServeSIGTERM runs koopq serve on a run directory and a free port,
// checks an answer against the policy's own Act, then sends SIGTERM while
// a request's body is still arriving: that request is answered, and the
// process exits 0.
func TestServeSIGTERM(t *testing.T) {
	fx := fixtures(t)
	runDir := t.TempDir()
	b, err := os.ReadFile(fx.PendulumPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "policy.safetensors"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(koopqBin, "serve", "--policy", runDir, "--addr", "127.0.0.1:0", "--max-wait", "1ms")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	var addr string
	var log []string
	timeout := time.After(time.Minute)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("koopq serve exited before listening: %s", strings.Join(log, "\n"))
			}
			log = append(log, l)
			if _, a, found := strings.Cut(l, "listening on http://"); found {
				addr = a
			}
		case <-timeout:
			t.Fatalf("koopq serve did not start listening: %s", strings.Join(log, "\n"))
		}
	}
	url := "http://" + addr

	p, _, err := sac.ReadPolicy(fx.PendulumPolicy)
	if err != nil {
		t.Fatal(err)
	}
	obs := []float64{0.5, -1, 2}
	want := make([]float64, 1)
	p.Act(obs, want)
	resp, err := http.Post(url+"/v1/act", "application/json", strings.NewReader(`{"observations": [[0.5, -1, 2]]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Actions [][]float64 }
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(got.Actions) != 1 || math.Float64bits(got.Actions[0][0]) != math.Float64bits(want[0]) {
		t.Fatalf("POST /v1/act: %d %v %v, want [[%v]]", resp.StatusCode, got.Actions, err, want[0])
	}

	// A request in flight (headers sent, body half sent) when SIGTERM comes.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"observations": [[0.5, -1, 2]]}`
	fmt.Fprintf(c, "POST /v1/act HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body[:10])
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(scrape(t, url), "\nkoopq_serve_act_in_flight 1\n") {
		if time.Now().After(deadline) {
			t.Fatal("the slow request never reached the handler")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Finish the body only once the server is draining.
	for l := range lines {
		if strings.Contains(l, "draining") {
			break
		}
	}
	io.WriteString(c, body[10:])
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the in-flight request was not answered: %v", err)
	}
	rb, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(rb), fmt.Sprint(want[0])) {
		t.Fatalf("in-flight request: %d %s, want 200 with %v", r.StatusCode, rb, want[0])
	}
	for range lines {
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("koopq serve exited %d after SIGTERM", ee.ExitCode())
		} else if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("koopq serve did not exit after SIGTERM")
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return "\n" + string(b)
}
