package container

import (
	"fmt"
	"slices"

	"github.com/strato-io/strato/checksum"
)

// streamFile verifies one file of an import as its bytes arrive in order:
// a source sends each file front to back, so the checksum windows can be
// checked straight from the received buffers, and Commit need not read the
// file back. Bytes that end inside a window wait in carry (at most one
// window) for the rest of it. A file written out of order, or past its
// chunks, is left for Commit to read back and verify.
type streamFile struct {
	chunks   []fileChunk // ordered by fileOff, contiguous from 0
	next     int         // the first chunk not verified to its end
	verified int64       // file bytes verified: a window boundary of chunks[next]
	carry    []byte      // the bytes after verified, short of a window
	broken   bool        // out of order: Commit verifies the file
}

type fileChunk struct {
	fileOff, length int64
	sums            checksum.Data
}

// done reports whether every chunk of the file was verified.
func (sf *streamFile) done() bool { return !sf.broken && sf.next == len(sf.chunks) }

// window returns the size of the checksum windows of c.
func (c *fileChunk) window() int64 {
	if c.sums.BytesPerChecksum == 0 {
		return c.length
	}
	return int64(c.sums.BytesPerChecksum)
}

// feed takes p, written at fileOffset. It returns a checksum error (which
// fails the import) for a bad window; anything else unexpected only
// leaves the file to Commit.
func (sf *streamFile) feed(fileOffset int64, p []byte) error {
	if sf.broken {
		return nil
	}
	if fileOffset != sf.verified+int64(len(sf.carry)) {
		sf.broken, sf.carry = true, nil
		return nil
	}
	for len(p) > 0 {
		if sf.next == len(sf.chunks) {
			sf.broken, sf.carry = true, nil // past the last chunk
			return nil
		}
		c := &sf.chunks[sf.next]
		end, w := c.fileOff+c.length, c.window()
		if c.sums.Type == checksum.NONE { // nothing to check, nothing to keep
			n := min(int64(len(p)), end-sf.verified)
			sf.verified += n
			p = p[n:]
			if sf.verified == end {
				sf.next++
			}
			continue
		}
		var run []byte // whole windows from sf.verified
		if len(sf.carry) > 0 {
			want := min(w, end-sf.verified) - int64(len(sf.carry))
			take := min(want, int64(len(p)))
			sf.carry = append(sf.carry, p[:take]...)
			p = p[take:]
			if take < want {
				return nil
			}
			run = sf.carry
		} else {
			n := min(int64(len(p)), end-sf.verified)
			if sf.verified+n < end {
				n -= (sf.verified + n - c.fileOff) % w // stop at a window boundary
			}
			if n == 0 {
				sf.carry = append(sf.carry, p...)
				return nil
			}
			run, p = p[:n], p[n:]
		}
		if err := checksum.Verify(c.sums, sf.verified-c.fileOff, run); err != nil {
			return err
		}
		sf.verified += int64(len(run))
		sf.carry = sf.carry[:0]
		if sf.verified == end {
			sf.next++
		}
	}
	return nil
}

// Expect tells the import the blocks Commit will get, before their data,
// so that WriteAt verifies each file's bytes as they arrive in order and
// Commit does not read them back. Without it, or for a file written out of
// order, Commit reads the files back and verifies them; a bad window seen
// on arrival fails WriteAt with ErrChecksum.
func (im *Import) Expect(blocks []Block) {
	im.expected = blocks
	im.streams = map[string]*streamFile{}
	for _, b := range blocks {
		for _, ch := range b.Chunks {
			path, fileOff := im.blockFile(b.LocalID, ch.Offset)
			sf := im.streams[path]
			if sf == nil {
				sf = &streamFile{}
				im.streams[path] = sf
			}
			sf.chunks = append(sf.chunks, fileChunk{fileOff: fileOff, length: ch.Length, sums: ch.Checksums})
		}
	}
	for _, sf := range im.streams {
		ok := slices.IsSortedFunc(sf.chunks, func(a, b fileChunk) int { return int(a.fileOff - b.fileOff) })
		var at int64
		for _, c := range sf.chunks {
			ok = ok && c.fileOff == at && c.length > 0
			at += c.length
		}
		sf.broken = !ok // malformed blocks: Commit reports them
	}
}

// verifiedOnArrival reports whether the file at path was verified whole as
// it arrived, for the blocks Commit was given.
func (im *Import) verifiedOnArrival(path string, blocks []Block) bool {
	if im.streams == nil || !sameBlocks(im.expected, blocks) {
		return false
	}
	sf := im.streams[path]
	return sf != nil && sf.done()
}

func sameBlocks(a, b []Block) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] {
		return true
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.LocalID != y.LocalID || x.Length != y.Length || x.BCSID != y.BCSID || len(x.Chunks) != len(y.Chunks) {
			return false
		}
		for j := range x.Chunks {
			p, q := &x.Chunks[j], &y.Chunks[j]
			if p.Offset != q.Offset || p.Length != q.Length || p.Checksums.Type != q.Checksums.Type ||
				p.Checksums.BytesPerChecksum != q.Checksums.BytesPerChecksum || string(p.Checksums.Sums) != string(q.Checksums.Sums) {
				return false
			}
		}
	}
	return true
}

// checksumError wraps a mismatch found on arrival.
func (im *Import) checksumError(localID uint64, err error) error {
	return fmt.Errorf("%w: container %d, block %d: %w", ErrChecksum, im.id, localID, err)
}
