//go:build cgo && !purego && !nodnnl

package blas

import "testing"

// The scalar C fallbacks of the bf16 helpers (CPUs without AVX512_BF16)
// must pass the same checks as the vector kernels.
func TestBF16HelpersScalarC(t *testing.T) {
	if !useBF16Insn(true) {
		t.Log("no AVX512_BF16 on this CPU: the default run already tested the scalar code")
	}
	useBF16Insn(false)
	defer useBF16Insn(true)
	if useBF16Insn(false) {
		t.Fatal("could not switch the AVX512_BF16 kernels off")
	}
	TestBF16Helpers(t)
}
