package namespace

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Reads of S3 versions (versions.go has the layout).

// versionInfo is the API's view of version rec of key name in bk.
func versionInfo(bk *stratov1.BucketRecord, name string, rec *stratov1.KeyRecord) *stratov1.KeyInfo {
	rec.Volume, rec.Bucket, rec.Name = bk.Volume, bk.Name, name
	ki := KeyInfo(rec)
	ki.VersionId = VersionID(rec)
	return ki
}

// lookupVersion is LookupKey of one version of an OBS key.
func (rd *Reader) lookupVersion(bk *stratov1.BucketRecord, name, versionID string) (*stratov1.LookupKeyResponse, error) {
	seq, null, err := parseVersionID(versionID)
	if err != nil {
		return nil, err
	}
	cur := &stratov1.KeyRecord{}
	if ok, err := get(rd.r, childKey(nil, tagKey, bk.Id, name), cur); err != nil {
		return nil, err
	} else if ok && VersionID(cur) == versionID {
		return &stratov1.LookupKeyResponse{Key: versionInfo(bk, name, cur)}, nil
	}
	var found *stratov1.KeyRecord
	if !null {
		rec := &stratov1.KeyRecord{}
		if ok, err := get(rd.r, versionKey(nil, bk.Id, name, seq), rec); err != nil {
			return nil, err
		} else if ok {
			found = rec
		}
	} else if err := eachVersion(rd.r, bk.Id, name, func(_ []byte, r *stratov1.KeyRecord) bool {
		if isNullVersion(r) {
			found = r
			return false
		}
		return true
	}); err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: %s/%s/%s has no version %s", ErrKeyNotFound, bk.Volume, bk.Name, name, versionID)
	}
	return &stratov1.LookupKeyResponse{Key: versionInfo(bk, name, found)}, nil
}

// latestMarker answers a LookupKey with delete_markers of a key without a
// record in the key table: its latest version when that is a delete marker.
func (rd *Reader) latestMarker(bk *stratov1.BucketRecord, name string) (*stratov1.LookupKeyResponse, error) {
	var latest *stratov1.KeyRecord
	if err := eachVersion(rd.r, bk.Id, name, func(_ []byte, r *stratov1.KeyRecord) bool {
		latest = r
		return false
	}); err != nil {
		return nil, err
	}
	if latest == nil || !latest.DeleteMarker {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrKeyNotFound, bk.Volume, bk.Name, name)
	}
	return &stratov1.LookupKeyResponse{Key: versionInfo(bk, name, latest)}, nil
}

// ListKeyVersions lists the versions of an OBS bucket's keys: a merge of
// the key table (the latest versions that are objects) and the version
// table, by key, newest first.
func (rd *Reader) ListKeyVersions(req *stratov1.ListKeyVersionsRequest) (*stratov1.ListKeyVersionsResponse, error) {
	if err := rd.authorized(rd.caller, bucketKind, req.GetVolume(), req.GetBucket(), "", RightList); err != nil {
		return nil, err
	}
	bk, err := rd.bucket(req.GetVolume(), req.GetBucket())
	if err != nil {
		return nil, err
	}
	if isFSO(bk) {
		return nil, fmt.Errorf("%w: %s/%s is a file-system (FSO) bucket: it keeps no versions", ErrWrongLayout, bk.Volume, bk.Name)
	}
	if len(req.GetDelimiter()) > 1 {
		return nil, fmt.Errorf("%w: delimiter %q must be one character", ErrInvalid, req.GetDelimiter())
	}
	if req.GetVersionIdMarker() != "" && req.GetKeyMarker() == "" {
		return nil, fmt.Errorf("%w: a version-id-marker needs a key-marker", ErrInvalid)
	}
	l := &versionLister{rd: rd, bk: bk, prefix: req.GetPrefix(), delim: req.GetDelimiter(), limit: rd.limit(req.GetLimit()),
		kp: idKey(nil, tagKey, bk.Id), vp: idKey(nil, tagVersion, bk.Id)}
	return l.list(req.GetKeyMarker(), req.GetVersionIdMarker())
}

// versionLister is one page of ListKeyVersions: two iterators, over the
// key table (kp) and the version table (vp), both under prefix.
type versionLister struct {
	rd            *Reader
	bk            *stratov1.BucketRecord
	prefix, delim string
	limit         int
	kp, vp        []byte
	k, v          *pebble.Iterator
	kOK, vOK      bool
}

func (l *versionLister) list(keyMarker, versionMarker string) (*stratov1.ListKeyVersionsResponse, error) {
	kLower := append(append([]byte(nil), l.kp...), l.prefix...)
	vLower := append(append([]byte(nil), l.vp...), l.prefix...)
	var err error
	if l.k, err = l.rd.r.NewIter(&pebble.IterOptions{LowerBound: kLower, UpperBound: prefixEnd(kLower)}); err != nil {
		return nil, err
	}
	defer func() { _ = l.k.Close() }()
	if l.v, err = l.rd.r.NewIter(&pebble.IterOptions{LowerBound: vLower, UpperBound: prefixEnd(vLower)}); err != nil {
		return nil, err
	}
	defer func() { _ = l.v.Close() }()
	midKey, err := l.start(keyMarker, versionMarker)
	if err != nil {
		return nil, err
	}
	res, err := l.page(midKey)
	if err != nil {
		return nil, err
	}
	if err := l.k.Error(); err != nil {
		return nil, err
	}
	return res, l.v.Error()
}

