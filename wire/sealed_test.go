package wire

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// sealerPair returns the two ends of a sealed connection with fixed keys.
func sealerPair(t *testing.T) (client, server *sealer) {
	t.Helper()
	var dirs [2]sealDir
	for i := range dirs {
		dirs[i].secret[0] = byte(i + 1)
		dirs[i].iv[0] = byte(i + 7)
	}
	return &sealer{out: dirs[0], in: dirs[1]}, &sealer{out: dirs[1], in: dirs[0]}
}

// mustSeal appends plain, sealed by s, to dst.
func mustSeal(t *testing.T, s *sealer, dst, plain []byte) []byte {
	t.Helper()
	dst, err := s.seal(dst, plain)
	require.NoError(t, err)
	return dst
}

// stutterReader hands out at most step bytes a read, and once, at
// failAt, fails with a timeout as a read deadline would.
type stutterReader struct {
	data   []byte
	step   int
	failAt int
	off    int
	failed bool
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func (r *stutterReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	if !r.failed && r.off >= r.failAt {
		r.failed = true
		return 0, timeoutErr{}
	}
	n := min(len(p), r.step, len(r.data)-r.off)
	if !r.failed && r.off < r.failAt {
		n = min(n, r.failAt-r.off)
	}
	copy(p, r.data[r.off:r.off+n])
	r.off += n
	return n, nil
}

// readAll reads every byte from s over r with reads of at most size bytes,
// going on after timeouts.
func readAll(t *testing.T, s *sealer, r *bufio.Reader, size int) ([]byte, error) {
	t.Helper()
	var out []byte
	buf := make([]byte, size)
	for {
		n, err := s.read(r, buf)
		out = append(out, buf[:n]...)
		var te timeoutErr
		if errors.As(err, &te) {
			continue
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestSealedRecordsRoundTrip: what one end seals the other reads back
// whole, through reads small and large, and across a read that fails part
// way through a record (a deadline) and is resumed.
func TestSealedRecordsRoundTrip(t *testing.T) {
	payload := offsetBytes(0, 3*sealedMaxPlain+12345)
	for _, size := range []int{1, 1000, sealedMaxBody, 4 << 20} {
		for _, failAt := range []int{-1, 3, sealedHeaderLen + 100, sealedHeaderLen + sealedMaxBody + 2} {
			c, s := sealerPair(t)
			var wire []byte
			wire = mustSeal(t, c, wire, []byte("frame header"))
			wire = mustSeal(t, c, wire, payload)
			fa := failAt
			if fa < 0 {
				fa = len(wire) + 1
			}
			r := bufio.NewReaderSize(&stutterReader{data: wire, step: 50000, failAt: fa}, 16)
			got, err := readAll(t, s, r, size)
			require.NoError(t, err, "read size %d, failing at %d", size, failAt)
			require.Equal(t, append([]byte("frame header"), payload...), got)
		}
	}
}

// TestSealedRecordsRefused: a record changed, dropped, replayed, swapped
// or cut short is refused, and no byte of it is handed out.
func TestSealedRecordsRefused(t *testing.T) {
	c, _ := sealerPair(t)
	var recs [][]byte
	for i := range 3 {
		recs = append(recs, mustSeal(t, c, nil, bytes.Repeat([]byte{byte(i)}, 1000)))
	}
	cat := func(rs ...[]byte) []byte { return bytes.Join(rs, nil) }
	flipped := cat(recs...)
	flipped[len(recs[0])+500] ^= 1
	longer := cat(recs...)
	longer[1] = 0xFF // a header claiming more than a record may hold
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"changed":  {flipped, errSealedAuth},
		"dropped":  {cat(recs[0], recs[2]), errSealedAuth},
		"replayed": {cat(recs[0], recs[0], recs[1]), errSealedAuth},
		"swapped":  {cat(recs[0], recs[2], recs[1]), errSealedAuth},
		"cut":      {cat(recs...)[:2*len(recs[0])+100], io.ErrUnexpectedEOF},
		"tls":      {cat(recs[0], []byte{0x15, 3, 3, 0, 2, 2, 40}), errTLSRecord},
	} {
		t.Run(name, func(t *testing.T) {
			_, s := sealerPair(t)
			got, err := readAll(t, s, bufio.NewReader(bytes.NewReader(tc.data)), 4096)
			require.ErrorIs(t, err, tc.want)
			require.LessOrEqual(t, len(got), 1000*(len(recs)-1))
			require.Equal(t, bytes.Repeat([]byte{0}, 1000), got[:1000], "the first record was whole")
		})
	}
	_, s := sealerPair(t)
	_, err := readAll(t, s, bufio.NewReader(bytes.NewReader(longer)), 4096)
	require.ErrorContains(t, err, "sealed record of")
}

// TestSealedRecordsNewKeys: every sealedEpochRecords records the key
// changes, on both ends alike; a reader that kept the old key could not
// open the records after the change.
func TestSealedRecordsNewKeys(t *testing.T) {
	payload := offsetBytes(0, 7*1000)
	sealAll := func(c *sealer) []byte {
		var out []byte
		for i := 0; i < len(payload); i += 1000 {
			out = mustSeal(t, c, out, payload[i:i+1000])
		}
		return out
	}
	defer func(n uint64) { sealedEpochRecords = n }(sealedEpochRecords)

	sealedEpochRecords = 2
	c, s := sealerPair(t)
	got, err := readAll(t, s, bufio.NewReader(bytes.NewReader(sealAll(c))), 4096)
	require.NoError(t, err)
	require.Equal(t, payload, got)
	require.Equal(t, uint64(3), s.in.epoch)

	sealedEpochRecords = 1 << 40
	c, s = sealerPair(t)
	oneKey := sealAll(c)
	sealedEpochRecords = 2
	got, err = readAll(t, s, bufio.NewReader(bytes.NewReader(oneKey)), 4096)
	require.ErrorIs(t, err, errSealedAuth)
	require.Equal(t, payload[:2000], got)
}

// TestTLSSealed: two strato ends seal; frames of every size arrive whole
// both ways; a peer that does not offer sealed records (plain crypto/tls, as
// the Java connector's) gets TLS records from the same listener, and a
// strato client gets them from a plain TLS server.
func TestTLSSealed(t *testing.T) {
	server, client := testTLS(t)
	client.ServerName = "127.0.0.1"
	exchange := func(t *testing.T, c *Conn) {
		for _, size := range []int{1, 16 << 10, sealedMaxPlain + 1, 4 << 20} {
			_, data, err := c.ReadChunk(t.Context(), &ReadChunkRequest{Block: BlockID{1, 1}, Offset: 3, Length: uint32(size)}, nil)
			require.NoError(t, err)
			require.Equal(t, offsetBytes(3, size), data)
			data = offsetBytes(5, size)
			require.NoError(t, c.WriteChunk(t.Context(), &WriteChunkRequest{Block: BlockID{1, 2},
				Checksums: checksum.Compute(checksum.CRC32C, 512, data)}, data))
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := serveToy(t, NewTLSListener(l, server), echoHandler)

	t.Run("strato to strato", func(t *testing.T) {
		c, err := Dial(t.Context(), s.addr(), ConnOptions{TLS: client})
		require.NoError(t, err)
		defer c.Close()
		require.True(t, c.nc.(*TLSConn).Sealed())
		exchange(t, c)
	})
	t.Run("plain TLS client", func(t *testing.T) {
		nc, err := tls.Dial("tcp", s.addr(), client)
		require.NoError(t, err)
		require.Empty(t, nc.ConnectionState().NegotiatedProtocol)
		c, err := handshake(t.Context(), NewConn(nc, ConnOptions{}), s.addr(), ConnOptions{})
		require.NoError(t, err)
		defer c.Close()
		exchange(t, c)
	})
	t.Run("plain TLS server", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ps := serveToy(t, tls.NewListener(l, server), echoHandler)
		c, err := Dial(t.Context(), ps.addr(), ConnOptions{TLS: client})
		require.NoError(t, err)
		defer c.Close()
		require.False(t, c.nc.(*TLSConn).Sealed())
		exchange(t, c)
	})
}

// flipProxy forwards one connection to addr, flipping one bit of the
// client's stream at offset at (counted from the first byte).
func flipProxy(t *testing.T, addr string, at int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		in, err := l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", addr)
		if err != nil {
			_ = in.Close()
			return
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(in, out)
			_ = in.Close()
		}()
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			off := 0
			for {
				n, err := in.Read(buf)
				if n > 0 {
					if at >= off && at < off+n {
						buf[at-off] ^= 0x10
					}
					off += n
					if _, werr := out.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			_ = out.Close()
		}()
		wg.Wait()
	}()
	return l.Addr().String()
}

// TestTLSSealedTampered: a bit changed on the way in a sealed write is
// caught by the server, which takes none of that frame.
func TestTLSSealedTampered(t *testing.T) {
	server, client := testTLS(t)
	client.ServerName = "127.0.0.1"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var writes int
	s := serveToy(t, NewTLSListener(l, server), func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		if _, ok := m.(*WriteChunkRequest); ok {
			mu.Lock()
			writes++
			mu.Unlock()
		}
		echoHandler(ctx, w, h, m, payload)
	})
	// The handshake is some 2 KiB; a bit 600 KiB in is in the first chunk.
	c, err := Dial(t.Context(), flipProxy(t, s.addr(), 600<<10), ConnOptions{TLS: client})
	require.NoError(t, err)
	defer c.Close()
	require.True(t, c.nc.(*TLSConn).Sealed())
	data := offsetBytes(0, 1<<20)
	err = c.WriteChunk(t.Context(), &WriteChunkRequest{Block: BlockID{1, 2},
		Checksums: checksum.Compute(checksum.CRC32C, 512, data)}, data)
	require.Error(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Zero(t, writes, "the server took a frame whose bytes were changed")
}
