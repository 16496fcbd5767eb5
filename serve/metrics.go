package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, on a registry of its own
// (so several servers can live in one process, as in the tests).
type metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec   // by handler and status code
	latency       *prometheus.HistogramVec // seconds, by handler
	inFlight      prometheus.Gauge         // /v1/act requests being handled
	requestRows   prometheus.Histogram     // rows per accepted /v1/act request
	batchRequests prometheus.Histogram     // requests merged into one batch
	passRows      prometheus.Histogram     // rows per forward pass of the actor
}

func newMetrics() *metrics {
	rowBuckets := prometheus.ExponentialBuckets(1, 2, 11) // 1 … 1024
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "koopq", Subsystem: "serve", Name: "requests_total",
			Help: "HTTP requests answered, by handler and status code.",
		}, []string{"handler", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "koopq", Subsystem: "serve", Name: "request_duration_seconds",
			Help:    "Time from receiving a request's headers to its answer, by handler.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16), // 50µs … 1.6s
		}, []string{"handler"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "koopq", Subsystem: "serve", Name: "act_in_flight",
			Help: "/v1/act requests being handled now.",
		}),
		requestRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "koopq", Subsystem: "serve", Name: "request_rows",
			Help: "Observation rows per accepted /v1/act request.", Buckets: rowBuckets,
		}),
		batchRequests: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "koopq", Subsystem: "serve", Name: "batch_requests",
			Help: "/v1/act requests merged into one micro-batch.", Buckets: rowBuckets,
		}),
		passRows: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "koopq", Subsystem: "serve", Name: "batch_rows",
			Help: "Observation rows per forward pass of the actor (the batch size).", Buckets: rowBuckets,
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.inFlight, m.requestRows, m.batchRequests, m.passRows,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// instrument counts h's answers by status code and times them.
func (m *metrics) instrument(name string, h http.HandlerFunc) http.HandlerFunc {
	lat := m.latency.WithLabelValues(name)
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h(sw, r)
		lat.Observe(time.Since(start).Seconds())
		m.requests.WithLabelValues(name, strconv.Itoa(sw.code)).Inc()
	}
}

type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
