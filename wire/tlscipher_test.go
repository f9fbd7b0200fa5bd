package wire

import (
	"crypto/aes"
	"crypto/cipher"
	"testing"
)

// BenchmarkTLSRecordCipher seals and opens full TLS records (16 KiB) with
// AES-128-GCM, the cipher Go's TLS 1.3 picks on a CPU with AES
// instructions: the least CPU per byte that TLS adds to each hop of the
// data path, whatever else it costs. scripts/bench-tls.sh turns it into the
// least time the host's cores allow a TLS write.
func BenchmarkTLSRecordCipher(b *testing.B) {
	block, err := aes.NewCipher(make([]byte, 16))
	if err != nil {
		b.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		b.Fatal(err)
	}
	const record = 16 << 10
	nonce := make([]byte, aead.NonceSize())
	plain := make([]byte, record)
	sealed := aead.Seal(nil, nonce, plain, nil)
	buf := make([]byte, 0, len(sealed))
	b.Run("seal", func(b *testing.B) {
		b.SetBytes(record)
		for b.Loop() {
			buf = aead.Seal(buf[:0], nonce, plain, nil)
		}
	})
	b.Run("open", func(b *testing.B) {
		b.SetBytes(record)
		for b.Loop() {
			if _, err := aead.Open(buf[:0], nonce, sealed, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
