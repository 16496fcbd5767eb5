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

// Constants of tanh32 (act.go) as float32 bit patterns, each repeated over
// the 8 lanes of a YMM register: the clamp, the "tiny" bound, the
// numerator P and denominator Q coefficients (highest degree first) and 1.
DATA tanhK<>+0(SB)/4, $0x40fcf84f
DATA tanhK<>+4(SB)/4, $0x40fcf84f
DATA tanhK<>+8(SB)/4, $0x40fcf84f
DATA tanhK<>+12(SB)/4, $0x40fcf84f
DATA tanhK<>+16(SB)/4, $0x40fcf84f
DATA tanhK<>+20(SB)/4, $0x40fcf84f
DATA tanhK<>+24(SB)/4, $0x40fcf84f
DATA tanhK<>+28(SB)/4, $0x40fcf84f
DATA tanhK<>+32(SB)/4, $0xc0fcf84f
DATA tanhK<>+36(SB)/4, $0xc0fcf84f
DATA tanhK<>+40(SB)/4, $0xc0fcf84f
DATA tanhK<>+44(SB)/4, $0xc0fcf84f
DATA tanhK<>+48(SB)/4, $0xc0fcf84f
DATA tanhK<>+52(SB)/4, $0xc0fcf84f
DATA tanhK<>+56(SB)/4, $0xc0fcf84f
DATA tanhK<>+60(SB)/4, $0xc0fcf84f
DATA tanhK<>+64(SB)/4, $0x39d1b717
DATA tanhK<>+68(SB)/4, $0x39d1b717
DATA tanhK<>+72(SB)/4, $0x39d1b717
DATA tanhK<>+76(SB)/4, $0x39d1b717
DATA tanhK<>+80(SB)/4, $0x39d1b717
DATA tanhK<>+84(SB)/4, $0x39d1b717
DATA tanhK<>+88(SB)/4, $0x39d1b717
DATA tanhK<>+92(SB)/4, $0x39d1b717
DATA tanhK<>+96(SB)/4, $0xb9d1b717
DATA tanhK<>+100(SB)/4, $0xb9d1b717
DATA tanhK<>+104(SB)/4, $0xb9d1b717
DATA tanhK<>+108(SB)/4, $0xb9d1b717
DATA tanhK<>+112(SB)/4, $0xb9d1b717
DATA tanhK<>+116(SB)/4, $0xb9d1b717
DATA tanhK<>+120(SB)/4, $0xb9d1b717
DATA tanhK<>+124(SB)/4, $0xb9d1b717
DATA tanhK<>+128(SB)/4, $0xa59f25c0
DATA tanhK<>+132(SB)/4, $0xa59f25c0
DATA tanhK<>+136(SB)/4, $0xa59f25c0
DATA tanhK<>+140(SB)/4, $0xa59f25c0
DATA tanhK<>+144(SB)/4, $0xa59f25c0
DATA tanhK<>+148(SB)/4, $0xa59f25c0
DATA tanhK<>+152(SB)/4, $0xa59f25c0
DATA tanhK<>+156(SB)/4, $0xa59f25c0
DATA tanhK<>+160(SB)/4, $0x2a61337e
DATA tanhK<>+164(SB)/4, $0x2a61337e
DATA tanhK<>+168(SB)/4, $0x2a61337e
DATA tanhK<>+172(SB)/4, $0x2a61337e
DATA tanhK<>+176(SB)/4, $0x2a61337e
DATA tanhK<>+180(SB)/4, $0x2a61337e
DATA tanhK<>+184(SB)/4, $0x2a61337e
DATA tanhK<>+188(SB)/4, $0x2a61337e
DATA tanhK<>+192(SB)/4, $0xaebd37ff
DATA tanhK<>+196(SB)/4, $0xaebd37ff
DATA tanhK<>+200(SB)/4, $0xaebd37ff
DATA tanhK<>+204(SB)/4, $0xaebd37ff
DATA tanhK<>+208(SB)/4, $0xaebd37ff
DATA tanhK<>+212(SB)/4, $0xaebd37ff
DATA tanhK<>+216(SB)/4, $0xaebd37ff
DATA tanhK<>+220(SB)/4, $0xaebd37ff
DATA tanhK<>+224(SB)/4, $0x335c0041
DATA tanhK<>+228(SB)/4, $0x335c0041
DATA tanhK<>+232(SB)/4, $0x335c0041
DATA tanhK<>+236(SB)/4, $0x335c0041
DATA tanhK<>+240(SB)/4, $0x335c0041
DATA tanhK<>+244(SB)/4, $0x335c0041
DATA tanhK<>+248(SB)/4, $0x335c0041
DATA tanhK<>+252(SB)/4, $0x335c0041
DATA tanhK<>+256(SB)/4, $0x3779434a
DATA tanhK<>+260(SB)/4, $0x3779434a
DATA tanhK<>+264(SB)/4, $0x3779434a
DATA tanhK<>+268(SB)/4, $0x3779434a
DATA tanhK<>+272(SB)/4, $0x3779434a
DATA tanhK<>+276(SB)/4, $0x3779434a
DATA tanhK<>+280(SB)/4, $0x3779434a
DATA tanhK<>+284(SB)/4, $0x3779434a
DATA tanhK<>+288(SB)/4, $0x3a270ded
DATA tanhK<>+292(SB)/4, $0x3a270ded
DATA tanhK<>+296(SB)/4, $0x3a270ded
DATA tanhK<>+300(SB)/4, $0x3a270ded
DATA tanhK<>+304(SB)/4, $0x3a270ded
DATA tanhK<>+308(SB)/4, $0x3a270ded
DATA tanhK<>+312(SB)/4, $0x3a270ded
DATA tanhK<>+316(SB)/4, $0x3a270ded
DATA tanhK<>+320(SB)/4, $0x3ba059dc
DATA tanhK<>+324(SB)/4, $0x3ba059dc
DATA tanhK<>+328(SB)/4, $0x3ba059dc
DATA tanhK<>+332(SB)/4, $0x3ba059dc
DATA tanhK<>+336(SB)/4, $0x3ba059dc
DATA tanhK<>+340(SB)/4, $0x3ba059dc
DATA tanhK<>+344(SB)/4, $0x3ba059dc
DATA tanhK<>+348(SB)/4, $0x3ba059dc
DATA tanhK<>+352(SB)/4, $0x35a0d3d8
DATA tanhK<>+356(SB)/4, $0x35a0d3d8
DATA tanhK<>+360(SB)/4, $0x35a0d3d8
DATA tanhK<>+364(SB)/4, $0x35a0d3d8
DATA tanhK<>+368(SB)/4, $0x35a0d3d8
DATA tanhK<>+372(SB)/4, $0x35a0d3d8
DATA tanhK<>+376(SB)/4, $0x35a0d3d8
DATA tanhK<>+380(SB)/4, $0x35a0d3d8
DATA tanhK<>+384(SB)/4, $0x38f895d6
DATA tanhK<>+388(SB)/4, $0x38f895d6
DATA tanhK<>+392(SB)/4, $0x38f895d6
DATA tanhK<>+396(SB)/4, $0x38f895d6
DATA tanhK<>+400(SB)/4, $0x38f895d6
DATA tanhK<>+404(SB)/4, $0x38f895d6
DATA tanhK<>+408(SB)/4, $0x38f895d6
DATA tanhK<>+412(SB)/4, $0x38f895d6
DATA tanhK<>+416(SB)/4, $0x3b14aa05
DATA tanhK<>+420(SB)/4, $0x3b14aa05
DATA tanhK<>+424(SB)/4, $0x3b14aa05
DATA tanhK<>+428(SB)/4, $0x3b14aa05
DATA tanhK<>+432(SB)/4, $0x3b14aa05
DATA tanhK<>+436(SB)/4, $0x3b14aa05
DATA tanhK<>+440(SB)/4, $0x3b14aa05
DATA tanhK<>+444(SB)/4, $0x3b14aa05
DATA tanhK<>+448(SB)/4, $0x3ba059dd
DATA tanhK<>+452(SB)/4, $0x3ba059dd
DATA tanhK<>+456(SB)/4, $0x3ba059dd
DATA tanhK<>+460(SB)/4, $0x3ba059dd
DATA tanhK<>+464(SB)/4, $0x3ba059dd
DATA tanhK<>+468(SB)/4, $0x3ba059dd
DATA tanhK<>+472(SB)/4, $0x3ba059dd
DATA tanhK<>+476(SB)/4, $0x3ba059dd
DATA tanhK<>+480(SB)/4, $0x3f800000
DATA tanhK<>+484(SB)/4, $0x3f800000
DATA tanhK<>+488(SB)/4, $0x3f800000
DATA tanhK<>+492(SB)/4, $0x3f800000
DATA tanhK<>+496(SB)/4, $0x3f800000
DATA tanhK<>+500(SB)/4, $0x3f800000
DATA tanhK<>+504(SB)/4, $0x3f800000
DATA tanhK<>+508(SB)/4, $0x3f800000
GLOBL tanhK<>(SB), RODATA|NOPTR, $512

