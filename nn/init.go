package nn

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// XavierUniform fills w (fanIn×fanOut values) from U(−b, b) with
// b = gain·sqrt(6/(fanIn+fanOut)) (Glorot & Bengio 2010; the authors' KFC code
// initializes its Q networks this way).
func XavierUniform(w []float32, fanIn, fanOut int, gain float64, rng *rand.Rand) {
	b := gain * math.Sqrt(6/float64(fanIn+fanOut))
	for i := range w {
		w[i] = float32((2*rng.Float64() - 1) * b)
	}
}

// Orthogonal fills w, viewed as a [rows, cols] matrix, with a (semi-)orthogonal
// matrix times gain (Saxe et al. 2014; CORL's critic init uses gain √2 for
// hidden layers and 1e-2 for the output). It uses the QR decomposition of a
// Gaussian matrix with the sign correction that makes the result uniform.
func Orthogonal(w []float32, rows, cols int, gain float64, rng *rand.Rand) {
	r, c := rows, cols
	transpose := r < c
	if transpose {
		r, c = c, r
	}
	a := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v := q.At(i, j)
			if rr.At(j, j) < 0 {
				v = -v
			}
			if transpose {
				w[j*cols+i] = float32(gain * v)
			} else {
				w[i*cols+j] = float32(gain * v)
			}
		}
	}
}
