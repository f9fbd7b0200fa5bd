package wire

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testKey(b byte) []byte {
	k := make([]byte, TokenKeyLen)
	for i := range k {
		k[i] = b + byte(i)
	}
	return k
}

func TestBlockTokenRoundTrip(t *testing.T) {
	key := testKey(1)
	keys := func(id uint32) []byte {
		if id == 7 {
			return key
		}
		return nil
	}
	now := time.UnixMilli(1_800_000_000_000)
	tok := BlockToken{KeyID: 7, ExpiresUnixMs: now.Add(time.Hour).UnixMilli(), Block: BlockID{12, 34}, Ops: OpRead | OpWrite, User: "alice"}
	b := tok.Sign(key)
	require.Len(t, b, tokenFixedLen+len("alice"))
	require.Equal(t, byte(TokenFormat), b[0])

	got, err := VerifyBlockToken(b, keys, now)
	require.NoError(t, err)
	require.Equal(t, tok, got)
	require.False(t, got.Container())

	// Every byte counts: flipping any of them fails.
	for i := range b {
		bad := append([]byte(nil), b...)
		bad[i] ^= 0x40
		_, err := VerifyBlockToken(bad, keys, now)
		require.Error(t, err, "byte %d flipped", i)
	}

	_, err = VerifyBlockToken(b, keys, now.Add(time.Hour))
	require.ErrorIs(t, err, ErrTokenExpired)
	_, err = VerifyBlockToken(b, func(uint32) []byte { return nil }, now)
	require.ErrorIs(t, err, ErrTokenUnknownKey)
	_, err = VerifyBlockToken(b, func(uint32) []byte { return testKey(2) }, now)
	require.ErrorIs(t, err, ErrTokenBadMAC)
	_, err = VerifyBlockToken(b[:len(b)-1], keys, now)
	require.ErrorIs(t, err, ErrTokenMalformed)
	_, err = VerifyBlockToken(append(append([]byte(nil), b...), 0), keys, now)
	require.ErrorIs(t, err, ErrTokenMalformed)
	f2 := append([]byte(nil), b...)
	f2[0] = 2
	_, err = VerifyBlockToken(f2, keys, now)
	require.ErrorIs(t, err, ErrTokenMalformed)

	// A container token with no user, and tokens with bad fields.
	ct := BlockToken{KeyID: 7, ExpiresUnixMs: now.Add(time.Minute).UnixMilli(), Block: BlockID{ContainerID: 12}, Ops: OpRead}
	got, err = VerifyBlockToken(ct.Sign(key), keys, now)
	require.NoError(t, err)
	require.True(t, got.Container())
	for _, bad := range []BlockToken{
		{KeyID: 7, ExpiresUnixMs: ct.ExpiresUnixMs, Block: BlockID{0, 1}, Ops: OpRead},
		{KeyID: 7, ExpiresUnixMs: ct.ExpiresUnixMs, Block: BlockID{1, 1}, Ops: 0},
		{KeyID: 7, ExpiresUnixMs: ct.ExpiresUnixMs, Block: BlockID{1, 1}, Ops: 4},
		{KeyID: 7, ExpiresUnixMs: ct.ExpiresUnixMs, Block: BlockID{1, 1}, Ops: OpRead, User: "\xff"},
	} {
		_, err := VerifyBlockToken(bad.Sign(key), keys, now)
		require.ErrorIs(t, err, ErrTokenMalformed, "%+v", bad)
	}
}

// TestBlockTokenLayout pins the byte layout of docs/wire.md §5.9.
func TestBlockTokenLayout(t *testing.T) {
	tok := BlockToken{KeyID: 0x01020304, ExpiresUnixMs: 0x0a0b0c0d0e0f1011, Block: BlockID{7, 42}, Ops: OpWrite, User: "u"}
	b := tok.Sign(testKey(0))
	want := []byte{1, 1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
		0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 42, 2, 0, 1, 'u'}
	require.Equal(t, want, b[:len(want)])
	require.Len(t, b, len(want)+32)
}

