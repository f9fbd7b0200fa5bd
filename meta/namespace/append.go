// Append, truncate, concat and lease recovery (decision 0083).
//
// A file is open for writing, its lease held, while an open key writes it:
// a file being created has the open key of its own object ID ("N o
// <objectID>", the open ID a create becomes the object ID); a closed file
// opened for appending gets an open key of a new ID and a lease entry
// "N L <objectID>" naming it, so that a writer fenced by RecoverLease can
// never commit through a later appender's open key.
//
// An append writes new blocks after the file's last one: blocks are never
// reopened, so a block ended by a truncate or by the end of an hsynced
// write keeps its recorded length for good and the bytes a datanode holds
// past it are never read. The open key keeps the blocks the file had
// (base); every CommitKey of the appender, hsync or close, publishes base
// followed by its own blocks, as the same object (the file's history,
// quota and snapshots follow it as they follow an hsync).

package namespace

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// tagLease: N L <objectID> → the open ID appending to the object.
const tagLease = 'L'

// ErrFileOpen: the file is being written (another writer holds its
// lease); RecoverLease closes it.
var ErrFileOpen = sentinel("namespace: file is open for writing", ErrFailedPrecondition)

// errECAppend: erasure coded keys are written whole (docs/ec.md).
var errECAppend = sentinel("namespace: erasure coded keys cannot be appended to or truncated", ErrFailedPrecondition)

func leaseKey(buf []byte, objectID uint64) []byte { return idKey(buf, tagLease, objectID) }

// writerOf is the open key writing object ki, if any: none if ki is
// closed (its final commit wrote it and no append has leased it since).
func writerOf(r pebble.Reader, ki *stratov1.KeyRecord) (*stratov1.OpenKeyInfo, error) {
	if ki.Closed {
		return nil, nil
	}
	rec := &stratov1.OpenKeyInfo{}
	if ok, err := get(r, idKey(nil, tagOpen, ki.ObjectId), rec); err != nil || ok {
		return rec, err
	}
	v, closer, err := r.Get(leaseKey(nil, ki.ObjectId))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if len(v) != 8 {
		_ = closer.Close()
		return nil, fmt.Errorf("%w: the lease of object %d", ErrCorrupt, ki.ObjectId)
	}
	id := binary.BigEndian.Uint64(v)
	if err := closer.Close(); err != nil {
		return nil, err
	}
	if ok, err := get(r, idKey(nil, tagOpen, id), rec); err != nil || !ok {
		return nil, err
	}
	return rec, nil
}

// followWriter points the open key writing a renamed file at its new
// name (parent, name; path as a client names it), so that the writer's
// commits follow the file, as HDFS's open files follow a rename.
func (a *applier) followWriter(file *stratov1.KeyRecord, parent uint64, name, path string) error {
	w, err := writerOf(a.b, file)
	if err != nil || w == nil {
		return err
	}
	w.ParentId, w.FileName, w.Key = parent, name, path
	return put(a.b, idKey(nil, tagOpen, w.Id), w)
}

// objectOf is the object an open key writes: its own ID, or the key it
// appends to.
func objectOf(rec *stratov1.OpenKeyInfo) uint64 {
	if rec.Append {
		return rec.ObjectId
	}
	return rec.Id
}

