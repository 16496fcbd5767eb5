package augment

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/koopman"
	"github.com/koopq/koopq/nn"
)

// PrecomputeInfo reports the per-transition cache built for a Koopman
// augmenter.
type PrecomputeInfo struct {
	Transitions int `json:"transitions"` // dataset rows
	Cached      int `json:"cached"`      // rows 0..Cached−1 use the cache; later rows the per-batch path
	// BytesPerTransition is the cache footprint of one cached transition:
	// KFC++ family: real eigenbasis P (N² float32) + E(s_t), E(s_{t+1}),
	// P⁻¹E(s_t), P⁻¹E(s_{t+1}) (4N float32) + conjugate-pair flags (N bytes) +
	// fallback flag; 4 773 bytes for N = 32. KFC: E(s), E(s') and G E(s),
	// G E(s') (4N float32) + fallback flag, 513 bytes; vae-noise: 2N float32.
	BytesPerTransition int     `json:"bytes_per_transition"`
	Bytes              int64   `json:"bytes"`     // total cache size
	Seconds            float64 `json:"seconds"`   // wall time of the precompute
	Workers            int     `json:"workers"`   // goroutines used
	Fallbacks          int     `json:"fallbacks"` // cached transitions whose K(a_t) used the scalar fallback
	// File is the cache file in Options.CacheDir that was read or written
	// (empty without a CacheDir); Loaded says the cache was read from it,
	// not computed (Seconds is then the load time, Workers 0). FileError
	// says why an existing file was not used (another model, dataset or
	// backend would have another file name; a damaged or truncated file)
	// or why the computed cache could not be written; the run goes on with
	// the computed cache either way.
	File      string `json:"file,omitempty"`
	Loaded    bool   `json:"loaded,omitempty"`
	FileError string `json:"file_error,omitempty"`
}

// cacheKind selects what is stored per transition.
type cacheKind int

const (
	cacheNone  cacheKind = iota // nothing (fwd-prediction)
	cacheG                      // E(s_t), E(s_{t+1})
	cacheKFC                    // + G E(s_t), G E(s_{t+1}), fallback
	cacheKFCpp                  // + P, P⁻¹E(s_t), P⁻¹E(s_{t+1}), pair flags, fallback
)

// latentCache holds precomputed per-transition quantities for rows
// [0, n) of the dataset. Layout per row i: g[i*2N : (i+1)*2N] = (E(s_t),
// E(s_{t+1})); extra[i*2N:…] = (P⁻¹E(s_t), P⁻¹E(s_{t+1})) for KFC++ or
// (G E(s_t), G E(s_{t+1})) for KFC; p[i*N² : (i+1)*N²] = P row-major.
type latentCache struct {
	kind  cacheKind
	n, N  int
	g     []float32
	extra []float32
	p     []float32
	// pairNext[i*N+j]: columns j and j+1 of row i's P are a conjugate pair
	// (koopman.RealBasis keeps partners adjacent). A flag rather than the
	// partner's index, so any N fits in one byte per column.
	pairNext []bool
	fb       []bool // [n] K(a_i) used the scalar fallback generator (KFC and KFC++)
}

func bytesPerTransition(kind cacheKind, n int) int {
	switch kind {
	case cacheG:
		return 2 * n * 4
	case cacheKFC:
		return 4*n*4 + 1
	case cacheKFCpp:
		return n*n*4 + 4*n*4 + n + 1
	}
	return 0
}

// cacheRows is how many of total rows a cache of kind holds within budget
// bytes (the first ones).
func cacheRows(kind cacheKind, N, total int, budget int64) int {
	per := int64(bytesPerTransition(kind, N))
	if kind == cacheNone || budget <= 0 || per == 0 {
		return 0
	}
	return int(min(int64(total), budget/per))
}

