//go:build !amd64 || purego

package aesgcm

import "crypto/cipher"

// Vector reports whether New uses the vector implementation: never on
// this architecture.
func Vector() bool { return false }

func newVector([]byte) cipher.AEAD { panic("aesgcm: no vector implementation") }