// closedFile finds the closed file (or OBS key) at path for an append,
// truncate or concat: not a directory, not erasure coded when noEC, and no
// writer holding it.
func (a *applier) closedFile(bk *stratov1.BucketRecord, path string, noEC bool) (p string, key []byte, ki *stratov1.KeyRecord, err error) {
	p = path
	if isFSO(bk) {
		if p, err = CleanPath(path); err != nil {
			return "", nil, nil, err
		}
		if p == "" {
			return "", nil, nil, fmt.Errorf("%w: %s/%s/: the bucket's root is a directory", ErrIsADirectory, bk.Volume, bk.Name)
		}
	}
	if err := checkWritable(p); err != nil {
		return "", nil, nil, err
	}
	key, d, ki, err := a.locate(bk, p)
	label := bk.Volume + "/" + bk.Name + "/" + p
	switch {
	case err != nil:
		return "", nil, nil, err
	case d != nil:
		return "", nil, nil, fmt.Errorf("%w: %s", ErrIsADirectory, label)
	case noEC && ki.ErasureCoding != nil:
		return "", nil, nil, fmt.Errorf("%w: %s", errECAppend, label)
	}
	// Appended to, truncated, concatenated: a locked version's data may
	// not change.
	if err := a.checkDestroy(ki, false, label); err != nil {
		return "", nil, nil, err
	}
	if w, err := writerOf(a.b, ki); err != nil {
		return "", nil, nil, err
	} else if w != nil {
		return "", nil, nil, fmt.Errorf("%w: %s (open key %d)", ErrFileOpen, label, w.Id)
	}
	return p, key, ki, nil
}

// prepareAppend allocates the first block of an append with the key's
// replication when the writer expects data.
func (ns *Namespace) prepareAppend(ctx context.Context, view pebble.Reader, env PrepareEnv, r *stratov1.AppendFileRequest) (*stratov1.OpenKeyCommand, error) {
	if r.GetSizeHint() < 0 {
		return nil, fmt.Errorf("%w: negative size hint %d", ErrInvalid, r.GetSizeHint())
	}
	c := &stratov1.OpenKeyCommand{Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetPath(), Append: true,
		SizeHint: r.GetSizeHint(), ExpiresAtUnixMs: env.Now.Add(ns.opts.OpenKeyTTL).UnixMilli()}
	if r.GetSizeHint() == 0 {
		return c, nil
	}
	lk, err := ns.Reader(view).LookupKey(&stratov1.LookupKeyRequest{Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetPath()})
	if err != nil {
		return nil, err
	}
	if lk.GetKey().GetErasureCoding() != nil {
		return nil, fmt.Errorf("%w: %s/%s/%s", errECAppend, r.GetVolume(), r.GetBucket(), r.GetPath())
	}
	if env.Allocator == nil {
		return nil, fmt.Errorf("namespace: no block allocator")
	}
	bk, err := ns.Reader(view).bucket(r.GetVolume(), r.GetBucket())
	if err != nil {
		return nil, err
	}
	bl, err := env.Allocator.AllocateBlock(ctx, lk.GetKey().GetReplication(), nil, min(r.GetSizeHint(), bk.BlockSize), r.GetExclude())
	if err != nil {
		return nil, err
	}
	c.Blocks, c.Replication = []*stratov1.BlockRecord{bl}, lk.GetKey().GetReplication()
	return c, nil
}

// prepareFileOp makes cmd the command of an AppendFile, Truncate, Concat
// or RecoverLease: apply checks everything.
func (ns *Namespace) prepareFileOp(ctx context.Context, view pebble.Reader, env PrepareEnv, cmd *stratov1.NamespaceCommand, req proto.Message) error {
	switch r := req.(type) {
	case *stratov1.AppendFileRequest:
		c, err := ns.prepareAppend(ctx, view, env, r)
		if err != nil {
			return err
		}
		cmd.Op = &stratov1.NamespaceCommand_OpenKey{OpenKey: c}
	case *stratov1.TruncateRequest:
		cmd.Op = &stratov1.NamespaceCommand_Truncate{Truncate: &stratov1.TruncateCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Path: r.GetPath(), NewLength: r.GetNewLength()}}
	case *stratov1.ConcatRequest:
		cmd.Op = &stratov1.NamespaceCommand_Concat{Concat: &stratov1.ConcatCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Target: r.GetTarget(), Sources: r.GetSources()}}
	case *stratov1.RecoverLeaseRequest:
		cmd.Op = &stratov1.NamespaceCommand_RecoverLease{RecoverLease: &stratov1.RecoverLeaseCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Path: r.GetPath()}}
	}
	return nil
}