// precompute fills a cache for the first rows of d (as many as budget bytes
// allow) with workers goroutines, reporting progress(done, total) (calls are
// serialized; done counts cached rows).
func precompute(m *koopman.Model, d *dataset.Dataset, kind cacheKind, budget int64, workers int,
	sym koopman.SymmetryConfig, progress meter.Progress) (*latentCache, PrecomputeInfo) {
	N := m.N()
	total := d.Len()
	info := PrecomputeInfo{Transitions: total, BytesPerTransition: bytesPerTransition(kind, N)}
	n := cacheRows(kind, N, total, budget)
	info.Cached = n
	info.Bytes = int64(n) * int64(info.BytesPerTransition)
	if n == 0 {
		return &latentCache{kind: kind, N: N}, info
	}
	start := time.Now()
	c := newLatentCache(kind, N, n)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	info.Workers = workers
	job := &precomputeJob{m: m, d: d, c: c, kind: kind, sym: sym, n: n, progress: progress}
	job.k0, job.ks = m.Operators()
	job.chunks = (n + precomputeChunk - 1) / precomputeChunk
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job.newWorker().run()
		}()
	}
	wg.Wait()
	if kind == cacheG && progress != nil {
		progress(n, n, "")
	}
	info.Fallbacks = job.fallbacks
	info.Seconds = time.Since(start).Seconds()
	return c, info
}

// precomputeChunk is the number of rows a precompute worker takes at a
// time.
const precomputeChunk = 256

// precomputeJob is what precompute's workers share: the model and dataset,
// the cache c of rows [0, n) they fill, the next chunk to take, and under
// mu the rows done (for progress) and the fallback count.
type precomputeJob struct {
	m        *koopman.Model
	d        *dataset.Dataset
	c        *latentCache
	kind     cacheKind
	sym      koopman.SymmetryConfig
	k0       []float64
	ks       [][]float64
	n        int
	chunks   int
	next     atomic.Int64
	progress meter.Progress

	mu        sync.Mutex
	done      int
	fallbacks int
}

// precomputeWorker is one precompute goroutine with its scratch buffers.
type precomputeWorker struct {
	*precomputeJob
	enc  nn.Cache
	dec  *koopman.Decomposer
	rb   *koopman.RealBasis
	k    []float64 // K(a), N×N
	a    []float64 // the action, [M]
	g64  []float64 // a latent in float64, [N]
	gen  []float64 // the KFC generator, N×N
	x    []float32 // a chunk's s_t then s_{t+1} rows
	myFB int       // fallbacks of this worker
}

// newWorker returns a worker of j with its own scratch buffers.
func (j *precomputeJob) newWorker() *precomputeWorker {
	N, S, M := j.m.N(), j.m.S(), j.m.M()
	return &precomputeWorker{precomputeJob: j,
		dec: koopman.NewDecomposer(N, j.sym),
		rb:  koopman.NewRealBasis(N),
		k:   make([]float64, N*N),
		a:   make([]float64, M),
		g64: make([]float64, N),
		gen: make([]float64, N*N),
		x:   make([]float32, 2*precomputeChunk*S),
	}
}

// run takes chunks until none is left, then adds its fallbacks to the
// job's.
func (w *precomputeWorker) run() {
	for {
		ci := int(w.next.Add(1)) - 1
		if ci >= w.chunks {
			break
		}
		lo, hi := ci*precomputeChunk, min((ci+1)*precomputeChunk, w.n)
		w.encode(lo, hi)
		if w.kind == cacheG {
			continue
		}
		for i := lo; i < hi; i++ {
			w.decompose(i)
		}
		if w.progress != nil {
			w.mu.Lock()
			w.done += hi - lo
			w.progress(w.done, w.n, "")
			w.mu.Unlock()
		}
	}
	w.mu.Lock()
	w.fallbacks += w.myFB
	w.mu.Unlock()
}

// encode caches E(s_t) and E(s_{t+1}) of rows [lo, hi), encoding the s_t
// rows then the s_{t+1} rows in one pass.
func (w *precomputeWorker) encode(lo, hi int) {
	S, N, d, c := w.m.S(), w.c.N, w.d, w.c
	rows := hi - lo
	copy(w.x[:rows*S], d.Observations[lo*S:hi*S])
	copy(w.x[rows*S:2*rows*S], d.NextObservations[lo*S:hi*S])
	g := w.m.Encode(&w.enc, w.x[:2*rows*S], 2*rows)
	for r := 0; r < rows; r++ {
		i := lo + r
		copy(c.g[i*2*N:i*2*N+N], g[r*N:(r+1)*N])
		copy(c.g[i*2*N+N:(i+1)*2*N], g[(rows+r)*N:(rows+r+1)*N])
	}
}

