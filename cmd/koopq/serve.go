package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/koopq/koopq/serve"
)

// serveOptions holds the flag values of 'koopq serve'.
type serveOptions struct {
	policy  string
	addr    string
	drain   time.Duration
	maxBody int64
	cfg     serve.Config // --max-batch, --max-wait, --max-rows
}

// newServeCmd makes 'koopq serve'.
func newServeCmd() *cobra.Command {
	o := &serveOptions{cfg: serve.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a trained policy over HTTP (POST /v1/act, GET /v1/policy, /healthz, /metrics)",
		Long: "serve answers a policy's deterministic actions over HTTP:\n" +
			"  POST /v1/act     {\"observations\": [[…], …], \"log_std\": false} → {\"actions\": [[…], …]}\n" +
			"                   (\"log_std\": true also returns the clamped log-σ of each action's Gaussian)\n" +
			"  GET  /v1/policy  env, dimensions, action bounds, sha256 of the file, koopq version\n" +
			"  GET  /healthz    liveness\n" +
			"  GET  /metrics    Prometheus metrics: requests by status, latency, batch sizes\n" +
			"Actions are bit for bit those of 'koopq eval' for the same observation. Concurrent requests are\n" +
			"merged into micro-batches of up to --max-batch rows, waiting at most --max-wait for a batch to fill.\n" +
			"Bad requests get a 4xx answer with a JSON error. SIGTERM or SIGINT stops accepting connections,\n" +
			"answers the requests in flight (up to --drain-timeout) and exits 0. See docs/serving.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	cfg := &o.cfg
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "", "policy file (policy.safetensors) or a run directory holding one")
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (port 0: any free port, printed at start)")
	f.IntVar(&cfg.MaxBatch, "max-batch", cfg.MaxBatch, fmt.Sprintf("most rows in one micro-batch (1 to %d; 1: no batching)", serve.MaxMaxBatch))
	f.DurationVar(&cfg.MaxWait, "max-wait", cfg.MaxWait, fmt.Sprintf("longest wait for a micro-batch to fill after its first request (0 to %v; 0: merge only requests already queued)", serve.MaxMaxWait))
	f.IntVar(&cfg.MaxRows, "max-rows", cfg.MaxRows, "most observation rows in one request")
	f.Int64Var(&o.maxBody, "max-body", cfg.MaxBodyBytes, "largest request body in bytes (larger ones get 413)")
	f.DurationVar(&o.drain, "drain-timeout", 30*time.Second, "on SIGTERM, how long to wait for requests in flight")
	return cmd
}

// validate checks --policy and --drain-timeout; serve.New checks the
// batching limits.
func (o *serveOptions) validate() error {
	if o.policy == "" {
		return fmt.Errorf("--policy: give a policy file or a run directory")
	}
	if o.drain <= 0 {
		return fmt.Errorf("--drain-timeout %v: must be positive", o.drain)
	}
	return nil
}

// run loads the policy and serves it on --addr until SIGTERM or SIGINT.
func (o *serveOptions) run(parent context.Context) error {
	cfg := o.cfg
	cfg.MaxBodyBytes = o.maxBody
	pol, err := serve.LoadPolicy(o.policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	cfg.Log = log.New(os.Stderr, "koopq serve: ", log.LstdFlags)
	s, err := serve.New(pol, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		s.Close()
		return fmt.Errorf("--addr: %w", err)
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	info := s.Info()
	env := info.Env
	if env == "" {
		env = "no recorded env"
	}
	mode := "batched forward passes"
	if !info.BatchedForward {
		mode = "row-by-row forward passes (batched ones would change bits with this GEMM backend)"
	}
	cfg.Log.Printf("policy %s (%s, %d → %d, sha256 %.12s…), max batch %d, max wait %v, %s",
		pol.Path, env, info.ObsDim, info.ActDim, info.SHA256, cfg.MaxBatch, cfg.MaxWait, mode)
	cfg.Log.Printf("listening on http://%s", ln.Addr())
	return s.Serve(ctx, ln, o.drain)
}
