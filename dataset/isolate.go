package dataset

// Reading HDF5 files in a child process.
//
// libhdf5 1.10 crashes (SIGSEGV) or hangs on some corrupt files, which no
// Go code can recover from. So unless ReadOptions.InProcess says the file
// is trusted, LoadD4RL, LoadMinari (and ReadD4RL, ReadMinari) and Inspect
// run the whole read in a fresh copy of the running binary
// (internal/hdf5.RunWorker) and receive the result over a pipe: a gob
// header followed by the float32 arrays as raw bytes. A worker that dies
// or hangs becomes an error naming the file; the calling process never
// parses the file with libhdf5 at all.

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/koopq/koopq/internal/hdf5"
	"github.com/koopq/koopq/internal/regfile"
)

const (
	workerD4RL    = "dataset.load-d4rl"
	workerMinari  = "dataset.load-minari"
	workerInspect = "dataset.inspect"
	workerFormat  = "dataset.format"
	workerMeta    = "dataset.metadata"
)

func init() {
	hdf5.RegisterWorker(workerD4RL, func(req []byte) (hdf5.Encoder, error) {
		path, opts, err := decodeRequest(req)
		if err != nil {
			return nil, err
		}
		r, err := loadD4RL(path, opts)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return encodeRaw(w, r) }, nil
	})
	hdf5.RegisterWorker(workerMinari, func(req []byte) (hdf5.Encoder, error) {
		path, opts, err := decodeRequest(req)
		if err != nil {
			return nil, err
		}
		d, conv, ex, err := loadMinariInProcess(path, opts)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return encodeMinari(w, d, conv, ex) }, nil
	})
	registerGob(workerInspect, func(path string, opts ReadOptions) (any, error) { return inspect(path, opts) })
	registerGob(workerFormat, func(path string, _ ReadOptions) (any, error) { return detectFormat(path) })
	registerGob(workerMeta, func(path string, _ ReadOptions) (any, error) {
		format, err := detectFormat(path)
		if err != nil {
			return nil, err
		}
		return metadata(path, format)
	})
	// Last: a worker process runs its worker here and exits.
	hdf5.ServeWorker()
}

// registerGob registers a worker whose result (small: a summary, not the
// arrays) goes back gob-encoded.
func registerGob(name string, read func(path string, opts ReadOptions) (any, error)) {
	hdf5.RegisterWorker(name, func(req []byte) (hdf5.Encoder, error) {
		path, opts, err := decodeRequest(req)
		if err != nil {
			return nil, err
		}
		v, err := read(path, opts)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return gob.NewEncoder(w).Encode(v) }, nil
	})
}

// isolated reports whether reads under opts go through a child process.
func isolated(opts ReadOptions) bool { return hdf5.Available && !opts.InProcess }

// childTimeout is the time limit for a child-process read of the HDF5
// file h5 (see ReadOptions.Timeout): opts.Timeout when set, else one
// minute plus one second per 2 MiB of the file (one minute when it cannot
// be stat'ed: the worker then reports the error itself).
func childTimeout(opts ReadOptions, h5 string) time.Duration {
	if opts.Timeout != 0 {
		return opts.Timeout
	}
	var size int64
	if st, err := os.Stat(h5); err == nil {
		size = st.Size()
	}
	return time.Minute + time.Duration(size/(2<<20))*time.Second
}

type request struct {
	Path string
	Opts ReadOptions
}

func decodeRequest(b []byte) (string, ReadOptions, error) {
	var rq request
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&rq); err != nil {
		return "", ReadOptions{}, fmt.Errorf("dataset worker: bad request: %v", err)
	}
	return rq.Path, rq.Opts, nil
}

// runIsolated reads path with worker name in a child process. h5 is the
// HDF5 file the worker will parse (it names the file in crash errors and
// sets the time limit).
func runIsolated(name, path, h5 string, opts ReadOptions, decode func(io.Reader) error) error {
	var req bytes.Buffer
	if err := gob.NewEncoder(&req).Encode(request{Path: path, Opts: opts}); err != nil {
		return fmt.Errorf("dataset %s: %v", path, err)
	}
	err := hdf5.RunWorker(name, req.Bytes(), childTimeout(opts, h5), decode)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, hdf5.ErrTimedOut):
		return fmt.Errorf("dataset %s: %w; if the file is trusted and just large or slow to read, raise --read-timeout (ReadOptions.Timeout; negative: no limit)", h5, err)
	case errors.Is(err, hdf5.ErrCrashed), errors.Is(err, hdf5.ErrWorkerPanic), errors.Is(err, hdf5.ErrWorkerStart):
		return fmt.Errorf("dataset %s: %w", h5, err)
	}
	return err // the worker's own error, already naming the file
}

