package nn

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels for the elementwise passes (ReLU forward,
// ReLU backward mask, bias-gradient row sums); they are memory-bound and the
// Go compiler does not vectorize them.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func reluAVX2(x []float32) int

//go:noescape
func reluMaskAVX2(y, d []float32) int

//go:noescape
func addToAVX2(dst, src []float32) int

//go:noescape
func adamAVX2(d, g, m, v []float32, k *[7]float32) int

//go:noescape
func polyakAVX2(d, s []float32, tau float32) int

//go:noescape
func tanhAVX2(x []float32) int

//go:noescape
func tanhBackAVX2(y, d []float32) int