// func tanhAVX2(x []float32) int
// Replaces x[i] by tanh32(x[i]) for the largest multiple of 8 elements and
// returns how many it processed: the same float32 operations in the same
// order as tanh32 (VMINPS/VMAXPS clamp that keeps NaN, the tiny-|x| blend,
// Horner steps as separate multiply and add, one IEEE division), so the
// result is bit for bit tanh32's.
TEXT ·tanhAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	ANDQ $-8, CX
	MOVQ CX, ret+24(FP)
	VMOVUPS tanhK<>+0(SB), Y15
	VMOVUPS tanhK<>+32(SB), Y14
	VMOVUPS tanhK<>+64(SB), Y13
	VMOVUPS tanhK<>+96(SB), Y12
tloop:
	CMPQ CX, $8
	JL   tdone
	VMOVUPS 0(SI), Y0
	VMINPS Y0, Y15, Y0          // x > clamp ? clamp : x (NaN stays)
	VMAXPS Y0, Y14, Y0          // x < -clamp ? -clamp : x
	VCMPPS $0x11, Y13, Y0, Y1   // x < tiny (ordered)
	VCMPPS $0x1e, Y12, Y0, Y2   // x > -tiny (ordered)
	VANDPS Y2, Y1, Y1           // |x| < tiny: tanh32 returns x
	VMULPS Y0, Y0, Y3           // x2
	VMOVUPS tanhK<>+128(SB), Y4
	VMULPS Y3, Y4, Y4
	VADDPS tanhK<>+160(SB), Y4, Y4
	VMULPS Y3, Y4, Y4
	VADDPS tanhK<>+192(SB), Y4, Y4
	VMULPS Y3, Y4, Y4
	VADDPS tanhK<>+224(SB), Y4, Y4
	VMULPS Y3, Y4, Y4
	VADDPS tanhK<>+256(SB), Y4, Y4
	VMULPS Y3, Y4, Y4
	VADDPS tanhK<>+288(SB), Y4, Y4
	VMULPS Y3, Y4, Y4
	VADDPS tanhK<>+320(SB), Y4, Y4
	VMULPS Y0, Y4, Y4           // p *= x
	VMOVUPS tanhK<>+352(SB), Y5
	VMULPS Y3, Y5, Y5
	VADDPS tanhK<>+384(SB), Y5, Y5
	VMULPS Y3, Y5, Y5
	VADDPS tanhK<>+416(SB), Y5, Y5
	VMULPS Y3, Y5, Y5
	VADDPS tanhK<>+448(SB), Y5, Y5
	VDIVPS Y5, Y4, Y4           // p / q
	VBLENDVPS Y1, Y0, Y4, Y4    // tiny lanes: x
	VMOVUPS Y4, 0(SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  tloop
tdone:
	VZEROUPPER
	RET

// func tanhBackAVX2(y, d []float32) int
// Replaces d[i] by d[i]·(1 − y[i]²) (tanh's derivative from its output) for
// the largest multiple of 8 elements of len(y), as the scalar loop does
// (y·y rounded, 1 − it rounded, times d); returns how many it processed.
// len(d) must be >= len(y).
TEXT ·tanhBackAVX2(SB), NOSPLIT, $0-56
	MOVQ y_base+0(FP), SI
	MOVQ y_len+8(FP), CX
	MOVQ d_base+24(FP), DI
	ANDQ $-8, CX
	MOVQ CX, ret+48(FP)
	VMOVUPS tanhK<>+480(SB), Y15
bloop:
	CMPQ CX, $8
	JL   bdone
	VMOVUPS 0(SI), Y0
	VMULPS Y0, Y0, Y0
	VSUBPS Y0, Y15, Y0          // 1 − y²
	VMULPS 0(DI), Y0, Y0
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  bloop
bdone:
	VZEROUPPER
	RET