// statErr describes why path could not be stat'ed, naming the file once:
// "no such file or directory", "too many levels of symbolic links" (a
// symlink loop), "permission denied", ...
func statErr(path string, err error) error {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	return fmt.Errorf("dataset %s: %v", path, err)
}

// precheckH5 does openH5's cheap checks without libhdf5, so that missing,
// empty and non-HDF5 files are refused without starting a worker.
func precheckH5(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return statErr(path, err)
	}
	if st.IsDir() {
		return fmt.Errorf("dataset %s: is a directory, want an HDF5 file", path)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("dataset %s: is %s, not a regular file", path, regfile.Kind(st.Mode()))
	}
	if st.Size() == 0 {
		return fmt.Errorf("dataset %s: file is empty (0 bytes)", path)
	}
	ok, err := hdf5.IsHDF5(path)
	if err != nil {
		return fmt.Errorf("dataset %s: %v", path, err)
	}
	if !ok {
		return fmt.Errorf("dataset %s: not an HDF5 file", path)
	}
	return nil
}

// loadD4RLIsolated is LoadD4RL in a child process.
func loadD4RLIsolated(path string, opts ReadOptions) (*Raw, error) {
	if err := precheckH5(path); err != nil {
		return nil, err
	}
	var r *Raw
	err := runIsolated(workerD4RL, path, path, opts, func(rd io.Reader) error {
		var err error
		r, err = decodeRaw(rd)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// loadMinariIsolated is loadMinari in a child process.
func loadMinariIsolated(path string, opts ReadOptions) (*Dataset, Conversion, minariExtra, error) {
	h5, _, err := MinariFiles(path)
	if err != nil {
		return nil, Conversion{}, minariExtra{}, err
	}
	if err := precheckH5(h5); err != nil {
		return nil, Conversion{}, minariExtra{}, err
	}
	var (
		d    *Dataset
		conv Conversion
		ex   minariExtra
	)
	err = runIsolated(workerMinari, path, h5, opts, func(rd io.Reader) error {
		var err error
		d, conv, ex, err = decodeMinari(rd)
		return err
	})
	if err != nil {
		return nil, Conversion{}, minariExtra{}, err
	}
	return d, conv, ex, nil
}

// inspectIsolated is Inspect in a child process; only the summary comes
// back.
func inspectIsolated(path string, opts ReadOptions) (*Info, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, statErr(path, err)
	}
	h5 := path
	if st.IsDir() {
		if h5, _, err = MinariFiles(path); err != nil {
			return nil, err
		}
	}
	if err := precheckH5(h5); err != nil {
		return nil, err
	}
	var in Info
	err = runIsolated(workerInspect, path, h5, opts, func(rd io.Reader) error {
		return gob.NewDecoder(rd).Decode(&in)
	})
	if err != nil {
		return nil, err
	}
	in.Meta = nonNilMap(in.Meta)
	fixKeys(in.Keys)
	return &in, nil
}

// formatIsolated is detectFormat in a child process.
func formatIsolated(path string, opts ReadOptions) (string, error) {
	if err := precheckH5(path); err != nil {
		return "", err
	}
	var format string
	err := runIsolated(workerFormat, path, path, opts, func(rd io.Reader) error {
		return gob.NewDecoder(rd).Decode(&format)
	})
	return format, err
}

// ---- wire format: gob header, then float32 arrays as raw bytes ----

// writeFloats writes len+1 (0 for nil) and the raw native-endian bytes.
func writeFloats(w io.Writer, x []float32) error {
	var n [binary.MaxVarintLen64]byte
	k := 0
	if x == nil {
		k = binary.PutUvarint(n[:], 0)
	} else {
		k = binary.PutUvarint(n[:], uint64(len(x))+1)
	}
	if _, err := w.Write(n[:k]); err != nil {
		return err
	}
	if len(x) == 0 {
		return nil
	}
	_, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x)))
	return err
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

// readFloats reads what writeFloats wrote. The values are read in chunks
// of at most 1 Mi, so a damaged length ends in an error at the end of the
// stream instead of one huge allocation.
func readFloats(r byteReader) ([]float32, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	const chunk = 1 << 20
	x := make([]float32, 0, min(n-1, chunk))
	for left := n - 1; left > 0; {
		k := int(min(left, chunk))
		x = slices.Grow(x, k)[:len(x)+k]
		part := x[len(x)-k:]
		if _, err := io.ReadFull(r, unsafe.Slice((*byte)(unsafe.Pointer(&part[0])), 4*k)); err != nil {
			return nil, fmt.Errorf("array of %d values: %w", n-1, err)
		}
		left -= uint64(k)
	}
	return x, nil
}

func asByteReader(r io.Reader) byteReader {
	if br, ok := r.(byteReader); ok {
		return br
	}
	return &oneByteReader{r}
}

