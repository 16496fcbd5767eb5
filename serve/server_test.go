package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/sac"
)

// writePolicy saves a small random policy (obs → act, hidden layers
// hidden, a non-trivial normalizer and action bounds) the way koopq train
// does, and returns its path.
func writePolicy(t testing.TB, dir string, obs, act int, hidden []int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(obs*100+act)))
	net := sac.NetConfig{Hidden: hidden, Init: "xavier"}
	actor := sac.NewActor(net, obs, act, rng)
	norm := dataset.Identity(obs)
	for i := range obs {
		norm.Mean[i] = float32(rng.NormFloat64())
		norm.Std[i] = float32(0.5 + rng.Float64())
	}
	scale := sac.ActionScale{Low: make([]float32, act), High: make([]float32, act)}
	for i := range act {
		scale.Low[i], scale.High[i] = -float32(i+1), 2*float32(i+1)
	}
	path := filepath.Join(dir, "policy.safetensors")
	if err := sac.SavePolicy(path, sac.NewPolicy(actor, norm, scale), net, "pendulum", nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// testServer serves the policy at path on a free loopback port until the
// test ends.
type testServer struct {
	s      *Server
	url    string
	cancel context.CancelFunc
	done   chan error
}

func startServer(t testing.TB, path string, cfg Config) *testServer {
	t.Helper()
	pol, err := LoadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(pol, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{s: s, url: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { ts.done <- s.Serve(ctx, ln, 10*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ts.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

func post(t testing.TB, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// reference returns what the policy's own Act gives for each row.
func reference(t testing.TB, path string, obs [][]float64) [][]float64 {
	t.Helper()
	p, _, err := sac.ReadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(obs))
	for i, o := range obs {
		out[i] = make([]float64, p.ActDim)
		p.Act(o, out[i])
	}
	return out
}

func randomObs(rng *rand.Rand, rows, dim int) [][]float64 {
	obs := make([][]float64, rows)
	for i := range obs {
		obs[i] = make([]float64, dim)
		for j := range obs[i] {
			obs[i][j] = 3 * rng.NormFloat64()
		}
	}
	return obs
}

func act(t testing.TB, url string, obs [][]float64, logStd bool) actResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"observations": obs, "log_std": logStd})
	code, b := post(t, url+"/v1/act", string(body))
	if code != http.StatusOK {
		t.Fatalf("POST /v1/act: %d %s", code, b)
	}
	var r actResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	return r
}

func sameBits(t testing.TB, what string, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s row %d: %d values, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
				t.Fatalf("%s[%d][%d] = %v, policy.Act gives %v", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

func TestActMatchesPolicyAct(t *testing.T) {
	path := writePolicy(t, t.TempDir(), 5, 2, []int{16, 16})
	rng := rand.New(rand.NewPCG(1, 1))
	for _, cfg := range []Config{
		{MaxBatch: 1, MaxBodyBytes: 1 << 20, MaxRows: 100},
		{MaxBatch: 8, MaxBodyBytes: 1 << 20, MaxRows: 100},
		{MaxBatch: 8, MaxWait: 2 * time.Millisecond, MaxBodyBytes: 1 << 20, MaxRows: 100},
	} {
		t.Run(fmt.Sprintf("batch%d-wait%v", cfg.MaxBatch, cfg.MaxWait), func(t *testing.T) {
			ts := startServer(t, path, cfg)
			// One row, many rows (more than a batch), and log-σ.
			for _, rows := range []int{1, 3, 21} {
				obs := randomObs(rng, rows, 5)
				r := act(t, ts.url, obs, rows == 3)
				sameBits(t, "actions", r.Actions, reference(t, path, obs))
				if rows == 3 {
					if len(r.LogStd) != 3 || len(r.LogStd[0]) != 2 {
						t.Fatalf("log_std %v: want 3×2", r.LogStd)
					}
					for _, row := range r.LogStd {
						for _, v := range row {
							if v < -20 || v > 2 {
								t.Fatalf("log_std %v outside the clamp [-20, 2]", v)
							}
						}
					}
				} else if r.LogStd != nil {
					t.Fatalf("log_std %v sent without being asked for", r.LogStd)
				}
			}
			// Concurrent clients, merged into batches: every answer is still
			// the policy's own.
			const clients, reqs = 16, 8
			obs := make([][][]float64, clients*reqs)
			for i := range obs {
				obs[i] = randomObs(rng, 1+i%3, 5)
			}
			got := make([]actResponse, len(obs))
			var wg sync.WaitGroup
			for c := range clients {
				wg.Go(func() {
					for k := range reqs {
						i := c*reqs + k
						got[i] = act(t, ts.url, obs[i], i%2 == 0)
					}
				})
			}
			wg.Wait()
			for i := range obs {
				sameBits(t, fmt.Sprintf("request %d actions", i), got[i].Actions, reference(t, path, obs[i]))
			}
			// The log-σ of a row does not depend on its batch either.
			solo := act(t, ts.url, obs[0], true)
			sameBits(t, "log_std", got[0].LogStd, solo.LogStd)
		})
	}
}

func TestForwardProbe(t *testing.T) {
	// With the default backend the probe decides; either way compute must
	// match Act bit for bit (TestActMatchesPolicyAct). Here: a batch of
	// one row is never "batched", and the probe is deterministic.
	path := writePolicy(t, t.TempDir(), 4, 2, []int{8})
	pol, err := LoadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	if newEngine(pol.Policy, 1).batched {
		t.Fatal("max batch 1 ran batched")
	}
	a, b := newEngine(pol.Policy, 16).batched, newEngine(pol.Policy.Clone(), 16).batched
	if a != b {
		t.Fatalf("probe gave %v then %v", a, b)
	}
	t.Logf("batched forward exact with this backend: %v", a)
	// Both ways of computing a batch give Act's bits: batched passes (when
	// the probe allows them) and row by row (when it does not).
	obs := randomObs(rand.New(rand.NewPCG(5, 5)), 21, 4)
	flat := slices.Concat(obs...)
	want := reference(t, path, obs)
	for _, batched := range []bool{false, a} {
		e := newEngine(pol.Policy, 16)
		e.batched = batched
		out := make([]float64, 21*2)
		passes := e.compute(flat, 21, out, nil)
		if batched && !slices.Equal(passes, []int{16, 5}) || !batched && len(passes) != 21 {
			t.Errorf("batched=%v: passes %v", batched, passes)
		}
		sameBits(t, fmt.Sprintf("batched=%v", batched), split(out, 21, 2), want)
	}
}

func TestBadRequests(t *testing.T) {
	path := writePolicy(t, t.TempDir(), 3, 1, []int{8})
	ts := startServer(t, path, Config{MaxBatch: 4, MaxBodyBytes: 4096, MaxRows: 5})
	row := `[0.1, 0.2, 0.3]`
	for _, c := range []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"wrong dimension", "POST", "/v1/act", `{"observations": [[1, 2]]}`, 400, "2 values, the policy takes 3"},
		{"ragged rows", "POST", "/v1/act", `{"observations": [` + row + `, [1, 2, 3, 4]]}`, 400, "observations[1]: 4 values"},
		{"NaN literal", "POST", "/v1/act", `{"observations": [[NaN, 1, 2]]}`, 400, "invalid JSON"},
		{"Infinity literal", "POST", "/v1/act", `{"observations": [[1, Infinity, 2]]}`, 400, "invalid JSON"},
		{"NaN string", "POST", "/v1/act", `{"observations": [[1, 2, "NaN"]]}`, 400, `observations[0][2]: not a number: "NaN"`},
		{"number as string", "POST", "/v1/act", `{"observations": [["1", 2, 3]]}`, 400, "not a number"},
		{"null", "POST", "/v1/act", `{"observations": [[1, null, 3]]}`, 400, "not a number: null"},
		{"boolean", "POST", "/v1/act", `{"observations": [[true, 1, 3]]}`, 400, "not a number: true"},
		{"object", "POST", "/v1/act", `{"observations": [[{"x": 1}, 1, 3]]}`, 400, "not a number"},
		{"beyond float64", "POST", "/v1/act", `{"observations": [[1e400, 1, 3]]}`, 400, "outside float32's finite range"},
		{"beyond float32", "POST", "/v1/act", `{"observations": [[1, -1e39, 3]]}`, 400, "outside float32's finite range"},
		{"row not an array", "POST", "/v1/act", `{"observations": [1, 2, 3]}`, 400, "observations: got a JSON number, want an array of rows, each an array of numbers"},
		{"observations not an array", "POST", "/v1/act", `{"observations": "x"}`, 400, "observations: got a JSON string, want an array of rows"},
		{"log_std not a boolean", "POST", "/v1/act", `{"observations": [` + row + `], "log_std": 1}`, 400, "log_std: got a JSON number, want true or false"},
		{"body not an object", "POST", "/v1/act", `[1, 2]`, 400, "the body: got a JSON array, want an object"},
		{"empty body", "POST", "/v1/act", ``, 400, "bad request body"},
		{"empty object", "POST", "/v1/act", `{}`, 400, "missing or empty"},
		{"no rows", "POST", "/v1/act", `{"observations": []}`, 400, "missing or empty"},
		{"unknown field", "POST", "/v1/act", `{"observation": [` + row + `]}`, 400, "unknown field"},
		{"field in upper case", "POST", "/v1/act", `{"OBSERVATIONS": [` + row + `]}`, 400, `unknown field "OBSERVATIONS"`},
		{"field in another case", "POST", "/v1/act", `{"observations": [` + row + `], "Log_Std": true}`, 400, `unknown field "Log_Std"`},
		{"field twice", "POST", "/v1/act", `{"observations": [[9, 9, 9]], "observations": [` + row + `]}`, 400, `"observations" given twice`},
		{"trailing data", "POST", "/v1/act", `{"observations": [` + row + `]} {}`, 400, "data after"},
		{"not JSON", "POST", "/v1/act", `observations=1`, 400, "invalid JSON"},
		{"too many rows", "POST", "/v1/act", `{"observations": [` + strings.Repeat(row+",", 5) + row + `]}`, 400, "6 rows, at most 5"},
		{"body too large", "POST", "/v1/act", `{"observations": [[` + strings.Repeat("0,", 3000) + `0]]}`, 413, "4096-byte limit"},
		{"GET act", "GET", "/v1/act", ``, 405, "method not allowed"},
		{"POST policy", "POST", "/v1/policy", `{}`, 405, "method not allowed"},
		{"unknown path", "GET", "/v2/act", ``, 404, "no such endpoint"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, ts.url+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, c.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var e struct{ Error string }
			if err := json.Unmarshal(b, &e); err != nil || !strings.Contains(e.Error, c.msg) {
				t.Fatalf("answer %s: want a JSON error containing %q", b, c.msg)
			}
			if strings.Contains(e.Error, "Go ") || strings.Contains(e.Error, "RawMessage") || strings.Contains(e.Error, "actRequest") {
				t.Errorf("answer %s names Go's types", b)
			}
		})
	}
	// The server still answers, and no bad request reached the network.
	sameBits(t, "actions", act(t, ts.url, [][]float64{{0.1, 0.2, 0.3}}, false).Actions, reference(t, path, [][]float64{{0.1, 0.2, 0.3}}))
	_, m := get(t, ts.url+"/metrics")
	if v := metricValue(t, m, `koopq_serve_batch_rows_count`); v != 1 {
		t.Errorf("%v forward passes, want 1 (only the good request's)", v)
	}
	if v := metricValue(t, m, `koopq_serve_requests_total{code="400",handler="act"}`); v != 25 {
		t.Errorf("%v answers 400 counted, want 25", v)
	}
	if v := metricValue(t, m, `koopq_serve_requests_total{code="413",handler="act"}`); v != 1 {
		t.Errorf("%v answers 413 counted, want 1", v)
	}
}

// TestNonFiniteActionIs400: an observation within float32's range whose
// normalized value overflows (here 3e38 over a feature std of 1e-3) gets a
// 400 naming its row, not a 500 from encoding NaN; the other rows of the
// request are not answered alone, and the server goes on.
func TestNonFiniteActionIs400(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	net := sac.NetConfig{Hidden: []int{8}, Init: "xavier"}
	norm := dataset.Identity(3)
	norm.Std[1] = 1e-3
	path := filepath.Join(t.TempDir(), "policy.safetensors")
	pol := sac.NewPolicy(sac.NewActor(net, 3, 1, rng), norm, sac.ActionScale{Low: []float32{-1}, High: []float32{1}})
	if err := sac.SavePolicy(path, pol, net, "pendulum", nil); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, path, DefaultConfig())
	for _, logStd := range []string{"false", "true"} {
		resp, err := http.Post(ts.url+"/v1/act", "application/json",
			strings.NewReader(`{"observations": [[0.1, 0.2, 0.3], [0, 3e38, 0]], "log_std": `+logStd+`}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "observations[1]: the policy has no finite action") {
			t.Errorf("log_std %s: %d %s, want 400 naming observations[1]", logStd, resp.StatusCode, b)
		}
	}
	sameBits(t, "actions", act(t, ts.url, [][]float64{{0.1, 0.2, 0.3}}, false).Actions, reference(t, path, [][]float64{{0.1, 0.2, 0.3}}))
}

// TestDrainWithUnusedConnection: a connection that has sent no request is
// nothing in flight; when the drain time ends before net/http gives up on
// it (5 s), Serve closes it and returns nil.
func TestDrainWithUnusedConnection(t *testing.T) {
	s, _, addr, cancel, done := serveUntilCancel(t, 200*time.Millisecond)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); s.openConns() == 0; runtime.Gosched() { // until the server has accepted it
		if time.Now().After(deadline) {
			t.Fatal("the server did not accept the connection")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v, want nil (no request was in flight)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("the unused connection is still open (read %d bytes)", n)
	}
}

// metricValue returns the value of the sample named (with labels) name in
// a Prometheus text exposition.
func metricValue(t testing.TB, exposition []byte, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			return v
		}
	}
	t.Fatalf("no metric %s in\n%s", name, exposition)
	return 0
}

func TestPolicyHealthMetrics(t *testing.T) {
	dir := t.TempDir()
	path := writePolicy(t, dir, 3, 2, []int{8})
	ts := startServer(t, dir, DefaultConfig()) // a run directory
	code, b := get(t, ts.url+"/v1/policy")
	if code != 200 {
		t.Fatalf("GET /v1/policy: %d %s", code, b)
	}
	var info PolicyInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	sum := sha256.Sum256(raw)
	if info.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %s, want %x", info.SHA256, sum)
	}
	if info.Path != path || info.Env != "pendulum" || info.ObsDim != 3 || info.ActDim != 2 || info.KoopqVersion == "" {
		t.Errorf("policy info %s", b)
	}
	if fmt.Sprint(info.ActionLow, info.ActionHigh) != "[-1 -2] [2 4]" {
		t.Errorf("bounds %v %v, want [-1 -2] [2 4]", info.ActionLow, info.ActionHigh)
	}
	if code, b := get(t, ts.url+"/healthz"); code != 200 || !strings.Contains(string(b), `"ok"`) {
		t.Errorf("GET /healthz: %d %s", code, b)
	}
	act(t, ts.url, [][]float64{{1, 2, 3}, {4, 5, 6}}, false)
	code, m := get(t, ts.url+"/metrics")
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	for name, want := range map[string]float64{
		`koopq_serve_requests_total{code="200",handler="act"}`:                 1,
		`koopq_serve_requests_total{code="200",handler="policy"}`:              1,
		`koopq_serve_request_duration_seconds_count{handler="act"}`:            1,
		`koopq_serve_request_rows_sum`:                                         2,
		`koopq_serve_batch_rows_sum`:                                           2,
		`koopq_serve_batch_requests_count`:                                     1,
		`koopq_serve_act_in_flight`:                                            0,
		`koopq_serve_request_duration_seconds_bucket{handler="act",le="+Inf"}`: 1,
	} {
		if v := metricValue(t, m, name); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	// Not a policy, a directory without one.
	if _, err := LoadPolicy(t.TempDir()); err == nil || !strings.Contains(err.Error(), "without policy.safetensors") {
		t.Errorf("empty directory: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "x.safetensors")
	os.WriteFile(bad, []byte("not a policy"), 0o644)
	if _, err := LoadPolicy(bad); err == nil {
		t.Error("a text file loaded as a policy")
	}
}

func TestConfigLimits(t *testing.T) {
	path := writePolicy(t, t.TempDir(), 3, 1, []int{8})
	pol, err := LoadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{
		{MaxBatch: 0, MaxBodyBytes: 1 << 20, MaxRows: 1},
		{MaxBatch: MaxMaxBatch + 1, MaxBodyBytes: 1 << 20, MaxRows: 1},
		{MaxBatch: 1, MaxWait: -1, MaxBodyBytes: 1 << 20, MaxRows: 1},
		{MaxBatch: 1, MaxWait: 2 * time.Second, MaxBodyBytes: 1 << 20, MaxRows: 1},
		{MaxBatch: 1, MaxBodyBytes: 10, MaxRows: 1},
		{MaxBatch: 1, MaxBodyBytes: 1 << 20, MaxRows: 0},
	} {
		if _, err := New(pol, c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

// serveUntilCancel serves a small policy (at path) with Serve on a free
// loopback port (addr) until cancel, draining up to drain; Serve's result
// arrives on done. cancel is also called when the test ends.
func serveUntilCancel(t *testing.T, drain time.Duration) (s *Server, path, addr string, cancel context.CancelFunc, done chan error) {
	t.Helper()
	path = writePolicy(t, t.TempDir(), 3, 1, []int{8})
	pol, err := LoadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, err = New(pol, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done = make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, drain) }()
	return s, path, ln.Addr().String(), cancel, done
}

// TestDrain: when the context ends, a request whose body is still arriving
// is answered in full, new connections are refused, and Serve returns nil.
func TestDrain(t *testing.T) {
	_, path, addr, cancel, done := serveUntilCancel(t, 10*time.Second)

	resp := slowRequest(t, addr, func() {
		waitInFlight(t, "http://"+addr)
		cancel()
		// New connections are refused once the listener is closed.
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				break
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Fatal("still accepting connections while draining")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	sameBits(t, "drained request", resp.Actions, reference(t, path, [][]float64{{0.5, -1, 2}}))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after draining")
	}
}

// slowRequest sends POST /v1/act for the observation [0.5, -1, 2] over a
// raw connection: the headers and half the body, then runs between (with
// the request in flight), then the rest; it returns the answer, which
// must be 200.
func slowRequest(t testing.TB, addr string, between func()) actResponse {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := `{"observations": [[0.5, -1, 2]]}`
	fmt.Fprintf(c, "POST /v1/act HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body[:10])
	between()
	if _, err := io.WriteString(c, body[10:]); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("in-flight request: %d %s", resp.StatusCode, b)
	}
	var r actResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitInFlight polls /metrics until one /v1/act request is being handled.
func waitInFlight(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, m := get(t, url+"/metrics")
		if metricValue(t, m, "koopq_serve_act_in_flight") == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the handler")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
