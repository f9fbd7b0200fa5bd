package namespace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// resolver walks FSO paths: one point lookup in the directory table per
// component (a cache hit instead, for readers).
type resolver struct {
	r      pebble.Reader
	cache  *dirCache   // readers' cache; nil in Apply
	acache *applyCache // Apply's cache; nil in readers
	buf    []byte
}

// lookupDir returns the object ID of directory (parent, name).
func (rs *resolver) lookupDir(parent uint64, name string) (uint64, bool, error) {
	if rs.acache != nil {
		return rs.lookupDirApply(rs.acache, parent, name)
	}
	var gen uint64
	var fillOK bool
	if rs.cache != nil {
		if id, ok := rs.cache.get(parent, name); ok {
			return id, true, nil
		}
		gen, fillOK = rs.cache.token()
	}
	rs.buf = childKey(rs.buf, tagDir, parent, name)
	v, closer, err := rs.r.Get(rs.buf)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	id, err := dirObjectID(v)
	closer.Close()
	if err != nil {
		return 0, false, err
	}
	if fillOK {
		rs.cache.fill(parent, name, id, gen)
	}
	return id, true, nil
}

func (rs *resolver) fileExists(parent uint64, name string) (bool, error) {
	if c := rs.acache; c != nil {
		known, err := rs.knowKids(c, parent)
		if err != nil {
			return false, err
		}
		if known && c.absent(tagFile, parent, name) {
			if c.verify {
				rs.verifyAbsent(tagFile, parent, name)
			}
			return false, nil
		}
	}
	rs.buf = childKey(rs.buf, tagFile, parent, name)
	return exists(rs.r, rs.buf)
}

// dir resolves the clean path p ("" is the root, whose ID is root) to a
// directory ID. A missing component yields notFound, a file in the way
// ErrNotADirectory, both naming the path up to that component. If avoid is
// met on the way, the result is ErrRenameUnderSelf.
func (rs *resolver) dir(root uint64, p string, avoid uint64, notFound error) (uint64, error) {
	id := root
	if avoid != 0 && id == avoid {
		return 0, fmt.Errorf("%w: %s", ErrRenameUnderSelf, p)
	}
	for i := 0; i < len(p); {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			j = len(p)
		} else {
			j += i
		}
		name := p[i:j]
		child, ok, err := rs.lookupDir(id, name)
		if err != nil {
			return 0, err
		}
		if !ok {
			isFile, err := rs.fileExists(id, name)
			if err != nil {
				return 0, err
			}
			if isFile {
				return 0, fmt.Errorf("%w: %s", ErrNotADirectory, p[:j])
			}
			return 0, fmt.Errorf("%w: %s", notFound, p[:j])
		}
		if avoid != 0 && child == avoid {
			return 0, fmt.Errorf("%w: %s", ErrRenameUnderSelf, p)
		}
		id = child
		i = j + 1
	}
	return id, nil
}

// hasChildren reports whether directory id has any entry in the directory
// or file table.
func hasChildren(r pebble.Reader, id uint64) (bool, error) {
	for _, tag := range []byte{tagDir, tagFile} {
		p := idKey(nil, tag, id)
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
		if err != nil {
			return false, err
		}
		found := it.First()
		if err := it.Close(); err != nil {
			return false, err
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}
