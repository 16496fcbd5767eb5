package augment

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/internal/atomicfile"
	"github.com/koopq/koopq/internal/blas"
	"github.com/koopq/koopq/internal/fingerprint"
	"github.com/koopq/koopq/internal/meter"
	"github.com/koopq/koopq/internal/version"
	"github.com/koopq/koopq/koopman"
)

// The precompute cache file lets runs that share a Koopman model and a
// dataset (the seeds of a study, a resumed run) skip the precompute: on a
// 1M-row hopper-medium dataset at N = 32 it takes 5–8 minutes of one core,
// loading its 4.3 GB takes seconds. A file is used only when everything the
// cache depends on is the same: the format, the cache kind, the model's
// configuration and every weight, the dataset rows it covers (states, next
// states, actions), the symmetry settings, the row count (so the budget),
// the GEMM backend, precision, ISA and kernel that encoded the states
// (their roundings differ) and the code that computed it (codeIdentity: a
// file written by another commit must not stand in for this code's
// numbers); all of it goes into the SHA-256 key that names the file. The payload carries a CRC-32C, so a truncated or damaged file is
// recomputed, never used. A loaded cache is therefore byte-identical to the
// one the precompute would have built, and a run gives the same numbers
// with or without the file.
//
// Layout (little-endian): header (magic, key, kind, N, rows, fallbacks,
// payload bytes), then E(s) pairs g [rows·2N f32], extra [rows·2N f32]
// (KFC and KFC++ kinds), P [rows·N² f32] (KFC++), fallback flags [rows
// bytes] (KFC and KFC++), conjugate-pair flags [rows·N bytes] (KFC++), then
// the CRC-32C (Castagnoli) of the payload and the end magic.

