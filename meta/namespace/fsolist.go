package namespace

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// ListKeys on an FSO bucket lists its files as keys in S3 order (byte order
// of full paths), streaming: each directory is read with one range scan of
// each table, in pages, without loading it whole. Directories are not keys;
// with delimiter "/" they are common prefixes, empty ones included (so that
// FSO's empty directories stay visible through S3).
//
// The subtlety is order. Within a directory, files sort by name but a
// subdirectory d sorts as d+"/" (its keys all start with it), and the order
// of names is not the order of names+"/" ("a-b/" < "a/" although "a" <
// "a-b"). dirStream restores it with a stack, using that a name n must come
// before an earlier name t exactly when n = t + c + ... with c < '/'.

type dirEnt struct {
	name string
	id   uint64
}

// dirStream yields a directory's subdirectories in name+"/" order from
// candidates (sorted by name) followed by an iterator (sorted by name).
type dirStream struct {
	cands   []dirEnt
	it      *pebble.Iterator
	started bool
	prefix  int // key bytes before the name
	stack   []dirEnt
	pending *dirEnt
	err     error
}

func (s *dirStream) pull() *dirEnt {
	if len(s.cands) > 0 {
		d := s.cands[0]
		s.cands = s.cands[1:]
		return &d
	}
	if s.it == nil {
		return nil
	}
	var ok bool
	if !s.started {
		ok, s.started = s.it.First(), true
	} else {
		ok = s.it.Next()
	}
	if !ok {
		return nil
	}
	id, err := dirObjectID(s.it.Value())
	if err != nil {
		s.err = err
		return nil
	}
	return &dirEnt{name: string(s.it.Key()[s.prefix:]), id: id}
}

// lowChild reports whether n sorts before t once both get a trailing '/'.
func lowChild(n, t string) bool { return len(n) > len(t) && strings.HasPrefix(n, t) && n[len(t)] < '/' }

func (s *dirStream) next() (dirEnt, bool) {
	for {
		if s.pending == nil {
			if s.pending = s.pull(); s.pending == nil {
				if len(s.stack) == 0 {
					return dirEnt{}, false
				}
				top := s.stack[len(s.stack)-1]
				s.stack = s.stack[:len(s.stack)-1]
				return top, true
			}
		}
		if n := len(s.stack); n > 0 && !lowChild(s.pending.name, s.stack[n-1].name) {
			top := s.stack[n-1]
			s.stack = s.stack[:n-1]
			return top, true
		}
		s.stack = append(s.stack, *s.pending)
		s.pending = nil
	}
}

type fsoLister struct {
	rd     *Reader
	rs     *resolver
	expand bool // no delimiter: descend into directories
	// visit receives a file (ki set) or a common prefix; false stops.
	visit func(name string, ki *stratov1.KeyRecord) bool
}

