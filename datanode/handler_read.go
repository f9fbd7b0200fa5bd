package datanode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/wire"
)

// readChunk answers a READ_CHUNK. With OS files and a TCP connection, the
// payload goes from the block files to the socket with sendfile: the
// response header is written, then each extent is sent by
// io.Copy(conn, io.LimitReader(file, n)) after a seek (which the runtime
// turns into sendfile; an io.SectionReader would not be). A peer's read
// (another datanode rebuilding an erasure-coded container from this one's
// replica), on TLS connections too, reads each byte once: where the volume
// writes with O_DIRECT, its extents are read with O_DIRECT into a buffer
// and written from there (copyDirect), so that a rebuild neither fills the
// page cache with cold bytes nor evicts the hot ones. Otherwise (a TLS
// connection, whose bytes must be encrypted in user space, or files not of
// the OS) the range is read into memory and written.
//
// An error returned means no byte of the response was written; once the
// header is out, a failure breaks the connection instead.
func (c *conn) readChunk(ctx context.Context, h wire.FrameHeader, m *wire.ReadChunkRequest) error {
	ct, err := c.s.store.Container(m.Block.ContainerID)
	if err != nil {
		return err
	}
	osFiles := c.s.store.osFiles()
	peerDirect := c.peer.Load() && osFiles && ct.DirectIO()
	if !peerDirect && (c.tcp == nil || !osFiles || c.s.opts.DisableSendfile) {
		rr, err := ct.ReadChunk(m.Block.LocalID, m.Offset, int64(m.Length))
		if err != nil {
			return err
		}
		resp, _, err := readResponse(m, rr.Extents)
		if err != nil {
			return err
		}
		if err := c.w.WriteMessage(ctx, h.RequestID, resp, rr.Data); err != nil {
			c.writeFailed(h, err)
			return nil
		}
		c.s.m.bytesOut.Add(int64(len(rr.Data)))
		return nil
	}

	ext, files, err := openRange(ct, m.Block, m.Offset, m.Length)
	if err != nil {
		return err
	}
	defer files.close()
	resp, total, err := readResponse(m, ext)
	if err != nil {
		return err
	}
	// Should a file refuse O_DIRECT, the copy below is sendfile on TCP, and
	// a copy through user space under TLS.
	direct := peerDirect && files.setDirect()
	err = c.w.WriteMessageFunc(ctx, h.RequestID, resp, total, func(w io.Writer) (int64, error) {
		if direct {
			return copyDirect(w, ext, files)
		}
		var sent int64
		for i, e := range ext {
			f := files.of(i)
			if _, err := f.Seek(e.FileOffset, io.SeekStart); err != nil {
				return sent, err
			}
			n, err := io.Copy(w, io.LimitReader(f, e.Length))
			sent += n
			if err != nil {
				return sent, err
			}
			if n != e.Length {
				return sent, fmt.Errorf("block %v: file %s ended %d bytes early", m.Block, e.Path, e.Length-n)
			}
		}
		return sent, nil
	})
	if err != nil {
		c.writeFailed(h, err)
		return nil
	}
	c.s.m.bytesOut.Add(total)
	return nil
}

// readResponse builds the typed header of a read's response from its
// extents and returns the payload length.
func readResponse(m *wire.ReadChunkRequest, ext []container.Extent) (*wire.ReadChunkResponse, int64, error) {
	resp := &wire.ReadChunkResponse{Offset: ext[0].BlockOffset, Chunks: make([]wire.Chunk, len(ext))}
	var total int64
	size := 12
	for i, e := range ext {
		resp.Chunks[i] = chunkRecord(e)
		total += e.Length
		size += 21 + len(resp.Chunks[i].Checksums.Sums)
	}
	if total > wire.MaxResponsePayload || size > wire.MaxHeaderLen {
		return nil, 0, wire.Errorf(wire.CodeTooLarge, "read of %d bytes at %d of block %v: widened to %d bytes in %d pieces, over a response's limits; read less", m.Length, m.Offset, m.Block, total, len(ext))
	}
	return resp, total, nil
}

// chunkRecord is the chunk record describing an extent.
func chunkRecord(e container.Extent) wire.Chunk {
	sums := e.Checksums
	if sums.Type == checksum.NONE {
		sums = checksum.Data{}
	}
	return wire.Chunk{Offset: e.BlockOffset, Length: uint32(e.Length), Checksums: sums}
}

