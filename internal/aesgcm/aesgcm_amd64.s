//go:build !purego

#include "textflag.h"

// AES-128-GCM in two passes over 512-bit vectors: counter mode with
// VAES, four blocks an instruction, sixteen in flight; GHASH with
// VPCLMULQDQ, sixteen blocks multiplied by H^16..H^1 and reduced once.
// GHASH works on byte-reversed blocks and a hash key premultiplied by x
// (mod the field's polynomial), so that a product of 128-bit carry-less
// halves reduces with two multiplications by the polynomial's high half:
// the representation crypto/aes's AES-NI code uses.

// Per lane: the bytes 0..15 reversed, for GHASH.
DATA bswap<>+0x00(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap<>+0x08(SB)/8, $0x0001020304050607
GLOBL bswap<>(SB), RODATA|NOPTR, $16

// The field's polynomial, as the reduction uses it.
DATA poly<>+0x00(SB)/8, $0x0000000000000001
DATA poly<>+0x08(SB)/8, $0xc200000000000000
GLOBL poly<>(SB), RODATA|NOPTR, $16

// Per lane: a counter block kept with its 32-bit counter little-endian,
// turned into the block AES encrypts (bytes 12..15 reversed).
DATA ctrswap<>+0x00(SB)/8, $0x0706050403020100
DATA ctrswap<>+0x08(SB)/8, $0x0c0d0e0f0b0a0908
GLOBL ctrswap<>(SB), RODATA|NOPTR, $16

// Lane i's counter + i.
DATA lanes<>+0x00(SB)/8, $0
DATA lanes<>+0x08(SB)/8, $0
DATA lanes<>+0x10(SB)/8, $0
DATA lanes<>+0x18(SB)/8, $0x0000000100000000
DATA lanes<>+0x20(SB)/8, $0
DATA lanes<>+0x28(SB)/8, $0x0000000200000000
DATA lanes<>+0x30(SB)/8, $0
DATA lanes<>+0x38(SB)/8, $0x0000000300000000
GLOBL lanes<>(SB), RODATA|NOPTR, $64

// Every lane's counter + 4.
DATA four<>+0x00(SB)/8, $0
DATA four<>+0x08(SB)/8, $0x0000000400000000
GLOBL four<>(SB), RODATA|NOPTR, $16

// One step of the AES-128 key schedule: X1 is the last round key, the
// next is stored at off(DI).
#define EXPAND(rcon, off) \
	AESKEYGENASSIST $rcon, X1, X2; \
	PSHUFD $0xff, X2, X2; \
	MOVOU X1, X3; \
	PSLLDQ $4, X3; \
	PXOR X3, X1; \
	PSLLDQ $4, X3; \
	PXOR X3, X1; \
	PSLLDQ $4, X3; \
	PXOR X3, X1; \
	PXOR X2, X1; \
	MOVOU X1, off(DI)

// func expandKey(key *[16]byte, rk *[176]byte)
TEXT ·expandKey(SB), NOSPLIT, $0-16
	MOVQ key+0(FP), AX
	MOVQ rk+8(FP), DI
	MOVOU (AX), X1
	MOVOU X1, (DI)
	EXPAND(0x01, 16)
	EXPAND(0x02, 32)
	EXPAND(0x04, 48)
	EXPAND(0x08, 64)
	EXPAND(0x10, 80)
	EXPAND(0x20, 96)
	EXPAND(0x40, 112)
	EXPAND(0x80, 128)
	EXPAND(0x1b, 144)
	EXPAND(0x36, 160)
	RET

// REDUCE folds the 256-bit product hi:lo (a sum of products, with its
// middle already added in) into lo, with t for scratch and X14 the
// polynomial.
#define REDUCE(lo, hi, t) \
	VPCLMULQDQ $0x01, lo, X14, t; \
	VPSHUFD $78, lo, lo; \
	VPXOR t, lo, lo; \
	VPCLMULQDQ $0x01, lo, X14, t; \
	VPSHUFD $78, lo, lo; \
	VPXOR t, lo, lo; \
	VPXOR hi, lo, lo

// MUL sets a to a*b: schoolbook halves, then REDUCE. Uses X4..X6.
#define MUL(a, b) \
	VPCLMULQDQ $0x00, b, a, X4; \
	VPCLMULQDQ $0x11, b, a, X5; \
	VPCLMULQDQ $0x01, b, a, X6; \
	VPCLMULQDQ $0x10, b, a, a; \
	VPXOR a, X6, X6; \
	VPSLLDQ $8, X6, a; \
	VPXOR a, X4, X4; \
	VPSRLDQ $8, X6, X6; \
	VPXOR X6, X5, X5; \
	REDUCE(X4, X5, X6); \
	VMOVDQU X4, a

// func initTable(rk *[176]byte, htab *[256]byte)
// htab gets H^16 .. H^1, 16 bytes each, in GHASH's representation.
TEXT ·initTable(SB), NOSPLIT, $0-16
	MOVQ rk+0(FP), AX
	MOVQ htab+8(FP), DI
	VMOVDQU poly<>(SB), X14
	VMOVDQU bswap<>(SB), X13

	// H = AES(K, 0).
	VMOVDQU (AX), X0
	VAESENC 16(AX), X0, X0
	VAESENC 32(AX), X0, X0
	VAESENC 48(AX), X0, X0
	VAESENC 64(AX), X0, X0
	VAESENC 80(AX), X0, X0
	VAESENC 96(AX), X0, X0
	VAESENC 112(AX), X0, X0
	VAESENC 128(AX), X0, X0
	VAESENC 144(AX), X0, X0
	VAESENCLAST 160(AX), X0, X0
	VPSHUFB X13, X0, X0

	// H*x mod the polynomial: shift left one bit, and add the polynomial
	// if the top bit fell out.
	VPSHUFD $0xff, X0, X1
	VPSRAD $31, X1, X1
	VPAND X14, X1, X1
	VPSRLD $31, X0, X2
	VPSLLDQ $4, X2, X2
	VPSLLD $1, X0, X0
	VPXOR X1, X0, X0
	VPXOR X2, X0, X0

	VMOVDQU X0, 240(DI)
	VMOVDQU X0, X7
	MOVQ $15, CX
	LEAQ 224(DI), DI

powers:
	MUL(X7, X0)
	VMOVDQU X7, (DI)
	LEAQ -16(DI), DI
	DECQ CX
	JNZ powers
	VZEROUPPER
	RET

// FOLD xors z's four 128-bit lanes into x (z's low lane), with y its
// 256-bit half and ty, tx scratch.
#define FOLD(z, y, x, ty, tx) \
	VEXTRACTI64X4 $1, z, ty; \
	VPXOR ty, y, y; \
	VEXTRACTI128 $1, y, tx; \
	VPXOR tx, x, x

// FINISH reduces Z4, Z5, Z6 into the hash X7.
#define FINISH \
	FOLD(Z4, Y4, X4, Y8, X8); \
	FOLD(Z5, Y5, X5, Y8, X8); \
	FOLD(Z6, Y6, X6, Y8, X8); \
	VPSLLDQ $8, X6, X8; \
	VPXOR X8, X4, X4; \
	VPSRLDQ $8, X6, X6; \
	VPXOR X6, X5, X5; \
	REDUCE(X4, X5, X8); \
	VMOVDQU X4, X7

// func ghash(htab *[256]byte, y *[16]byte, data []byte)
// Hashes whole blocks of data into y (in GHASH's representation), four at
// a time and then one: what the bulk functions leave (under 256 bytes),
// the additional data and the lengths.
TEXT ·ghash(SB), NOSPLIT, $0-40
	MOVQ htab+0(FP), AX
	MOVQ y+8(FP), BX
	MOVQ data_base+16(FP), SI
	MOVQ data_len+24(FP), CX
	VMOVDQU poly<>(SB), X14
	VMOVDQU bswap<>(SB), X13
	VBROADCASTI32X4 bswap<>(SB), Z31
	VMOVDQU (BX), X7

quads:
	CMPQ CX, $64
	JB   singles
	VMOVDQU64 192(AX), Z19

quadloop:
	VMOVDQU64 (SI), Z0
	VPSHUFB Z31, Z0, Z0
	VPXORQ Z7, Z0, Z0
	VPCLMULQDQ $0x00, Z19, Z0, Z4
	VPCLMULQDQ $0x11, Z19, Z0, Z5
	VPCLMULQDQ $0x01, Z19, Z0, Z6
	VPCLMULQDQ $0x10, Z19, Z0, Z8
	VPXORQ Z8, Z6, Z6
	FINISH
	ADDQ $64, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  quadloop

singles:
	CMPQ CX, $16
	JB   done
	VMOVDQU 240(AX), X12

singleloop:
	VMOVDQU (SI), X0
	VPSHUFB X13, X0, X0
	VPXOR X7, X0, X7
	MUL(X7, X12)
	ADDQ $16, SI
	SUBQ $16, CX
	CMPQ CX, $16
	JAE  singleloop

done:
	VMOVDQU X7, (BX)
	VZEROUPPER
	RET

// ENC encrypts the counter blocks of z (their AES inputs already
// xored with round key 0) with round keys Z17..Z26.
#define ENC(z) \
	VAESENC Z17, z, z; \
	VAESENC Z18, z, z; \
	VAESENC Z19, z, z; \
	VAESENC Z20, z, z; \
	VAESENC Z21, z, z; \
	VAESENC Z22, z, z; \
	VAESENC Z23, z, z; \
	VAESENC Z24, z, z; \
	VAESENC Z25, z, z; \
	VAESENCLAST Z26, z, z

// BLOCKS makes z the AES inputs of Z27's counters, xored with round key
// 0, and steps Z27 on by four.
#define BLOCKS(z) \
	VPSHUFB Z29, Z27, z; \
	VPADDD Z28, Z27, Z27; \
	VPXORQ Z16, z, z

// CTRSETUP loads the round keys at AX into Z16..Z26 and the counters
// from the block at DX into Z27..Z29.
#define CTRSETUP \
	VBROADCASTI32X4 0(AX), Z16; \
	VBROADCASTI32X4 16(AX), Z17; \
	VBROADCASTI32X4 32(AX), Z18; \
	VBROADCASTI32X4 48(AX), Z19; \
	VBROADCASTI32X4 64(AX), Z20; \
	VBROADCASTI32X4 80(AX), Z21; \
	VBROADCASTI32X4 96(AX), Z22; \
	VBROADCASTI32X4 112(AX), Z23; \
	VBROADCASTI32X4 128(AX), Z24; \
	VBROADCASTI32X4 144(AX), Z25; \
	VBROADCASTI32X4 160(AX), Z26; \
	VBROADCASTI32X4 (DX), Z27; \
	VPADDD lanes<>(SB), Z27, Z27; \
	VBROADCASTI32X4 four<>(SB), Z28; \
	VBROADCASTI32X4 ctrswap<>(SB), Z29

// func ctr(rk *[176]byte, ctr *[16]byte, dst, src []byte)
// XORs src with the key stream from ctr (a nonce's 12 bytes, then a
// 32-bit counter stored little-endian) into dst, four blocks at a time;
// len(dst) >= len(src). For what the bulk functions leave (under 256
// bytes) and the tag's mask.
TEXT ·ctr(SB), NOSPLIT, $0-64
	MOVQ rk+0(FP), AX
	MOVQ ctr+8(FP), DX
	MOVQ dst_base+16(FP), DI
	MOVQ src_base+40(FP), SI
	MOVQ src_len+48(FP), CX

	CTRSETUP

ctrquads:
	CMPQ CX, $64
	JB   ctrtail
	BLOCKS(Z0)
	ENC(Z0)
	VPXORQ (SI), Z0, Z0
	VMOVDQU64 Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	JMP  ctrquads

ctrtail:
	TESTQ CX, CX
	JZ    ctrdone
	MOVQ  $1, R8
	SHLQ  CX, R8
	DECQ  R8
	KMOVQ R8, K1
	VMOVDQU8.Z (SI), K1, Z1
	BLOCKS(Z0)
	ENC(Z0)
	VPXORQ Z1, Z0, Z0
	VMOVDQU8 Z0, K1, (DI)

ctrdone:
	VZEROUPPER
	RET

// MULACCM adds the products of data d and the powers at off(BX) (each
// lane by its own) into Z4 (low), Z5 (high) and Z6 (middle), with Z8..Z11
// scratch.
#define MULACCM(d, off) \
	VPCLMULQDQ $0x00, off(BX), d, Z8; \
	VPCLMULQDQ $0x11, off(BX), d, Z9; \
	VPCLMULQDQ $0x01, off(BX), d, Z10; \
	VPCLMULQDQ $0x10, off(BX), d, Z11; \
	VPXORQ Z8, Z4, Z4; \
	VPXORQ Z9, Z5, Z5; \
	VPTERNLOGQ $0x96, Z10, Z11, Z6

// HASH16 hashes the sixteen ciphertext blocks in Z0..Z3 into X7.
#define HASH16 \
	VPSHUFB Z31, Z0, Z12; \
	VPXORQ Z7, Z12, Z12; \
	VPCLMULQDQ $0x00, 0(BX), Z12, Z4; \
	VPCLMULQDQ $0x11, 0(BX), Z12, Z5; \
	VPCLMULQDQ $0x01, 0(BX), Z12, Z6; \
	VPCLMULQDQ $0x10, 0(BX), Z12, Z8; \
	VPXORQ Z8, Z6, Z6; \
	VPSHUFB Z31, Z1, Z12; \
	MULACCM(Z12, 64); \
	VPSHUFB Z31, Z2, Z12; \
	MULACCM(Z12, 128); \
	VPSHUFB Z31, Z3, Z12; \
	MULACCM(Z12, 192); \
	FINISH

// BULKSETUP loads what a bulk function's arguments point to, from the
// round keys at AX, the counter at DX and the hash at R8: round keys in
// Z16..Z26, counters in Z27..Z29, the hash in X7, the polynomial in X14;
// and cuts CX to whole 256-byte pieces.
#define BULKSETUP \
	ANDQ $~255, CX; \
	CTRSETUP; \
	VBROADCASTI32X4 bswap<>(SB), Z31; \
	VMOVDQU poly<>(SB), X14; \
	VMOVDQU (R8), X7

// func sealBulk(rk *[176]byte, htab *[256]byte, ctr *[16]byte, y *[16]byte, dst, src []byte)
// Encrypts the whole 256-byte pieces of src into dst from counter ctr and
// hashes their ciphertext into y, in one pass.
TEXT ·sealBulk(SB), NOSPLIT, $0-80
	MOVQ rk+0(FP), AX
	MOVQ htab+8(FP), BX
	MOVQ ctr+16(FP), DX
	MOVQ y+24(FP), R8
	MOVQ dst_base+32(FP), DI
	MOVQ src_base+56(FP), SI
	MOVQ src_len+64(FP), CX
	BULKSETUP
	TESTQ CX, CX
	JZ    sealdone

sealloop:
	BLOCKS(Z0)
	BLOCKS(Z1)
	BLOCKS(Z2)
	BLOCKS(Z3)
	ENC(Z0)
	ENC(Z1)
	ENC(Z2)
	ENC(Z3)
	VPXORQ 0(SI), Z0, Z0
	VPXORQ 64(SI), Z1, Z1
	VPXORQ 128(SI), Z2, Z2
	VPXORQ 192(SI), Z3, Z3
	VMOVDQU64 Z0, 0(DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	HASH16
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JNZ  sealloop

sealdone:
	VMOVDQU X7, (R8)
	VZEROUPPER
	RET

// func openBulk(rk *[176]byte, htab *[256]byte, ctr *[16]byte, y *[16]byte, dst, src []byte)
// Hashes the whole 256-byte pieces of ciphertext src into y and decrypts
// them into dst from counter ctr, in one pass.
TEXT ·openBulk(SB), NOSPLIT, $0-80
	MOVQ rk+0(FP), AX
	MOVQ htab+8(FP), BX
	MOVQ ctr+16(FP), DX
	MOVQ y+24(FP), R8
	MOVQ dst_base+32(FP), DI
	MOVQ src_base+56(FP), SI
	MOVQ src_len+64(FP), CX
	BULKSETUP
	TESTQ CX, CX
	JZ    opendone

openloop:
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	HASH16
	BLOCKS(Z8)
	BLOCKS(Z9)
	BLOCKS(Z10)
	BLOCKS(Z11)
	ENC(Z8)
	ENC(Z9)
	ENC(Z10)
	ENC(Z11)
	VPXORQ Z0, Z8, Z8
	VPXORQ Z1, Z9, Z9
	VPXORQ Z2, Z10, Z10
	VPXORQ Z3, Z11, Z11
	VMOVDQU64 Z8, 0(DI)
	VMOVDQU64 Z9, 64(DI)
	VMOVDQU64 Z10, 128(DI)
	VMOVDQU64 Z11, 192(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JNZ  openloop

opendone:
	VMOVDQU X7, (R8)
	VZEROUPPER
	RET
