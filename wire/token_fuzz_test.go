package wire

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// FuzzBlockToken feeds arbitrary bytes to the block token parser and
// verifier (what a datanode does with every TOKEN frame). Neither may
// panic; every refusal is one of the four reasons; a token that parses
// encodes back to the same bytes (the format is canonical); and one that
// verifies is exactly what meta's key signs for what it says, unexpired,
// so no change to a signed token's bytes gets through.
func FuzzBlockToken(f *testing.F) {
	key := bytes.Repeat([]byte{0x5a}, 32)
	now := time.UnixMilli(1_800_000_000_000)
	for _, t := range []BlockToken{
		{KeyID: 1, ExpiresUnixMs: now.UnixMilli() + 3600_000, Block: BlockID{ContainerID: 7, LocalID: 9}, Ops: OpRead, User: "alice"},
		{KeyID: 1, ExpiresUnixMs: now.UnixMilli() + 1, Block: BlockID{ContainerID: 7}, Ops: OpRead | OpWrite, User: "datanode dn-1"},
		{KeyID: 2, ExpiresUnixMs: now.UnixMilli() + 3600_000, Block: BlockID{ContainerID: 1, LocalID: 1}, Ops: OpWrite},
	} {
		b := t.Sign(key)
		f.Add(b, uint16(0), byte(0))
		f.Add(b, uint16(len(b)-1), byte(1))
		f.Add(b, uint16(29), byte(3)) // ops
	}
	f.Add([]byte{}, uint16(0), byte(0))
	f.Fuzz(func(t *testing.T, b []byte, at uint16, flip byte) {
		keys := func(id uint32) []byte {
			if id == 1 {
				return key
			}
			return nil
		}
		reason := func(err error) bool {
			return errors.Is(err, ErrTokenMalformed) || errors.Is(err, ErrTokenUnknownKey) ||
				errors.Is(err, ErrTokenBadMAC) || errors.Is(err, ErrTokenExpired)
		}
		tok, err := ParseBlockToken(b)
		if err != nil {
			if !reason(err) {
				t.Fatalf("parse error %v is none of the reasons", err)
			}
		} else if re := tok.Sign(key); !bytes.Equal(re[:len(re)-tokenMACLen], b[:len(b)-tokenMACLen]) {
			t.Fatalf("token %x parses to %+v, which encodes to %x", b, tok, re)
		}
		v, err := VerifyBlockToken(b, keys, now)
		if err != nil {
			if !reason(err) {
				t.Fatalf("verify error %v is none of the reasons", err)
			}
		} else {
			if !bytes.Equal(v.Sign(key), b) || v.KeyID != 1 || now.UnixMilli() >= v.ExpiresUnixMs {
				t.Fatalf("verified %x as %+v: not what key 1 signs for it, or expired", b, v)
			}
			// Any change to a verified token's bytes is refused.
			if flip != 0 && len(b) > 0 {
				c := bytes.Clone(b)
				c[int(at)%len(c)] ^= flip
				if got, err := VerifyBlockToken(c, keys, now); err == nil {
					t.Fatalf("token %x changed at byte %d still verifies: %+v", c, int(at)%len(c), got)
				}
			}
		}
	})
}
