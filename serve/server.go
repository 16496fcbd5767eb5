// Package serve answers a trained koopq policy over HTTP (`koopq serve`).
//
//	POST /v1/act     {"observations": [[…], …], "log_std": false}
//	                 → {"actions": [[…], …]} (and "log_std": [[…], …] when asked)
//	GET  /v1/policy  env, dimensions, action bounds, sha256 of the file, koopq version
//	GET  /healthz    {"status": "ok"}
//	GET  /metrics    Prometheus metrics
//
// Actions are the policy's deterministic ones, tanh of the Gaussian mean in
// env units, bit for bit what sac.Policy.Act returns for the same
// observation (JSON numbers round-trip float64 exactly). Concurrent
// requests are merged into micro-batches (see batcher); a policy is not
// safe for concurrent use, so only the batcher touches it. Bad requests
// are answered 4xx with {"error": "…"} before they reach the network, but
// for one kind found only after it: an observation for which the network
// gives no finite action (400 naming the row; NaN is never answered).
package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/rundir"
	"github.com/koopq/koopq/sac"
)

// Config holds the server's limits and batching settings.
type Config struct {
	// MaxBatch is the most rows merged into one forward pass (1: no
	// batching, every row alone).
	MaxBatch int
	// MaxWait is how long the batcher waits, after the first request of a
	// batch, for more to fill it; 0 merges only requests already queued.
	MaxWait time.Duration
	// MaxBodyBytes is the largest /v1/act body accepted (413 beyond).
	MaxBodyBytes int64
	// MaxRows is the most observation rows one request may send.
	MaxRows int
	// Log receives one line per server event (start, drain); nil: none.
	Log *log.Logger
}

// Limits on Config values, checked by New.
const (
	MaxMaxBatch = 256
	MaxMaxWait  = time.Second
)

// DefaultConfig returns the settings `koopq serve` starts with.
func DefaultConfig() Config {
	return Config{MaxBatch: 32, MaxWait: 0, MaxBodyBytes: 1 << 20, MaxRows: 1024}
}

func (c Config) validate() error {
	if c.MaxBatch < 1 || c.MaxBatch > MaxMaxBatch {
		return fmt.Errorf("max batch %d: want 1 to %d", c.MaxBatch, MaxMaxBatch)
	}
	if c.MaxWait < 0 || c.MaxWait > MaxMaxWait {
		return fmt.Errorf("max wait %v: want 0 to %v", c.MaxWait, MaxMaxWait)
	}
	if c.MaxBodyBytes < 64 {
		return fmt.Errorf("max body %d bytes: want at least 64", c.MaxBodyBytes)
	}
	if c.MaxRows < 1 {
		return fmt.Errorf("max rows %d: want at least 1", c.MaxRows)
	}
	return nil
}

// Policy is a policy file loaded for serving.
type Policy struct {
	Policy *sac.Policy
	Path   string            // the file read
	Meta   map[string]string // the file's metadata
	SHA256 string            // hex digest of the file's bytes
}