// decompose decomposes K(a_i) of row i, recording its fallback flag, and
// caches the row's KFC or KFC++ quantities.
func (w *precomputeWorker) decompose(i int) {
	M := len(w.a)
	for j := range w.a {
		w.a[j] = float64(w.d.Actions[i*M+j])
	}
	koopman.OperatorAt(w.k, w.k0, w.ks, w.a)
	if !w.dec.Decompose(w.rb, w.k) {
		w.myFB++
	}
	w.c.fb[i] = w.rb.Fallback
	if w.kind == cacheKFC {
		w.cacheKFC(i)
		return
	}
	if w.rb.Fallback {
		return
	}
	w.cacheKFCpp(i)
}

// cacheKFC caches G E(s_t) and G E(s_{t+1}) of row i, G the KFC generator
// of the decomposed K(a_i).
func (w *precomputeWorker) cacheKFC(i int) {
	c, N := w.c, w.c.N
	G, _ := w.rb.KFCGenerator(w.gen)
	for v := 0; v < 2; v++ {
		gv := c.g[i*2*N+v*N : i*2*N+(v+1)*N]
		out := c.extra[i*2*N+v*N : i*2*N+(v+1)*N]
		for row := 0; row < N; row++ {
			s := 0.0
			for col, x := range G[row*N : (row+1)*N] {
				s += x * float64(gv[col])
			}
			out[row] = float32(s)
		}
	}
}

// cacheKFCpp caches row i's real eigenbasis P, its conjugate-pair flags
// and P⁻¹E(s_t), P⁻¹E(s_{t+1}).
func (w *precomputeWorker) cacheKFCpp(i int) {
	c, N, rb := w.c, w.c.N, w.rb
	for j, v := range rb.P {
		c.p[i*N*N+j] = float32(v)
	}
	for j, p := range rb.Pair {
		if p > j && p != j+1 {
			panic("augment: koopman.RealBasis returned non-adjacent conjugate partners")
		}
		c.pairNext[i*N+j] = p == j+1
	}
	for v := 0; v < 2; v++ {
		gv := c.g[i*2*N+v*N : i*2*N+(v+1)*N]
		for j := range w.g64 {
			w.g64[j] = float64(gv[j])
		}
		out := c.extra[i*2*N+v*N : i*2*N+(v+1)*N]
		for row := 0; row < N; row++ {
			s := 0.0
			for col, x := range rb.PInv[row*N : (row+1)*N] {
				s += x * w.g64[col]
			}
			out[row] = float32(s)
		}
	}
}

// shiftKFCpp writes the KFC++ shifted latents of cached row i into dst
// ([2N]: shifted E(s_t), E(s_{t+1})): g̃ = g + P(ε′ ⊙ P⁻¹g), ε′ the
// conjugate-pair average of eps ([N]); on fallback g̃ = (1 + Σε/√N) g.
// scratch is [N]. It returns whether the fallback was used.
func (c *latentCache) shiftKFCpp(dst []float32, i int, eps []float64, scratch []float32) bool {
	N := c.N
	g := c.g[i*2*N : (i+1)*2*N]
	if c.fb[i] {
		s := 0.0
		for _, e := range eps {
			s += e
		}
		f := float32(1 + s/math.Sqrt(float64(N)))
		for j, v := range g {
			dst[j] = f * v
		}
		return true
	}
	pairNext := c.pairNext[i*N : (i+1)*N]
	for j := 0; j < N; j++ {
		if pairNext[j] {
			mid := float32(0.5 * (eps[j] + eps[j+1]))
			scratch[j], scratch[j+1] = mid, mid
			j++
			continue
		}
		scratch[j] = float32(eps[j])
	}
	P := c.p[i*N*N : (i+1)*N*N]
	var h [64]float32
	hv := h[:0]
	if N > len(h) {
		hv = make([]float32, N)
	} else {
		hv = h[:N]
	}
	for v := 0; v < 2; v++ {
		cv := c.extra[i*2*N+v*N : i*2*N+(v+1)*N]
		for k := range hv {
			hv[k] = scratch[k] * cv[k]
		}
		gv := g[v*N : (v+1)*N]
		out := dst[v*N : (v+1)*N]
		for r := 0; r < N; r++ {
			s := float32(0)
			for k, w := range P[r*N : (r+1)*N] {
				s += w * hv[k]
			}
			out[r] = gv[r] + s
		}
	}
	return false
}
