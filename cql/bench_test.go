package cql

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/koopq/koopq/augment"
	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/internal/blasbench"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
)

// StepFLOPs is the FLOP count of one CQL update for the given config and
// dimensions, counting GEMMs only (2 FLOPs per multiply-add): each critic
// runs forward over B(1+3N) rows and backward (weight gradients for every
// layer, input gradients for all but the first), plus target and actor-loss
// passes over B rows, plus the actor.
func StepFLOPs(cfg Config, obsDim, actDim int) float64 {
	B, N := float64(cfg.Batch), float64(cfg.NumActions)
	layerFLOPs := func(sizes []int) (total, first float64) {
		for i := 0; i+1 < len(sizes); i++ {
			f := 2 * float64(sizes[i]*sizes[i+1])
			total += f
			if i == 0 {
				first = f
			}
		}
		return
	}
	h := cfg.Net.Hidden
	qF, qFirst := layerFLOPs(append(append([]int{obsDim + actDim}, h...), 1))
	aF, aFirst := layerFLOPs(append(append([]int{obsDim}, h...), 2*actDim))
	R := B * (1 + 3*N)
	if cfg.PushUpClean {
		R += B // the push-up rows at the clean s
	}
	critic := R*qF + R*qF + R*(qF-qFirst) // forward, dW, dX
	critic += B * qF                      // target
	critic += B*qF + B*qF                 // actor-loss forward + input gradient
	actor := 2*B*aF + B*aF + B*(aF-aFirst)
	return 2*critic + actor
}

// BenchmarkCQLStep times one full CQL update on Hopper-sized data
// (obs 11, act 3) in the paper's 2×256 and CORL's 3×256 configurations,
// after the behaviour-cloning warm-up (the more expensive actor path), for
// every GEMM backend × precision. Each iteration also replays the step's
// GEMMs alone (gemmReplay, timed separately), so "ceiling-steps/s" and
// "ratio" (step rate / ceiling rate) come from the same seconds of a shared
// machine. ns/op covers both; read steps/s.
func BenchmarkCQLStep(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
		aug  StateShift
	}{
		{"hopper-paper", DefaultConfig(), augment.None{}},
		{"hopper-corl", CORLConfig(), augment.None{}},
		{"hopper-paper-s4rl-n", DefaultConfig(), augment.Gaussian{Sigma: 3e-3}},
		{"hopper-paper-kfc++", DefaultConfig(), &lazyKFCpp{}},
	} {
		for _, be := range blasbench.Configs() {
			b.Run(tc.name+"/"+be, func(b *testing.B) {
				blasbench.Use(b, be)
				rng := rand.New(rand.NewPCG(1, 2))
				d := dataset.Synthetic(11, 3, 10000, rng)
				cfg := tc.cfg
				cfg.BCSteps = 0
				l := NewLearner(cfg, 11, 3, nil, rng)
				batch := dataset.NewBatch(cfg.Batch, 11, 3)
				s := dataset.NewSampler(d, rng)
				replay := gemmReplay(cfg, 11, 3)
				for i := 0; i < 3; i++ { // warm workspaces and primitive caches
					s.Sample(batch)
					if _, err := l.Step(batch, tc.aug, rng); err != nil {
						b.Fatal(err)
					}
					replay()
				}
				var stepT, gemmT time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					s.Sample(batch)
					if _, err := l.Step(batch, tc.aug, rng); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					replay()
					stepT += t1.Sub(t0)
					gemmT += time.Since(t1)
				}
				f := StepFLOPs(cfg, 11, 3)
				b.ReportMetric(float64(b.N)/stepT.Seconds(), "steps/s")
				b.ReportMetric(f*float64(b.N)/stepT.Seconds()/1e9, "GFLOP/s")
				b.ReportMetric(float64(b.N)/gemmT.Seconds(), "ceiling-steps/s")
				b.ReportMetric(gemmT.Seconds()/stepT.Seconds(), "ratio")
				b.Logf("%s: %v", tc.name, blas.Describe())
			})
		}
	}
}

// lazyKFCpp is KFC++ (p_K = 0.8) with a randomly initialized paper-sized
// Koopman model (N = 32, 512×512) on the benchmark's data. It is built, and
// its per-transition cache precomputed, on the first Augment call, which
// BenchmarkCQLStep makes in its untimed warm-up.
type lazyKFCpp struct{ a StateShift }

func (*lazyKFCpp) Name() string { return "kfc++" }

