//go:build !purego

package aesgcm

import (
	"bytes"
	"crypto/aes"
	"testing"
)

func TestUsesVector(t *testing.T) {
	if !Vector() {
		t.Skip("this CPU has no VAES, VPCLMULQDQ and AVX-512: New is crypto/cipher's")
	}
	g, err := New(make([]byte, 16))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.(*vector); !ok {
		t.Fatalf("New gave %T on a CPU with the vector instructions", g)
	}
}

// TestCounterWraps: GCM's counter is the block's last 32 bits, and wraps
// within them; a nonce's counter never reaches that with 12-byte nonces,
// so ctr is tried directly from just before the wrap.
func TestCounterWraps(t *testing.T) {
	if !Vector() {
		t.Skip("no vector implementation on this CPU")
	}
	key := []byte("0123456789abcdef")
	g := newVector(key).(*vector)
	nonce := []byte("twelve bytes")
	src := make([]byte, 64*16)
	c := counter(nonce, 0xfffffffa)
	got := make([]byte, len(src))
	ctr(&g.rk, &c, got, src)
	// Block i's key stream is AES(nonce || be32(0xfffffffa+i)).
	for i := range len(src) / 16 {
		var in [16]byte
		copy(in[:], nonce)
		n := uint32(0xfffffffa) + uint32(i)
		in[12], in[13], in[14], in[15] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		want := encryptBlock(t, key, in)
		if !bytes.Equal(got[i*16:i*16+16], want[:]) {
			t.Fatalf("block %d (counter %#x): key stream differs", i, n)
		}
	}
}

func encryptBlock(t *testing.T, key []byte, in [16]byte) [16]byte {
	t.Helper()
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	var out [16]byte
	b.Encrypt(out[:], in[:])
	return out
}

// TestCtrWritesOnlyItsBytes: the counter mode writes len(src) bytes of
// dst and not one more, at every tail length (its last piece is a masked
// store).
func TestCtrWritesOnlyItsBytes(t *testing.T) {
	if !Vector() {
		t.Skip("no vector implementation on this CPU")
	}
	g := newVector([]byte("0123456789abcdef")).(*vector)
	c := counter([]byte("twelve bytes"), 2)
	for n := 0; n <= 520; n++ {
		dst := bytes.Repeat([]byte{0xEE}, n+80)
		ctr(&g.rk, &c, dst[:n], make([]byte, n))
		if !bytes.Equal(dst[n:], bytes.Repeat([]byte{0xEE}, 80)) {
			t.Fatalf("%d bytes: ctr wrote past them", n)
		}
	}
}
