package container

import (
	"context"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/strato-io/strato/checksum"
)

// ScanReport is the result of Scan and ScanMeta.
type ScanReport struct {
	Blocks int64
	// Bytes is the committed bytes of the blocks listed (Scan read them
	// all; ScanMeta only looked at the files' sizes).
	Bytes int64
	// Bad lists the blocks whose data is missing or does not match its
	// checksums, or whose rows do not decode.
	Bad []BadBlock
	// Orphans lists files of the chunks directory that no committed block
	// references (uncommitted writes of an OPEN container, or leftovers of
	// a crash). They are not errors.
	Orphans []string
}

// BadBlock is one block Scan found damaged.
type BadBlock struct {
	LocalID uint64
	Err     error
}

// ScanOptions tune Scan.
type ScanOptions struct {
	// Wait, when set, is called before n bytes are read, and may block
	// (a background scanner's bandwidth cap); an error ends the scan with
	// that error.
	Wait func(ctx context.Context, n int64) error
}

// Scan reads every committed block of the container and verifies it against
// its checksums. It does not change the container's state: the caller
// decides (MarkUnhealthy). A block deleted while Scan reads it (DeleteBlocks
// of a CLOSED container) may be reported bad: the caller checks that a bad
// block still exists (GetBlock) before it believes the report.
func (c *Container) Scan(ctx context.Context) (ScanReport, error) {
	return c.ScanWith(ctx, ScanOptions{})
}

// ScanWith is Scan with options.
func (c *Container) ScanWith(ctx context.Context, o ScanOptions) (ScanReport, error) {
	var rep ScanReport
	files := map[string]bool{}
	var buf []byte
	var werr error
	err := c.eachBlock(0, func(b Block) bool {
		if ctx.Err() != nil {
			return false
		}
		rep.Blocks++
		rep.Bytes += b.Length
		if c.layout == FilePerBlock {
			files[c.v.fs.PathBase(c.blockPath(b.LocalID))] = true
		}
		for _, ch := range b.Chunks {
			if c.layout == FilePerChunk {
				files[c.v.fs.PathBase(c.chunkPath(b.LocalID, ch.Offset))] = true
			}
			if o.Wait != nil {
				if werr = o.Wait(ctx, ch.Length); werr != nil {
					return false
				}
			}
			if int64(cap(buf)) < ch.Length {
				buf = make([]byte, ch.Length)
			}
			p := buf[:ch.Length]
			err := c.readRange(b.LocalID, ch.Offset, p, ch)
			if err == nil {
				if err = checksum.Verify(ch.Checksums, 0, p); err != nil {
					err = fmt.Errorf("%w: chunk at %d: %w", ErrChecksum, ch.Offset, err)
				}
			}
			if err != nil {
				rep.Bad = append(rep.Bad, BadBlock{LocalID: b.LocalID, Err: err})
				break
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return rep, err
	}
	rep.Orphans, err = c.orphans(files)
	return rep, err
}

// orphans lists the block and chunk files of the chunks directory not in
// referenced.
func (c *Container) orphans(referenced map[string]bool) ([]string, error) {
	names, err := c.v.fs.List(c.chunks)
	if err != nil {
		return nil, ioError("list chunks", err)
	}
	var out []string
	for _, n := range names {
		if !referenced[n] && (strings.HasSuffix(n, ".block") || strings.HasSuffix(n, ".chunk")) {
			out = append(out, n)
		}
	}
	return out, nil
}

// ScanMeta checks the container's rows against its files without reading
// the data: every row decodes, and every file a committed block needs
// exists and holds at least its committed bytes. It costs a stat per file,
// which is what a frequent metadata scan affords (Ozone's metadata
// scanner); Scan reads and verifies the bytes. Like Scan it changes
// nothing and reports files no row references as orphans.
func (c *Container) ScanMeta(ctx context.Context) (ScanReport, error) {
	var rep ScanReport
	files := map[string]bool{}
	lo := blockKey(c.id, 0)
	hi := append(containerPrefix(c.id), tagBlock+1)
	it, err := c.v.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return rep, ioError("list blocks", err)
	}
	defer func() { _ = it.Close() }()
	for ok := it.First(); ok && ctx.Err() == nil; ok = it.Next() {
		k := it.Key()
		if len(k) != 17 {
			rep.Bad = append(rep.Bad, BadBlock{Err: fmt.Errorf("%w: block key %x", ErrCorrupt, k)})
			continue
		}
		id := beUint64(k[9:])
		rep.Blocks++
		b, err := decodeBlockRow(id, it.Value())
		if err != nil {
			rep.Bad = append(rep.Bad, BadBlock{LocalID: id, Err: err})
			continue
		}
		rep.Bytes += b.Length
		if err := c.statBlock(&b, files); err != nil {
			rep.Bad = append(rep.Bad, BadBlock{LocalID: id, Err: err})
		}
	}
	if err := it.Error(); err != nil {
		return rep, ioError("list blocks", err)
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.Orphans, err = c.orphans(files)
	return rep, err
}

// statBlock checks that b's files exist and are long enough, adding their
// names to files.
func (c *Container) statBlock(b *Block, files map[string]bool) error {
	need := map[string]int64{} // path → bytes it must hold
	for _, ch := range b.Chunks {
		switch c.layout {
		case FilePerBlock:
			p := c.blockPath(b.LocalID)
			need[p] = max(need[p], ch.Offset+ch.Length)
		case FilePerChunk:
			need[c.chunkPath(b.LocalID, ch.Offset)] = ch.Length
		}
	}
	for p, n := range need {
		files[c.v.fs.PathBase(p)] = true
		st, err := c.v.fs.Stat(p)
		if err != nil {
			if isNotExist(err) {
				return fmt.Errorf("%w: block %d: file %s is missing", ErrCorrupt, b.LocalID, c.v.fs.PathBase(p))
			}
			return ioError(fmt.Sprintf("stat block %d", b.LocalID), err)
		}
		if st.Size() < n {
			return fmt.Errorf("%w: block %d: file %s holds %d bytes, its row %d", ErrCorrupt, b.LocalID, c.v.fs.PathBase(p), st.Size(), n)
		}
	}
	return nil
}
