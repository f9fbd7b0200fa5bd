package wire

import (
	"bufio"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
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
//
// Pass records (SealedPassALPN, decision 0112). A large write goes as a
// key record, sealed under the connection's key, that names a fresh
// random key, an IV and how many bytes follow, and then as pass records
// sealed under that key alone. A pipeline leader that reads a chunk's
// payload so keeps the records (Capture) and sends them on to each
// follower as they came, after a key record of its own connection:
// every replica's bytes are sealed once, by the client, where each hop
// sealed them again. What the connection's sequence numbers guarded the
// key record's length guards: a pass record where none is due, or none
// where one is, ends the connection, and within a run each record's
// nonce is the key's IV xor its number, so that none can be dropped,
// replayed or moved.

// SealedALPN is the application protocol a data-path TLS client offers,
// and a data-path server accepts, for sealed records; SealedPassALPN adds
// pass records. Both ends prefer the latter.
const (
	SealedALPN     = "strato-sealed/1"
	SealedPassALPN = "strato-sealed/2"
)

const (
	sealedLabel      = "EXPORTER-strato-sealed-records"
	sealedRecordType = 0xA5 // not a TLS content type (20-24)
	sealedKeyType    = 0xA6 // a pass key, sealed under the connection's key
	sealedPassType   = 0xA7 // a pass record, sealed under the last pass key
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
	// passKeyLen is a key record's plaintext: the key, the IV, and the
	// length of the pass records' plaintext that follows (8 bytes).
	passKeyLen = sealedKeyLen + sealedIVLen + 8
)

// PassMin is the least a write to a connection with pass records must
// hold to go as a run of them.
const PassMin = 64 << 10

// sealedEpochRecords is how many records a key seals before the next one
// takes over: 2^17 records of 128 KiB, 16 GiB, well inside AES-GCM's limit
// for one key (RFC 8446 §5.5: 2^24.5 records of 16 KiB). Both ends count
// the records, so the change needs no message.
var sealedEpochRecords uint64 = 1 << 17

// errSealedAuth is a record that did not open: the bytes were changed,
// reordered or replayed on the way.
var errSealedAuth = errors.New("wire: sealed record failed authentication")

// errPassOrder is a pass record where none was due, or another record
// where one was: records were dropped or inserted on the way.
var errPassOrder = errors.New("wire: sealed records out of order")

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
	n := recordNonce(&d.iv, d.seq)
	d.seq++
	return d.aead, n, nil
}

// recordNonce returns record seq's nonce: iv with its last 8 bytes xored
// with seq, as in TLS 1.3.
func recordNonce(iv *[sealedIVLen]byte, seq uint64) []byte {
	var n [sealedIVLen]byte
	copy(n[:], iv[:])
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	for i := range s {
		n[sealedIVLen-8+i] ^= s[i]
	}
	return n[:]
}

// sealer holds a sealed connection's two directions and its read state.
type sealer struct {
	out, in sealDir
	werr    error // sticky: a record was sealed and not sent
	pass    bool  // the peer reads and writes pass records (SealedPassALPN)

	rpass passRun  // the pass records being read
	capt  *Capture // where they are kept (Capture)

	// Read state. A record being read survives a read that fails part way
	// (a deadline), in rbuf.
	rerr    error // sticky
	plain   []byte
	rbuf    []byte
	partial bool // rbuf[:got] holds part of the record whose header is hdr
	got     int
	hdr     [sealedHeaderLen]byte
}

// passRun is a run of pass records: their key, and what is left of them.
type passRun struct {
	aead cipher.AEAD
	iv   [sealedIVLen]byte
	seq  uint64
	left int64 // plaintext bytes
}

// start begins the run a key record's plaintext names.
func (r *passRun) start(k []byte) error {
	aead, err := aesgcm.New(k[:sealedKeyLen])
	if err != nil {
		return err
	}
	n := binary.BigEndian.Uint64(k[sealedKeyLen+sealedIVLen:])
	if n == 0 || n > 1<<40 {
		return fmt.Errorf("wire: a pass key for %d bytes", n)
	}
	r.aead, r.seq, r.left = aead, 0, int64(n)
	copy(r.iv[:], k[sealedKeyLen:])
	return nil
}