// openAppend opens the closed key c names for appending and takes its
// lease.
func (a *applier) openAppend(c *stratov1.OpenKeyCommand) (proto.Message, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	switch {
	case c.GetExpiresAtUnixMs() <= 0:
		return nil, fmt.Errorf("%w: open key without an expiry time", ErrInvalid)
	case c.GetSizeHint() < 0:
		return nil, fmt.Errorf("%w: negative size hint %d", ErrInvalid, c.GetSizeHint())
	}
	if err := checkAllocated(c.GetBlocks()); err != nil {
		return nil, err
	}
	p, key, ki, err := a.closedFile(bk, c.GetKey(), true)
	if err != nil {
		return nil, err
	}
	if len(c.GetBlocks()) > 0 && c.GetReplication() != ki.Replication {
		// Rewritten with another replication since prepare allocated.
		return nil, fmt.Errorf("%w: %s/%s/%s is now %v, its block was allocated %v", ErrKeyReplaced, bk.Volume, bk.Name, p,
			ki.Replication, c.GetReplication())
	}
	if c.GetSizeHint() > 0 {
		if err := a.checkFits(bk, c.GetSizeHint()); err != nil {
			return nil, err
		}
	}
	rec := &stratov1.OpenKeyInfo{
		Volume: bk.Volume, Bucket: bk.Name, BucketId: bk.Id, VolumeId: bk.VolumeId, Layout: bk.Layout,
		Key: p, ParentId: bk.Id, FileName: p, Replication: ki.Replication, ChecksumType: ki.ChecksumType,
		BytesPerChecksum: ki.BytesPerChecksum, CreationTimeUnixMs: ki.CreationTimeUnixMs, ExpiresAtUnixMs: c.GetExpiresAtUnixMs(),
		Blocks: c.GetBlocks(), Overwrite: true, Owner: ki.Owner, Hsynced: true, Permission: ki.Permission,
		Group: ki.Group, Acls: ki.Acls, Append: true, ObjectId: ki.ObjectId, Base: ki.Blocks,
	}
	if isFSO(bk) {
		_, rec.FileName = splitLast(p)
		rec.ParentId = ki.ParentId
	}
	if rec.Id, err = a.nextID(); err != nil {
		return nil, err
	}
	if err := put(a.b, idKey(a.kb, tagOpen, rec.Id), rec); err != nil {
		return nil, err
	}
	if err := a.b.Set(expiryKey(a.kb, rec.ExpiresAtUnixMs, rec.Id), nil, nil); err != nil {
		return nil, err
	}
	if err := a.b.Set(leaseKey(nil, ki.ObjectId), binary.BigEndian.AppendUint64(nil, rec.Id), nil); err != nil {
		return nil, err
	}
	if ki.Closed {
		// Held by a writer now: writerOf must look for it.
		ki.Closed = false
		if err := put(a.b, key, ki); err != nil {
			return nil, err
		}
	}
	return &stratov1.OpenKeyResponse{
		OpenId: rec.Id, Blocks: groupLocations(BlockLocations(rec.Blocks), nil), Replication: rec.Replication,
		ChecksumType: rec.ChecksumType, BytesPerChecksum: rec.BytesPerChecksum, BlockSize: bk.BlockSize,
		AppendOffset: ki.Size, BaseBlocks: BlockLocations(ki.Blocks),
	}, nil
}

// withBase puts an appender's base blocks before the blocks it commits.
func withBase(rec *stratov1.OpenKeyInfo, final []*stratov1.BlockRecord, size int64) ([]*stratov1.BlockRecord, int64) {
	if !rec.Append {
		return final, size
	}
	var base int64
	out := make([]*stratov1.BlockRecord, 0, len(rec.Base)+len(final))
	for _, bl := range rec.Base {
		out = append(out, &stratov1.BlockRecord{BlockId: bl.BlockId, Offset: base, Length: bl.Length, Pipeline: bl.Pipeline})
		base += bl.Length
	}
	for _, bl := range final {
		out = append(out, &stratov1.BlockRecord{BlockId: bl.BlockId, Offset: base + bl.Offset, Length: bl.Length, Pipeline: bl.Pipeline})
	}
	return out, base + size
}

