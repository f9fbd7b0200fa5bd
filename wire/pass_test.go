package wire

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// passPair returns the two ends of a sealed connection with pass records.
func passPair(t *testing.T) (client, server *sealer) {
	t.Helper()
	c, s := sealerPair(t)
	c.pass, s.pass = true, true
	return c, s
}

// mustSealPass appends plain to dst as a run of pass records sealed by s.
func mustSealPass(t *testing.T, s *sealer, dst, plain []byte) []byte {
	t.Helper()
	dst, err := s.sealPass(dst, plain)
	require.NoError(t, err)
	return dst
}

// TestPassRecordsRoundTrip: runs of pass records between sealed records
// arrive whole, whatever the reads' sizes and wherever a read times out.
func TestPassRecordsRoundTrip(t *testing.T) {
	payload := offsetBytes(0, 3*sealedMaxPlain+12345)
	for _, size := range []int{1, 1000, sealedMaxBody, 4 << 20} {
		for _, failAt := range []int{-1, 3, 40, sealedHeaderLen + 100, 2*sealedHeaderLen + 200 + sealedMaxBody} {
			c, s := passPair(t)
			var wire []byte
			wire = mustSeal(t, c, wire, []byte("frame header"))
			wire = mustSealPass(t, c, wire, payload)
			wire = mustSeal(t, c, wire, []byte("next"))
			wire = mustSealPass(t, c, wire, payload[:1000])
			fa := failAt
			if fa < 0 {
				fa = len(wire) + 1
			}
			r := bufio.NewReaderSize(&stutterReader{data: wire, step: 50000, failAt: fa}, 16)
			got, err := readAll(t, s, r, size)
			require.NoError(t, err, "read size %d, failing at %d", size, failAt)
			want := slicesConcat([]byte("frame header"), payload, []byte("next"), payload[:1000])
			require.Equal(t, want, got)
		}
	}
}

func slicesConcat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// readCaptured reads n bytes from s in reads of at most 128 KiB (as a
// datanode reads a chunk) while capturing into cp.
func readCaptured(t *testing.T, s *sealer, r *bufio.Reader, cp *Capture, n int) []byte {
	t.Helper()
	*cp = Capture{}
	s.capt = cp
	out := make([]byte, n)
	for got := 0; got < n; {
		k, err := s.read(r, out[got:min(n, got+128<<10)])
		require.NoError(t, err)
		got += k
	}
	s.capt = nil
	return out
}