func (l *lazyKFCpp) Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, q QGradient) error {
	if l.a == nil {
		m, err := koopman.NewModel(koopman.DefaultModelConfig(11, 3))
		if err != nil {
			return err
		}
		o := augment.DefaultOptions()
		o.Dataset = dataset.Synthetic(11, 3, 10000, rand.New(rand.NewPCG(1, 2))) // the benchmark's data, same rows
		o.Model = m
		if l.a, err = augment.New("kfc++", o); err != nil {
			return err
		}
	}
	return l.a.Augment(b, obs, next, rng, q)
}

func ExampleStepFLOPs() {
	fmt.Printf("paper %.2f GFLOP, corl %.2f GFLOP\n", StepFLOPs(DefaultConfig(), 11, 3)/1e9, StepFLOPs(CORLConfig(), 11, 3)/1e9)
	// Output: paper 6.85 GFLOP, corl 13.42 GFLOP
}

// gemmReplay returns a function that runs only the GEMMs of one CQL update
// (same shapes, same two-goroutine split of the twin critics, one BLAS thread
// each): the time a step would take if everything but matrix multiplication
// were free, i.e. the ceiling for BenchmarkCQLStep. Under bf16 the GEMMs
// take inputs already rounded (replayPass), so rounding f32 to bf16 counts
// as the step's own (non-GEMM) work.
func gemmReplay(cfg Config, S, A int) func() {
	B, N := cfg.Batch, cfg.NumActions
	R := B * (1 + 3*N)
	if cfg.PushUpClean {
		R += B
	}
	qs := append(append([]int{S + A}, cfg.Net.Hidden...), 1)
	as := append(append([]int{S}, cfg.Net.Hidden...), 2*A)
	widest := max(2*A, S+A)
	for _, h := range cfg.Net.Hidden {
		widest = max(widest, h)
	}
	pass := replayPass(widest)
	type bufs = replayBufs
	mk := func(rows int) bufs { return newReplayBufs(rows, widest) }
	cb := [2]bufs{mk(R), mk(R)}
	ab := mk(2 * B)
	return func() {
		pass(as, 2*B, ab, false, false) // actor on s and s'
		nn.Both(func(i int) {
			pass(qs, B, cb[i], false, false) // target
			pass(qs, B, cb[i], false, false) // Q(s, a_π)
		})
		nn.Both(func(i int) {
			pass(qs, R, cb[i], true, true)  // big batch: forward, dW, dX (not layer 0)
			pass(qs, B, cb[i], false, true) // ∂Q/∂a for the actor
		})
		pass(as, B, ab, true, true) // actor backward (forward replayed: counted in FLOPs below)
	}
}

// replayBufs are the operands of a GEMM replay: f32, and the same sizes in
// bfloat16 for the bf16 precision, whose replay feeds the GEMMs inputs
// already rounded (blas.GemmBF16) so that the ceiling counts matrix
// multiplication only, not the f32 → bf16 conversions a step must do.
type replayBufs struct {
	x, y, w, g []float32
	xh, yh, wh []uint16
}

func newReplayBufs(rows, widest int) replayBufs {
	return replayBufs{make([]float32, rows*widest), make([]float32, rows*widest), make([]float32, widest*widest), make([]float32, widest*widest),
		make([]uint16, rows*widest), make([]uint16, rows*widest), make([]uint16, widest*widest)}
}

// replayPass returns the replay of one layer stack: forward over rows,
// then (optionally) dW and dX (dX of layer 0 only without dW), in f32 or,
// under blas.BF16, on pre-rounded inputs.
func replayPass(widest int) func(sz []int, rows int, bb replayBufs, dW, dX bool) {
	return func(sz []int, rows int, bb replayBufs, dW, dX bool) {
		half := blas.CurrentPrecision() == blas.BF16
		mm := func(ta, tb bool, m, n, k int, a []float32, ah []uint16, b []float32, bh []uint16, c []float32, acc bool) {
			if !half {
				blas.MatMul(ta, tb, m, n, k, a, b, c, acc)
				return
			}
			beta := float32(0)
			if acc {
				beta = 1
			}
			blas.GemmBF16(ta, tb, m, n, k, 1, ah, bh, beta, c, n)
		}
		for i := 0; i+1 < len(sz); i++ {
			mm(false, false, rows, sz[i+1], sz[i], bb.x, bb.xh, bb.w, bb.wh, bb.y, false)
		}
		for i := len(sz) - 2; i >= 0; i-- {
			if dW {
				mm(true, false, sz[i], sz[i+1], rows, bb.x, bb.xh, bb.y, bb.yh, bb.g, true)
			}
			if dX && (i > 0 || !dW) {
				mm(false, true, rows, sz[i], sz[i+1], bb.y, bb.yh, bb.w, bb.wh, bb.x, false)
			}
		}
	}
}

