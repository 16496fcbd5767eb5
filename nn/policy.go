package nn

import "math"

// Tanh-Gaussian policy head. A policy network outputs, per row, 2·A values:
// the Gaussian mean μ [A] followed by the raw log-std [A]. The log-std is
// clamped to [LogStdMin, LogStdMax] (SAC/CQL convention; the clamp passes no
// gradient outside the range, like torch.clamp). Actions are a = tanh(u) with
// u ~ N(μ, σ²), so they lie in (−1, 1); callers scale to the env's bounds.

const (
	// LogStdMin and LogStdMax bound the policy's log standard deviation.
	LogStdMin = -20
	LogStdMax = 2
	// atanhClip keeps atanh finite when evaluating data actions at ±1.
	atanhClip = 1e-6
)

var halfLog2Pi = 0.5 * math.Log(2*math.Pi)

func clampLogStd(v float32) (float32, float32) {
	if v < LogStdMin {
		return LogStdMin, 0
	}
	if v > LogStdMax {
		return LogStdMax, 0
	}
	return v, 1
}

// logOneMinusTanhSq returns log(1 − tanh²u) = 2(log 2 − u − softplus(−2u)),
// the numerically stable form of the tanh change-of-variables correction.
func logOneMinusTanhSq(u float64) float64 {
	return 2 * (math.Ln2 - u - softplus(-2*u))
}

func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// TanhGaussianSample draws reparameterized actions. out: [rows, 2A] network
// output; noise: [rows, A] standard-normal draws ξ; act: [rows, A] receives
// a = tanh(μ + σξ); logp: [rows] receives log π(a|s) including the tanh correction.
func TanhGaussianSample(out []float32, rows, A int, noise, act, logp []float32) {
	for r := 0; r < rows; r++ {
		o := out[r*2*A : (r+1)*2*A]
		var lp float64
		for j := 0; j < A; j++ {
			ls, _ := clampLogStd(o[A+j])
			xi := float64(noise[r*A+j])
			u := float64(o[j]) + math.Exp(float64(ls))*xi
			act[r*A+j] = float32(math.Tanh(u))
			lp += -0.5*xi*xi - float64(ls) - halfLog2Pi - logOneMinusTanhSq(u)
		}
		logp[r] = float32(lp)
	}
}

// TanhGaussianSampleBackward turns ∂L/∂act [rows, A] and ∂L/∂logp [rows]
// (either may be nil) into ∂L/∂out [rows, 2A], holding the noise fixed
// (the reparameterization trick). out, noise and act are from the forward call.
func TanhGaussianSampleBackward(out []float32, rows, A int, noise, act, dAct, dLogp, dOut []float32) {
	for r := 0; r < rows; r++ {
		o := out[r*2*A : (r+1)*2*A]
		d := dOut[r*2*A : (r+1)*2*A]
		var dl float32
		if dLogp != nil {
			dl = dLogp[r]
		}
		for j := 0; j < A; j++ {
			ls, pass := clampLogStd(o[A+j])
			sigma := float32(math.Exp(float64(ls)))
			xi := noise[r*A+j]
			a := act[r*A+j]
			var da float32
			if dAct != nil {
				da = dAct[r*A+j]
			}
			g := 1 - a*a // ∂a/∂u
			// ∂logp/∂u = 2a (from −log(1−tanh²u)); ∂logp/∂logσ has an extra −1.
			du := da*g + dl*2*a
			d[j] = du
			d[A+j] = pass * (du*sigma*xi - dl)
		}
	}
}

// TanhGaussianLogProb evaluates log π(a|s) for given actions act [rows, A]
// in [−1, 1] (clipped to ±(1−1e-6) before atanh), writing logp [rows].
func TanhGaussianLogProb(out []float32, rows, A int, act, logp []float32) {
	for r := 0; r < rows; r++ {
		o := out[r*2*A : (r+1)*2*A]
		var lp float64
		for j := 0; j < A; j++ {
			ls, _ := clampLogStd(o[A+j])
			u := atanhClipped(act[r*A+j])
			z := (u - float64(o[j])) * math.Exp(-float64(ls))
			lp += -0.5*z*z - float64(ls) - halfLog2Pi - logOneMinusTanhSq(u)
		}
		logp[r] = float32(lp)
	}
}

// TanhGaussianLogProbBackward turns ∂L/∂logp [rows] into ∂L/∂out [rows, 2A]
// for TanhGaussianLogProb.
func TanhGaussianLogProbBackward(out []float32, rows, A int, act, dLogp, dOut []float32) {
	for r := 0; r < rows; r++ {
		o := out[r*2*A : (r+1)*2*A]
		d := dOut[r*2*A : (r+1)*2*A]
		for j := 0; j < A; j++ {
			ls, pass := clampLogStd(o[A+j])
			u := atanhClipped(act[r*A+j])
			z := (u - float64(o[j])) * math.Exp(-float64(ls))
			d[j] = dLogp[r] * float32(z*math.Exp(-float64(ls)))
			d[A+j] = pass * dLogp[r] * float32(z*z-1)
		}
	}
}

// TanhGaussianMode writes the deterministic action tanh(μ) [rows, A], used
// for evaluation.
func TanhGaussianMode(out []float32, rows, A int, act []float32) {
	for r := 0; r < rows; r++ {
		for j := 0; j < A; j++ {
			act[r*A+j] = float32(math.Tanh(float64(out[r*2*A+j])))
		}
	}
}

func atanhClipped(a float32) float64 {
	x := float64(a)
	x = math.Max(-1+atanhClip, math.Min(1-atanhClip, x))
	return math.Atanh(x)
}
