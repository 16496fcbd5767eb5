#include "textflag.h"

// func reluAVX2(x []float32) int
// Replaces x[i] by max(0, x[i]) (VMAXPS keeps NaN and −0 as they are) for
// the largest multiple of 8 elements; returns how many it processed.
TEXT ·reluAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	ANDQ $-8, CX
	MOVQ CX, ret+24(FP)
	VXORPS Y0, Y0, Y0
	CMPQ CX, $32
	JL   tail8
loop32:
	VMAXPS 0(SI), Y0, Y1
	VMAXPS 32(SI), Y0, Y2
	VMAXPS 64(SI), Y0, Y3
	VMAXPS 96(SI), Y0, Y4
	VMOVUPS Y1, 0(SI)
	VMOVUPS Y2, 32(SI)
	VMOVUPS Y3, 64(SI)
	VMOVUPS Y4, 96(SI)
	ADDQ $128, SI
	SUBQ $32, CX
	CMPQ CX, $32
	JGE  loop32
tail8:
	CMPQ CX, $8
	JL   done
	VMAXPS 0(SI), Y0, Y1
	VMOVUPS Y1, 0(SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  tail8
done:
	VZEROUPPER
	RET

// func reluMaskAVX2(y, d []float32) int
// Zeroes d[i] where !(y[i] > 0), for the largest multiple of 8 elements of
// len(y); returns how many it processed. len(d) must be >= len(y).
TEXT ·reluMaskAVX2(SB), NOSPLIT, $0-56
	MOVQ y_base+0(FP), SI
	MOVQ y_len+8(FP), CX
	MOVQ d_base+24(FP), DI
	ANDQ $-8, CX
	MOVQ CX, ret+48(FP)
	VXORPS Y0, Y0, Y0
	CMPQ CX, $16
	JL   mtail8
mloop16:
	VMOVUPS 0(SI), Y1
	VMOVUPS 32(SI), Y2
	VCMPPS $0x1e, Y0, Y1, Y1 // y > 0 (ordered, quiet)
	VCMPPS $0x1e, Y0, Y2, Y2
	VANDPS 0(DI), Y1, Y1
	VANDPS 32(DI), Y2, Y2
	VMOVUPS Y1, 0(DI)
	VMOVUPS Y2, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE  mloop16
mtail8:
	CMPQ CX, $8
	JL   mdone
	VMOVUPS 0(SI), Y1
	VCMPPS $0x1e, Y0, Y1, Y1
	VANDPS 0(DI), Y1, Y1
	VMOVUPS Y1, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  mtail8
mdone:
	VZEROUPPER
	RET

// func addToAVX2(dst, src []float32) int
// dst[i] += src[i] for the largest multiple of 8 elements of len(dst);
// returns how many it processed. len(src) must be >= len(dst).
TEXT ·addToAVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	ANDQ $-8, CX
	MOVQ CX, ret+48(FP)
aloop:
	CMPQ CX, $8
	JL   adone
	VMOVUPS 0(DI), Y1
	VADDPS 0(SI), Y1, Y1
	VMOVUPS Y1, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  aloop
adone:
	VZEROUPPER
	RET
