package s3

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// GetObjectAttributes: what x-amz-object-attributes asks of an object
// (ETag, Checksum, ObjectParts, StorageClass, ObjectSize), from its key
// record alone; the data is not read. A multipart object lists its parts'
// sizes (recorded at Complete), paged by x-amz-max-parts and
// x-amz-part-number-marker.

// objectAttributeNames are the attributes a request may ask for.
var objectAttributeNames = map[string]bool{"ETag": true, "Checksum": true, "ObjectParts": true, "StorageClass": true, "ObjectSize": true}

// checksumElements names each checksum algorithm's element.
var checksumElements = map[string]string{"crc32": "ChecksumCRC32", "crc32c": "ChecksumCRC32C", "crc64nvme": "ChecksumCRC64NVME",
	"sha1": "ChecksumSHA1", "sha256": "ChecksumSHA256", "sha512": "ChecksumSHA512", "md5": "ChecksumMD5",
	"xxhash64": "ChecksumXXHASH64", "xxhash3": "ChecksumXXHASH3", "xxhash128": "ChecksumXXHASH128"}

type objectAttributes struct {
	XMLName      xml.Name           `xml:"http://s3.amazonaws.com/doc/2006-03-01/ GetObjectAttributesResponse"`
	ETag         string             `xml:"ETag,omitempty"`
	Checksum     *attributeChecksum `xml:"Checksum,omitempty"`
	ObjectParts  *objectParts       `xml:"ObjectParts,omitempty"`
	StorageClass string             `xml:"StorageClass,omitempty"`
	ObjectSize   *int64             `xml:"ObjectSize,omitempty"`
}

type attributeChecksum struct {
	Fields       []checksumField
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

// checksumField is one ChecksumX element.
type checksumField struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

type objectParts struct {
	TotalPartsCount      int `xml:"PartsCount"`
	PartNumberMarker     int
	NextPartNumberMarker int
	MaxParts             int
	IsTruncated          bool
	Parts                []objectPart `xml:"Part"`
}

type objectPart struct {
	PartNumber int
	Size       int64
}

func (g *Gateway) getObjectAttributes(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, v := range rq.r.Header.Values("X-Amz-Object-Attributes") {
		for _, a := range strings.Split(v, ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				continue // the SDK sends the header empty when none is asked
			}
			if !objectAttributeNames[a] {
				return errf(ErrInvalidArgument, "Invalid attribute name specified.")
			}
			want[a] = true
		}
	}
	if len(want) == 0 {
		return errf(ErrInvalidRequest, "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty")
	}
	maxParts, marker, err := partsPaging(rq.r.Header)
	if err != nil {
		return err
	}
	ki, _, err := g.lookupVersion(rq)
	if err != nil {
		return err
	}
	setVersion(rq.w.Header(), ki)
	m := attrsOf(ki)
	mtime := time.UnixMilli(ki.GetModificationTimeUnixMs())
	if err := checkConditions(rq.r.Header, "", etagOf(ki, m), mtime); err != nil {
		return err
	}
	var out objectAttributes
	if want["ETag"] {
		out.ETag = strings.Trim(etagOf(ki, m), `"`)
	}
	if want["StorageClass"] {
		out.StorageClass = "STANDARD"
	}
	if want["ObjectSize"] {
		size := ki.GetSize()
		out.ObjectSize = &size
	}
	if want["Checksum"] {
		out.Checksum = checksumOf(m)
	}
	if want["ObjectParts"] {
		out.ObjectParts = partsOf(m, maxParts, marker)
	}
	rq.w.Header().Set("Last-Modified", mtime.UTC().Format(http.TimeFormat))
	return rq.writeXML(http.StatusOK, out)
}

// partsPaging reads x-amz-max-parts (default 1,000) and
// x-amz-part-number-marker.
func partsPaging(h http.Header) (maxParts, marker int, err error) {
	maxParts = 1000
	if v := h.Get("X-Amz-Max-Parts"); v != "" {
		if maxParts, err = strconv.Atoi(v); err != nil || maxParts < 0 {
			return 0, 0, errf(ErrInvalidArgument, "Invalid x-amz-max-parts %q", v)
		}
		maxParts = min(maxParts, 1000)
	}
	if v := h.Get("X-Amz-Part-Number-Marker"); v != "" {
		if marker, err = strconv.Atoi(v); err != nil || marker < 0 {
			return 0, 0, errf(ErrInvalidArgument, "Invalid x-amz-part-number-marker %q", v)
		}
	}
	return maxParts, marker, nil
}

// checksumOf is the object's stored checksum, nil when it has none.
func checksumOf(m attrs) *attributeChecksum {
	for _, algo := range checksumAlgorithms {
		v, el := m[checksumHeader(algo)], checksumElements[algo]
		if v == "" || el == "" {
			continue
		}
		c := &attributeChecksum{ChecksumType: "FULL_OBJECT"}
		if i := strings.IndexByte(v, '-'); i >= 0 {
			v, c.ChecksumType = v[:i], "COMPOSITE"
		}
		c.Fields = []checksumField{{XMLName: xml.Name{Local: el}, Value: v}}
		return c
	}
	return nil
}

// partsOf is a multipart object's parts after marker, at most maxParts;
// nil for an object of one PUT.
func partsOf(m attrs, maxParts, marker int) *objectParts {
	count, _ := strconv.Atoi(m[attrParts])
	if count == 0 {
		return nil
	}
	p := &objectParts{TotalPartsCount: count, PartNumberMarker: marker, MaxParts: maxParts}
	sizes := strings.Split(m[attrPartSize], ",")
	if len(sizes) != count {
		return p // sizes not recorded: the count alone
	}
	for n := marker + 1; n <= count; n++ {
		if len(p.Parts) == maxParts {
			p.IsTruncated = true
			break
		}
		s, _ := strconv.ParseInt(sizes[n-1], 10, 64)
		p.Parts = append(p.Parts, objectPart{PartNumber: n, Size: s})
		p.NextPartNumberMarker = n
	}
	return p
}
