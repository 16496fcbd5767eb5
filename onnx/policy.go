// Package onnx writes a koopq policy as an ONNX model (opset 13), so that
// any ONNX runtime (onnxruntime, a robot stack, a browser) can run it
// without koopq. The whole deterministic actor is inside the graph:
//
//	observation [batch, obsDim]
//	  → (observation − mean) / std           Sub, Div (left out for an identity normalizer)
//	  → hidden layers: Relu(x·W + b)          Gemm, Relu
//	  → μ = x·W_μ + b_μ                       Gemm (the first actDim columns of the last layer)
//	  → low + (tanh(μ) + 1) · (high − low)/2  Tanh, Add, Mul, Add
//	  = action [batch, actDim]
//
// With Stochastic the model has a second output, log_std [batch, actDim]:
// the Gaussian's log σ before the tanh, clipped to [nn.LogStdMin,
// nn.LogStdMax] as koopq clips it (Gemm on the last actDim columns, Clip).
// The batch dimension is symbolic ("batch"). The protobuf is written with
// google.golang.org/protobuf's protowire from the few onnx.proto messages
// declared in proto.go; docs/policy-format.md describes the graph.
package onnx

import (
	"fmt"
	"math"

	"github.com/koopq/koopq/dataset"
	"github.com/koopq/koopq/nn"
	"github.com/koopq/koopq/sac"
)

// Input and output names of an exported policy graph.
const (
	InputName  = "observation" // [batch, obsDim] float32, raw (unnormalized) observations
	ActionName = "action"      // [batch, actDim] float32, in the env's units
	LogStdName = "log_std"     // [batch, actDim] float32, only with Options.Stochastic
)

// Options control ExportPolicy.
type Options struct {
	// Stochastic adds the log-σ head as a second output (LogStdName).
	Stochastic bool
	// Metadata is written as the model's metadata_props, in order
	// (koopq writes env, dims, the source file's sha256 and its version).
	Metadata [][2]string
	// Version is the producer_version (koopq's version).
	Version string
}

// ExportPolicy encodes p as a serialized ONNX ModelProto. It returns an
// error (never panics) for a policy whose network is not koopq's actor
// shape: ReLU hidden layers with biases, an identity output layer of width
// 2·ActDim, a normalizer and action bounds of the right widths, all finite.
func ExportPolicy(p *sac.Policy, opts Options) ([]byte, error) {
	if err := checkPolicy(p); err != nil {
		return nil, err
	}
	a, obs := p.ActDim, p.Actor.In()
	g := &graph{name: "koopq_policy"}
	g.inputs = append(g.inputs, valueInfo(InputName, "batch", obs))
	x := InputName
	if p.Norm != nil && !isIdentity(p.Norm) {
		x = g.add("Sub", "obs_centered", x, g.init("obs_mean", []int{obs}, clone(p.Norm.Mean)))
		x = g.add("Div", "obs_normalized", x, g.init("obs_std", []int{obs}, clone(p.Norm.Std)))
	}
	layers := p.Actor.Layers
	for i, l := range layers[:len(layers)-1] {
		w := g.init(fmt.Sprintf("l%d.weight", i), []int{l.In, l.Out}, clone(l.W.Data))
		b := g.init(fmt.Sprintf("l%d.bias", i), []int{l.Out}, clone(l.B.Data))
		x = g.add("Gemm", fmt.Sprintf("l%d.linear", i), x, w, b)
		x = g.add("Relu", fmt.Sprintf("l%d.relu", i), x)
	}
	last := layers[len(layers)-1]
	wMu, bMu := columns(last, 0, a)
	k := len(layers) - 1
	mu := g.add("Gemm", "mean", x,
		g.init(fmt.Sprintf("l%d.weight.mean", k), []int{last.In, a}, wMu),
		g.init(fmt.Sprintf("l%d.bias.mean", k), []int{a}, bMu))
	t := g.add("Tanh", "squashed", mu)
	one := g.init("one", []int{1}, []float32{1})
	half := make([]float32, a)
	for i := range half {
		half[i] = (p.Scale.High[i] - p.Scale.Low[i]) / 2
	}
	u := g.add("Add", "squashed_plus_one", t, one)
	v := g.add("Mul", "scaled", u, g.init("action_half_range", []int{a}, half))
	g.add("Add", ActionName, v, g.init("action_low", []int{a}, clone(p.Scale.Low)))
	g.outputs = append(g.outputs, valueInfo(ActionName, "batch", a))
	if opts.Stochastic {
		wLs, bLs := columns(last, a, 2*a)
		ls := g.add("Gemm", "log_std_raw", x,
			g.init(fmt.Sprintf("l%d.weight.log_std", k), []int{last.In, a}, wLs),
			g.init(fmt.Sprintf("l%d.bias.log_std", k), []int{a}, bLs))
		g.add("Clip", LogStdName, ls, g.init("log_std_min", nil, []float32{nn.LogStdMin}),
			g.init("log_std_max", nil, []float32{nn.LogStdMax}))
		g.outputs = append(g.outputs, valueInfo(LogStdName, "batch", a))
	}
	doc := "koopq tanh-Gaussian policy: deterministic action low + (tanh(mu)+1)*(high-low)/2 of normalized observations"
	return g.model("koopq", opts.Version, doc, opts.Metadata), nil
}

