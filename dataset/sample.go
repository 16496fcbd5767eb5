package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Batch is a minibatch of B transitions in preallocated row-major buffers.
// Sampling into a Batch does not allocate.
type Batch struct {
	B, ObsDim, ActDim int
	Obs               []float32 // [B, ObsDim] s_t
	Act               []float32 // [B, ActDim] a_t
	Rew               []float32 // [B] r_t
	NextObs           []float32 // [B, ObsDim] s_{t+1}
	Done              []float32 // [B] 1 if s_{t+1} is terminal (timeouts are not terminal)
	Idx               []int     // [B] dataset row of each sample
}

// NewBatch allocates a batch of b transitions.
func NewBatch(b, obsDim, actDim int) *Batch {
	return &Batch{B: b, ObsDim: obsDim, ActDim: actDim,
		Obs: make([]float32, b*obsDim), Act: make([]float32, b*actDim), Rew: make([]float32, b),
		NextObs: make([]float32, b*obsDim), Done: make([]float32, b), Idx: make([]int, b)}
}

// Sampler draws minibatches uniformly with replacement from a dataset,
// reproducibly from its seed.
type Sampler struct {
	d   *Dataset
	rng *rand.Rand
}

// NewSampler makes a sampler over d seeded by rng.
func NewSampler(d *Dataset, rng *rand.Rand) *Sampler { return &Sampler{d: d, rng: rng} }

// Sample fills b with b.B random transitions.
func (s *Sampler) Sample(b *Batch) {
	d := s.d
	n := d.Len()
	o, a := d.ObsDim, d.ActDim
	for i := 0; i < b.B; i++ {
		j := s.rng.IntN(n)
		b.Idx[i] = j
		copy(b.Obs[i*o:(i+1)*o], d.Observations[j*o:(j+1)*o])
		copy(b.NextObs[i*o:(i+1)*o], d.NextObservations[j*o:(j+1)*o])
		copy(b.Act[i*a:(i+1)*a], d.Actions[j*a:(j+1)*a])
		b.Rew[i] = d.Rewards[j]
		b.Done[i] = d.Terminals[j]
	}
}

// Normalizer standardizes observations: (s − Mean)/Std per dimension. It is
// fitted on a dataset's observations and saved with the trained agent so that
// evaluation feeds the policy the same inputs it was trained on.
type Normalizer struct {
	Mean []float32 `json:"mean"` // [ObsDim]
	Std  []float32 `json:"std"`  // [ObsDim], at least Eps
}

// FitNormalizer computes per-dimension mean and standard deviation of d's
// observations, with std floored at eps (CORL uses 1e-3).
func FitNormalizer(d *Dataset, eps float32) *Normalizer {
	o := d.ObsDim
	n := d.Len()
	sum := make([]float64, o)
	sq := make([]float64, o)
	for i := 0; i < n; i++ {
		for j := 0; j < o; j++ {
			v := float64(d.Observations[i*o+j])
			sum[j] += v
			sq[j] += v * v
		}
	}
	nm := &Normalizer{Mean: make([]float32, o), Std: make([]float32, o)}
	for j := 0; j < o; j++ {
		m := sum[j] / float64(n)
		v := math.Max(sq[j]/float64(n)-m*m, 0)
		nm.Mean[j] = float32(m)
		nm.Std[j] = float32(math.Max(math.Sqrt(v), float64(eps)))
	}
	return nm
}

// Identity returns a normalizer that leaves observations unchanged.
func Identity(obsDim int) *Normalizer {
	nm := &Normalizer{Mean: make([]float32, obsDim), Std: make([]float32, obsDim)}
	for i := range nm.Std {
		nm.Std[i] = 1
	}
	return nm
}

// Apply standardizes rows of obs [rows, ObsDim] in place.
func (nm *Normalizer) Apply(obs []float32) {
	o := len(nm.Mean)
	for i := 0; i+o <= len(obs); i += o {
		row := obs[i : i+o]
		for j := range row {
			row[j] = (row[j] - nm.Mean[j]) / nm.Std[j]
		}
	}
}

// Validate checks the normalizer's dimension and values.
func (nm *Normalizer) Validate(obsDim int) error {
	if len(nm.Mean) != obsDim || len(nm.Std) != obsDim {
		return fmt.Errorf("normalizer has %d/%d dims, observations have %d", len(nm.Mean), len(nm.Std), obsDim)
	}
	for j := range nm.Std {
		if !(nm.Std[j] > 0) || math.IsInf(float64(nm.Std[j]), 0) || math.IsNaN(float64(nm.Mean[j])) {
			return fmt.Errorf("normalizer dimension %d: mean %v std %v", j, nm.Mean[j], nm.Std[j])
		}
	}
	return nil
}

// Synthetic returns n transitions of random data for benchmarks and smoke
// tests: observations and next observations ~ N(0, 1) (obsDim each),
// actions ~ U(−1, 1) (actDim), rewards ~ N(0, 1), no terminals or timeouts.
// It carries no dynamics: nothing trained on it means anything.
func Synthetic(obsDim, actDim, n int, rng *rand.Rand) *Dataset {
	d := &Dataset{
		ObsDim: obsDim, ActDim: actDim,
		Observations:     make([]float32, 0, n*obsDim),
		NextObservations: make([]float32, 0, n*obsDim),
		Actions:          make([]float32, 0, n*actDim),
		Rewards:          make([]float32, 0, n),
		Terminals:        make([]float32, n),
		Timeouts:         make([]float32, n),
	}
	for i := 0; i < n; i++ {
		for j := 0; j < obsDim; j++ {
			d.Observations = append(d.Observations, float32(rng.NormFloat64()))
			d.NextObservations = append(d.NextObservations, float32(rng.NormFloat64()))
		}
		for j := 0; j < actDim; j++ {
			d.Actions = append(d.Actions, float32(2*rng.Float64()-1))
		}
		d.Rewards = append(d.Rewards, float32(rng.NormFloat64()))
	}
	return d
}
