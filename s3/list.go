package s3

import (
	"encoding/base64"
	"encoding/xml"
	"net/url"
	"strconv"
	"strings"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

type listEntry struct {
	Key               string
	LastModified      string
	ETag              string
	Size              int64
	StorageClass      string
	Owner             *owner   `xml:",omitempty"`
	ChecksumAlgorithm []string `xml:",omitempty"`
	ChecksumType      string   `xml:",omitempty"`
}

type commonPrefix struct{ Prefix string }

type listBucketResult struct {
	XMLName               xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string
	Prefix                string
	Marker                *string `xml:",omitempty"`
	NextMarker            string  `xml:",omitempty"`
	StartAfter            string  `xml:",omitempty"`
	ContinuationToken     string  `xml:",omitempty"`
	NextContinuationToken string  `xml:",omitempty"`
	KeyCount              *int    `xml:",omitempty"`
	MaxKeys               int
	Delimiter             string `xml:",omitempty"`
	EncodingType          string `xml:",omitempty"`
	IsTruncated           bool
	Contents              []listEntry
	CommonPrefixes        []commonPrefix
}

// listPage lists up to max keys and common prefixes after startAfter, a
// page of meta at a time (never the bucket whole).
func (g *Gateway) listPage(rq *request, prefix, delimiter, startAfter string, max int) (
	keys []*stratov1.KeyInfo, prefixes []string, truncated bool, next string, err error) {
	after := startAfter
	for len(keys)+len(prefixes) < max {
		resp, err := g.c.ListKeys(rq.ctx, &stratov1.ListKeysRequest{Volume: g.volume, Bucket: rq.bucket, Prefix: prefix,
			StartAfter: after, Delimiter: delimiter, Limit: int32(max - len(keys) - len(prefixes))})
		if err != nil {
			return nil, nil, false, "", fromClient(err, nil)
		}
		keys = append(keys, resp.Keys...)
		prefixes = append(prefixes, resp.CommonPrefixes...)
		if resp.NextStartAfter != "" {
			after = resp.NextStartAfter
		}
		if !resp.Truncated || len(resp.Keys)+len(resp.CommonPrefixes) == 0 {
			return keys, prefixes, false, "", nil
		}
	}
	return keys, prefixes, true, after, nil
}

// listObjects serves ListObjects (v1) and ListObjectsV2.
func (g *Gateway) listObjects(rq *request, v2 bool) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	q := rq.r.URL.Query()
	prefix, delimiter, enc := q.Get("prefix"), q.Get("delimiter"), q.Get("encoding-type")
	max, code, err := listQuery(q)
	if err != nil {
		return err
	}
	res := listBucketResult{Name: rq.bucket, Prefix: code(prefix), MaxKeys: max, Delimiter: code(delimiter), EncodingType: enc,
		Contents: []listEntry{}}
	startAfter := ""
	fetchOwner := !v2
	if v2 {
		fetchOwner = q.Get("fetch-owner") == "true"
		if sa := q.Get("start-after"); sa != "" {
			startAfter = sa
			res.StartAfter = code(sa)
		}
		if ct := q.Get("continuation-token"); ct != "" {
			res.ContinuationToken = ct
			b, err := base64.RawURLEncoding.DecodeString(ct)
			if err != nil {
				return errf(ErrInvalidArgument, "The continuation token provided is incorrect")
			}
			startAfter = string(b)
		}
	} else {
		marker := q.Get("marker")
		startAfter = marker
		if marker != "" {
			m := code(marker)
			res.Marker = &m
		}
	}
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	if max > 0 {
		keys, prefixes, truncated, next, err := g.listPage(rq, prefix, delimiter, startAfter, max)
		if err != nil {
			return err
		}
		res.IsTruncated = truncated
		for _, k := range keys {
			m := attrsOf(k)
			e := listEntry{Key: code(k.Name), LastModified: xmlTime(k.ModificationTimeUnixMs), ETag: etagOf(k, m),
				Size: k.Size, StorageClass: "STANDARD"}
			if fetchOwner {
				e.Owner = ownerOf(k.Owner)
			}
			for _, a := range checksumAlgorithms {
				if m[checksumHeader(a)] != "" {
					e.ChecksumAlgorithm = []string{upperAlgo(a)}
				}
			}
			if c := checksumOf(m); c != nil {
				e.ChecksumType = c.ChecksumType
			}
			res.Contents = append(res.Contents, e)
		}
		for _, p := range prefixes {
			res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: code(p)})
		}
		if truncated {
			if v2 {
				res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(next))
			} else {
				res.NextMarker = code(next)
			}
		}
	}
	if v2 {
		n := len(res.Contents) + len(res.CommonPrefixes)
		res.KeyCount = &n
	}
	return rq.writeXML(200, res)
}

// listQuery checks a listing's encoding-type, delimiter and max-keys and
// returns the page size and the encoding of the names listed.
func listQuery(q url.Values) (max int, code func(string) string, err error) {
	enc := q.Get("encoding-type")
	if enc != "" && enc != "url" {
		return 0, nil, errf(ErrInvalidArgument, "Invalid Encoding Method specified in Request")
	}
	if len(q.Get("delimiter")) > 1 {
		return 0, nil, errf(ErrNotImplemented, "strato lists with a delimiter of one character only")
	}
	max = 1000
	if v := q.Get("max-keys"); v != "" {
		n, err := parseCount("max-keys", v)
		if err != nil {
			return 0, nil, err
		}
		max = min(n, 1000)
	}
	code = func(s string) string {
		if enc == "url" {
			return s3URLEncode(s)
		}
		return s
	}
	return max, code, nil
}

// parseCount parses a query parameter that counts (max-keys, ...), with
// AWS's errors.
func parseCount(name, v string) (int, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	switch {
	case err != nil:
		return 0, withFields(errf(ErrInvalidArgument, "Provided %s not an integer or within integer range", v), "ArgumentName", name, "ArgumentValue", v)
	case n < 0:
		return 0, withFields(errf(ErrInvalidArgument, "Argument %s must be an integer between 0 and 2147483647", v), "ArgumentName", name, "ArgumentValue", v)
	}
	return int(n), nil
}

// upperAlgo is an algorithm's name as S3's elements spell it.
func upperAlgo(a string) string { return strings.ToUpper(a) }

// s3URLEncode is S3's encoding-type=url: query escaping that keeps '/' and
// '*' and escapes '~'.
func s3URLEncode(s string) string {
	return strings.NewReplacer("%2F", "/", "%2A", "*", "~", "%7E").Replace(url.QueryEscape(s))
}
