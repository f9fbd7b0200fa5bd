package wire

import (
	"context"
	"crypto/cipher"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/strato-io/strato/internal/aesgcm"
)

// BenchmarkTLSRecordCipher seals and opens full TLS records (16 KiB) with
// AES-128-GCM, the cipher Go's TLS 1.3 picks on a CPU with AES
// instructions: the least CPU per byte that TLS adds to each hop of the
// data path, whatever else it costs. scripts/bench-tls.sh turns it into the
// least time the host's cores allow a TLS write.
func BenchmarkTLSRecordCipher(b *testing.B) {
	aead, err := aesgcm.Standard(make([]byte, 16))
	if err != nil {
		b.Fatal(err)
	}
	benchRecordCipher(b, aead, 16<<10, nil, false)
}

// BenchmarkSealedRecordCipher seals and opens full sealed records (128
// KiB, decision 0109) with the AES-128-GCM they use (internal/aesgcm:
// the vector implementation where the CPU has it, decision 0110), opened
// in place as a receiver opens them. scripts/bench-tls.sh turns it into
// the least time the host's cores allow a TLS write.
func BenchmarkSealedRecordCipher(b *testing.B) {
	aead, err := aesgcm.New(make([]byte, sealedKeyLen))
	if err != nil {
		b.Fatal(err)
	}
	benchRecordCipher(b, aead, sealedMaxPlain, make([]byte, sealedHeaderLen), true)
}

// benchRecordCipher seals and opens records of n bytes of plaintext with
// additional data ad: opened into another buffer, or copied into one and
// opened there (inPlace).
func benchRecordCipher(b *testing.B, aead cipher.AEAD, n int, ad []byte, inPlace bool) {
	nonce, plain := make([]byte, aead.NonceSize()), make([]byte, n)
	sealed := aead.Seal(nil, nonce, plain, ad)
	buf := make([]byte, len(sealed))
	b.Run("seal", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			buf = aead.Seal(buf[:0], nonce, plain, ad)
		}
	})
	b.Run("open", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			in := sealed
			if inPlace {
				in = buf[:len(sealed)]
				copy(in, sealed)
			}
			if _, err := aead.Open(buf[:0], nonce, in, ad); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTLSStream sends 4 MiB frames' worth of bytes one way over a
// loopback TCP connection and reads them back into a 4 MiB buffer, as a
// pipeline's hop does: through TLS records (a peer that does not offer
// sealed records) and through sealed records (decision 0109). Its MB/s
// is one core sending and another receiving; the CPU per byte is what a
// hop costs.
func BenchmarkTLSStream(b *testing.B) {
	server, client := testTLS(b)
	client.ServerName = "127.0.0.1"
	for _, tc := range []struct {
		name string
		seal bool
	}{{"tls-records", false}, {"sealed", true}} {
		b.Run(tc.name, func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			tl := NewTLSListener(l, server)
			const frame = 4 << 20
			done := make(chan error, 1)
			go func() {
				nc, err := tl.Accept()
				if err != nil {
					done <- err
					return
				}
				defer nc.Close()
				buf := make([]byte, frame)
				for {
					if _, err := io.ReadFull(nc, buf); err != nil {
						if err == io.EOF {
							err = nil
						}
						done <- err
						return
					}
				}
			}()
			raw, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			TuneSocket(raw)
			var protos []string // none: TLS records
			if tc.seal {
				protos = []string{SealedALPN}
			}
			nc, err := tlsClientOffering(b.Context(), raw, client, protos...)
			if err != nil {
				b.Fatal(err)
			}
			if nc.Sealed() != tc.seal {
				b.Fatalf("sealed %v, want %v", nc.Sealed(), tc.seal)
			}
			data := make([]byte, frame)
			b.SetBytes(frame)
			for b.Loop() {
				nc.Gather() // as a Writer sends a frame
				if _, err := nc.Write(data); err != nil {
					b.Fatal(err)
				}
				if err := nc.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			_ = nc.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkTLSRelay sends 4 MiB WRITE_CHUNK frames through a relay to two
// followers over loopback, as a pipeline leader forwards a client's chunk:
// "reseal" seals the chunk again for each follower, "pass" sends the
// client's pass records on as they came (decision 0112). Its MB/s is the
// client's; every process shares the host's cores, so the CPU the relay
// saves shows as throughput.
func BenchmarkTLSRelay(b *testing.B) {
	server, client := testTLS(b)
	client.ServerName = "127.0.0.1"
	const frame = 4 << 20
	for _, pass := range []bool{false, true} {
		b.Run(map[bool]string{false: "reseal", true: "pass"}[pass], func(b *testing.B) {
			var wg sync.WaitGroup
			defer wg.Wait()
			listen := func(serve func(*TLSConn)) string {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = l.Close() })
				tl := NewTLSListener(l, server)
				wg.Add(1)
				go func() {
					defer wg.Done()
					nc, err := tl.Accept()
					if err != nil {
						return
					}
					defer nc.Close()
					serve(nc.(*TLSConn))
				}()
				return l.Addr().String()
			}
			dial := func(addr string) *TLSConn { return dialTLS(b, addr, client) }
			drain := func(tc *TLSConn) {
				buf := make([]byte, frame)
				for {
					if _, err := tc.Read(buf); err != nil {
						return
					}
				}
			}
			followers := []*TLSConn{dial(listen(drain)), dial(listen(drain))}
			relay := listen(func(tc *TLSConn) {
				defer func() {
					for _, f := range followers {
						_ = f.Close()
					}
				}()
				ws := []*Writer{NewWriter(followers[0], 0), NewWriter(followers[1], 0)}
				relayPayloads(tc, func(h FrameHeader, m Message, p []byte, cp *Capture) {
					if pass && cp == nil {
						b.Error("the chunk did not arrive as one run")
						_ = tc.Close()
						return
					}
					if !pass {
						cp = nil
					}
					var fw sync.WaitGroup
					for _, w := range ws {
						fw.Add(1)
						go func() {
							defer fw.Done()
							_ = w.writeMessage(context.Background(), h.RequestID, m, p, cp)
						}()
					}
					fw.Wait()
				})
			})
			c := dial(relay)
			w := NewWriter(c, 0)
			data := make([]byte, frame)
			req := &WriteChunkRequest{Block: BlockID{1, 1}, Length: frame}
			b.SetBytes(frame)
			id := uint64(0)
			for b.Loop() {
				id++
				if err := w.WriteMessage(b.Context(), id, req, data); err != nil {
					b.Fatal(err)
				}
			}
			_ = c.Close() // the relay ends with it, and closes the followers' connections
			wg.Wait()
		})
	}
}