func TestTokenFrame(t *testing.T) {
	tok := (&BlockToken{KeyID: 1, ExpiresUnixMs: 5, Block: BlockID{7, 42}, Ops: OpRead}).Sign(testKey(3))
	frame := AppendFrame(nil, 9, &TokenRequest{}, tok)
	require.Equal(t, VersionToken, frame[4], "TOKEN frames are version 2")
	require.Equal(t, byte(TypeToken), frame[5])
	f, err := DecodeFrame(frame)
	require.NoError(t, err)
	require.IsType(t, &TokenRequest{}, f.Msg)
	require.Equal(t, tok, f.Payload)

	resp := AppendFrame(nil, 9, &TokenResponse{}, nil)
	f, err = DecodeFrame(resp)
	require.NoError(t, err)
	require.IsType(t, &TokenResponse{}, f.Msg)

	// TOKEN does not exist in version 1.
	v1 := append([]byte(nil), frame...)
	v1[4] = 1
	_, err = DecodeFrame(v1)
	require.ErrorIs(t, err, CodeUnsupportedType)
	// Payloads of 0 or more than 1024 bytes are invalid.
	_, err = DecodeFrame(AppendFrame(nil, 9, &TokenRequest{}, []byte{}))
	require.ErrorIs(t, err, CodeInvalidArgument)
	_, err = DecodeFrame(AppendFrame(nil, 9, &TokenRequest{}, make([]byte, MaxTokenLen+1)))
	require.ErrorIs(t, err, CodeInvalidArgument)
	// Other types exist in both versions.
	g := AppendFrame(nil, 3, &GetBlockRequest{Block: BlockID{7, 42}}, nil)
	g[4] = 2
	_, err = DecodeFrame(g)
	require.NoError(t, err)

	require.Equal(t, "ACCESS_DENIED", CodeAccessDenied.String())
	require.Equal(t, "TOKEN", TypeToken.String())
}

// versionServer answers PING with the highest version in both ranges
// (speaking 1..max), TOKEN with success (counting them) and GET_BLOCK with
// BLOCK_NOT_FOUND; it checks that every frame after PING carries the
// version chosen.
type versionServer struct {
	max     uint8
	tokens  atomic.Int32
	badVers atomic.Int32
}

func (vs *versionServer) serve(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				ctx := context.Background()
				r, w := NewRequestReader(nc), NewWriter(nc, time.Second)
				var chosen uint8
				for {
					h, m, err := r.Next()
					if err != nil {
						var e *Error
						if errors.As(err, &e) && e.Code != CodeProtocol {
							_ = w.WriteError(ctx, h.Type, h.RequestID, e)
							continue
						}
						return
					}
					switch m := m.(type) {
					case *PingRequest:
						chosen = min(m.MaxVersion, vs.max)
						w.SetVersion(chosen)
						_ = w.WriteMessage(ctx, h.RequestID, &PingResponse{Version: chosen, MinVersion: 1, MaxVersion: vs.max, MaxChunkLen: MaxChunkLen}, nil)
						continue
					case *TokenRequest:
						vs.tokens.Add(1)
						_ = r.Discard()
						_ = w.WriteMessage(ctx, h.RequestID, &TokenResponse{}, nil)
					default:
						_ = w.WriteError(ctx, h.Type, h.RequestID, Errorf(CodeBlockNotFound, "none"))
					}
					if h.Version != chosen {
						vs.badVers.Add(1)
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func TestVersionNegotiationAndAuthorize(t *testing.T) {
	ctx := context.Background()
	tok := (&BlockToken{KeyID: 1, ExpiresUnixMs: 5, Block: BlockID{7, 42}, Ops: OpRead}).Sign(testKey(3))
	tok2 := (&BlockToken{KeyID: 1, ExpiresUnixMs: 6, Block: BlockID{7, 42}, Ops: OpRead}).Sign(testKey(3))

	v2 := &versionServer{max: 2}
	c, err := Dial(ctx, v2.serve(t), ConnOptions{})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, uint8(2), c.Version())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			require.NoError(t, c.Authorize(ctx, tok))
		}()
	}
	wg.Wait()
	require.Equal(t, int32(1), v2.tokens.Load(), "one TOKEN per connection and token")
	require.NoError(t, c.Authorize(ctx, tok2))
	require.NoError(t, c.Authorize(ctx, nil))
	require.Equal(t, int32(2), v2.tokens.Load(), "a new token is sent again")
	_, err = c.GetBlock(ctx, &GetBlockRequest{Block: BlockID{7, 42}})
	require.ErrorIs(t, err, CodeBlockNotFound)
	require.Zero(t, v2.badVers.Load(), "every frame carries the version chosen")

	// A version-1 datanode: nothing to present.
	v1 := &versionServer{max: 1}
	c1, err := Dial(ctx, v1.serve(t), ConnOptions{})
	require.NoError(t, err)
	defer c1.Close()
	require.Equal(t, uint8(1), c1.Version())
	require.NoError(t, c1.Authorize(ctx, tok))
	_, err = c1.GetBlock(ctx, &GetBlockRequest{Block: BlockID{7, 42}})
	require.ErrorIs(t, err, CodeBlockNotFound)
	require.Zero(t, v1.tokens.Load())
	require.Zero(t, v1.badVers.Load())
}