// checkPolicy reports why p cannot be exported, or nil.
func checkPolicy(p *sac.Policy) error {
	if p == nil || p.Actor == nil || len(p.Actor.Layers) < 2 {
		return fmt.Errorf("onnx: policy has no actor network with a hidden layer")
	}
	m := p.Actor
	if m.Hidden != nn.ReLU || m.Output != nn.Identity {
		return fmt.Errorf("onnx: actor activations %v/%v, want ReLU hidden and identity output", m.Hidden, m.Output)
	}
	if p.ActDim <= 0 || m.Out() != 2*p.ActDim {
		return fmt.Errorf("onnx: actor outputs %d values, want 2·%d (mean, log σ)", m.Out(), p.ActDim)
	}
	in := m.In()
	for i, l := range m.Layers {
		if l.In != in || l.B == nil || len(l.W.Data) != l.In*l.Out || len(l.B.Data) != l.Out {
			return fmt.Errorf("onnx: actor layer %d is not a biased %d→%d layer", i, in, l.Out)
		}
		if !finite(l.W.Data) || !finite(l.B.Data) {
			return fmt.Errorf("onnx: actor layer %d has non-finite weights", i)
		}
		in = l.Out
	}
	if p.Norm != nil {
		if err := p.Norm.Validate(m.In()); err != nil {
			return fmt.Errorf("onnx: %w", err)
		}
	}
	if len(p.Scale.Low) != p.ActDim || len(p.Scale.High) != p.ActDim {
		return fmt.Errorf("onnx: action bounds have %d/%d dims, actions %d", len(p.Scale.Low), len(p.Scale.High), p.ActDim)
	}
	if !finite(p.Scale.Low) || !finite(p.Scale.High) {
		return fmt.Errorf("onnx: action bounds are not finite")
	}
	return nil
}

// columns returns columns [from, to) of layer l's weight [In, Out] and bias.
func columns(l *nn.Linear, from, to int) (w, b []float32) {
	n := to - from
	w = make([]float32, l.In*n)
	for r := 0; r < l.In; r++ {
		copy(w[r*n:(r+1)*n], l.W.Data[r*l.Out+from:r*l.Out+to])
	}
	return w, clone(l.B.Data[from:to])
}

func isIdentity(nm *dataset.Normalizer) bool {
	for i := range nm.Mean {
		if nm.Mean[i] != 0 || nm.Std[i] != 1 {
			return false
		}
	}
	return true
}

func finite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

func clone(x []float32) []float32 { return append([]float32(nil), x...) }