// BenchmarkCQLGEMMLimit runs gemmReplay alone per backend × precision;
// steps/s here is the machine's ceiling for BenchmarkCQLStep.
func BenchmarkCQLGEMMLimit(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"hopper-paper", DefaultConfig()}, {"hopper-corl", CORLConfig()}} {
		for _, be := range blasbench.Configs() {
			b.Run(tc.name+"/"+be, func(b *testing.B) {
				blasbench.Use(b, be)
				replay := gemmReplay(tc.cfg, 11, 3)
				replay()
				b.ResetTimer()
				for it := 0; it < b.N; it++ {
					replay()
				}
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(b.N)/sec, "steps/s")
				b.ReportMetric(StepFLOPs(tc.cfg, 11, 3)*float64(b.N)/sec/1e9, "GFLOP/s")
				b.Logf("%v", blas.Describe())
			})
		}
	}
}

// BenchmarkCQLSideBySide is docs/performance.md's speed table in one benchmark: every
// GEMM backend × precision, its own GEMM-only ceiling, and the PyTorch CPU
// reference (bench/torch_cql.py, the same update and shapes, run by
// /usr/bin/python3 in a child process) take turns, one step each per
// iteration. Every figure is a median over iterations of per-iteration
// values (rates, and ratios of times taken seconds apart), so load from
// other processes on a shared machine shifts all arms alike and bursts
// drop out. Metrics per backend-precision: steps/s, ceiling ratio (GEMM-only
// time / step time), × the OpenBLAS f32 step and × PyTorch.
// KOOPQ_TORCH_THREADS sets PyTorch's thread count (default 1, its fastest on
// 2 cores); without python3-torch the PyTorch columns are left out (logged).
// ns/op covers everything and means nothing.
func BenchmarkCQLSideBySide(b *testing.B) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		hidden string
	}{{"hopper-paper", DefaultConfig(), "256,256"}, {"hopper-corl", CORLConfig(), "256,256,256"}} {
		b.Run(tc.name, func(b *testing.B) {
			type arm struct {
				name      string
				l         *Learner
				s         *dataset.Sampler
				batch     *dataset.Batch
				rng       *rand.Rand
				replay    func()
				step, gem []float64 // seconds per iteration
			}
			var arms []*arm
			base := -1
			for _, be := range blasbench.Configs() {
				blasbench.Use(b, be)
				rng := rand.New(rand.NewPCG(1, 2))
				cfg := tc.cfg
				cfg.BCSteps = 0
				a := &arm{name: be, l: NewLearner(cfg, 11, 3, nil, rng), s: dataset.NewSampler(dataset.Synthetic(11, 3, 10000, rng), rng),
					batch: dataset.NewBatch(cfg.Batch, 11, 3), rng: rng, replay: gemmReplay(cfg, 11, 3)}
				if be == "openblas-f32" {
					base = len(arms)
				}
				arms = append(arms, a)
				b.Logf("%s: %v", be, blas.Describe())
			}
			run := func(a *arm) (step, gem float64) {
				blasbench.Use(b, a.name)
				t0 := time.Now()
				a.s.Sample(a.batch)
				if _, err := a.l.Step(a.batch, augment.None{}, a.rng); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				a.replay()
				return t1.Sub(t0).Seconds(), time.Since(t1).Seconds()
			}
			torch := startTorch(b, tc.hidden)
			for i := 0; i < 3; i++ { // warm-up: workspaces, primitive caches
				for _, a := range arms {
					run(a)
				}
			}
			var torchT []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, a := range arms {
					s, g := run(a)
					a.step = append(a.step, s)
					a.gem = append(a.gem, g)
				}
				if torch != nil {
					torchT = append(torchT, torch.step(b).Seconds())
				}
			}
			b.StopTimer()
			for _, a := range arms {
				b.ReportMetric(1/blasbench.Median(a.step, nil), a.name+"-steps/s")
				b.ReportMetric(blasbench.Median(a.gem, a.step), a.name+"-ceiling-ratio")
				if base >= 0 {
					b.ReportMetric(blasbench.Median(arms[base].step, a.step), a.name+"-x-openblas")
				}
				if torch != nil {
					b.ReportMetric(blasbench.Median(torchT, a.step), a.name+"-x-torch")
				}
			}
			if torch != nil {
				b.ReportMetric(1/blasbench.Median(torchT, nil), "torch-steps/s")
				b.Logf("PyTorch reference: %s", torch.banner)
				torch.close()
			}
		})
	}
}

