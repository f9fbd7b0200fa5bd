package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Block tokens (docs/wire.md §5.9, docs/security.md "Block tokens"): meta
// signs, for each block it hands to a client, a short-lived capability
// naming the block, the operations allowed and the user; a client presents
// it on a data connection with a TOKEN request before the block's first
// request there, and the datanode verifies it with the key meta gave it.

// Ops are the operations a block token allows.
type Ops uint8

// Operations of a block token. The numeric values are part of the protocol.
const (
	OpRead  Ops = 0x01
	OpWrite Ops = 0x02

	knownOps = OpRead | OpWrite
)

// String names the operations: READ, WRITE or READ|WRITE.
func (o Ops) String() string {
	switch o {
	case OpRead:
		return "READ"
	case OpWrite:
		return "WRITE"
	case OpRead | OpWrite:
		return "READ|WRITE"
	}
	return fmt.Sprintf("OPS_%#02x", uint8(o))
}

// Block token layout constants.
const (
	// TokenFormat is the format byte of the tokens this package makes.
	TokenFormat = 1
	// MaxTokenLen bounds a TOKEN request's payload.
	MaxTokenLen = 1024
	// TokenKeyLen is the length of a block token key.
	TokenKeyLen = 32
	// tokenMACLen is the length of the HMAC-SHA256 that ends a token.
	tokenMACLen = sha256.Size
	// tokenFixedLen is a token's length with an empty user.
	tokenFixedLen = 1 + 4 + 8 + 8 + 8 + 1 + 2 + tokenMACLen
)

// BlockToken is what a block token says. Block.LocalID 0 makes a container
// token: it covers every block of Block.ContainerID.
type BlockToken struct {
	KeyID uint32
	// Expires is when the token stops granting anything (Unix ms).
	ExpiresUnixMs int64
	Block         BlockID
	Ops           Ops
	// User is who meta issued the token to (may be empty), for logs.
	User string
}

// Container reports whether t covers every block of its container.
func (t *BlockToken) Container() bool { return t.Block.LocalID == 0 }

// String describes the token for logs: what it grants, to whom, and when
// it expires; never its MAC.
func (t *BlockToken) String() string {
	what := "block " + t.Block.String()
	if t.Container() {
		what = fmt.Sprintf("container %d", t.Block.ContainerID)
	}
	return fmt.Sprintf("%v of %s for %q, key %d, expires %s", t.Ops, what, t.User, t.KeyID,
		time.UnixMilli(t.ExpiresUnixMs).UTC().Format(time.RFC3339))
}

// Sign encodes t and signs it with key, which must be the key of t.KeyID.
func (t *BlockToken) Sign(key []byte) []byte {
	b := make([]byte, 0, tokenFixedLen+len(t.User))
	b = append(b, TokenFormat)
	b = appendU32(b, t.KeyID)
	b = appendU64(b, uint64(t.ExpiresUnixMs))
	b = appendU64(b, t.Block.ContainerID)
	b = appendU64(b, t.Block.LocalID)
	b = append(b, byte(t.Ops))
	b = appendString(b, t.User)
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	return mac.Sum(b)
}

// Reasons a block token is refused: errors.Is matches them in the errors
// of ParseBlockToken and VerifyBlockToken.
var (
	ErrTokenMalformed  = errors.New("wire: malformed block token")
	ErrTokenUnknownKey = errors.New("wire: block token signed with an unknown key")
	ErrTokenBadMAC     = errors.New("wire: block token signature does not verify")
	ErrTokenExpired    = errors.New("wire: block token expired")
)