// LoadPolicy reads a policy file (policy.safetensors written by koopq
// train or sac.SavePolicy), or the policy.safetensors of a run directory.
// The digest is of the very bytes the policy is made from.
func LoadPolicy(path string) (*Policy, error) {
	path, err := rundir.PolicyPath(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, meta, err := sac.ReadPolicyBytes(path, b)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return &Policy{Policy: p, Path: path, Meta: meta, SHA256: hex.EncodeToString(sum[:])}, nil
}

// Server serves one policy. Make it with New, serve with Serve (or mount
// Handler and call Close after the last request).
type Server struct {
	pol  *Policy
	cfg  Config
	info PolicyInfo
	m    *metrics
	b    *batcher
	mux  *http.ServeMux

	connMu sync.Mutex
	conns  map[net.Conn]http.ConnState // Serve's open connections and their states
}

// PolicyInfo is the /v1/policy answer.
type PolicyInfo struct {
	Path           string          `json:"path"`
	Env            string          `json:"env"`
	ObsDim         int             `json:"obs_dim"`
	ActDim         int             `json:"act_dim"`
	ActionLow      []float32       `json:"action_low"`
	ActionHigh     []float32       `json:"action_high"`
	SHA256         string          `json:"sha256"`
	Net            json.RawMessage `json:"net,omitempty"`
	KoopqVersion   string          `json:"koopq_version"`
	KoopqCommit    string          `json:"koopq_commit"`
	MaxBatch       int             `json:"max_batch"`
	MaxWaitSeconds float64         `json:"max_wait_seconds"`
	MaxRows        int             `json:"max_rows"`
	MaxBodyBytes   int64           `json:"max_body_bytes"`
	// BatchedForward says whether batches run as one forward pass (the
	// GEMM backend gives every row the bits it gives it alone) or row by
	// row.
	BatchedForward bool `json:"batched_forward"`
}

// New checks cfg, probes whether batched forward passes are exact (see
// engine) and starts the batcher.
func New(pol *Policy, cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	eng := newEngine(pol.Policy, cfg.MaxBatch)
	v := version.Get()
	p := pol.Policy
	info := PolicyInfo{Path: pol.Path, Env: pol.Meta["env"], ObsDim: eng.obsDim, ActDim: eng.actDim,
		ActionLow: p.Scale.Low, ActionHigh: p.Scale.High, SHA256: pol.SHA256,
		KoopqVersion: v.Module, KoopqCommit: v.Commit,
		MaxBatch: cfg.MaxBatch, MaxWaitSeconds: cfg.MaxWait.Seconds(), MaxRows: cfg.MaxRows, MaxBodyBytes: cfg.MaxBodyBytes,
		BatchedForward: eng.batched}
	if net := pol.Meta["net"]; json.Valid([]byte(net)) {
		info.Net = json.RawMessage(net)
	}
	s := &Server{pol: pol, cfg: cfg, info: info, m: newMetrics()}
	s.b = newBatcher(eng, cfg.MaxBatch, cfg.MaxWait, 4*MaxMaxBatch, s.m)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/v1/act", s.m.instrument("act", s.act))
	s.mux.HandleFunc("/v1/policy", s.m.instrument("policy", s.policy))
	s.mux.HandleFunc("/healthz", s.m.instrument("healthz", s.healthz))
	metricsH := s.m.handler()
	s.mux.HandleFunc("/metrics", s.m.instrument("metrics", func(w http.ResponseWriter, r *http.Request) {
		if allow(w, r, http.MethodGet) {
			metricsH.ServeHTTP(w, r)
		}
	}))
	s.mux.HandleFunc("/", s.m.instrument("other", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint %s (have POST /v1/act, GET /v1/policy, /healthz, /metrics)", r.URL.Path)
	}))
	return s, nil
}

// Info returns what /v1/policy answers.
func (s *Server) Info() PolicyInfo { return s.info }

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// Close stops the batcher. Requests still arriving at Handler after Close
// must not exist: close the HTTP server first.
func (s *Server) Close() { s.b.close() }

// Serve answers requests on ln until ctx is done, then stops accepting,
// waits up to drain for the requests in flight to be answered, and stops
// the batcher. It returns nil after a complete drain. A connection that
// has sent no request yet is not a request in flight: net/http keeps such
// a connection up to 5 s into a drain (its request may be on the way), and
// if drain ends first it is closed without an error.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	hs := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, ConnState: s.trackConn}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.logf("draining: no new connections; waiting up to %v for requests in flight", drain)
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := hs.Shutdown(dctx)
	if err != nil && s.activeConns() == 0 {
		n := s.openConns()
		hs.Close()
		s.logf("closed %d connection(s) that had sent no request", n)
		err = nil
	}
	<-errc // http.ErrServerClosed
	s.Close()
	if err != nil {
		return fmt.Errorf("draining requests in flight: %w", err)
	}
	s.logf("drained")
	return nil
}

// trackConn is Serve's http.Server.ConnState hook.
func (s *Server) trackConn(c net.Conn, st http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.conns == nil {
		s.conns = map[net.Conn]http.ConnState{}
	}
	if st == http.StateClosed || st == http.StateHijacked {
		delete(s.conns, c)
	} else {
		s.conns[c] = st
	}
}

// activeConns is the number of Serve's connections reading or answering a
// request (http.StateActive).
func (s *Server) activeConns() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	n := 0
	for _, st := range s.conns {
		if st == http.StateActive {
			n++
		}
	}
	return n
}

// openConns is the number of Serve's open connections.
func (s *Server) openConns() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return len(s.conns)
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log != nil {
		s.cfg.Log.Printf(format, args...)
	}
}

// actRequest is the /v1/act body. Numbers are kept raw so that each bad
// one is reported by position, and null, strings or booleans are not
// silently read as 0.
type actRequest struct {
	Observations [][]json.RawMessage `json:"observations"`
	LogStd       bool                `json:"log_std"`
}

type actResponse struct {
	Actions [][]float64 `json:"actions"`
	LogStd  [][]float64 `json:"log_std,omitempty"`
}

