package augment

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/koopq/koopq/dataset"
)

// Shift magnitude (DESIGN: "augmentation magnitude is a measured quantity"):
// Meter records ‖s̃ − s‖₂ of every row an augmenter shifts during training,
// Calibrate sets an augmenter's scale so that the mean ‖s̃_t − s_t‖₂ equals a
// target, and Koopman.Decompose splits a Koopman shift into its model-error
// and symmetry parts.

// Histogram bins: histPerDecade log-spaced bins per decade from histMin to
// histMin·10^histDecades, plus one bin below (exact zeros and anything
// smaller) and one above. A quantile read from it is off by at most half a
// bin, a factor 10^(1/(2·histPerDecade)) ≈ 1.2% at 100 bins per decade.
const (
	histPerDecade = 100
	histDecades   = 14
	histMin       = 1e-10
	histBins      = histPerDecade*histDecades + 2
	histMax       = 1e4 // histMin·10^histDecades: the top bin's lower edge
)

// ShiftHistogram summarizes a stream of non-negative distances in bounded
// memory: the exact count, sum (for the mean) and a log-binned histogram
// (for quantiles, within ≈1.2%). Its state does not depend on the order of
// the values, so a run resumed from a checkpointed histogram ends with the
// same numbers as an uninterrupted one. The zero value is ready to use.
type ShiftHistogram struct {
	n      int64
	sum    float64
	counts []int64 // [histBins], allocated on the first Add
}

// Add records one distance (NaN is counted in the top bin).
func (h *ShiftHistogram) Add(v float64) {
	if h.counts == nil {
		h.counts = make([]int64, histBins)
	}
	h.n++
	h.sum += v
	h.counts[histBin(v)]++
}

func histBin(v float64) int {
	switch {
	case math.IsNaN(v):
		return histBins - 1
	case !(v >= histMin): // zero, negative (never) and tiny
		return 0
	case v >= histMax: // also +Inf, and values whose v/histMin overflows to +Inf
		return histBins - 1
	}
	// histMin ≤ v < histMax: v/histMin < 10^histDecades (or rounds to it),
	// so the index is at most histBins−1.
	return 1 + int(math.Floor(math.Log10(v/histMin)*histPerDecade))
}

// N is the number of distances recorded.
func (h *ShiftHistogram) N() int64 { return h.n }

// Mean is the exact mean of the recorded distances (0 when none).
func (h *ShiftHistogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Quantile returns the p-quantile (p in [0, 1]) as the geometric centre of
// the bin holding it (0 for the bottom bin; 0 when empty).
func (h *ShiftHistogram) Quantile(p float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p * float64(h.n)))
	rank = max(rank, 1)
	var c int64
	for i, k := range h.counts {
		c += k
		if c >= rank {
			if i == 0 {
				return 0
			}
			return histMin * math.Pow(10, (float64(i-1)+0.5)/histPerDecade)
		}
	}
	return math.Inf(1)
}

// Summary is the mean, median and 95th percentile of the recorded values.
func (h *ShiftHistogram) Summary() ShiftSummary {
	return ShiftSummary{Rows: h.n, Mean: h.Mean(), Median: h.Quantile(0.5), P95: h.Quantile(0.95)}
}

// ShiftSummary describes the distances ‖s̃ − s‖₂ of the rows an augmenter shifted.
type ShiftSummary struct {
	Rows   int64   `json:"rows"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"` // within ≈1.2% (histogram bin)
	P95    float64 `json:"p95"`    // within ≈1.2% (histogram bin)
}

type histState struct {
	N    int64      `json:"n"`
	Sum  float64    `json:"sum"`
	Bins [][2]int64 `json:"bins"` // non-empty bins: [index, count]
}

// MarshalJSON writes the histogram's state (sparse bins).
func (h *ShiftHistogram) MarshalJSON() ([]byte, error) {
	s := histState{N: h.n, Sum: h.sum, Bins: [][2]int64{}}
	for i, c := range h.counts {
		if c != 0 {
			s.Bins = append(s.Bins, [2]int64{int64(i), c})
		}
	}
	return json.Marshal(s)
}

// UnmarshalJSON restores a state written by MarshalJSON.
func (h *ShiftHistogram) UnmarshalJSON(b []byte) error {
	var s histState
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	counts := make([]int64, histBins)
	var total int64
	for _, bc := range s.Bins {
		if bc[0] < 0 || bc[0] >= histBins || bc[1] < 0 {
			return fmt.Errorf("shift histogram: bad bin %v", bc)
		}
		counts[bc[0]] += bc[1]
		total += bc[1]
	}
	if total != s.N {
		return fmt.Errorf("shift histogram: bins hold %d values, count says %d", total, s.N)
	}
	*h = ShiftHistogram{n: s.N, sum: s.Sum, counts: counts}
	return nil
}

// Meter wraps an augmenter and records ‖s̃_t − s_t‖₂ and ‖s̃_{t+1} − s_{t+1}‖₂
// of every row of every batch it augments (every augmenter with a scale
// shifts every row; s4rl-adv leaves s_{t+1} as it is, so its Next is all
// zeros). It draws nothing from the rng, so wrapping changes no number of
// a run. Obs and Next are exported for checkpointing (MarshalJSON).
type Meter struct {
	Augmenter
	Obs, Next ShiftHistogram
}

// NewMeter wraps a.
func NewMeter(a Augmenter) *Meter { return &Meter{Augmenter: a} }

// Augment implements Augmenter.
func (m *Meter) Augment(b *dataset.Batch, obs, next []float32, rng *rand.Rand, q QGradient) error {
	if err := m.Augmenter.Augment(b, obs, next, rng, q); err != nil {
		return err
	}
	S := b.ObsDim
	for i := 0; i < b.B; i++ {
		m.Obs.Add(rowL2(obs[i*S:(i+1)*S], b.Obs[i*S:(i+1)*S]))
		m.Next.Add(rowL2(next[i*S:(i+1)*S], b.NextObs[i*S:(i+1)*S]))
	}
	return nil
}

type meterState struct {
	Obs  *ShiftHistogram `json:"obs"`
	Next *ShiftHistogram `json:"next"`
}

// State returns the meter's histograms as JSON (for a checkpoint).
func (m *Meter) State() (string, error) {
	b, err := json.Marshal(meterState{&m.Obs, &m.Next})
	return string(b), err
}

// SetState restores histograms written by State.
func (m *Meter) SetState(s string) error {
	var st meterState
	st.Obs, st.Next = &ShiftHistogram{}, &ShiftHistogram{}
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return fmt.Errorf("shift meter: %w", err)
	}
	m.Obs, m.Next = *st.Obs, *st.Next
	return nil
}

// rowL2 is ‖x − y‖₂ accumulated in float64.
func rowL2(x, y []float32) float64 {
	s := 0.0
	for j := range x {
		d := float64(x[j]) - float64(y[j])
		s += d * d
	}
	return math.Sqrt(s)
}

// meanRowL2 is the mean over the B rows of x and y ([B, S]) of ‖x − y‖₂.
func meanRowL2(x, y []float32, B, S int) float64 {
	if B == 0 {
		return 0
	}
	sum := 0.0
	for i := 0; i < B; i++ {
		sum += rowL2(x[i*S:(i+1)*S], y[i*S:(i+1)*S])
	}
	return sum / float64(B)
}
