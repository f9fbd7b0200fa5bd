package s3

import (
	"encoding/xml"
	"errors"
	"strings"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// versionEntry is a Version or a DeleteMarker of ListVersionsResult (its
// XMLName says which), in key order, newest first.
type versionEntry struct {
	XMLName           xml.Name
	Key               string
	VersionID         string `xml:"VersionId"`
	IsLatest          bool
	LastModified      string
	ETag              string   `xml:",omitempty"`
	Size              *int64   `xml:",omitempty"`
	StorageClass      string   `xml:",omitempty"`
	Owner             *owner   `xml:",omitempty"`
	ChecksumAlgorithm []string `xml:",omitempty"`
	ChecksumType      string   `xml:",omitempty"` // FULL_OBJECT, or COMPOSITE (a multipart object's)
}

type listVersionsResult struct {
	XMLName             xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListVersionsResult"`
	Name                string
	Prefix              string
	KeyMarker           string
	VersionIDMarker     string `xml:"VersionIdMarker"`
	NextKeyMarker       string `xml:",omitempty"`
	NextVersionIDMarker string `xml:"NextVersionIdMarker,omitempty"`
	MaxKeys             int
	Delimiter           string `xml:",omitempty"`
	EncodingType        string `xml:",omitempty"`
	IsTruncated         bool
	Entries             []versionEntry
	CommonPrefixes      []commonPrefix
}

// listObjectVersions serves ListObjectVersions (GET ?versions): one page of
// meta's ListKeyVersions.
func (g *Gateway) listObjectVersions(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	q := rq.r.URL.Query()
	prefix, delimiter, enc := q.Get("prefix"), q.Get("delimiter"), q.Get("encoding-type")
	km, vm := q.Get("key-marker"), q.Get("version-id-marker")
	max, code, err := listQuery(q)
	if err != nil {
		return err
	}
	if vm != "" && km == "" {
		return withFields(errf(ErrInvalidArgument, "A version-id marker cannot be specified without a key marker."),
			"ArgumentName", "version-id-marker", "ArgumentValue", vm)
	}
	bk, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	res := listVersionsResult{Name: rq.bucket, Prefix: code(prefix), KeyMarker: code(km), VersionIDMarker: vm, MaxKeys: max,
		Delimiter: code(delimiter), EncodingType: enc}
	if max == 0 {
		return rq.writeXML(200, res)
	}
	var page *stratov1.ListKeyVersionsResponse
	if bk.GetLayout() == stratov1.BucketLayout_LAYOUT_FSO {
		page, err = g.fsoVersions(rq, prefix, delimiter, km, max)
	} else {
		page, err = g.c.ListKeyVersions(rq.ctx, &stratov1.ListKeyVersionsRequest{Volume: g.volume, Bucket: rq.bucket, Prefix: prefix,
			Delimiter: delimiter, KeyMarker: km, VersionIdMarker: vm, Limit: int32(max)})
		if errors.Is(err, client.ErrInvalid) && vm != "" {
			return withFields(errInvalidVersionID, "ArgumentName", "version-id-marker", "ArgumentValue", vm)
		}
	}
	if err != nil {
		return fromClient(err, nil)
	}
	for _, v := range page.Versions {
		e := versionEntry{Key: code(v.Name), VersionID: v.VersionId, IsLatest: v.IsLatest,
			LastModified: xmlTime(v.ModificationTimeUnixMs), Owner: ownerOf(v.Owner)}
		if v.DeleteMarker {
			e.XMLName.Local = "DeleteMarker"
		} else {
			m := attrsOf(v)
			size := v.Size
			e.XMLName.Local, e.ETag, e.Size, e.StorageClass = "Version", etagOf(v, m), &size, "STANDARD"
			for _, a := range checksumAlgorithms {
				if v := m[checksumHeader(a)]; v != "" {
					e.ChecksumAlgorithm, e.ChecksumType = []string{upperAlgo(a)}, "FULL_OBJECT"
					if strings.Contains(v, "-") {
						e.ChecksumType = "COMPOSITE"
					}
				}
			}
		}
		res.Entries = append(res.Entries, e)
	}
	for _, p := range page.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: code(p)})
	}
	res.IsTruncated = page.Truncated
	if page.Truncated {
		res.NextKeyMarker, res.NextVersionIDMarker = code(page.NextKeyMarker), page.NextVersionIdMarker
	}
	return rq.writeXML(200, res)
}

// fsoVersions is a page of ListObjectVersions of a file-system bucket,
// which keeps no versions: its keys, each its null version.
func (g *Gateway) fsoVersions(rq *request, prefix, delimiter, after string, max int) (*stratov1.ListKeyVersionsResponse, error) {
	keys, prefixes, truncated, next, err := g.listPage(rq, prefix, delimiter, after, max)
	if err != nil {
		return nil, err
	}
	page := &stratov1.ListKeyVersionsResponse{Versions: keys, CommonPrefixes: prefixes, Truncated: truncated, NextKeyMarker: next}
	for _, k := range keys {
		k.VersionId, k.IsLatest = "null", true
		if k.Name == next {
			page.NextVersionIdMarker = "null"
		}
	}
	return page, nil
}