// list lists directory id, whose keys all start with base, restricted to
// children whose names start with namePrefix and to keys after after. It
// returns false when visit stopped it.
func (l *fsoLister) list(id uint64, base, namePrefix, after string) (bool, error) {
	relAfter := ""
	if after != "" {
		switch {
		case strings.HasPrefix(after, base):
			relAfter = after[len(base):]
		case after > base:
			return true, nil // every key here is <= after
		}
	}

	// Files with names > relAfter, starting with namePrefix.
	fprefix := childKey(nil, tagFile, id, namePrefix)
	flower := fprefix
	if relAfter >= namePrefix && relAfter != "" {
		flower = append(childKey(nil, tagFile, id, relAfter), 0)
	}
	fupper := prefixEnd(fprefix)
	if namePrefix == "" {
		fupper = prefixEnd(idKey(nil, tagFile, id))
	}
	files, err := l.rd.r.NewIter(&pebble.IterOptions{LowerBound: flower, UpperBound: fupper})
	if err != nil {
		return false, err
	}
	defer func() { _ = files.Close() }()

	// Directories: those named by a prefix of relAfter whose keys can still
	// follow it, then those with names >= relAfter.
	ds := &dirStream{prefix: 10}
	for i := 0; i < len(relAfter) && i <= strings.IndexByte(relAfter+"/", '/'); i++ {
		c := relAfter[i]
		if c > '/' || (c == '/' && !l.expand) || !strings.HasPrefix(relAfter[:i], namePrefix) || i == 0 {
			continue
		}
		did, ok, err := l.rs.lookupDir(id, relAfter[:i])
		if err != nil {
			return false, err
		}
		if ok {
			ds.cands = append(ds.cands, dirEnt{name: relAfter[:i], id: did})
		}
	}
	dprefix := childKey(nil, tagDir, id, namePrefix)
	dlower := dprefix
	if relAfter >= namePrefix && relAfter != "" {
		dlower = childKey(nil, tagDir, id, relAfter)
	}
	dupper := prefixEnd(dprefix)
	if namePrefix == "" {
		dupper = prefixEnd(idKey(nil, tagDir, id))
	}
	if ds.it, err = l.rd.r.NewIter(&pebble.IterOptions{LowerBound: dlower, UpperBound: dupper}); err != nil {
		return false, err
	}
	defer func() { _ = ds.it.Close() }()

	fok := files.First()
	d, dok := ds.next()
	for fok || dok {
		if ds.err != nil {
			return false, ds.err
		}
		fname := []byte(nil)
		if fok {
			fname = files.Key()[10:]
		}
		if fok && (!dok || bytes.Compare(fname, []byte(d.name+"/")) < 0) {
			ki := &stratov1.KeyRecord{}
			if err := proto.Unmarshal(files.Value(), ki); err != nil {
				return false, fmt.Errorf("%w: file %s: %w", ErrCorrupt, fname, err)
			}
			if !l.visit(base+string(fname), ki) {
				return false, nil
			}
			fok = files.Next()
			continue
		}
		sub := base + d.name + "/"
		if l.expand {
			if more, err := l.list(d.id, sub, "", after); err != nil || !more {
				return false, err
			}
		} else if sub > after && !l.visit(sub, nil) {
			return false, nil
		}
		d, dok = ds.next()
	}
	if ds.err != nil {
		return false, ds.err
	}
	if err := files.Error(); err != nil {
		return false, err
	}
	return true, ds.it.Error()
}

func (rd *Reader) listFSO(bk *stratov1.BucketRecord, prefix, after, delim string, limit int) (*stratov1.ListKeysResponse, error) {
	if delim != "" && delim != "/" {
		return nil, fmt.Errorf("%w: FSO bucket %s/%s lists with delimiter \"/\" or none, not %q", ErrInvalid, bk.Volume, bk.Name, delim)
	}
	res := &stratov1.ListKeysResponse{}
	dirPath, namePrefix := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dirPath, namePrefix = prefix[:i], prefix[i+1:]
	}
	clean, err := CleanPath(dirPath)
	if err != nil || (clean != dirPath) {
		return res, nil // no key has this prefix
	}
	rs := rd.resolver()
	defer rd.release(rs)
	id, err := rs.dir(bk.Id, dirPath, 0, ErrFileNotFound)
	if errorsIsAny(err, ErrNotFound, ErrFailedPrecondition) {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	base := ""
	if dirPath != "" {
		base = dirPath + "/"
	}
	n := 0
	l := &fsoLister{rd: rd, rs: rs, expand: delim == "", visit: func(name string, ki *stratov1.KeyRecord) bool {
		if n == limit {
			res.Truncated = true
			return false
		}
		n++
		res.NextStartAfter = name
		if ki == nil {
			res.CommonPrefixes = append(res.CommonPrefixes, name)
			return true
		}
		ki.Volume, ki.Bucket, ki.Name = bk.Volume, bk.Name, name
		res.Keys = append(res.Keys, KeyInfo(ki))
		return true
	}}
	if _, err := l.list(id, base, namePrefix, after); err != nil {
		return nil, err
	}
	return res, nil
}