// nonce returns the nonce of the run's next record.
func (r *passRun) nonce() []byte {
	n := recordNonce(&r.iv, r.seq)
	r.seq++
	return n
}

// seal appends plain to dst as the run's next records.
func (r *passRun) seal(dst, plain []byte) []byte {
	for len(plain) > 0 {
		k := min(len(plain), sealedMaxPlain)
		dst = appendRecord(dst, sealedPassType, r.aead, r.nonce(), plain[:k])
		plain = plain[k:]
		r.left -= int64(k)
	}
	return dst
}

// appendRecord appends plain to dst as one record of type typ.
func appendRecord(dst []byte, typ byte, aead cipher.AEAD, nonce, plain []byte) []byte {
	var h [sealedHeaderLen]byte
	h[0] = typ
	body := len(plain) + sealedTagLen
	h[1], h[2], h[3] = byte(body>>16), byte(body>>8), byte(body)
	dst = slices.Grow(dst, sealedHeaderLen+body)
	dst = append(dst, h[:]...)
	return aead.Seal(dst, nonce, plain, h[:])
}

// SealedLen returns how many bytes n bytes of plaintext take as sealed
// records: what a Capture of an n-byte payload holds.
func SealedLen(n int) int {
	return n + (n+sealedMaxPlain-1)/sealedMaxPlain*(sealedHeaderLen+sealedTagLen)
}

// newPassKey returns a key record's plaintext for a run of n bytes under a
// fresh random key.
func newPassKey(n int) ([passKeyLen]byte, error) {
	var k [passKeyLen]byte
	if _, err := rand.Read(k[:sealedKeyLen+sealedIVLen]); err != nil {
		return k, err
	}
	binary.BigEndian.PutUint64(k[sealedKeyLen+sealedIVLen:], uint64(n))
	return k, nil
}

// sealKey appends to dst the key record of k, sealed under the
// connection's key.
func (s *sealer) sealKey(dst []byte, k *[passKeyLen]byte) ([]byte, error) {
	aead, nonce, err := s.out.next()
	if err != nil {
		return dst, err
	}
	return appendRecord(dst, sealedKeyType, aead, nonce, k[:]), nil
}

// beginPass appends to dst the key record of a run of n bytes under a
// fresh key, and returns the run, whose records follow it.
func (s *sealer) beginPass(dst []byte, n int) ([]byte, *passRun, error) {
	k, err := newPassKey(n)
	if err != nil {
		return dst, nil, err
	}
	run := new(passRun)
	if err := run.start(k[:]); err != nil {
		return dst, nil, err
	}
	dst, err = s.sealKey(dst, &k)
	return dst, run, err
}

// sealPass appends plain to dst as a run: its key record and its pass
// records.
func (s *sealer) sealPass(dst, plain []byte) ([]byte, error) {
	dst, run, err := s.beginPass(dst, len(plain))
	if err != nil {
		return dst, err
	}
	return run.seal(dst, plain), nil
}

// Capture keeps the pass records of one payload as they were read, so
// that they can be sent on as they came (TLSConn.Capture, Conn.ForwardChunk).
type Capture struct {
	key     [passKeyLen]byte
	records []byte
	n       int  // plaintext bytes in records
	keyed   bool // the run's key record was read while capturing
	bad     bool // something else was read: the capture cannot be sent on
}

// complete reports whether the capture holds one whole run of n bytes.
func (c *Capture) complete(n int) bool {
	return c != nil && c.keyed && !c.bad && c.n == n &&
		int64(n) == int64(binary.BigEndian.Uint64(c.key[sealedKeyLen+sealedIVLen:]))
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
	s := &sealer{out: dirs[0], in: dirs[1], pass: st.NegotiatedProtocol == SealedPassALPN}
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
		dst = appendRecord(dst, sealedRecordType, aead, nonce, plain[:k])
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
	for {
		n, err := s.readRecord(r, p)
		if err != nil || n > 0 {
			return n, err
		}
		// A key record: its run follows.
	}
}

