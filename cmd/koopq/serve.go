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

	"github.com/koopq/koopq/internal/param"
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
	o := new(serveOptions)
	*o = defaultServeOptions()
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
	serveParams().MustRegister(cmd.Flags(), o, defaultServeOptions())
	return cmd
}

// defaultServeOptions is the flag defaults: serve.DefaultConfig, a local
// address and a 30 s drain.
func defaultServeOptions() serveOptions {
	cfg := serve.DefaultConfig()
	return serveOptions{addr: "127.0.0.1:8080", drain: 30 * time.Second, maxBody: cfg.MaxBodyBytes, cfg: cfg}
}

// serveParams is the table of 'koopq serve' settings. serve.New checks
// the batching limits against each other (its errors name the limits).
func serveParams() param.Table[serveOptions] {
	type o = serveOptions
	return param.Table[o]{
		param.New("policy", "", "policy file (policy.safetensors) or a run directory holding one", func(o *o) any { return &o.policy }, param.AnyValue),
		param.New("addr", "", "address to listen on (port 0: any free port, printed at start)", func(o *o) any { return &o.addr }, param.AnyValue),
		param.New("max-batch", "", fmt.Sprintf("most rows in one micro-batch (1 to %d; 1: no batching)", serve.MaxMaxBatch), func(o *o) any { return &o.cfg.MaxBatch }, param.AnyValue),
		param.New("max-wait", "", fmt.Sprintf("longest wait for a micro-batch to fill after its first request (0 to %v; 0: merge only requests already queued)", serve.MaxMaxWait), func(o *o) any { return &o.cfg.MaxWait }, param.AnyValue),
		param.New("max-rows", "", "most observation rows in one request", func(o *o) any { return &o.cfg.MaxRows }, param.AnyValue),
		param.New("max-body", "", "largest request body in bytes (larger ones get 413)", func(o *o) any { return &o.maxBody }, param.AnyValue),
		param.New("drain-timeout", "", "on SIGTERM, how long to wait for requests in flight", func(o *o) any { return &o.drain }, param.Positive),
	}
}

// validate checks --policy and the table's ranges (--drain-timeout);
// serve.New checks the batching limits.
func (o *serveOptions) validate() error {
	if o.policy == "" {
		return fmt.Errorf("--policy: give a policy file or a run directory")
	}
	return serveParams().Validate(o)
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