const (
	cacheMagic    = "KQAUGC01"
	cacheEndMagic = "KQAUGEND"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type cacheHeader struct {
	Magic     [8]byte
	Key       [32]byte
	Kind      uint32
	N         uint32
	Rows      uint64
	Fallbacks uint64
	Payload   uint64
}

// cacheKindName names a cache kind in file names.
func cacheKindName(k cacheKind) string {
	switch k {
	case cacheG:
		return "latents"
	case cacheKFC:
		return "kfc"
	case cacheKFCpp:
		return "kfcpp"
	}
	return "none"
}

// cacheKey hashes everything the first n rows of a precompute of kind
// depend on (see the file comment).
func cacheKey(m *koopman.Model, d *dataset.Dataset, kind cacheKind, n int, sym koopman.SymmetryConfig) [32]byte {
	h := sha256.New()
	g := blas.Describe()
	fmt.Fprintf(h, "%s kind=%d rows=%d\nmodel=%+v\nsym=%+v\ngemm=%s %s %s %s\n", cacheMagic, kind, n, m.Cfg, sym,
		g.Backend, g.Precision, g.ISA, g.Kernel)
	if g.Subnormals != "kept" {
		fmt.Fprintf(h, "subnormals=%s\n", g.Subnormals)
	}
	fmt.Fprintf(h, "code=%s\n", codeIdentity())
	for _, p := range m.Params() {
		fmt.Fprintf(h, "%s %v\n", p.Name, p.Shape)
		writeF32(h, p.Data)
	}
	S, M := d.ObsDim, d.ActDim
	writeF32(h, d.Observations[:n*S])
	writeF32(h, d.NextObservations[:n*S])
	writeF32(h, d.Actions[:n*M])
	var key [32]byte
	h.Sum(key[:0])
	return key
}

// codeIdentity names the code this process runs, for cache keys: a clean
// binary stamped at build time by its commit ("commit <hash>"); any other
// (built from a modified tree, unstamped, a test binary) by the sha256 of
// its executable ("binary <hash>"), so that only the same binary reuses
// its files. An executable that cannot be read gets a name no other
// process shares (no reuse).
var codeIdentity = sync.OnceValue(func() string {
	if v := version.Get(); v.Source == version.SourceBuild && !v.Dirty && v.Commit != "unknown" {
		return "commit " + v.Commit
	}
	exe, err := os.Executable()
	if err == nil {
		var f fingerprint.File
		if f, err = fingerprint.Of(exe); err == nil {
			return "binary " + f.SHA256
		}
	}
	return fmt.Sprintf("unreadable executable (%v), pid %d, %s", err, os.Getpid(), time.Now().Format(time.RFC3339Nano))
})

// cachePath is the file of a cache with this key and kind in dir.
func cachePath(dir string, kind cacheKind, key [32]byte) string {
	return filepath.Join(dir, fmt.Sprintf("koopman-%s-%s.cache", cacheKindName(kind), hex.EncodeToString(key[:12])))
}

// payloadBytes is the payload size of a cache of kind with rows rows.
func payloadBytes(kind cacheKind, N, rows int) uint64 {
	return uint64(rows) * uint64(bytesPerTransition(kind, N))
}

// writeF32 writes v little-endian through a small buffer.
func writeF32(w io.Writer, v []float32) error {
	var buf [4096]byte
	for len(v) > 0 {
		k := min(len(v), len(buf)/4)
		for i, x := range v[:k] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		if _, err := w.Write(buf[:4*k]); err != nil {
			return err
		}
		v = v[k:]
	}
	return nil
}

func writeBools(w io.Writer, v []bool) error {
	var buf [4096]byte
	for len(v) > 0 {
		k := min(len(v), len(buf))
		for i, x := range v[:k] {
			buf[i] = 0
			if x {
				buf[i] = 1
			}
		}
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		v = v[k:]
	}
	return nil
}

func readF32(r io.Reader, v []float32) error {
	var buf [4096]byte
	for len(v) > 0 {
		k := min(len(v), len(buf)/4)
		if _, err := io.ReadFull(r, buf[:4*k]); err != nil {
			return err
		}
		for i := range v[:k] {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		v = v[k:]
	}
	return nil
}

func readBools(r io.Reader, v []bool) error {
	var buf [4096]byte
	for len(v) > 0 {
		k := min(len(v), len(buf))
		if _, err := io.ReadFull(r, buf[:k]); err != nil {
			return err
		}
		for i, b := range buf[:k] {
			if b > 1 {
				return fmt.Errorf("flag byte %d is not 0 or 1", b)
			}
			v[i] = b == 1
		}
		v = v[k:]
	}
	return nil
}

// payload lists the cache's arrays in file order.
func (c *latentCache) payload() (f32 [][]float32, flags [][]bool) {
	f32 = [][]float32{c.g}
	if c.kind >= cacheKFC {
		f32 = append(f32, c.extra)
	}
	if c.kind == cacheKFCpp {
		f32 = append(f32, c.p)
	}
	if c.kind >= cacheKFC {
		flags = append(flags, c.fb)
	}
	if c.kind == cacheKFCpp {
		flags = append(flags, c.pairNext)
	}
	return f32, flags
}

// newLatentCache allocates an empty cache of kind for n rows.
func newLatentCache(kind cacheKind, N, n int) *latentCache {
	c := &latentCache{kind: kind, N: N, n: n}
	c.g = make([]float32, n*2*N)
	if kind >= cacheKFC {
		c.extra = make([]float32, n*2*N)
		c.fb = make([]bool, n)
	}
	if kind == cacheKFCpp {
		c.p = make([]float32, n*N*N)
		c.pairNext = make([]bool, n*N)
	}
	return c
}

// saveCache writes c to path atomically (internal/atomicfile: a temporary
// file in the same directory, synced, then renamed), so a reader never
// sees a partial file and two runs writing the same cache at once leave
// one whole copy. The file is mode 0644: the cache is for every run of the
// machine (a Slurm job may run as another user), like the datasets.
func saveCache(path string, c *latentCache, key [32]byte, fallbacks int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFunc(path, func(f *os.File) error { return writeCache(f, c, key, fallbacks) }, nil)
}

// writeCache writes the cache file's bytes (header, payload, checksum, end
// magic) to f.
func writeCache(f io.Writer, c *latentCache, key [32]byte, fallbacks int) error {
	bw := bufio.NewWriterSize(f, 1<<20)
	hd := cacheHeader{Key: key, Kind: uint32(c.kind), N: uint32(c.N), Rows: uint64(c.n), Fallbacks: uint64(fallbacks),
		Payload: payloadBytes(c.kind, c.N, c.n)}
	copy(hd.Magic[:], cacheMagic)
	if err := binary.Write(bw, binary.LittleEndian, hd); err != nil {
		return err
	}
	crc := crc32.New(castagnoli)
	w := io.MultiWriter(bw, crc)
	f32, flags := c.payload()
	for _, v := range f32 {
		if err := writeF32(w, v); err != nil {
			return err
		}
	}
	for _, v := range flags {
		if err := writeBools(w, v); err != nil {
			return err
		}
	}
	if err := binary.Write(bw, binary.LittleEndian, crc.Sum32()); err != nil {
		return err
	}
	if _, err := bw.WriteString(cacheEndMagic); err != nil {
		return err
	}
	return bw.Flush()
}

// errNoCacheFile reports that no cache file exists for the key.
var errNoCacheFile = errors.New("no cache file")

// loadCache reads the cache file at path, checking that it is the cache of
// this key, kind, N and row count and that its payload is intact. It
// returns errNoCacheFile when there is no file.
func loadCache(path string, key [32]byte, kind cacheKind, N, n int) (*latentCache, int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, errNoCacheFile
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	want := payloadBytes(kind, N, n)
	hdSize := int64(binary.Size(cacheHeader{}))
	if size := st.Size(); size != hdSize+int64(want)+4+int64(len(cacheEndMagic)) {
		return nil, 0, fmt.Errorf("%s: %d bytes, a whole cache of %d rows has %d", path, size, n, hdSize+int64(want)+4+int64(len(cacheEndMagic)))
	}
	br := bufio.NewReaderSize(f, 1<<20)
	var hd cacheHeader
	if err := binary.Read(br, binary.LittleEndian, &hd); err != nil {
		return nil, 0, fmt.Errorf("%s: header: %w", path, err)
	}
	switch {
	case string(hd.Magic[:]) != cacheMagic:
		return nil, 0, fmt.Errorf("%s: not a koopq augmentation cache (magic %q)", path, hd.Magic[:])
	case hd.Key != key:
		return nil, 0, fmt.Errorf("%s: its key differs from this model, dataset and backend", path)
	case hd.Kind != uint32(kind) || hd.N != uint32(N) || hd.Rows != uint64(n) || hd.Payload != want:
		return nil, 0, fmt.Errorf("%s: header (kind %d, N %d, %d rows, %d bytes) does not match (kind %d, N %d, %d rows, %d bytes)",
			path, hd.Kind, hd.N, hd.Rows, hd.Payload, kind, N, n, want)
	case hd.Fallbacks > hd.Rows:
		return nil, 0, fmt.Errorf("%s: %d fallbacks in %d rows", path, hd.Fallbacks, hd.Rows)
	}
	c := newLatentCache(kind, N, n)
	crc := crc32.New(castagnoli)
	r := io.TeeReader(br, crc)
	f32, flags := c.payload()
	for _, v := range f32 {
		if err := readF32(r, v); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, v := range flags {
		if err := readBools(r, v); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	var sum uint32
	if err := binary.Read(br, binary.LittleEndian, &sum); err != nil {
		return nil, 0, fmt.Errorf("%s: checksum: %w", path, err)
	}
	end := make([]byte, len(cacheEndMagic))
	if _, err := io.ReadFull(br, end); err != nil || string(end) != cacheEndMagic {
		return nil, 0, fmt.Errorf("%s: no end marker", path)
	}
	if got := crc.Sum32(); got != sum {
		return nil, 0, fmt.Errorf("%s: payload checksum %08x, recorded %08x (damaged file)", path, got, sum)
	}
	return c, int(hd.Fallbacks), nil
}

// precomputeCached is precompute backed by a cache file in dir (dir empty:
// precompute alone). A valid file is loaded; otherwise the cache is
// computed and written for the next run. A file that cannot be used or
// written never fails the augmenter: info.FileError says why, and the
// computed cache is used.
func precomputeCached(dir string, m *koopman.Model, d *dataset.Dataset, kind cacheKind, budget int64, workers int,
	sym koopman.SymmetryConfig, progress meter.Progress) (*latentCache, PrecomputeInfo) {
	n := cacheRows(kind, m.N(), d.Len(), budget)
	if dir == "" || n == 0 {
		return precompute(m, d, kind, budget, workers, sym, progress)
	}
	start := time.Now()
	key := cacheKey(m, d, kind, n, sym)
	path := cachePath(dir, kind, key)
	c, fallbacks, err := loadCache(path, key, kind, m.N(), n)
	if err == nil {
		info := PrecomputeInfo{Transitions: d.Len(), Cached: n, BytesPerTransition: bytesPerTransition(kind, m.N()),
			Bytes: int64(payloadBytes(kind, m.N(), n)), Fallbacks: fallbacks, File: path, Loaded: true,
			Seconds: time.Since(start).Seconds()}
		if progress != nil {
			progress(n, n, "")
		}
		return c, info
	}
	c, info := precompute(m, d, kind, budget, workers, sym, progress)
	info.File = path
	if !errors.Is(err, errNoCacheFile) {
		info.FileError = "not used: " + err.Error()
	}
	if err := saveCache(path, c, key, info.Fallbacks); err != nil {
		if info.FileError != "" {
			info.FileError += "; "
		}
		info.FileError += "not written: " + err.Error()
	}
	return c, info
}