// readRecord reads one record: a key record (0 bytes), or the plaintext of
// a sealed or pass record into p.
func (s *sealer) readRecord(r *bufio.Reader, p []byte) (int, error) {
	if !s.partial {
		h, err := r.Peek(sealedHeaderLen)
		if err != nil {
			if len(h) > 0 && h[0] != sealedRecordType && !s.passType(h[0]) {
				return 0, errTLSRecord
			}
			if errors.Is(err, io.EOF) && len(h) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		switch {
		case h[0] != sealedRecordType && !s.passType(h[0]):
			return 0, errTLSRecord
		case (h[0] == sealedPassType) != (s.rpass.left > 0):
			s.rerr = errPassOrder
			return 0, s.rerr
		}
		copy(s.hdr[:], h)
		_, _ = r.Discard(sealedHeaderLen)
		s.partial, s.got = true, 0
		if s.capt != nil {
			switch s.hdr[0] {
			case sealedPassType:
				s.capt.records = append(s.capt.records, s.hdr[:]...)
			case sealedRecordType:
				s.capt.bad = true
			}
		}
	}
	typ := s.hdr[0]
	n := int(s.hdr[1])<<16 | int(s.hdr[2])<<8 | int(s.hdr[3])
	if n < sealedTagLen || n > sealedMaxBody || (typ == sealedKeyType && n != passKeyLen+sealedTagLen) {
		s.rerr = fmt.Errorf("wire: sealed record of %d bytes (at most %d)", n, sealedMaxBody)
		return 0, s.rerr
	}
	capture := typ == sealedPassType && s.capt != nil
	// Straight into p when the record fits and none of it is buffered yet;
	// a captured one into the capture, to be opened from there into p.
	direct := !capture && typ != sealedKeyType && s.got == 0 && len(p) >= n
	var body []byte
	switch {
	case capture:
		c := s.capt
		c.records = slices.Grow(c.records, n-s.got)
		body = c.records[len(c.records)-s.got : len(c.records)-s.got+n]
	case direct:
		body = p[:n]
	default:
		body = s.buffer()[:n]
	}
	got, err := io.ReadFull(r, body[s.got:])
	s.got += got
	if capture {
		s.capt.records = s.capt.records[:len(s.capt.records)+got]
	}
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

	var (
		aead  cipher.AEAD
		nonce []byte
	)
	if typ == sealedPassType {
		aead, nonce = s.rpass.aead, s.rpass.nonce()
	} else if aead, nonce, err = s.in.next(); err != nil {
		s.rerr = err
		return 0, err
	}
	// In place; a captured record, kept as it came, into p when its
	// plaintext fits there.
	dst, intoP := body[:0], capture && len(p) >= n-sealedTagLen
	switch {
	case intoP:
		dst = p[:0]
	case capture:
		dst = s.buffer()[:0]
	}
	plain, err := aead.Open(dst, nonce, body, s.hdr[:])
	if err != nil {
		s.rerr = errSealedAuth
		return 0, s.rerr
	}
	switch typ {
	case sealedKeyType:
		if err := s.rpass.start(plain); err != nil {
			s.rerr = err
			return 0, err
		}
		if c := s.capt; c != nil {
			if c.keyed {
				c.bad = true // a second run: the capture holds more than one payload
			}
			c.keyed = true
			copy(c.key[:], plain)
		}
		return 0, nil
	case sealedPassType:
		if int64(len(plain)) > s.rpass.left {
			s.rerr = errPassOrder
			return 0, s.rerr
		}
		s.rpass.left -= int64(len(plain))
		if capture {
			s.capt.n += len(plain)
		}
	}
	if direct || intoP {
		return len(plain), nil
	}
	k := copy(p, plain)
	s.plain = plain[k:]
	return k, nil
}

// passType reports whether typ is a type of pass records' run the
// connection takes.
func (s *sealer) passType(typ byte) bool {
	return s.pass && (typ == sealedKeyType || typ == sealedPassType)
}
