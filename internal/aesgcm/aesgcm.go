// Package aesgcm is AES-GCM for the data path's sealed records (decision
// 0110): on CPUs with 512-bit vector AES and carry-less multiplication
// (VAES, VPCLMULQDQ, AVX-512), AES-128-GCM in two passes over sixteen
// blocks at a time, about twice as fast as crypto/cipher's; elsewhere, and
// for other key sizes, crypto/cipher's.
package aesgcm

import (
	"crypto/aes"
	"crypto/cipher"
)

// New returns an AES-GCM AEAD with a 12-byte nonce and a 16-byte tag:
// the vector implementation when key is 16 bytes and the CPU has it,
// crypto/cipher's otherwise. Both give the same bytes.
func New(key []byte) (cipher.AEAD, error) {
	if len(key) == 16 && Vector() {
		return newVector(key), nil
	}
	return Standard(key)
}

// Standard returns crypto/cipher's AES-GCM, whatever the CPU.
func Standard(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
