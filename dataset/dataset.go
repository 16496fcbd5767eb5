// Package dataset holds offline transition data in memory: flat float32 arrays
// in row-major order (rows are transitions), validation, seeded minibatch
// sampling without allocation, and observation normalization.
package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
)

// Dataset is a set of N transitions (s, a, r, s', terminal, timeout).
// Every slice is row-major with N rows.
type Dataset struct {
	ObsDim int // dimension of an observation
	ActDim int // dimension of an action

	Observations     []float32 // [N, ObsDim] s_t
	Actions          []float32 // [N, ActDim] a_t
	Rewards          []float32 // [N] r_t
	NextObservations []float32 // [N, ObsDim] s_{t+1}
	Terminals        []float32 // [N] 1 where s_{t+1} is a true terminal state, else 0
	Timeouts         []float32 // [N] 1 where the episode was cut by the time limit after this step, else 0

	// Meta carries provenance: env name, policy, seed, koopq version, source file.
	Meta map[string]string
}

// Append adds one transition (s, a, r, s′) with its terminal and timeout
// flags as given, converting float64 simulator values to float32. Collectors
// that build a Dataset step by step use it.
func (d *Dataset) Append(s, a []float64, r float64, next []float64, terminal, timeout bool) {
	for _, v := range s {
		d.Observations = append(d.Observations, float32(v))
	}
	for _, v := range a {
		d.Actions = append(d.Actions, float32(v))
	}
	for _, v := range next {
		d.NextObservations = append(d.NextObservations, float32(v))
	}
	d.Rewards = append(d.Rewards, float32(r))
	d.Terminals = append(d.Terminals, flag(terminal))
	d.Timeouts = append(d.Timeouts, flag(timeout))
}

func flag(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// Len returns the number of transitions N.
func (d *Dataset) Len() int { return len(d.Rewards) }

// Validate checks that all arrays agree in length and hold only finite
// values, and that terminals/timeouts are 0 or 1. The error names the field
// and the first offending row.
func (d *Dataset) Validate() error {
	if d.ObsDim <= 0 || d.ActDim <= 0 {
		return fmt.Errorf("dataset: invalid dimensions obs=%d act=%d", d.ObsDim, d.ActDim)
	}
	n := d.Len()
	if n == 0 {
		return fmt.Errorf("dataset: no transitions")
	}
	check := func(name string, x []float32, width int) error {
		if len(x) != n*width {
			return fmt.Errorf("dataset: %s has %d values, want %d rows × %d = %d", name, len(x), n, width, n*width)
		}
		for i, v := range x {
			// All exponent bits set: ±Inf or NaN (one mask instead of two
			// float64 tests; BenchmarkValidate).
			if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
				return fmt.Errorf("dataset: %s row %d holds a non-finite value %v", name, i/width, v)
			}
		}
		return nil
	}
	for _, f := range []struct {
		name  string
		x     []float32
		width int
	}{
		{"observations", d.Observations, d.ObsDim},
		{"actions", d.Actions, d.ActDim},
		{"rewards", d.Rewards, 1},
		{"next_observations", d.NextObservations, d.ObsDim},
		{"terminals", d.Terminals, 1},
		{"timeouts", d.Timeouts, 1},
	} {
		if err := check(f.name, f.x, f.width); err != nil {
			return err
		}
	}
	for i := 0; i < n; i++ {
		if t := d.Terminals[i]; t != 0 && t != 1 {
			return fmt.Errorf("dataset: terminals row %d is %v, want 0 or 1", i, t)
		}
		if t := d.Timeouts[i]; t != 0 && t != 1 {
			return fmt.Errorf("dataset: timeouts row %d is %v, want 0 or 1", i, t)
		}
	}
	return nil
}

// ContentSHA256 is the hex sha256 of the transitions as read: ObsDim and
// ActDim, then every array (observations, actions, rewards, next
// observations, terminals, timeouts) as little-endian float32, each
// preceded by its length. Unlike a file's sha256 it does not depend on how
// the file was laid out, and it covers what a run actually trains on
// (after ReadOptions). Meta is not part of it. About 1 GB/s.
func (d *Dataset) ContentSHA256() string {
	h := sha256.New()
	var buf []byte
	buf = binary.LittleEndian.AppendUint64(buf, uint64(d.ObsDim))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(d.ActDim))
	h.Write(buf)
	for _, a := range [][]float32{d.Observations, d.Actions, d.Rewards, d.NextObservations, d.Terminals, d.Timeouts} {
		buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(len(a)))
		h.Write(buf)
		const chunk = 1 << 14
		for i := 0; i < len(a); i += chunk {
			buf = buf[:0]
			for _, v := range a[i:min(i+chunk, len(a))] {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
			h.Write(buf)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