type oneByteReader struct{ io.Reader }

func (o *oneByteReader) ReadByte() (byte, error) {
	var b [1]byte
	_, err := io.ReadFull(o.Reader, b[:])
	return b[0], err
}

// rawWire is the header of an encoded Raw.
type rawWire struct {
	Raw       Raw      // float32 arrays stripped; they follow the header
	InfoNames []string // order of the Infos arrays after the six main ones
	HasInfos  bool     // Infos was non-nil
}

func encodeRaw(w io.Writer, r *Raw) error {
	h := rawWire{Raw: *r, HasInfos: r.Infos != nil}
	h.Raw.Observations, h.Raw.Actions, h.Raw.Rewards = nil, nil, nil
	h.Raw.NextObservations, h.Raw.Terminals, h.Raw.Timeouts = nil, nil, nil
	h.Raw.Infos = map[string]Array{}
	for k, a := range r.Infos {
		h.InfoNames = append(h.InfoNames, k)
		h.Raw.Infos[k] = Array{Shape: a.Shape}
	}
	sort.Strings(h.InfoNames)
	if err := gob.NewEncoder(w).Encode(&h); err != nil {
		return err
	}
	for _, x := range [][]float32{r.Observations, r.Actions, r.Rewards, r.NextObservations, r.Terminals, r.Timeouts} {
		if err := writeFloats(w, x); err != nil {
			return err
		}
	}
	for _, k := range h.InfoNames {
		if err := writeFloats(w, r.Infos[k].Data); err != nil {
			return err
		}
	}
	return nil
}

func decodeRaw(rd io.Reader) (*Raw, error) {
	br := asByteReader(rd)
	var h rawWire
	if err := gob.NewDecoder(br).Decode(&h); err != nil {
		return nil, fmt.Errorf("worker result: %v", err)
	}
	r := h.Raw
	for _, p := range []*[]float32{&r.Observations, &r.Actions, &r.Rewards, &r.NextObservations, &r.Terminals, &r.Timeouts} {
		x, err := readFloats(br)
		if err != nil {
			return nil, fmt.Errorf("worker result: %v", err)
		}
		*p = x
	}
	infos := r.Infos
	r.Infos = nil
	if h.HasInfos {
		r.Infos = map[string]Array{}
	}
	for _, k := range h.InfoNames {
		x, err := readFloats(br)
		if err != nil {
			return nil, fmt.Errorf("worker result: %v", err)
		}
		r.Infos[k] = Array{Data: x, Shape: infos[k].Shape}
	}
	r.Meta = nonNilMap(r.Meta)
	fixKeys(r.Keys)
	return &r, nil
}

// minariWire is the header of an encoded Minari read.
type minariWire struct {
	Dataset  Dataset // float32 arrays stripped
	Conv     Conversion
	H5       string
	Episodes []Episode
	Keys     []Key
}

func encodeMinari(w io.Writer, d *Dataset, conv Conversion, ex minariExtra) error {
	h := minariWire{Dataset: Dataset{ObsDim: d.ObsDim, ActDim: d.ActDim, Meta: d.Meta}, Conv: conv, H5: ex.h5, Episodes: ex.episodes, Keys: ex.keys}
	if err := gob.NewEncoder(w).Encode(&h); err != nil {
		return err
	}
	for _, x := range [][]float32{d.Observations, d.Actions, d.Rewards, d.NextObservations, d.Terminals, d.Timeouts} {
		if err := writeFloats(w, x); err != nil {
			return err
		}
	}
	return nil
}

func decodeMinari(rd io.Reader) (*Dataset, Conversion, minariExtra, error) {
	br := asByteReader(rd)
	var h minariWire
	if err := gob.NewDecoder(br).Decode(&h); err != nil {
		return nil, Conversion{}, minariExtra{}, fmt.Errorf("worker result: %v", err)
	}
	d := h.Dataset
	for _, p := range []*[]float32{&d.Observations, &d.Actions, &d.Rewards, &d.NextObservations, &d.Terminals, &d.Timeouts} {
		x, err := readFloats(br)
		if err != nil {
			return nil, Conversion{}, minariExtra{}, fmt.Errorf("worker result: %v", err)
		}
		*p = x
	}
	d.Meta = nonNilMap(d.Meta)
	fixKeys(h.Keys)
	return &d, h.Conv, minariExtra{h5: h.H5, episodes: h.Episodes, keys: h.Keys}, nil
}

// gob sends neither empty maps nor empty slices; restore what readers
// always return non-nil.
func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func fixKeys(keys []Key) {
	for i := range keys {
		if keys[i].Shape == nil {
			keys[i].Shape = []int{}
		}
	}
}
