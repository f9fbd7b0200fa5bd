package wire

import (
	"bufio"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/strato-io/strato/internal/aesgcm"
)

// Sealed records (decision 0109). crypto/tls copies every byte it sends
// into a record buffer of at most 16 KiB, and every byte it receives
// through its raw input and out of its plaintext buffer: with the data
// path's own buffering, three copies a hop beside the cipher. When both
// ends of a data-path connection offer SealedALPN in the TLS handshake,
// they keep TLS for what it is there for (the certificates, the key
// exchange) and, once the handshake is done, frame the stream themselves:
// records of up to 128 KiB, AES-128-GCM under keys derived from secrets
// exported from the TLS session (RFC 8446 §7.5), a new key every 16 GiB,
// each record's nonce its direction's IV xor its sequence number as in
// TLS 1.3, its header the additional data. A sender
// seals straight from the caller's bytes into the buffer it sends; a
// receiver reads a record into the caller's buffer when it fits and opens
// it there. A record that fails to open, arrives out of order or is
// replayed ends the connection, as in TLS. A peer that does not offer it
// (an older strato, the Java connector) gets plain TLS.

// SealedALPN is the application protocol a data-path TLS client offers,
// and a data-path server accepts, for sealed records.
const SealedALPN = "strato-sealed/1"

const (
	sealedLabel      = "EXPORTER-strato-sealed-records"
	sealedRecordType = 0xA5 // not a TLS content type (20-24)
	sealedHeaderLen  = 4    // type, 24-bit length of the sealed body
	sealedTagLen     = 16
	// sealedMaxBody is the most a record's body holds: 128 KiB, the pieces
	// a datanode reads a chunk in to verify it while it is in the CPU's
	// cache, so that each record is read into the chunk and opened there.
	sealedMaxBody   = 128 << 10
	sealedMaxPlain  = sealedMaxBody - sealedTagLen
	sealedKeyLen    = 16 // AES-128
	sealedSecretLen = 32 // each direction's, from which its keys are derived
	sealedIVLen     = 12
)

// sealedEpochRecords is how many records a key seals before the next one
// takes over: 2^17 records of 128 KiB, 16 GiB, well inside AES-GCM's limit
// for one key (RFC 8446 §5.5: 2^24.5 records of 16 KiB). Both ends count
// the records, so the change needs no message.
var sealedEpochRecords uint64 = 1 << 17

// errSealedAuth is a record that did not open: the bytes were changed,
// reordered or replayed on the way.
var errSealedAuth = errors.New("wire: sealed record failed authentication")

// sealDir is one direction of a sealed connection.
type sealDir struct {
	secret [sealedSecretLen]byte
	iv     [sealedIVLen]byte
	seq    uint64
	aead   cipher.AEAD // the key of the epoch seq is in
	epoch  uint64
}

// next returns the AEAD and nonce of the direction's next record.
func (d *sealDir) next() (cipher.AEAD, []byte, error) {
	if e := d.seq / sealedEpochRecords; d.aead == nil || e != d.epoch {
		key, err := hkdf.Expand(sha256.New, d.secret[:], fmt.Sprintf("strato sealed key %d", e), sealedKeyLen)
		if err != nil {
			return nil, nil, err
		}
		if d.aead, err = aesgcm.New(key); err != nil {
			return nil, nil, err
		}
		d.epoch = e
	}
	var n [sealedIVLen]byte
	copy(n[:], d.iv[:])
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], d.seq)
	for i := range s {
		n[sealedIVLen-8+i] ^= s[i]
	}
	d.seq++
	return d.aead, n[:], nil
}

// sealer holds a sealed connection's two directions and its read state.
type sealer struct {
	out, in sealDir
	werr    error // sticky: a record was sealed and not sent

	// Read state. A record being read survives a read that fails part way
	// (a deadline), in rbuf.
	rerr    error // sticky
	plain   []byte
	rbuf    []byte
	partial bool // rbuf[:got] holds part of the record whose header is hdr
	got     int
	hdr     [sealedHeaderLen]byte
}

