package nn

import "math"

// MSE returns mean((pred−target)²) over n values and writes ∂loss/∂pred into
// grad (if non-nil), scaled by scale (use 1 for the plain loss).
func MSE(pred, target []float32, grad []float32, scale float32) float32 {
	n := len(pred)
	var s float64
	k := 2 * scale / float32(n)
	for i := range pred {
		d := pred[i] - target[i]
		s += float64(d) * float64(d)
		if grad != nil {
			grad[i] = k * d
		}
	}
	return float32(s / float64(n))
}

// Huber returns mean(smoothL1(pred−target)) with threshold delta (PyTorch's
// smooth_l1_loss with beta = delta: 0.5·d²/delta for |d| < delta, else
// |d| − 0.5·delta) and writes ∂loss/∂pred·scale into grad if non-nil.
func Huber(pred, target []float32, delta float32, grad []float32, scale float32) float32 {
	n := len(pred)
	var s float64
	k := scale / float32(n)
	for i := range pred {
		d := pred[i] - target[i]
		ad := d
		if ad < 0 {
			ad = -ad
		}
		if ad < delta {
			s += 0.5 * float64(d) * float64(d) / float64(delta)
			if grad != nil {
				grad[i] = k * d / delta
			}
		} else {
			s += float64(ad) - 0.5*float64(delta)
			if grad != nil {
				g := k
				if d < 0 {
					g = -k
				}
				grad[i] = g
			}
		}
	}
	return float32(s / float64(n))
}

// LogSumExpRows computes out[r] = log Σ_j exp(x[r, j]) for x: [rows, cols],
// stably. If soft is non-nil it receives the row softmax [rows, cols], which
// is ∂out[r]/∂x[r, ·].
func LogSumExpRows(x []float32, rows, cols int, out, soft []float32) {
	for r := 0; r < rows; r++ {
		row := x[r*cols : (r+1)*cols]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v - m))
		}
		lse := float64(m) + math.Log(s)
		out[r] = float32(lse)
		if soft != nil {
			srow := soft[r*cols : (r+1)*cols]
			for j, v := range row {
				srow[j] = float32(math.Exp(float64(v) - lse))
			}
		}
	}
}