func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	s.m.inFlight.Inc()
	defer s.m.inFlight.Dec()
	if !allow(w, r, http.MethodPost) {
		return
	}
	obs, rows, withStd, code, err := s.parseAct(w, r)
	if err != nil {
		writeError(w, code, "%v", err)
		return
	}
	s.m.requestRows.Observe(float64(rows))
	ad := s.info.ActDim
	j := &job{obs: obs, rows: rows, act: make([]float64, rows*ad), done: make(chan struct{})}
	if withStd {
		j.logStd = make([]float64, rows*ad)
	}
	select {
	case s.b.jobs <- j:
	case <-r.Context().Done():
		return // the client left
	}
	select {
	case <-j.done:
	case <-r.Context().Done():
		return
	}
	if i := nonFiniteRow(j.act, j.logStd, ad); i >= 0 {
		writeError(w, http.StatusBadRequest, "observations[%d]: the policy has no finite action for it (an observation this far from "+
			"the data the policy was trained on overflows float32 inside the network)", i)
		return
	}
	resp := actResponse{Actions: split(j.act, rows, ad)}
	if withStd {
		resp.LogStd = split(j.logStd, rows, ad)
	}
	writeJSON(w, http.StatusOK, resp)
}

// nonFiniteRow is the first row (of width w) of act or logStd (nil: none)
// holding NaN or ±Inf, or -1.
func nonFiniteRow(act, logStd []float64, w int) int {
	for _, x := range [][]float64{act, logStd} {
		for k, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return k / w
			}
		}
	}
	return -1
}

// parseAct reads and checks a /v1/act body: observations [rows, obsDim]
// of finite numbers within float32's range (the actor computes in
// float32), 1 to MaxRows rows. On error it returns the status to answer.
func (s *Server) parseAct(w http.ResponseWriter, r *http.Request) (obs []float64, rows int, withStd bool, code int, err error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, 0, false, http.StatusRequestEntityTooLarge, fmt.Errorf("body over the %d-byte limit", mb.Limit)
		}
		return nil, 0, false, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err)
	}
	bad := func(format string, args ...any) ([]float64, int, bool, int, error) {
		return nil, 0, false, http.StatusBadRequest, fmt.Errorf(format, args...)
	}
	var req actRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return bad("invalid JSON at byte %d: %v (NaN and Infinity are not JSON numbers)", se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) { // name the field and what it takes, not Go's types
			where, want := "the body", `an object {"observations": [[numbers], …]}`
			switch te.Field {
			case "observations":
				where, want = "observations", "an array of rows, each an array of numbers"
			case "log_std":
				where, want = "log_std", "true or false"
			}
			return bad("%s: got a JSON %s, want %s", where, te.Value, want)
		}
		return bad("bad request body: %v (want {\"observations\": [[numbers], …]})", err)
	}
	if dec.More() {
		return bad("bad request body: data after the JSON object")
	}
	if err := exactFields(body); err != nil {
		return bad("%v", err)
	}
	rows = len(req.Observations)
	if rows == 0 {
		return bad("observations: missing or empty (want {\"observations\": [[numbers], …]})")
	}
	if rows > s.cfg.MaxRows {
		return bad("observations: %d rows, at most %d per request", rows, s.cfg.MaxRows)
	}
	od := s.info.ObsDim
	obs = make([]float64, rows*od)
	for i, row := range req.Observations {
		if len(row) != od {
			return bad("observations[%d]: %d values, the policy takes %d", i, len(row), od)
		}
		for k, raw := range row {
			v, err := parseNumber(raw)
			if err != nil {
				return bad("observations[%d][%d]: %v", i, k, err)
			}
			obs[i*od+k] = v
		}
	}
	return obs, rows, req.LogStd, 0, nil
}

// exactFields refuses what encoding/json lets through in a body it has
// decoded: a field name in another letter case ("Observations") and a
// field given twice (where the last would silently win).
func exactFields(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		if k != "observations" && k != "log_std" {
			return fmt.Errorf("unknown field %q (the fields are observations and log_std, in lower case)", k)
		}
		if seen[k] {
			return fmt.Errorf("field %q given twice", k)
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// parseNumber reads one JSON value that must be a number finite in
// float32.
func parseNumber(raw json.RawMessage) (float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		s := string(raw)
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return 0, fmt.Errorf("not a number: %s", s)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
		return 0, fmt.Errorf("%s is outside float32's finite range", raw)
	}
	return v, nil
}

func split(x []float64, rows, w int) [][]float64 {
	out := make([][]float64, rows)
	for i := range out {
		out[i] = x[i*w : (i+1)*w : (i+1)*w]
	}
	return out
}

func (s *Server) policy(w http.ResponseWriter, r *http.Request) {
	if allow(w, r, http.MethodGet) {
		writeJSON(w, http.StatusOK, s.info)
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if allow(w, r, http.MethodGet) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// allow answers 405 unless r's method is method (or HEAD for GET).
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, http.StatusMethodNotAllowed, "%s %s: method not allowed (use %s)", r.Method, r.URL.Path, method)
	return false
}

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]string{"error": "encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
