package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// BenchmarkServe is the loopback load benchmark of docs/serving.md: a
// hopper-sized policy (11 → 3, the default 2×256 actor) served on a free
// port, and `clients` Go clients each sending one-row /v1/act requests
// back to back over keep-alive connections, b.N requests in all. It
// reports requests/s and the p50/p99 latency seen by the clients, and
// the mean rows per forward pass, without batching (max batch 1) and with
// it. Keep it bounded:
//
//	go test ./serve -run '^$' -bench Serve -benchtime 2000x -count 1
func BenchmarkServe(b *testing.B) {
	path := writePolicy(b, b.TempDir(), 11, 3, []int{256, 256})
	modes := []struct {
		name string
		cfg  Config
	}{
		{"unbatched", Config{MaxBatch: 1, MaxBodyBytes: 1 << 20, MaxRows: 1024}},
		{"batch32", Config{MaxBatch: 32, MaxBodyBytes: 1 << 20, MaxRows: 1024}},
		{"batch32-wait200us", Config{MaxBatch: 32, MaxWait: 200 * time.Microsecond, MaxBodyBytes: 1 << 20, MaxRows: 1024}},
	}
	for _, mode := range modes {
		for _, clients := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", mode.name, clients), func(b *testing.B) {
				ts := startServer(b, path, mode.cfg)
				benchLoad(b, ts.url, clients)
				var m dto.Metric
				if err := ts.s.m.passRows.Write(&m); err == nil && m.Histogram.GetSampleCount() > 0 {
					b.ReportMetric(m.Histogram.GetSampleSum()/float64(m.Histogram.GetSampleCount()), "rows/pass")
				}
			})
		}
	}
}

func benchLoad(b *testing.B, url string, clients int) {
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	rng := rand.New(rand.NewPCG(3, 4))
	bodies := make([][]byte, 256)
	for i := range bodies {
		bodies[i], _ = json.Marshal(map[string]any{"observations": randomObs(rng, 1, 11)})
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				resp, err := hc.Post(url+"/v1/act", "application/json", bytes.NewReader(bodies[i%len(bodies)]))
				if err != nil {
					failed.Store(err.Error())
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Store(resp.Status)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f != nil {
		b.Fatalf("request failed: %v", f)
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) }
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkEngine times the forward passes alone: 32 one-row passes
// against one 32-row pass of the same 11 → 2×256 → 3 actor.
func BenchmarkEngine(b *testing.B) {
	path := writePolicy(b, b.TempDir(), 11, 3, []int{256, 256})
	pol, err := LoadPolicy(path)
	if err != nil {
		b.Fatal(err)
	}
	obs := make([]float64, 32*11)
	for i := range obs {
		obs[i] = float64(i%7) - 3
	}
	act := make([]float64, 32*3)
	for _, maxBatch := range []int{1, 32} {
		e := newEngine(pol.Policy, maxBatch)
		b.Run(fmt.Sprintf("rows32/max-batch=%d/batched=%v", maxBatch, e.batched), func(b *testing.B) {
			for b.Loop() {
				e.compute(obs, 32, act, nil)
			}
		})
	}
}