// ParseBlockToken decodes a token without verifying its signature.
func ParseBlockToken(b []byte) (BlockToken, error) {
	var t BlockToken
	if len(b) < tokenFixedLen || len(b) > MaxTokenLen {
		return t, fmt.Errorf("%w: %d bytes", ErrTokenMalformed, len(b))
	}
	if b[0] != TokenFormat {
		return t, fmt.Errorf("%w: format %d (want %d)", ErrTokenMalformed, b[0], TokenFormat)
	}
	t.KeyID = binary.BigEndian.Uint32(b[1:])
	t.ExpiresUnixMs = int64(binary.BigEndian.Uint64(b[5:]))
	t.Block = BlockID{ContainerID: binary.BigEndian.Uint64(b[13:]), LocalID: binary.BigEndian.Uint64(b[21:])}
	t.Ops = Ops(b[29])
	n := int(binary.BigEndian.Uint16(b[30:]))
	if len(b) != tokenFixedLen+n {
		return BlockToken{}, fmt.Errorf("%w: user of %d bytes in a token of %d", ErrTokenMalformed, n, len(b))
	}
	user := b[32 : 32+n]
	switch {
	case t.Block.ContainerID == 0:
		return BlockToken{}, fmt.Errorf("%w: container ID 0", ErrTokenMalformed)
	case t.Ops == 0 || t.Ops&^knownOps != 0:
		return BlockToken{}, fmt.Errorf("%w: ops %#02x", ErrTokenMalformed, uint8(t.Ops))
	case !utf8.Valid(user):
		return BlockToken{}, fmt.Errorf("%w: user is not valid UTF-8", ErrTokenMalformed)
	}
	t.User = string(user)
	return t, nil
}

// VerifyBlockToken decodes b and checks its signature with the key its
// KeyID names (key returns nil for an unknown one) and its expiry against
// now. The error says why a token is refused (ErrTokenMalformed,
// ErrTokenUnknownKey, ErrTokenBadMAC, ErrTokenExpired).
func VerifyBlockToken(b []byte, key func(id uint32) []byte, now time.Time) (BlockToken, error) {
	t, err := ParseBlockToken(b)
	if err != nil {
		return t, err
	}
	k := key(t.KeyID)
	if k == nil {
		return BlockToken{}, fmt.Errorf("%w: key %d", ErrTokenUnknownKey, t.KeyID)
	}
	mac := hmac.New(sha256.New, k)
	mac.Write(b[:len(b)-tokenMACLen])
	if !hmac.Equal(mac.Sum(nil), b[len(b)-tokenMACLen:]) {
		return BlockToken{}, fmt.Errorf("%w (key %d)", ErrTokenBadMAC, t.KeyID)
	}
	if now.UnixMilli() >= t.ExpiresUnixMs {
		return BlockToken{}, fmt.Errorf("%w at %s", ErrTokenExpired, time.UnixMilli(t.ExpiresUnixMs).UTC().Format(time.RFC3339))
	}
	return t, nil
}

// TokenRequest presents a block token on a connection (protocol version
// 2). Its typed header is empty; the token's bytes are the payload.
type TokenRequest struct{}

// TokenResponse acknowledges a TOKEN: the token was verified and its
// grant holds on the connection.
type TokenResponse struct{}

// Type is TypeToken.
func (*TokenRequest) Type() Type { return TypeToken }

// Type is TypeToken.
func (*TokenResponse) Type() Type     { return TypeToken }
func (*TokenRequest) response() bool  { return false }
func (*TokenResponse) response() bool { return true }

// AppendHeader appends the typed header of a TOKEN request.
func (*TokenRequest) AppendHeader(dst []byte) []byte { return dst }

// AppendHeader appends the typed header of a TOKEN response.
func (*TokenResponse) AppendHeader(dst []byte) []byte { return dst }
func (*TokenRequest) decode(*decoder)                 {}
func (*TokenResponse) decode(*decoder)                {}

func (*TokenRequest) check(payloadLen uint32) error {
	if payloadLen == 0 || payloadLen > MaxTokenLen {
		return Errorf(CodeInvalidArgument, "TOKEN of %d bytes (want 1..%d)", payloadLen, MaxTokenLen)
	}
	return nil
}

func (*TokenResponse) check(payloadLen uint32) error { return noPayload(TypeToken, payloadLen) }