// start positions the iterators after the markers; midKey is the key whose
// versions the page resumes within (none of them is then the latest shown).
func (l *versionLister) start(keyMarker, versionMarker string) (midKey string, err error) {
	if keyMarker == "" || keyMarker < l.prefix {
		l.kOK, l.vOK = l.k.First(), l.v.First()
		return "", nil
	}
	if rest, ok := strings.CutPrefix(keyMarker, l.prefix); ok && l.delim != "" && versionMarker == "" &&
		strings.Index(rest, l.delim) == len(rest)-1 {
		// The previous page ended with this common prefix.
		end := prefixEnd([]byte(keyMarker))
		l.kOK = l.k.SeekGE(append(append([]byte(nil), l.kp...), end...))
		l.vOK = l.v.SeekGE(append(append([]byte(nil), l.vp...), end...))
		return "", nil
	}
	afterKey := append(append(append([]byte(nil), l.kp...), keyMarker...), 0)
	l.kOK = l.k.SeekGE(afterKey)
	if versionMarker == "" {
		l.vOK = l.v.SeekGE(append(append(append([]byte(nil), l.vp...), keyMarker...), 1))
		return "", nil
	}
	seq, null, err := parseVersionID(versionMarker)
	if err != nil {
		return "", err
	}
	cur := &stratov1.KeyRecord{}
	if ok, err := get(l.rd.r, childKey(nil, tagKey, l.bk.Id, keyMarker), cur); err != nil {
		return "", err
	} else if ok && VersionID(cur) == versionMarker {
		l.vOK = l.v.SeekGE(versionPrefix(nil, l.bk.Id, keyMarker))
		return keyMarker, nil
	}
	pos := versionKey(nil, l.bk.Id, keyMarker, seq)
	if null {
		pos = nil
		if err := eachVersion(l.rd.r, l.bk.Id, keyMarker, func(k []byte, r *stratov1.KeyRecord) bool {
			if isNullVersion(r) {
				pos = k
				return false
			}
			return true
		}); err != nil {
			return "", err
		}
		if pos == nil { // no such version: after the key's versions
			pos = append(append(append([]byte(nil), l.vp...), keyMarker...), 1)
		}
	}
	l.vOK = l.v.SeekGE(pos)
	if l.vOK && bytes.Equal(l.v.Key(), pos) {
		l.vOK = l.v.Next()
	}
	return keyMarker, nil
}

// page lists from where the iterators are.
func (l *versionLister) page(midKey string) (*stratov1.ListKeyVersionsResponse, error) {
	res := &stratov1.ListKeyVersionsResponse{}
	var lastKey, lastVersioned string // the last key seen in the key table; in the version table
	n := 0
	for l.kOK || l.vOK {
		var name []byte
		fromK := false
		if l.kOK {
			name, fromK = l.k.Key()[len(l.kp):], true
		}
		if l.vOK {
			vk := l.v.Key()
			vname := vk[len(l.vp) : len(vk)-9]
			if !fromK || bytes.Compare(vname, name) < 0 {
				name, fromK = vname, false
			}
		}
		if n == l.limit {
			res.Truncated = true
			break
		}
		if l.delim != "" {
			if i := strings.Index(string(name[len(l.prefix):]), l.delim); i >= 0 {
				cp := string(name[:len(l.prefix)+i+1])
				res.CommonPrefixes = append(res.CommonPrefixes, cp)
				res.NextKeyMarker, res.NextVersionIdMarker = cp, ""
				n++
				end := prefixEnd([]byte(cp))
				l.kOK = l.k.SeekGE(append(append([]byte(nil), l.kp...), end...))
				l.vOK = l.v.SeekGE(append(append([]byte(nil), l.vp...), end...))
				continue
			}
		}
		rec := &stratov1.KeyRecord{}
		val := l.v.Value()
		if fromK {
			val = l.k.Value()
		}
		if err := proto.Unmarshal(val, rec); err != nil {
			return nil, fmt.Errorf("%w: version of %q: %w", ErrCorrupt, name, err)
		}
		key := string(name)
		rec.Blocks = nil
		ki := versionInfo(l.bk, key, rec)
		if fromK {
			ki.IsLatest, lastKey = true, key
			l.kOK = l.k.Next()
		} else {
			ki.IsLatest = key != lastKey && key != midKey && key != lastVersioned
			lastVersioned = key
			l.vOK = l.v.Next()
		}
		res.Versions = append(res.Versions, ki)
		res.NextKeyMarker, res.NextVersionIdMarker = key, ki.VersionId
		n++
	}
	if !res.Truncated {
		res.NextKeyMarker, res.NextVersionIdMarker = "", ""
	}
	return res, nil
}
