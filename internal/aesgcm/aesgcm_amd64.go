//go:build !purego

package aesgcm

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The assembly (aesgcm_amd64.s).

//go:noescape
func expandKey(key *[16]byte, rk *[176]byte)

//go:noescape
func initTable(rk *[176]byte, htab *[256]byte)

//go:noescape
func ghash(htab *[256]byte, y *[16]byte, data []byte)

//go:noescape
func ctr(rk *[176]byte, ctr *[16]byte, dst, src []byte)

//go:noescape
func sealBulk(rk *[176]byte, htab *[256]byte, ctr *[16]byte, y *[16]byte, dst, src []byte)

//go:noescape
func openBulk(rk *[176]byte, htab *[256]byte, ctr *[16]byte, y *[16]byte, dst, src []byte)

var hasVector = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL &&
	cpu.X86.HasAVX512VAES && cpu.X86.HasAVX512VPCLMULQDQ && cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ

// Vector reports whether New uses the vector implementation on this CPU.
func Vector() bool { return hasVector }

const (
	nonceSize = 12
	tagSize   = 16
)

var errOpen = errors.New("cipher: message authentication failed")

// vector is AES-128-GCM with 512-bit VAES and VPCLMULQDQ.
type vector struct {
	rk   [176]byte // the round keys
	htab [256]byte // H^16 .. H^1 in GHASH's representation
}

func newVector(key []byte) cipher.AEAD {
	g := &vector{}
	expandKey((*[16]byte)(key), &g.rk)
	initTable(&g.rk, &g.htab)
	return g
}

func (g *vector) NonceSize() int { return nonceSize }
func (g *vector) Overhead() int  { return tagSize }

// counter returns the counter block of nonce at n, as ctr takes it.
func counter(nonce []byte, n uint32) [16]byte {
	var c [16]byte
	copy(c[:], nonce)
	binary.LittleEndian.PutUint32(c[12:], n)
	return c
}

// tag finishes hash y of adLen bytes of additional data and ctLen of
// ciphertext into the tag.
func (g *vector) tag(nonce []byte, y *[16]byte, adLen, ctLen int) [tagSize]byte {
	var blk [16]byte
	binary.BigEndian.PutUint64(blk[:8], uint64(adLen)*8)
	binary.BigEndian.PutUint64(blk[8:], uint64(ctLen)*8)
	ghash(&g.htab, y, blk[:])

	var mask, zero [16]byte
	j0 := counter(nonce, 1)
	ctr(&g.rk, &j0, mask[:], zero[:])
	var t [tagSize]byte
	for i := range t {
		t[i] = y[15-i] ^ mask[i]
	}
	return t
}

// hashPadded hashes b into y, its last block padded with zeros.
func (g *vector) hashPadded(y *[16]byte, b []byte) {
	whole := len(b) &^ 15
	if whole > 0 {
		ghash(&g.htab, y, b[:whole])
	}
	if whole < len(b) {
		var last [16]byte
		copy(last[:], b[whole:])
		ghash(&g.htab, y, last[:])
	}
}

func (g *vector) Seal(dst, nonce, plaintext, ad []byte) []byte {
	if uint64(len(plaintext)) > (1<<32-2)*16 {
		panic("aesgcm: message too large for GCM")
	}
	ret, out := prepare(dst, nonce, plaintext, len(plaintext)+tagSize)
	// The whole 256-byte pieces in one pass, the rest after.
	var y [16]byte
	g.hashPadded(&y, ad)
	c := counter(nonce, 2)
	sealBulk(&g.rk, &g.htab, &c, &y, out, plaintext)
	bulk := len(plaintext) &^ 255
	g.ctrFrom(nonce, bulk, out[bulk:], plaintext[bulk:])
	g.hashPadded(&y, out[bulk:len(plaintext)])
	t := g.tag(nonce, &y, len(ad), len(plaintext))
	copy(out[len(plaintext):], t[:])
	return ret
}

func (g *vector) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(ciphertext) < tagSize || uint64(len(ciphertext)) > (1<<32-2)*16+tagSize {
		return nil, errOpen
	}
	ct, want := ciphertext[:len(ciphertext)-tagSize], ciphertext[len(ciphertext)-tagSize:]
	ret, out := prepare(dst, nonce, ciphertext, len(ct))
	// The whole 256-byte pieces are hashed and decrypted in one pass, the
	// rest hashed; if the tag is wrong, what was decrypted is cleared.
	var y [16]byte
	g.hashPadded(&y, ad)
	c := counter(nonce, 2)
	openBulk(&g.rk, &g.htab, &c, &y, out, ct)
	bulk := len(ct) &^ 255
	g.hashPadded(&y, ct[bulk:])
	t := g.tag(nonce, &y, len(ad), len(ct))
	if subtle.ConstantTimeCompare(t[:], want) != 1 {
		clear(out[:bulk])
		return nil, errOpen
	}
	g.ctrFrom(nonce, bulk, out[bulk:], ct[bulk:])
	return ret, nil
}

// ctrFrom runs counter mode over src into dst from the message's byte
// off (a multiple of 16).
func (g *vector) ctrFrom(nonce []byte, off int, dst, src []byte) {
	c := counter(nonce, 2+uint32(off/16))
	ctr(&g.rk, &c, dst, src)
}

// prepare checks the nonce and returns dst extended by n bytes (ret) and
// those n bytes (out), which may be src itself but not overlap it
// otherwise.
func prepare(dst, nonce, src []byte, n int) (ret, out []byte) {
	if len(nonce) != nonceSize {
		panic("aesgcm: incorrect nonce length given to GCM")
	}
	ret, out = sliceForAppend(dst, n)
	if inexactOverlap(out, src) {
		panic("aesgcm: invalid buffer overlap")
	}
	return ret, out
}

// sliceForAppend extends in by n bytes: head is the whole, tail the n.
func sliceForAppend(in []byte, n int) (head, tail []byte) {
	if total := len(in) + n; cap(in) >= total {
		head = in[:total]
	} else {
		head = make([]byte, total)
		copy(head, in)
	}
	tail = head[len(in):]
	return
}

// inexactOverlap reports whether x and y share memory at different
// offsets (in place is fine, a shifted overlap is not).
func inexactOverlap(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 || &x[0] == &y[0] {
		return false
	}
	return uintptr(unsafe.Pointer(&x[0])) <= uintptr(unsafe.Pointer(&y[len(y)-1])) &&
		uintptr(unsafe.Pointer(&y[0])) <= uintptr(unsafe.Pointer(&x[len(x)-1]))
}