// truncate cuts a closed file at once: the blocks past the new length go
// (unless a snapshot or another record holds the object), the block it
// falls in is ended there.
func (a *applier) truncate(c *stratov1.TruncateCommand) (proto.Message, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	p, key, ki, err := a.closedFile(bk, c.GetPath(), true)
	if err != nil {
		return nil, err
	}
	n := c.GetNewLength()
	if n < 0 || n > ki.Size {
		return nil, fmt.Errorf("%w: truncate %s/%s/%s of %d bytes to %d (at most its length)", ErrInvalid, bk.Volume, bk.Name, p, ki.Size, n)
	}
	if n == ki.Size {
		return &stratov1.TruncateResponse{Done: true, Length: n}, nil
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	kept := st.sees(ki.SnapshotGen, st.gen)
	shared := false
	if st.gen > 0 {
		if _, _, shared, err = a.sharedObject(ki.ObjectId); err != nil {
			return nil, err
		}
	}
	old := proto.Clone(ki).(*stratov1.KeyRecord)
	if err := a.keepFile(bk.Id, st, key, old); err != nil {
		return nil, err
	}
	var keep, drop []*stratov1.BlockRecord
	for _, bl := range ki.Blocks {
		switch {
		case bl.Offset >= n:
			drop = append(drop, bl)
		case bl.Offset+bl.Length > n:
			keep = append(keep, &stratov1.BlockRecord{BlockId: bl.BlockId, Offset: bl.Offset, Length: n - bl.Offset, Pipeline: bl.Pipeline})
		default:
			keep = append(keep, bl)
		}
	}
	if !kept && !shared {
		// Nothing else holds the object: the dropped blocks and bytes go
		// now (otherwise they go with its last holder).
		if err := a.release(bk.Id, bk.VolumeId, ki.Size-n, 0); err != nil {
			return nil, err
		}
		if err := a.freeBlocks(ki.ObjectId, drop, "truncate"); err != nil {
			return nil, err
		}
	}
	ki.Blocks, ki.Size, ki.ModificationTimeUnixMs, ki.SnapshotGen = keep, n, a.now, st.gen
	return &stratov1.TruncateResponse{Done: true, Length: n}, put(a.b, key, ki)
}

// concat appends the blocks of closed files to a closed file and removes
// them, as a compose does: no data moves.
func (a *applier) concat(c *stratov1.ConcatCommand) (proto.Message, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	if len(c.GetSources()) == 0 {
		return nil, fmt.Errorf("%w: concat into %s/%s/%s without sources", ErrInvalid, bk.Volume, bk.Name, c.GetTarget())
	}
	tp, tkey, target, err := a.closedFile(bk, c.GetTarget(), false)
	if err != nil {
		return nil, err
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{tp: true}
	type source struct {
		key []byte
		rec *stratov1.KeyRecord
	}
	sources := make([]source, 0, len(c.GetSources()))
	for _, s := range c.GetSources() {
		sp, skey, kr, err := a.closedFile(bk, s, false)
		if err != nil {
			return nil, err
		}
		label := bk.Volume + "/" + bk.Name + "/" + sp
		switch {
		case seen[sp]:
			return nil, fmt.Errorf("%w: concat: source %s is the target or named twice", ErrInvalid, label)
		case !proto.Equal(kr.ErasureCoding, target.ErasureCoding) || kr.Replication != target.Replication:
			return nil, fmt.Errorf("%w: concat: source %s is stored as %s, the target as %s", ErrInvalidBlocks, label,
				redundancyName(kr.Replication, kr.ErasureCoding), redundancyName(target.Replication, target.ErasureCoding))
		case kr.ChecksumType != target.ChecksumType || kr.BytesPerChecksum != target.BytesPerChecksum:
			return nil, fmt.Errorf("%w: concat: source %s has checksums %v/%d, the target %v/%d", ErrInvalidBlocks, label,
				kr.ChecksumType, kr.BytesPerChecksum, target.ChecksumType, target.BytesPerChecksum)
		}
		seen[sp] = true
		if err := a.takeComposeSource(bk.Id, skey, kr, label); err != nil {
			return nil, err
		}
		sources = append(sources, source{key: skey, rec: kr})
	}
	if err := a.keepFile(bk.Id, st, tkey, proto.Clone(target).(*stratov1.KeyRecord)); err != nil {
		return nil, err
	}
	size := target.Size
	for _, s := range sources {
		for _, bl := range s.rec.Blocks {
			target.Blocks = append(target.Blocks, &stratov1.BlockRecord{BlockId: bl.BlockId, Offset: size, Length: bl.Length, Pipeline: bl.Pipeline})
			size += bl.Length
		}
		if err := a.b.Delete(s.key, nil); err != nil {
			return nil, err
		}
	}
	// The bytes move from the sources to the target: only the names go.
	if err := a.release(bk.Id, bk.VolumeId, 0, int64(len(sources))); err != nil {
		return nil, err
	}
	grown := size - target.Size
	target.Size, target.ModificationTimeUnixMs, target.SnapshotGen = size, a.now, st.gen
	if err := a.grow(target, grown); err != nil {
		return nil, err
	}
	return &stratov1.ConcatResponse{Length: size}, put(a.b, tkey, target)
}

// recoverLease closes the file at path if a writer holds it open: at the
// length its last hsync published; the writer's open key goes (with the
// blocks it allocated that no hsync published), so it can neither hsync
// nor commit again.
func (a *applier) recoverLease(c *stratov1.RecoverLeaseCommand) (proto.Message, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	p := c.GetPath()
	if isFSO(bk) {
		if p, err = CleanPath(p); err != nil {
			return nil, err
		}
	}
	_, d, ki, err := a.locate(bk, p)
	switch {
	case err != nil:
		return nil, err
	case d != nil:
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrIsADirectory, bk.Volume, bk.Name, p)
	}
	rec, err := writerOf(a.b, ki)
	if err != nil || rec == nil {
		return &stratov1.RecoverLeaseResponse{Closed: true, Length: ki.Size}, err
	}
	blocks, err := a.unpublished(rec)
	if err != nil {
		return nil, err
	}
	if err := a.freeBlocks(rec.Id, blocks, "recovered"); err != nil {
		return nil, err
	}
	if err := a.deleteOpenKey(rec); err != nil {
		return nil, err
	}
	return &stratov1.RecoverLeaseResponse{Closed: true, Length: ki.Size}, nil
}

// IsFileClosed answers whether no writer holds the file at req's path.
func (rd *Reader) IsFileClosed(req *stratov1.IsFileClosedRequest) (*stratov1.IsFileClosedResponse, error) {
	lk, err := rd.LookupKey(&stratov1.LookupKeyRequest{Volume: req.GetVolume(), Bucket: req.GetBucket(), Key: req.GetPath()})
	if err != nil {
		return nil, err
	}
	w, err := writerOf(rd.r, &stratov1.KeyRecord{ObjectId: lk.GetKey().GetObjectId()})
	if err != nil {
		return nil, err
	}
	return &stratov1.IsFileClosedResponse{Closed: w == nil}, nil
}

// authorizeAppend: appending to, truncating and recovering a file need
// WRITE on it; a concat also READ and DELETE on each source.
func (rd *Reader) authorizeAppend(c *Caller, req proto.Message) error {
	switch r := req.(type) {
	case *stratov1.AppendFileRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetPath(), RightWrite)
	case *stratov1.TruncateRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetPath(), RightWrite)
	case *stratov1.RecoverLeaseRequest:
		return rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetPath(), RightWrite)
	case *stratov1.ConcatRequest:
		if err := rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), r.GetTarget(), RightWrite); err != nil {
			return err
		}
		for _, s := range r.GetSources() {
			if err := rd.authorized(c, keyKind, r.GetVolume(), r.GetBucket(), s, RightRead|RightDelete); err != nil {
				return err
			}
		}
	}
	return nil
}