// TestPassRecordsSentOn: a leader keeps the pass records a client sealed
// and sends them to a follower after a key record of its own connection;
// the follower reads the client's bytes, and the leader sealed nothing but
// that key record.
func TestPassRecordsSentOn(t *testing.T) {
	payload := offsetBytes(7, 4<<20)
	client, leaderIn := passPair(t)
	leaderOut, follower := passPair(t)
	follower.in.secret[1] = 9 // another connection's keys
	leaderOut.out.secret[1] = 9

	in := mustSeal(t, client, nil, []byte("frame header"))
	in = mustSealPass(t, client, in, payload)
	r := bufio.NewReaderSize(bytes.NewReader(in), sealedReadBuffer)
	head := make([]byte, 12)
	_, err := io.ReadFull(readerFunc(func(p []byte) (int, error) { return leaderIn.read(r, p) }), head)
	require.NoError(t, err)
	var cp Capture
	got := readCaptured(t, leaderIn, r, &cp, len(payload))
	require.Equal(t, payload, got)
	require.True(t, cp.complete(len(payload)))
	require.Equal(t, SealedLen(len(payload)), len(cp.records))

	seq := leaderOut.out.seq
	out, err := leaderOut.sealKey(nil, &cp.key)
	require.NoError(t, err)
	out = append(out, cp.records...)
	require.Equal(t, seq+1, leaderOut.out.seq, "one record sealed by the leader: the key's")
	fr := bufio.NewReaderSize(bytes.NewReader(out), sealedReadBuffer)
	got, err = readAll(t, follower, fr, 128<<10)
	require.NoError(t, err)
	require.Equal(t, payload, got)

	// The client's key record, sent to the follower as it is, does not open
	// there: the run's key travels under each connection's own key.
	fr = bufio.NewReaderSize(bytes.NewReader(in[len(mustSeal(t, &sealer{}, nil, head)):]), sealedReadBuffer)
	_, follower = passPair(t)
	follower.in.secret[1] = 9
	_, err = readAll(t, follower, fr, 128<<10)
	require.ErrorIs(t, err, errSealedAuth)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestPassRecordsRefused: pass records dropped, cut short, swapped,
// replayed, out of their run or sent where the connection does not take
// them are refused.
func TestPassRecordsRefused(t *testing.T) {
	c, _ := passPair(t)
	payload := offsetBytes(0, 3*1000)
	// A run of three records of 1000 bytes after its key record.
	var three []byte
	k, err := newPassKey(3000)
	require.NoError(t, err)
	three, err = c.sealKey(three, &k)
	require.NoError(t, err)
	var pr passRun
	require.NoError(t, pr.start(k[:]))
	for i := 0; i < 3000; i += 1000 {
		three = pr.seal(three, payload[i:i+1000])
	}
	next := mustSeal(t, c, nil, []byte("next frame"))
	rs := splitRecords(t, three)
	require.Len(t, rs, 4)
	cat := func(rs ...[]byte) []byte { return bytes.Join(rs, nil) }
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"whole":     {cat(rs[0], rs[1], rs[2], rs[3], next), nil},
		"dropped":   {cat(rs[0], rs[1], rs[3], next), errSealedAuth},
		"cut":       {cat(rs[0], rs[1], rs[2], next), errPassOrder},
		"swapped":   {cat(rs[0], rs[1], rs[3], rs[2], next), errSealedAuth},
		"replayed":  {cat(rs[0], rs[1], rs[1], rs[2], next), errSealedAuth},
		"extra":     {cat(rs[0], rs[1], rs[2], rs[3], rs[3], next), errPassOrder},
		"keyless":   {cat(rs[1], rs[2], rs[3], next), errPassOrder},
		"key again": {cat(rs[0], rs[1], rs[0], rs[2], rs[3], next), errPassOrder},
	} {
		t.Run(name, func(t *testing.T) {
			_, s := passPair(t)
			got, err := readAll(t, s, bufio.NewReader(bytes.NewReader(tc.data)), 4096)
			if tc.want == nil {
				require.NoError(t, err)
				require.Equal(t, append(bytes.Clone(payload), "next frame"...), got)
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.True(t, bytes.Equal(payload[:len(got)], got), "what was handed out is the run's beginning")
		})
	}
	t.Run("connection without pass records", func(t *testing.T) {
		_, s := sealerPair(t)
		_, err := readAll(t, s, bufio.NewReader(bytes.NewReader(three)), 4096)
		require.ErrorIs(t, err, errTLSRecord)
	})
}

// splitRecords splits sealed records at their headers.
func splitRecords(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		require.GreaterOrEqual(t, len(b), sealedHeaderLen)
		n := sealedHeaderLen + (int(b[1])<<16 | int(b[2])<<8 | int(b[3]))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// TestTLSPassRecords: two strato ends over TLS agree on pass records; a
// relay reads a client's chunk keeping its records (Capture) and sends them
// on to a server (ForwardChunk), which reads the client's bytes; a peer
// that offers sealed records without pass records still gets sealed
// records from the same listener.
// relayPayloads reads tc's requests one at a time, each payload kept as it
// came, and hands each to fn with its capture, or with nil when the payload
// did not arrive as one run of pass records. The payload and the capture
// are reused once fn returns. It returns when tc fails.
func relayPayloads(tc *TLSConn, fn func(h FrameHeader, m Message, payload []byte, cp *Capture)) {
	r := NewRequestReader(tc)
	var (
		buf []byte
		cp  Capture
	)
	for {
		h, m, err := r.Next()
		if err != nil {
			return
		}
		n := int(r.Remaining())
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		p := buf[:n]
		tc.Capture(&cp)
		if err := r.ReadPayload(p); err != nil {
			return
		}
		kept := &cp
		if !tc.EndCapture(len(p)) {
			kept = nil
		}
		fn(h, m, p, kept)
	}
}

// dialTLS is a TLS client connection to addr.
func dialTLS(tb testing.TB, addr string, cfg *tls.Config) *TLSConn {
	tb.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(tb, err)
	TuneSocket(nc)
	tc, err := TLSClient(tb.Context(), nc, cfg)
	require.NoError(tb, err)
	return tc
}

func TestTLSPassRecords(t *testing.T) {
	server, client := testTLS(t)
	client.ServerName = "127.0.0.1"

	var (
		mu   sync.Mutex
		seen [][]byte
	)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dst := serveToy(t, NewTLSListener(l, server), func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		if _, ok := m.(*WriteChunkRequest); ok {
			mu.Lock()
			seen = append(seen, bytes.Clone(payload))
			mu.Unlock()
		}
		echoHandler(ctx, w, h, m, payload)
	})
	out, err := Dial(t.Context(), dst.addr(), ConnOptions{TLS: client})
	require.NoError(t, err)
	defer out.Close()
	require.True(t, out.nc.(*TLSConn).PassRecords())

	// The relay: reads one WRITE_CHUNK at a time, its payload kept as it
	// came, and sends it on.
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	relayed := make(chan bool, 8)
	go func() {
		nc, err := NewTLSListener(rl, server).Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		tc := nc.(*TLSConn)
		w := NewWriter(tc, 0)
		relayPayloads(tc, func(h FrameHeader, m Message, p []byte, cp *Capture) {
			relayed <- cp != nil
			var err error
			if wc, ok := m.(*WriteChunkRequest); ok {
				err = out.ForwardChunk(context.Background(), wc, p, cp)
			}
			if err != nil {
				_ = w.WriteError(context.Background(), h.Type, h.RequestID, Errorf(CodeIO, "%v", err))
				return
			}
			_ = w.WriteMessage(context.Background(), h.RequestID, &WriteChunkResponse{}, nil)
		})
	}()
	defer rl.Close()

	c := NewConn(dialTLS(t, rl.Addr().String(), client), ConnOptions{})
	defer c.Close()
	for _, size := range []int{1000, PassMin, 4 << 20} {
		data := offsetBytes(int64(size), size)
		require.NoError(t, c.WriteChunk(t.Context(), &WriteChunkRequest{Block: BlockID{1, 2},
			Checksums: checksum.Compute(checksum.CRC32C, 512, data)}, data))
		require.Equal(t, size >= PassMin, <-relayed, "a payload of %d bytes kept as it came", size)
		mu.Lock()
		require.Equal(t, data, seen[len(seen)-1])
		mu.Unlock()
	}

	t.Run("a client without pass records", func(t *testing.T) {
		nc, err := net.Dial("tcp", dst.addr())
		require.NoError(t, err)
		tc, err := tlsClientOffering(t.Context(), nc, client, SealedALPN)
		require.NoError(t, err)
		require.True(t, tc.Sealed())
		require.False(t, tc.PassRecords())
		c := NewConn(tc, ConnOptions{})
		defer c.Close()
		data := offsetBytes(3, 4<<20)
		require.NoError(t, c.WriteChunk(t.Context(), &WriteChunkRequest{Block: BlockID{1, 2},
			Checksums: checksum.Compute(checksum.CRC32C, 512, data)}, data))
	})
}