// openRange maps a range of a block to its extents and opens their files
// (openExtents).
func openRange(ct *container.Container, b wire.BlockID, off int64, n uint32) ([]container.Extent, *extentFiles, error) {
	ext, err := ct.Extents(b.LocalID, off, int64(n))
	if err != nil {
		return nil, nil, err
	}
	files, err := openExtents(b, ext)
	if err != nil {
		return nil, nil, err
	}
	return ext, files, nil
}

// extentFiles are the files of a range's extents, each opened once, in the
// order the extents first use them; extent i is in files[index[i]].
type extentFiles struct {
	files []*os.File
	infos []os.FileInfo // stat(2) of each file
	index []int
}

// of returns the file of extent i.
func (x *extentFiles) of(i int) *os.File { return x.files[x.index[i]] }

func (x *extentFiles) close() {
	for _, f := range x.files {
		f.Close()
	}
}

// setDirect turns O_DIRECT on for every file's reads; false (and every
// file as it was) if a file refuses.
func (x *extentFiles) setDirect() bool {
	for k, f := range x.files {
		if container.SetDirectReads(f, true) != nil {
			for _, g := range x.files[:k] {
				_ = container.SetDirectReads(g, false)
			}
			return false
		}
	}
	return true
}

// copyDirect writes the extents' bytes to w, read from their files (set
// to direct reads: setDirect) in pieces of at most container.DirectPiece bytes
// through one pooled, aligned buffer.
func copyDirect(w io.Writer, ext []container.Extent, files *extentFiles) (int64, error) {
	bp := getBuffer(container.DirectPiece)
	defer putBuffer(bp)
	var sent int64
	for i, e := range ext {
		n, err := container.CopyDirect(w, files.of(i), e.FileOffset, e.Length, (*bp)[:container.DirectPiece])
		sent += n
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// openExtents opens the files of the extents and checks that each holds
// its extents, so that a file shortened by a crash is reported as CORRUPT
// before the response starts.
func openExtents(b wire.BlockID, ext []container.Extent) (*extentFiles, error) {
	x := &extentFiles{index: make([]int, len(ext))}
	byPath := map[string]int{}
	var ends []int64 // what each file must hold
	for i, e := range ext {
		k, ok := byPath[e.Path]
		if !ok {
			f, err := os.Open(e.Path)
			if err != nil {
				x.close()
				if errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("%w: block %v: a file of the block is missing", container.ErrCorrupt, b)
				}
				return nil, fmt.Errorf("datanode: open block %v: %w", b, err)
			}
			k = len(x.files)
			byPath[e.Path] = k
			x.files = append(x.files, f)
			ends = append(ends, 0)
		}
		x.index[i] = k
		ends[k] = max(ends[k], e.FileOffset+e.Length)
	}
	for k, f := range x.files {
		fi, err := f.Stat()
		if err != nil {
			x.close()
			return nil, fmt.Errorf("datanode: stat block %v: %w", b, err)
		}
		x.infos = append(x.infos, fi)
		if fi.Size() < ends[k] {
			x.close()
			return nil, fmt.Errorf("%w: block %v: file ends at %d, before %d", container.ErrCorrupt, b, fi.Size(), ends[k])
		}
	}
	return x, nil
}

// readLocal answers a READ_LOCAL, on the local socket only: the extents of
// the range (as a READ_CHUNK's, with their places in the files) and the
// files themselves, whose descriptors go with the response. The client
// reads and verifies the bytes; nothing of them passes through here.
func (c *conn) readLocal(ctx context.Context, h wire.FrameHeader, m *wire.ReadLocalRequest) error {
	if !c.local {
		return wire.Errorf(wire.CodeUnsupportedType, "READ_LOCAL is served on the datanode's local socket only")
	}
	ext, files, total, err := c.localRange(h.Type, m.Block, m.Offset, m.Length)
	if err != nil {
		return err
	}
	defer files.close()
	resp := &wire.ReadLocalResponse{FileCount: uint8(len(files.files)), Extents: ext}
	return c.localSent(h, c.w.WriteMessageFiles(ctx, h.RequestID, resp, files.files), total)
}

// readLocalPaths answers a READ_LOCAL_PATHS from this host (the local
// socket, or TCP from a loopback address; TLS or not): READ_LOCAL's
// extents, and the files' paths with their device and inode numbers, which
// the client opens and checks itself.
func (c *conn) readLocalPaths(ctx context.Context, h wire.FrameHeader, m *wire.ReadLocalPathsRequest) error {
	if !c.sameHost || !c.s.opts.LocalReads {
		return wire.Errorf(wire.CodeUnsupportedType, "READ_LOCAL_PATHS is served to clients on the datanode's host only, with local reads on")
	}
	ext, files, total, err := c.localRange(h.Type, m.Block, m.Offset, m.Length)
	if err != nil {
		return err
	}
	defer files.close()
	resp := &wire.ReadLocalPathsResponse{Extents: ext, Files: make([]wire.LocalFile, len(files.files))}
	for i, f := range files.files {
		lf, err := wire.LocalFileOf(f.Name(), files.infos[i])
		if err != nil {
			return wire.Errorf(wire.CodeUnsupportedType, "READ_LOCAL_PATHS: %v", err)
		}
		resp.Files[i] = lf
	}
	return c.localSent(h, c.w.WriteMessage(ctx, h.RequestID, resp, nil), total)
}

// localSent ends a local read whose response was written with error err:
// counted when it went out; an *wire.Error (nothing written: a typed header
// over the limit) goes back to the caller; otherwise the connection is
// done for.
func (c *conn) localSent(h wire.FrameHeader, err error, total int64) error {
	if err != nil {
		if errors.As(err, new(*wire.Error)) {
			return err
		}
		c.writeFailed(h, err)
		return nil
	}
	c.s.m.localReads.Add(1)
	c.s.m.localBytes.Add(total)
	return nil
}

// localRange opens the files of a range for a local read and makes its
// extent records; total is the bytes they hold.
func (c *conn) localRange(t wire.Type, b wire.BlockID, off int64, n uint32) ([]wire.LocalExtent, *extentFiles, int64, error) {
	ct, err := c.s.store.Container(b.ContainerID)
	if err != nil {
		return nil, nil, 0, err
	}
	ext, files, err := openRange(ct, b, off, n)
	if err != nil {
		return nil, nil, 0, err
	}
	if len(files.files) > wire.MaxLocalFiles {
		files.close()
		return nil, nil, 0, wire.Errorf(wire.CodeTooLarge, "%v of %d bytes at %d of block %v: in %d files, over %d; read less", t, n, off, b, len(files.files), wire.MaxLocalFiles)
	}
	out := make([]wire.LocalExtent, len(ext))
	var total int64
	for i, e := range ext {
		out[i] = wire.LocalExtent{Chunk: chunkRecord(e), File: uint8(files.index[i]), FileOffset: e.FileOffset}
		total += e.Length
	}
	return out, files, total, nil
}

// listBlocks answers a LIST_BLOCKS: a page of the container's committed
// block records, as many as the limit asks and a response's payload holds
// (at least one, if any remain).
func (s *Server) listBlocks(m *wire.ListBlocksRequest) (*wire.ListBlocksResponse, error) {
	c, err := s.store.Container(m.ContainerID)
	if err != nil {
		return nil, err
	}
	info := c.Info()
	// One block more than asked says whether more remain.
	page, err := c.ListBlocks(m.AfterLocalID, int(m.Limit)+1)
	if err != nil {
		return nil, err
	}
	resp := &wire.ListBlocksResponse{Layout: uint8(c.Layout()), BCSID: info.BCSID, ReplicaIndex: uint8(c.ReplicaIndex())}
	size := 0
	for i, b := range page {
		if i == int(m.Limit) {
			resp.More = true
			break
		}
		ib := wire.ImportBlock{LocalID: b.LocalID, Length: b.Length, BCSID: b.BCSID, Chunks: make([]wire.Chunk, len(b.Chunks))}
		for j, ch := range b.Chunks {
			ib.Chunks[j] = wire.Chunk{Offset: ch.Offset, Length: uint32(ch.Length), Checksums: ch.Checksums}
		}
		n := wire.BlockRecordLen(ib)
		if size+n > wire.MaxResponsePayload {
			if i == 0 {
				return nil, wire.Errorf(wire.CodeTooLarge, "LIST_BLOCKS %d: the record of block %d takes %d bytes, over a response's payload", m.ContainerID, b.LocalID, n)
			}
			resp.More = true
			break
		}
		size += n
		resp.Blocks = append(resp.Blocks, ib)
	}
	return resp, nil
}
