package replication

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// Reconstruction of a lost replica index of an erasure coded container
// (meta's ReconstructECContainerCommand, docs/ec.md). The datanode meta
// chose holds no replica of the container; it lists the blocks of the
// surviving indexes (LIST_BLOCKS), reads each block group's cells from d
// of them, a few stripes at a time (READ_CHUNK, every byte verified against
// its checksums: d bytes read per byte rebuilt), decodes the lost member's
// cells, and writes them into a container import, which it commits CLOSED with the
// index. Memory is bounded by a batch of stripes, whatever the block or
// container size. Any error aborts the import: nothing is kept.

// Errors of a reconstruction, classified with errors.Is.
var (
	// ErrInconsistentGroup: the surviving members' block lengths fit no
	// block group length (a member's block is not what the writer left).
	ErrInconsistentGroup = errors.New("replication: block group lengths are inconsistent")
	// ErrTooFewSources: fewer than d surviving members could be listed.
	ErrTooFewSources = errors.New("replication: too few surviving members to rebuild from")
)

// rebuildStripes is how many stripes of a group are read and encoded at
// once: the client writer's batch.
const rebuildStripes = 4

// maxRebuildChunk bounds the chunks of a rebuilt block (the client's).
const maxRebuildChunk = 4 << 20

// rebuildIOTimeout bounds each request to a source: a source that stops
// answering fails its reads (its member is then lost to the group) rather
// than hold the reconstruction, its stream and the container's ID.
const rebuildIOTimeout = DefaultIOTimeout

