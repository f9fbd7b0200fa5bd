package aesgcm

import (
	"bytes"
	"crypto/cipher"
	"math/rand/v2"
	"testing"
)

// pair returns the implementation New picks and crypto/cipher's, for key.
func pair(t testing.TB, key []byte) (got, want cipher.AEAD) {
	t.Helper()
	got, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	if want, err = Standard(key); err != nil {
		t.Fatal(err)
	}
	return got, want
}

// TestSameAsStandard seals and opens messages of every length around the
// vector code's strides (1, 4 and 16 blocks) and of random lengths, with
// random keys, nonces and additional data, and compares every byte with
// crypto/cipher's.
func TestSameAsStandard(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	var lens []int
	for n := 0; n <= 600; n++ {
		lens = append(lens, n)
	}
	for range 200 {
		lens = append(lens, r.IntN(300<<10))
	}
	lens = append(lens, 128<<10-16, 128<<10, 1<<20+7)
	for i, n := range lens {
		got, want := pair(t, fill(16))
		nonce, pt, ad := fill(12), fill(n), fill(r.IntN(70))
		if i%3 == 0 {
			ad = fill(4) // the sealed records' header
		}
		sealed := got.Seal(nil, nonce, pt, ad)
		if w := want.Seal(nil, nonce, pt, ad); !bytes.Equal(sealed, w) {
			t.Fatalf("length %d, ad %d: sealed differs from crypto/cipher's (first byte %d)", n, len(ad), firstDiff(sealed, w))
		}
		opened, err := got.Open(nil, nonce, sealed, ad)
		if err != nil || !bytes.Equal(opened, pt) {
			t.Fatalf("length %d: opened %v, equal %v", n, err, bytes.Equal(opened, pt))
		}
		// In place, as sealed records open.
		buf := bytes.Clone(sealed)
		opened, err = got.Open(buf[:0], nonce, buf, ad)
		if err != nil || !bytes.Equal(opened, pt) {
			t.Fatalf("length %d in place: opened %v, equal %v", n, err, bytes.Equal(opened, pt))
		}
		// Appended to a prefix.
		pre := []byte("prefix")
		if s := got.Seal(bytes.Clone(pre), nonce, pt, ad); !bytes.Equal(s, append(bytes.Clone(pre), sealed...)) {
			t.Fatalf("length %d: Seal does not append", n)
		}
	}
}

// TestOpenRefuses: a changed byte of the ciphertext, tag, nonce or
// additional data fails, and no plaintext is left in dst (what was
// decrypted before the tag was checked is cleared, as crypto/cipher does).
func TestOpenRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	key := make([]byte, 16)
	for i := range key {
		key[i] = byte(r.Uint32())
	}
	g, _ := pair(t, key)
	nonce, ad := []byte("twelve bytes"), []byte{0xA5, 0, 1, 0}
	pt := bytes.Repeat([]byte("strato "), 5000)
	sealed := g.Seal(nil, nonce, pt, ad)
	try := func(what string, n, a, s []byte) {
		t.Helper()
		dst := bytes.Repeat([]byte{0xEE}, len(s))
		if out, err := g.Open(dst[:0], n, s, a); err == nil {
			t.Fatalf("%s: opened (%d bytes)", what, len(out))
		}
		for i, b := range dst {
			if b != 0xEE && b != 0 {
				t.Fatalf("%s: dst[%d] holds %#x after a failed open", what, i, b)
			}
		}
		// In place: no plaintext either.
		in := bytes.Clone(s)
		if _, err := g.Open(in[:0], n, in, a); err == nil {
			t.Fatalf("%s: opened in place", what)
		}
		if len(in) >= 256 && bytes.Contains(in, pt[:256]) {
			t.Fatalf("%s: plaintext left in place after a failed open", what)
		}
	}
	for _, i := range []int{0, 1, 255, 256, len(pt) - 1, len(pt), len(sealed) - 1} {
		s := bytes.Clone(sealed)
		s[i] ^= 0x10
		try("a flipped bit", nonce, ad, s)
	}
	try("another nonce", []byte("twelve byteZ"), ad, sealed)
	try("other data", nonce, []byte{0xA5, 0, 1, 1}, sealed)
	try("cut short", nonce, ad, sealed[:len(sealed)-1])
	try("shorter than a tag", nonce, ad, sealed[:15])
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// eachImpl runs f as a sub-benchmark with each implementation.
func eachImpl(b *testing.B, f func(b *testing.B, g cipher.AEAD)) {
	for _, impl := range []string{"vector", "standard"} {
		b.Run(impl, func(b *testing.B) {
			key := make([]byte, 16)
			g, err := New(key)
			if impl == "standard" {
				g, err = Standard(key)
			} else if !Vector() {
				b.Skip("no vector implementation on this CPU")
			}
			if err != nil {
				b.Fatal(err)
			}
			f(b, g)
		})
	}
}

// BenchmarkSeal seals records of the sealed connections' size.
func BenchmarkSeal(b *testing.B) {
	eachImpl(b, func(b *testing.B, g cipher.AEAD) {
		p := make([]byte, 128<<10-16)
		d := make([]byte, 0, len(p)+16)
		nonce, ad := make([]byte, 12), make([]byte, 4)
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			g.Seal(d[:0], nonce, p, ad)
		}
	})
}

// BenchmarkOpen opens them in place (each copied in first, as a read
// would put it there).
func BenchmarkOpen(b *testing.B) {
	eachImpl(b, func(b *testing.B, g cipher.AEAD) {
		nonce, ad := make([]byte, 12), make([]byte, 4)
		sealed := g.Seal(nil, nonce, make([]byte, 128<<10-16), ad)
		buf := make([]byte, len(sealed))
		b.SetBytes(int64(len(sealed) - 16))
		for b.Loop() {
			copy(buf, sealed)
			if _, err := g.Open(buf[:0], nonce, buf, ad); err != nil {
				b.Fatal(err)
			}
		}
	})
}