// newSealer derives a sealed connection's secrets from its TLS session.
// The client writes with the first secret and IV, the server with the
// second.
func newSealer(st tls.ConnectionState, server bool) (*sealer, error) {
	km, err := st.ExportKeyingMaterial(sealedLabel, nil, 2*(sealedSecretLen+sealedIVLen))
	if err != nil {
		return nil, fmt.Errorf("wire: sealed records: %w", err)
	}
	var dirs [2]sealDir
	for i := range dirs {
		copy(dirs[i].secret[:], km[i*sealedSecretLen:])
		copy(dirs[i].iv[:], km[2*sealedSecretLen+i*sealedIVLen:])
	}
	s := &sealer{out: dirs[0], in: dirs[1]}
	if server {
		s.out, s.in = dirs[1], dirs[0]
	}
	return s, nil
}

// seal appends plain, as sealed records, to dst.
func (s *sealer) seal(dst, plain []byte) ([]byte, error) {
	for len(plain) > 0 {
		aead, nonce, err := s.out.next()
		if err != nil {
			return dst, err
		}
		k := min(len(plain), sealedMaxPlain)
		var h [sealedHeaderLen]byte
		h[0] = sealedRecordType
		body := k + sealedTagLen
		h[1], h[2], h[3] = byte(body>>16), byte(body>>8), byte(body)
		dst = slices.Grow(dst, sealedHeaderLen+body)
		dst = append(dst, h[:]...)
		dst = aead.Seal(dst, nonce, plain[:k], h[:])
		plain = plain[k:]
	}
	return dst, nil
}

// errTLSRecord says the next bytes are a TLS record, not a sealed one:
// the peer's TLS stack speaking after the handshake (an alert).
var errTLSRecord = errors.New("wire: a TLS record where a sealed record was due")

// buffer returns the connection's record buffer, made on first use: only a
// record that does not fit the caller's buffer needs it.
func (s *sealer) buffer() []byte {
	if s.rbuf == nil {
		s.rbuf = make([]byte, sealedMaxBody)
	}
	return s.rbuf
}

// read reads plaintext into p from the sealed records r delivers.
func (s *sealer) read(r *bufio.Reader, p []byte) (int, error) {
	if len(s.plain) > 0 {
		n := copy(p, s.plain)
		s.plain = s.plain[n:]
		return n, nil
	}
	if s.rerr != nil {
		return 0, s.rerr
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !s.partial {
		h, err := r.Peek(sealedHeaderLen)
		if err != nil {
			if len(h) > 0 && h[0] != sealedRecordType {
				return 0, errTLSRecord
			}
			if errors.Is(err, io.EOF) && len(h) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if h[0] != sealedRecordType {
			return 0, errTLSRecord
		}
		copy(s.hdr[:], h)
		_, _ = r.Discard(sealedHeaderLen)
		s.partial, s.got = true, 0
	}
	n := int(s.hdr[1])<<16 | int(s.hdr[2])<<8 | int(s.hdr[3])
	if n < sealedTagLen || n > sealedMaxBody {
		s.rerr = fmt.Errorf("wire: sealed record of %d bytes (at most %d)", n, sealedMaxBody)
		return 0, s.rerr
	}
	// Straight into p when the record fits and none of it is buffered yet.
	direct := s.got == 0 && len(p) >= n
	var body []byte
	if direct {
		body = p[:n]
	} else {
		body = s.buffer()[:n]
	}
	got, err := io.ReadFull(r, body[s.got:])
	s.got += got
	if err != nil {
		if direct && s.got > 0 {
			copy(s.buffer(), body[:s.got])
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	s.partial = false
	aead, nonce, err := s.in.next()
	if err != nil {
		s.rerr = err
		return 0, err
	}
	plain, err := aead.Open(body[:0], nonce, body, s.hdr[:])
	if err != nil {
		s.rerr = errSealedAuth
		return 0, s.rerr
	}
	if direct {
		return len(plain), nil
	}
	k := copy(p, plain)
	s.plain = plain[k:]
	return k, nil
}