// groupLen returns the data length of a block group from its members'
// block lengths: lens[m] is member m's length, or -1 when it is not known
// (a lost member). A member's block holds Config.MemberLen(L, m) bytes of
// a group of L, which is non-decreasing in L; the group's length is the
// largest L for which every known member holds exactly its length. When
// only lost members tell (a lost data member's last cell), this is the
// longest length the others allow: the lost member's rebuilt bytes beyond
// its true length are the encoder's zero padding, which no reader reads
// (readers stop at the length meta holds).
func groupLen(cfg ec.Config, lens []int64) (int64, error) {
	best, known := int64(-1), 0
	for m, n := range lens {
		if n < 0 {
			continue
		}
		known++
		// The largest L with MemberLen(L, m) ≤ n; MemberLen(L, m) is
		// at least (L / stripe)·cell, so L < (n/cell+1)·stripe.
		hi := (n/int64(cfg.CellSize) + 1) * cfg.StripeSize()
		lo := int64(0) // MemberLen(lo, m) ≤ n holds
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if cfg.MemberLen(mid, m) <= n {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if best < 0 || lo < best {
			best = lo
		}
	}
	if known == 0 {
		return 0, fmt.Errorf("%w: no member's length is known", ErrInconsistentGroup)
	}
	for m, n := range lens {
		if n >= 0 && cfg.MemberLen(best, m) != n {
			return 0, fmt.Errorf("%w: %s: member %d holds %d bytes, a group of %d bytes gives it %d (lengths %v)",
				ErrInconsistentGroup, cfg, m, n, best, cfg.MemberLen(best, m), lens)
		}
	}
	return best, nil
}

// rebuildBufs are a reconstruction's buffers, kept from block to block:
// each member's cells of a batch of stripes (what a source sent, or what a
// lost member's cells are rebuilt into), and the cells of one stripe.
type rebuildBufs struct {
	member [][]byte
	cells  [][]byte
	lens   []int
	out    []byte
}

// memberReader reads bytes [off, off+len(dst)) of member m's block of a
// group into dst, verified.
type memberReader func(m int, off int64, dst []byte) error

// rebuildMember rebuilds member m's block of a group of n bytes from d of
// the surviving members (have, in member order: data members are read
// before parity ones), rebuildStripes stripes at a time: each source's
// cells of a batch are consecutive in its block, so a batch costs one read
// per source, d in all, and then member m's cell of each stripe is decoded
// from them. A source that fails is dropped and the batch read again from
// another; fewer than d left is an error. emit gets member m's bytes in
// order, at their offsets in its block (each call's p is reused
// afterwards). bufs may be shared by the calls of one goroutine.
func rebuildMember(coder *ec.Coder, sc *ec.StripeCoder, bufs *rebuildBufs, n int64, m int, have []int, read memberReader,
	emit func(off int64, p []byte) error) error {
	cfg := coder.Config()
	stripe, cell := cfg.StripeSize(), int64(cfg.CellSize)
	if len(bufs.member) != cfg.Members() {
		bufs.member = make([][]byte, cfg.Members())
		bufs.cells = make([][]byte, cfg.Members())
		bufs.lens = make([]int, cfg.Members())
	}
	for k := range bufs.member {
		if int64(cap(bufs.member[k])) < rebuildStripes*cell {
			bufs.member[k] = make([]byte, rebuildStripes*cell)
		}
	}
	var failed []error
	sources := func() []int {
		var src []int
		for _, k := range have {
			if k != m && failed[k] == nil && len(src) < cfg.Data {
				src = append(src, k)
			}
		}
		return src
	}
	failed = make([]error, cfg.Members())
	for s0 := int64(0); s0*stripe < n; s0 += rebuildStripes {
		s1 := min(s0+rebuildStripes, cfg.Stripes(n))
		src := sources()
		for {
			if len(src) < cfg.Data {
				return fmt.Errorf("%w: %d of the %d members needed answer: %w", ErrTooFewSources, len(src), cfg.Data, errors.Join(failed...))
			}
			var wg sync.WaitGroup
			errs := make([]error, len(src))
			for i, k := range src {
				hi := min(cfg.MemberLen(n, k), s1*cell)
				if hi <= s0*cell {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = read(k, s0*cell, bufs.member[k][:hi-s0*cell])
				}()
			}
			wg.Wait()
			retry := false
			for i, err := range errs {
				if err != nil {
					failed[src[i]], retry = err, true
				}
			}
			if !retry {
				break
			}
			src = sources()
		}
		out := bufs.out[:0]
		for s := s0; s < s1; s++ {
			cfg.CellLens(n, s, bufs.lens)
			at := (s - s0) * cell
			for k := range bufs.cells {
				bufs.cells[k] = bufs.member[k][at:at] // lost: rebuilt into its buffer
			}
			for _, k := range src {
				bufs.cells[k] = bufs.member[k][at : at+int64(bufs.lens[k])]
			}
			if err := sc.Reconstruct(bufs.cells, bufs.lens, m < cfg.Data); err != nil {
				return err
			}
			out = append(out, bufs.cells[m][:bufs.lens[m]]...)
		}
		bufs.out = out
		if len(out) > 0 {
			if err := emit(s0*cell, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// rebuildSource is a surviving member's replica: its datanode and the
// block records it listed.
type rebuildSource struct {
	member int
	addr   string
	conn   *wire.Conn
	layout uint8
	bcsID  uint64
	blocks map[uint64]wire.ImportBlock
}

// Importer begins the import a reconstruction writes its replica into
// (the datanode's store).
type Importer interface {
	BeginImport(id uint64, layout container.Layout) (Import, error)
}

// ReconstructOptions configure a reconstruction.
type ReconstructOptions struct {
	// Store takes the rebuilt replica. Required.
	Store Importer
	// Limits bounds the datanode's replication streams; a reconstruction
	// takes one. Default: none.
	Limits *Limits
	// TLS secures the connections to the sources. Default: plain TCP.
	TLS *tls.Config
	// ClientID is what the sources' logs call this datanode.
	ClientID string
	// Token is the container token (READ) meta gave the rebuild, presented
	// to every source before LIST_BLOCKS (ReconstructECContainerCommand.token).
	Token  []byte
	Logger *slog.Logger
}

// ReconstructStats describe a finished reconstruction.
type ReconstructStats struct {
	// Blocks and Bytes are the blocks rebuilt and their bytes.
	Blocks int
	Bytes  int64
	// Elapsed is the time from the stream slot to the commit.
	Elapsed time.Duration
}

// Reconstruct carries out cmd: it rebuilds replica index cmd.ReplicaIndex
// of the container from cmd.Sources and commits it into opts.Store.
func Reconstruct(ctx context.Context, cmd *stratov1.ReconstructECContainerCommand, opts ReconstructOptions) (ReconstructStats, error) {
	var st ReconstructStats
	cfg, err := ec.FromProto(cmd.GetErasureCoding())
	if err != nil {
		return st, err
	}
	coder, err := ec.NewCoder(cfg)
	if err != nil {
		return st, err
	}
	id, idx := cmd.ContainerId, int(cmd.ReplicaIndex)
	if idx < 1 || idx > cfg.Members() {
		return st, fmt.Errorf("replication: rebuild index %d of a %s container (1 to %d)", idx, cfg, cfg.Members())
	}
	target := ec.MemberOf(idx)
	if err := opts.Limits.Acquire(ctx); err != nil {
		return st, err
	}
	defer opts.Limits.Release()
	start := time.Now()

	sources, closeAll := listSources(ctx, cmd, cfg, target, opts)
	defer closeAll()
	if len(sources) < cfg.Data {
		return st, fmt.Errorf("%w: container %d, %s: %d of %d sources listed", ErrTooFewSources, id, cfg, len(sources), len(cmd.Sources))
	}
	byMember := make([]*rebuildSource, cfg.Members())
	ids := map[uint64]bool{}
	var bcsID uint64
	sums := checksum.Data{Type: checksum.DefaultType, BytesPerChecksum: checksum.DefaultBytesPerChecksum}
	foundSums := false
	for _, s := range sources {
		byMember[s.member] = s
		bcsID = max(bcsID, s.bcsID)
		for lid, b := range s.blocks {
			ids[lid] = true
			if !foundSums && len(b.Chunks) > 0 {
				sums, foundSums = b.Chunks[0].Checksums, true
			}
		}
	}
	layout := container.Layout(sources[0].layout)
	im, err := opts.Store.BeginImport(id, layout)
	if err != nil {
		return st, err
	}
	committed := false
	defer func() {
		if !committed {
			if aerr := im.Abort(); aerr != nil {
				opts.Logger.Warn("datanode: removing an aborted reconstruction", "container", id, "err", aerr)
			}
		}
	}()
	if err := im.SetReplicaIndex(idx); err != nil {
		return st, err
	}
	var blocks []container.Block
	sc, bufs := coder.NewStripeCoder(), &rebuildBufs{}
	for _, lid := range slices.Sorted(maps.Keys(ids)) {
		b, err := rebuildBlock(ctx, coder, sc, bufs, id, lid, target, byMember, sums, im)
		if err != nil {
			return st, fmt.Errorf("replication: rebuild block %d/%d (index %d): %w", id, lid, idx, err)
		}
		if b.Length == 0 {
			continue // the member holds nothing of this group
		}
		blocks = append(blocks, b)
		st.Blocks++
		st.Bytes += b.Length
	}
	if _, err := im.Commit(blocks, bcsID); err != nil {
		return st, err
	}
	committed = true
	st.Elapsed = time.Since(start)
	return st, nil
}

// listSources connects to every source and lists its blocks. A source that
// cannot be reached, or that holds another index than meta said, is left
// out (the reconstruction needs d of them).
func listSources(ctx context.Context, cmd *stratov1.ReconstructECContainerCommand, cfg ec.Config, target int,
	opts ReconstructOptions) ([]*rebuildSource, func()) {
	var (
		mu  sync.Mutex
		out []*rebuildSource
		wg  sync.WaitGroup
	)
	seen := map[int]bool{}
	for _, src := range cmd.Sources {
		m := ec.MemberOf(int(src.ReplicaIndex))
		if m < 0 || m >= cfg.Members() || m == target || seen[m] || src.GetDatanode().GetDataAddr() == "" {
			continue
		}
		seen[m] = true
		wg.Go(func() {
			s, err := listSource(ctx, cmd.ContainerId, m, src.GetDatanode().GetDataAddr(), opts)
			if err != nil {
				opts.Logger.Warn("datanode: reconstruction source left out", "container", cmd.ContainerId,
					"replica_index", src.ReplicaIndex, "datanode", src.GetDatanode().GetId(), "err", err)
				return
			}
			mu.Lock()
			out = append(out, s)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b *rebuildSource) int { return cmp.Compare(a.member, b.member) })
	return out, func() {
		for _, s := range out {
			_ = s.conn.Close()
		}
	}
}

func listSource(ctx context.Context, id uint64, m int, addr string, opts ReconstructOptions) (*rebuildSource, error) {
	conn, err := wire.Dial(ctx, addr, wire.ConnOptions{ClientID: opts.ClientID, TLS: opts.TLS})
	if err != nil {
		return nil, err
	}
	s := &rebuildSource{member: m, addr: addr, conn: conn, blocks: map[uint64]wire.ImportBlock{}}
	actx, cancel := context.WithTimeout(ctx, rebuildIOTimeout)
	err = conn.Authorize(actx, opts.Token)
	cancel()
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("block token: %w", err)
	}
	for after := uint64(0); ; {
		rctx, cancel := context.WithTimeout(ctx, rebuildIOTimeout)
		resp, err := conn.ListBlocks(rctx, &wire.ListBlocksRequest{ContainerID: id, AfterLocalID: after, Limit: 1024})
		cancel()
		if err != nil {
			_ = conn.Close()
			return nil, err
		}
		if int(resp.ReplicaIndex) != ec.ReplicaIndex(m) {
			_ = conn.Close()
			return nil, fmt.Errorf("%s holds replica index %d of container %d, not %d", addr, resp.ReplicaIndex, id, ec.ReplicaIndex(m))
		}
		s.layout, s.bcsID = resp.Layout, resp.BCSID
		for _, b := range resp.Blocks {
			s.blocks[b.LocalID] = b
			after = b.LocalID
		}
		if !resp.More {
			return s, nil
		}
	}
}

// rebuildBlock rebuilds member target's block of group (id, lid) into im
// and returns its record (Length 0: the member holds nothing of it).
func rebuildBlock(ctx context.Context, coder *ec.Coder, sc *ec.StripeCoder, bufs *rebuildBufs, id, lid uint64, target int,
	byMember []*rebuildSource, sums checksum.Data, im Import) (container.Block, error) {
	cfg := coder.Config()
	lens := make([]int64, cfg.Members())
	b := container.Block{LocalID: lid}
	for m, s := range byMember {
		if s == nil {
			lens[m] = -1
			continue
		}
		// A member with no record of the group holds no byte of it (the
		// writer skips members with none).
		sb := s.blocks[lid]
		lens[m] = sb.Length
		b.BCSID = max(b.BCSID, sb.BCSID)
	}
	n, err := groupLen(cfg, lens)
	if err != nil {
		return b, err
	}
	if cfg.MemberLen(n, target) == 0 {
		return b, nil
	}
	read := func(m int, off int64, dst []byte) error {
		s := byMember[m]
		ctx, cancel := context.WithTimeout(ctx, rebuildIOTimeout)
		defer cancel()
		// Verified as the payload arrives, each piece while it is in the
		// CPU's cache.
		resp, payload, err := s.conn.ReadChunkVerified(ctx, &wire.ReadChunkRequest{Block: wire.BlockID{ContainerID: id, LocalID: lid},
			Offset: off, Length: uint32(len(dst))}, dst[:len(dst):len(dst)])
		if errors.Is(err, checksum.ErrMismatch) {
			return fmt.Errorf("%s: %w", s.addr, err)
		}
		if err != nil {
			return err
		}
		got := resp.Range(payload, off, len(dst))
		if &got[0] != &dst[0] {
			copy(dst, got)
		}
		return nil
	}
	var have []int
	for k, s := range byMember {
		if s != nil {
			have = append(have, k)
		}
	}
	err = rebuildMember(coder, sc, bufs, n, target, have, read, func(off int64, p []byte) error {
		for len(p) > 0 {
			k := min(len(p), maxRebuildChunk)
			ch := container.Chunk{Offset: off, Length: int64(k), Checksums: checksum.Compute(sums.Type, sums.BytesPerChecksum, p[:k])}
			if err := im.WriteChunk(lid, ch, p[:k]); err != nil {
				return err
			}
			b.Chunks = append(b.Chunks, ch)
			b.Length += int64(k)
			off += int64(k)
			p = p[k:]
		}
		return nil
	})
	if err != nil {
		return b, err
	}
	if want := cfg.MemberLen(n, target); b.Length != want {
		return b, fmt.Errorf("datanode: rebuilt %d bytes, want %d", b.Length, want)
	}
	return b, nil
}
