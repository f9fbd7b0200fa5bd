package s3

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"strconv"
	"strings"
)

// chunkedReader decodes an aws-chunked body (Content-Encoding: aws-chunked,
// x-amz-content-sha256 STREAMING-*): chunks of "hex-size[;chunk-signature=
// sig]\r\n" + data + "\r\n", a last chunk of size 0, then trailer lines
// "name:value\r\n" (with x-amz-trailer-signature when signed) and an empty
// line. With signatures, each chunk's is checked when the chunk ends,
// chained from the request's seed signature; a bad one fails the read
// (SignatureDoesNotMatch), so the caller never commits what it read.
type chunkedReader struct {
	br       *bufio.Reader
	signed   bool
	trailer  bool
	key      []byte // signing key
	prefix   string // "date\nscope\n" of the string to sign
	prevSig  string
	left     int64 // bytes of the current chunk still to read
	chunkSig string
	h        hash.Hash // of the current chunk (signed)
	trailers func(name, value string) error
	done     bool
	small    bool // the last chunk was shorter than minChunkSize
	err      error
}

// maxChunkSize bounds one chunk (the SDKs send 64 KiB to 1 MiB; a size is
// a counter, never an allocation, but a bound keeps garbage out).
const maxChunkSize = 1 << 30

// maxLine bounds a chunk header or trailer line.
const maxLine = 4096

func newChunkedReader(r io.Reader, signed, trailer bool, key []byte, amzDate, scope, seed string,
	trailers func(name, value string) error) *chunkedReader {
	return &chunkedReader{br: bufio.NewReaderSize(r, 64<<10), signed: signed, trailer: trailer, key: key,
		prefix: amzDate + "\n" + scope + "\n", prevSig: seed, h: sha256.New(), trailers: trailers}
}

// AWS answers a body that is not well-formed aws-chunked (a bad size, a
// delimiter or chunk-signature missing, a short signature, an early end)
// with IncompleteBody, worded so.
var (
	errChunk    = s3err("IncompleteBody", 400, "The request body terminated unexpectedly")
	errChunkEOF = s3err("IncompleteBody", 400, "The request body terminated unexpectedly") // ended early
)

// minChunkSize is the least size of a chunk but the last data chunk, as
// AWS requires it.
const minChunkSize = 8192

// readLine reads a CRLF-terminated line (without it).
func (c *chunkedReader) readLine() (string, error) {
	var line []byte
	for {
		frag, err := c.br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxLine {
			return "", errChunk
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				return "", errChunk // a line cut short
			}
			return "", errChunkEOF
		}
		return "", err
	}
	s, ok := strings.CutSuffix(string(line), "\r\n")
	if !ok || strings.ContainsRune(s, '\r') {
		return "", errChunk // a line ends with CRLF, and holds no other CR
	}
	return s, nil
}

// startChunk reads a chunk header.
func (c *chunkedReader) startChunk() error {
	line, err := c.readLine()
	if err != nil {
		return err
	}
	size, ext, _ := strings.Cut(line, ";")
	n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
	if err != nil || n < 0 || n > maxChunkSize {
		return errChunk
	}
	c.chunkSig = ""
	if c.signed {
		sig, ok := strings.CutPrefix(ext, "chunk-signature=")
		if !ok || len(sig) != sha256.Size*2 {
			return errChunk
		}
		c.chunkSig = sig
	}
	if n > 0 && c.small {
		return ErrInvalidChunkSizeError // a chunk before this one was short
	}
	c.small = n < minChunkSize
	c.left = n
	c.h.Reset()
	if n == 0 {
		if err := c.endChunk(); err != nil {
			return err
		}
		return c.finish()
	}
	return nil
}

// endChunk checks the signature of the chunk just read.
func (c *chunkedReader) endChunk() error {
	if !c.signed {
		return nil
	}
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.prefix + c.prevSig + "\n" + emptySHA256 + "\n" + hex.EncodeToString(c.h.Sum(nil))
	want := hmacSHA256(c.key, sts)
	if !signatureMatches(want, c.chunkSig) {
		return errf(ErrSignatureDoesNotMatch, "a chunk's signature does not match")
	}
	c.prevSig = c.chunkSig
	return nil
}

// finish reads the trailers (or the final CRLF) after the last chunk.
func (c *chunkedReader) finish() error {
	c.done = true
	var canon strings.Builder
	var trailerSig string
	for {
		line, err := c.readLine()
		if err != nil {
			if err == errChunkEOF && !c.trailer && canon.Len() == 0 { //nolint:errorlint // our own value
				return nil // a body may end right after the last chunk's header
			}
			return err
		}
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !c.trailer {
			return ErrMalformedTrailer
		}
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if name == "x-amz-trailer-signature" {
			if len(value) != sha256.Size*2 {
				return errChunk
			}
			trailerSig = value
			continue
		}
		if c.signed && canon.Len() > 0 {
			return errChunk // after its one trailer, a signed stream has only the trailer's signature
		}
		canon.WriteString(name + ":" + value + "\n")
		if c.trailers != nil {
			if err := c.trailers(name, value); err != nil {
				return err
			}
		}
	}
	if c.trailer && canon.Len() == 0 {
		return ErrMalformedTrailer // the trailer x-amz-trailer names is missing
	}
	if c.signed && c.trailer {
		if trailerSig == "" {
			return errf(ErrSignatureDoesNotMatch, "the trailer has no x-amz-trailer-signature")
		}
		sts := "AWS4-HMAC-SHA256-TRAILER\n" + c.prefix + c.prevSig + "\n" + sha256Hex([]byte(canon.String()))
		if !signatureMatches(hmacSHA256(c.key, sts), trailerSig) {
			return errf(ErrSignatureDoesNotMatch, "the trailer's signature does not match")
		}
	}
	return nil
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for c.left == 0 {
		if c.done {
			c.err = io.EOF
			return 0, io.EOF
		}
		if err := c.startChunk(); err != nil {
			c.err = err
			return 0, err
		}
		if c.done {
			c.err = io.EOF
			return 0, io.EOF
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	if c.signed {
		c.h.Write(p[:n])
	}
	if err != nil && (!errors.Is(err, io.EOF) || c.left != 0) {
		if errors.Is(err, io.EOF) {
			err = errChunkEOF
		}
		c.err = err
		return n, err
	}
	if c.left == 0 {
		if line, err := c.readLine(); err != nil || line != "" {
			if err == nil {
				err = errChunk
			}
			c.err = err
			return n, err
		}
		if err := c.endChunk(); err != nil {
			c.err = err
			return n, err
		}
	}
	return n, nil
}
