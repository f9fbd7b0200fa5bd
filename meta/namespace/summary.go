package namespace

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Content summaries (GetContentSummary): meta adds up a subtree itself, a
// bounded page of entries per call, so that hdfs dfs -du and -count cost
// one round trip per page rather than one per directory. A page reads
// from one Pebble snapshot; the pages of one summary read different
// ones, so a subtree that changes while it is summed may be counted
// partly before and partly after the change, as HDFS's getContentSummary,
// which yields its lock between pieces. The cursor is the path of
// directories from the root to where the page stopped, so it stays small
// however wide the tree.

// DefaultSummaryPage is the entries one GetContentSummary page visits
// when the request does not say.
const DefaultSummaryPage = 100_000

// maxSummaryPage bounds what a request may ask a page to visit.
const maxSummaryPage = 1_000_000

// ContentSummary returns the next page of the summary of the subtree at
// req's path: what it adds up, and the cursor of the next page (empty
// when done). The caller needs RightList on the path.
func (rd *Reader) ContentSummary(req *stratov1.GetContentSummaryRequest) (*stratov1.GetContentSummaryResponse, error) {
	if err := rd.authorized(rd.caller, keyKind, req.GetVolume(), req.GetBucket(), req.GetPath(), RightList); err != nil {
		return nil, err
	}
	bk, err := rd.bucket(req.GetVolume(), req.GetBucket())
	if err != nil {
		return nil, err
	}
	limit := DefaultSummaryPage
	if n := int(req.GetLimit()); n > 0 {
		limit = min(n, maxSummaryPage)
	}
	var cur stratov1.ContentSummaryCursor
	first := len(req.GetCursor()) == 0
	if !first {
		if err := proto.Unmarshal(req.GetCursor(), &cur); err != nil || cur.GetBucketId() != bk.Id {
			return nil, fmt.Errorf("%w: a content summary cursor of another walk", ErrInvalid)
		}
	}
	sw := &summaryWalk{rd: rd, limit: limit, out: &stratov1.GetContentSummaryResponse{}}
	if !isFSO(bk) {
		err = sw.obs(bk, req.GetPath(), first, &cur)
	} else {
		err = sw.fso(bk, req.GetPath(), first, &cur)
	}
	if err != nil {
		return nil, err
	}
	if sw.more {
		cur.BucketId = bk.Id
		if sw.out.Cursor, err = proto.Marshal(&cur); err != nil {
			return nil, err
		}
	}
	return sw.out, nil
}

// summaryWalk is one page of a summary.
type summaryWalk struct {
	rd    *Reader
	limit int // entries left to visit in this page
	out   *stratov1.GetContentSummaryResponse
	more  bool // stopped with the page full
	ki    stratov1.KeyRecord
}

// file counts one file record.
func (sw *summaryWalk) file(v []byte) error {
	sw.ki.Reset()
	if err := proto.Unmarshal(v, &sw.ki); err != nil {
		return err
	}
	sw.out.FileCount++
	sw.out.Length += sw.ki.Size
	space, err := spaceOf(&sw.ki)
	if err != nil {
		return err
	}
	sw.out.SpaceConsumed += space
	sw.limit--
	return nil
}

// spaceOf is a file's bytes on the datanodes: its length times its
// replicas, or, erasure coded, the lengths of its blocks' members.
func spaceOf(ki *stratov1.KeyRecord) (int64, error) {
	if ki.ErasureCoding == nil {
		n := int64(1)
		if ki.Replication == stratov1.ReplicationFactor_REPLICATION_THREE {
			n = 3
		}
		return ki.Size * n, nil
	}
	cfg, err := ECConfig(ki.ErasureCoding)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range ki.Blocks {
		for m := range cfg.Members() {
			n += cfg.MemberLen(b.Length, m)
		}
	}
	return n, nil
}

// obs sums the keys of an OBS bucket under the prefix path (the bucket
// itself counts as the one directory).
func (sw *summaryWalk) obs(bk *stratov1.BucketRecord, prefix string, first bool, cur *stratov1.ContentSummaryCursor) error {
	if first {
		sw.out.DirectoryCount = 1
	}
	err := scan(sw.rd.r, idKey(nil, tagKey, bk.Id), prefix, cur.AfterKey, func(suffix, v []byte) (bool, error) {
		if sw.limit <= 0 {
			sw.more = true
			return false, nil
		}
		cur.AfterKey = string(suffix)
		return true, sw.file(v)
	})
	return err
}

// fso sums the subtree at path of an FSO bucket: a file alone, or a
// directory walked depth first from the cursor's frames.
func (sw *summaryWalk) fso(bk *stratov1.BucketRecord, path string, first bool, cur *stratov1.ContentSummaryCursor) error {
	if first {
		root, isDir, v, err := sw.resolve(bk, path)
		if err != nil {
			return err
		}
		if !isDir {
			return sw.file(v)
		}
		sw.out.DirectoryCount = 1
		cur.Frames = []*stratov1.ContentSummaryCursor_Frame{{DirId: root}}
	}
	for len(cur.Frames) > 0 {
		f := cur.Frames[len(cur.Frames)-1]
		if !f.FilesDone {
			err := scan(sw.rd.r, idKey(nil, tagFile, f.DirId), "", f.AfterFile, func(suffix, v []byte) (bool, error) {
				if sw.limit <= 0 {
					sw.more = true
					return false, nil
				}
				f.AfterFile = string(suffix)
				return true, sw.file(v)
			})
			if err != nil || sw.more {
				return err
			}
			f.FilesDone = true
		}
		if sw.limit <= 0 {
			sw.more = true
			return nil
		}
		var child uint64
		var d stratov1.DirectoryInfo
		err := scan(sw.rd.r, idKey(nil, tagDir, f.DirId), "", f.AfterDir, func(suffix, v []byte) (bool, error) {
			if err := proto.Unmarshal(v, &d); err != nil {
				return false, err
			}
			f.AfterDir, child = string(suffix), d.ObjectId
			return false, nil
		})
		if err != nil {
			return err
		}
		if child == 0 {
			cur.Frames = cur.Frames[:len(cur.Frames)-1]
			continue
		}
		sw.out.DirectoryCount++
		sw.limit--
		cur.Frames = append(cur.Frames, &stratov1.ContentSummaryCursor_Frame{DirId: child})
	}
	return nil
}

// resolve finds path in an FSO bucket: a directory's ID, or a file's
// record.
func (sw *summaryWalk) resolve(bk *stratov1.BucketRecord, path string) (id uint64, isDir bool, file []byte, err error) {
	p, err := CleanPath(path)
	if err != nil {
		return 0, false, nil, err
	}
	if p == "" {
		return bk.Id, true, nil, nil
	}
	rs := sw.rd.resolver()
	defer sw.rd.release(rs)
	parent, name := splitLast(p)
	pid, err := rs.dir(bk.Id, parent, 0, ErrFileNotFound)
	if err != nil {
		return 0, false, nil, err
	}
	did, isDir, err := rs.lookupDir(pid, name)
	if err != nil || isDir {
		return did, isDir, nil, err
	}
	v, closer, err := sw.rd.r.Get(childKey(nil, tagFile, pid, name))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, bk.Volume, bk.Name, p)
	}
	if err != nil {
		return 0, false, nil, err
	}
	file = append([]byte(nil), v...)
	_ = closer.Close()
	return 0, false, file, nil
}
