package wire

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/strato-io/strato/checksum"
)

// chunksOf splits data into chunks of the given lengths, each with its own
// checksums of type t (bytes per checksum bpc).
func chunksOf(t checksum.Type, bpc uint32, data []byte, lens ...int) []Chunk {
	var out []Chunk
	off := 0
	for _, n := range lens {
		out = append(out, Chunk{Offset: int64(off), Length: uint32(n), Checksums: checksum.Compute(t, bpc, data[off:off+n])})
		off += n
	}
	return out
}

// feed runs a verifier over data arriving in random pieces, as readVerified does.
func feed(chunks []Chunk, data []byte, rng *rand.Rand) *payloadVerifier {
	v := &payloadVerifier{chunks: chunks}
	got := 0
	for got < len(data) {
		got = min(len(data), got+1+rng.IntN(40_000))
		v.advance(data[:got])
	}
	return v
}

func TestPayloadVerifier(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3*16384+1000+70_000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	const bpc = 16384
	for _, ty := range []checksum.Type{checksum.CRC32C, checksum.CRC32, checksum.SHA256, checksum.NONE} {
		// Chunks whose last windows are short, and a chunk shorter than one window.
		lens := []int{3*16384 + 1000, 500, 70_000 - 500}
		for round := 0; round < 20; round++ {
			v := feed(chunksOf(ty, bpc, data, lens...), data, rng)
			if v.err != nil || v.done != len(data) {
				t.Fatalf("%v: intact payload: err %v, verified %d of %d", ty, v.err, v.done, len(data))
			}
		}
		if ty == checksum.NONE {
			continue
		}
		for _, at := range []int{0, 16383, 16384, 3*16384 + 999, 3*16384 + 1000, 3*16384 + 1499, len(data) - 1} {
			bad := append([]byte(nil), data...)
			bad[at] ^= 0x40
			v := feed(chunksOf(ty, bpc, data, lens...), bad, rng)
			if v.err == nil {
				t.Fatalf("%v: byte %d flipped: no error", ty, at)
			}
			var we *Error
			if !errors.As(v.err, &we) || we.Code != CodeChecksumMismatch || !errors.Is(v.err, checksum.ErrMismatch) {
				t.Fatalf("%v: byte %d flipped: error %v is not a checksum mismatch of both kinds", ty, at, v.err)
			}
		}
	}
}