// torchProc is bench/torch_cql.py --serve: one line in (steps), one line
// out (their wall seconds).
type torchProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	banner string
}

// startTorch starts the PyTorch reference, or returns nil (logged) when
// /usr/bin/python3 or its torch module is missing.
func startTorch(b *testing.B, hidden string) *torchProc {
	threads := os.Getenv("KOOPQ_TORCH_THREADS")
	if threads == "" {
		threads = "1"
	}
	cmd := exec.Command("/usr/bin/python3", "bench/torch_cql.py", "--serve", "--threads", threads, "--hidden", hidden)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Logf("PyTorch reference not run: %v", err)
		return nil
	}
	t := &torchProc{cmd: cmd, in: in, out: bufio.NewScanner(outp)}
	if !t.out.Scan() || !strings.HasPrefix(t.out.Text(), "ready") {
		b.Logf("PyTorch reference not run: %q (is python3-torch installed?)", t.out.Text())
		t.close()
		return nil
	}
	t.banner = t.out.Text()
	return t
}

func (t *torchProc) step(b *testing.B) time.Duration {
	if _, err := fmt.Fprintln(t.in, 1); err != nil {
		b.Fatal(err)
	}
	if !t.out.Scan() {
		b.Fatalf("PyTorch reference stopped: %v", t.out.Err())
	}
	sec, err := strconv.ParseFloat(t.out.Text(), 64)
	if err != nil {
		b.Fatalf("PyTorch reference: %v", err)
	}
	return time.Duration(sec * float64(time.Second))
}

func (t *torchProc) close() {
	t.in.Close()
	_ = t.cmd.Wait()
}

// BenchmarkCQLRoundOnce is the A/B measurement of nn's bf16 operand reuse
// (nn.SetRoundOnce): two identical learners on onednn-bf16, one rounding
// each layer's input, weights and output gradient once per pass, one
// letting every GEMM round its f32 inputs, take turns one step each. Each
// step is timed in process CPU seconds (user + system, both goroutines),
// which other processes on a shared machine disturb far less than wall
// time; the figures are medians of per-iteration values. "speedup" is the
// median of (per-GEMM rounding CPU time / round-once CPU time).
func BenchmarkCQLRoundOnce(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{{"hopper-paper", DefaultConfig()}, {"hopper-corl", CORLConfig()}} {
		b.Run(tc.name, func(b *testing.B) {
			blasbench.Use(b, "onednn-bf16")
			b.Cleanup(func() { nn.SetRoundOnce(true) })
			type arm struct {
				l     *Learner
				s     *dataset.Sampler
				batch *dataset.Batch
				rng   *rand.Rand
				t     []float64
			}
			var arms [2]*arm // 0: round once, 1: per GEMM
			for i := range arms {
				rng := rand.New(rand.NewPCG(1, 2))
				cfg := tc.cfg
				cfg.BCSteps = 0
				arms[i] = &arm{l: NewLearner(cfg, 11, 3, nil, rng), s: dataset.NewSampler(dataset.Synthetic(11, 3, 10000, rng), rng),
					batch: dataset.NewBatch(cfg.Batch, 11, 3), rng: rng}
			}
			step := func(i int) float64 {
				a := arms[i]
				nn.SetRoundOnce(i == 0)
				c0 := cpuSeconds()
				a.s.Sample(a.batch)
				if _, err := a.l.Step(a.batch, augment.None{}, a.rng); err != nil {
					b.Fatal(err)
				}
				return cpuSeconds() - c0
			}
			for i := 0; i < 3; i++ {
				step(0)
				step(1)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range arms {
					arms[j].t = append(arms[j].t, step(j))
				}
			}
			b.StopTimer()
			b.ReportMetric(1e3*blasbench.Median(arms[0].t, nil), "round-once-cpu-ms/step")
			b.ReportMetric(1e3*blasbench.Median(arms[1].t, nil), "per-gemm-cpu-ms/step")
			b.ReportMetric(blasbench.Median(arms[1].t, arms[0].t), "speedup")
		})
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
