#include "textflag.h"

// func adamAVX2(d, g, m, v []float32, k *[7]float32) int
// The Adam update of Adam.Step for the largest multiple of 8 elements of
// len(d), with k = [β1, 1−β1, β2, 1−β2, step, isq, ε];
// the operations and their order are exactly the scalar loop's (separate
// multiplies and adds, no FMA; VSQRTPS and VDIVPS are correctly rounded like
// the scalar ones), so results are bit for bit the same. Returns the count.
TEXT ·adamAVX2(SB), NOSPLIT, $0-112
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ m_base+48(FP), R8
	MOVQ v_base+72(FP), R9
	MOVQ k+96(FP), AX
	ANDQ $-8, CX
	MOVQ CX, ret+104(FP)
	VBROADCASTSS 0(AX), Y8   // β1
	VBROADCASTSS 4(AX), Y9   // 1−β1
	VBROADCASTSS 8(AX), Y10  // β2
	VBROADCASTSS 12(AX), Y11 // 1−β2
	VBROADCASTSS 16(AX), Y12 // step
	VBROADCASTSS 20(AX), Y13 // isq
	VBROADCASTSS 24(AX), Y14 // ε
	XORQ BX, BX
	SHLQ $2, CX
loop:
	CMPQ BX, CX
	JGE  done
	VMOVUPS (SI)(BX*1), Y0   // g
	VMULPS  (R8)(BX*1), Y8, Y1 // β1·m
	VMULPS  Y0, Y9, Y2       // (1−β1)·g
	VADDPS  Y2, Y1, Y1       // m' = β1·m + (1−β1)·g
	VMULPS  (R9)(BX*1), Y10, Y3 // β2·v
	VMULPS  Y0, Y11, Y4      // (1−β2)·g
	VMULPS  Y0, Y4, Y4       // ((1−β2)·g)·g
	VADDPS  Y4, Y3, Y3       // v'
	VMOVUPS Y1, (R8)(BX*1)
	VMOVUPS Y3, (R9)(BX*1)
	VSQRTPS Y3, Y5           // √v'
	VMULPS  Y13, Y5, Y5      // √v'·isq
	VADDPS  Y14, Y5, Y5      // + ε
	VMULPS  Y1, Y12, Y6      // step·m'
	VDIVPS  Y5, Y6, Y6       // step·m' / (√v'·isq + ε)
	VMOVUPS (DI)(BX*1), Y7
	VSUBPS  Y6, Y7, Y7       // d − …
	VMOVUPS Y7, (DI)(BX*1)
	ADDQ $32, BX
	JMP  loop
done:
	VZEROUPPER
	RET

// func polyakAVX2(d, s []float32, tau float32) int
// d[i] += tau·(s[i] − d[i]) (Polyak's operations in its order) for the
// largest multiple of 8 elements of len(d); returns the count.
TEXT ·polyakAVX2(SB), NOSPLIT, $0-64
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	ANDQ $-8, CX
	MOVQ CX, ret+56(FP)
	VBROADCASTSS tau+48(FP), Y8
	XORQ BX, BX
	SHLQ $2, CX
ploop:
	CMPQ BX, CX
	JGE  pdone
	VMOVUPS (DI)(BX*1), Y0
	VMOVUPS (SI)(BX*1), Y1
	VSUBPS  Y0, Y1, Y1   // s − d
	VMULPS  Y1, Y8, Y1   // tau·(s − d)
	VADDPS  Y1, Y0, Y0   // d + …
	VMOVUPS Y0, (DI)(BX*1)
	ADDQ $32, BX
	JMP  ploop
pdone:
	VZEROUPPER
	RET
