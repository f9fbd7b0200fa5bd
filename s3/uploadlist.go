package s3

import (
	"encoding/xml"
	"errors"
	"sort"
	"strings"

	"github.com/strato-io/strato/client"
)

type uploadEntry struct {
	Key               string
	UploadID          string `xml:"UploadId"`
	Initiator         *owner
	Owner             *owner
	StorageClass      string
	Initiated         string
	ChecksumAlgorithm string `xml:",omitempty"`
	ChecksumType      string `xml:",omitempty"`
}

type listUploadsResult struct {
	XMLName            xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListMultipartUploadsResult"`
	Bucket             string
	KeyMarker          string
	UploadIDMarker     string `xml:"UploadIdMarker"`
	NextKeyMarker      string
	NextUploadIDMarker string `xml:"NextUploadIdMarker"`
	Prefix             string
	Delimiter          string `xml:",omitempty"`
	MaxUploads         int
	IsTruncated        bool
	Uploads            []uploadEntry  `xml:"Upload"`
	CommonPrefixes     []commonPrefix `xml:",omitempty"`
}

// pendingUpload is an upload under way, as its marker records it.
type pendingUpload struct {
	key, id string
	at      int64
	sum     uploadChecksum
}

// listMultipartUploads lists the uploads under way of a bucket; it reads
// every upload marker of the bucket (not every part).
func (g *Gateway) listMultipartUploads(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	q := rq.r.URL.Query()
	prefix, delimiter := q.Get("prefix"), q.Get("delimiter")
	keyMarker, idMarker := q.Get("key-marker"), q.Get("upload-id-marker")
	maxU := 1000
	if v := q.Get("max-uploads"); v != "" {
		n, err := parseCount("max-uploads", v)
		if err != nil {
			return err
		}
		maxU = min(n, 1000)
	}
	res := listUploadsResult{Bucket: rq.bucket, KeyMarker: keyMarker, UploadIDMarker: idMarker, Prefix: prefix,
		Delimiter: delimiter, MaxUploads: maxU}
	markers, err := g.listAll(rq.ctx, rq.bucket, "", "/")
	if err != nil && !errors.Is(err, client.ErrNotFound) {
		return fromClient(err, nil)
	}
	var ups []pendingUpload
	for _, k := range markers {
		if key, ok := attrsOf(k)[attrUploadKey]; ok && strings.HasPrefix(key, prefix) {
			ups = append(ups, pendingUpload{key, k.Name, k.CreationTimeUnixMs, uploadChecksumOf(attrsOf(k))})
		}
	}
	sort.Slice(ups, func(i, j int) bool {
		if ups[i].key != ups[j].key {
			return ups[i].key < ups[j].key
		}
		return ups[i].at < ups[j].at
	})
	if ups, err = afterMarkers(ups, keyMarker, idMarker); err != nil {
		return err
	}
	pageUploads(&res, ups)
	return rq.writeXML(200, res)
}

// afterMarkers is the uploads (sorted by key, then by age) a listing from
// key-marker and upload-id-marker shows. Without an upload-id-marker, the
// keys after key-marker; with one, the uploads after that upload, which is
// one of key-marker's (AWS) or, when the marker is a common prefix or no
// key, one of the first key after it (versitygw's reading, whose suite
// pages so). Any other upload-id-marker is InvalidArgument. An
// upload-id-marker without a key-marker is ignored.
func afterMarkers(ups []pendingUpload, keyMarker, idMarker string) ([]pendingUpload, error) {
	if keyMarker == "" {
		return ups, nil
	}
	i := sort.Search(len(ups), func(i int) bool { return ups[i].key >= keyMarker })
	if idMarker == "" {
		for i < len(ups) && ups[i].key == keyMarker {
			i++
		}
		return ups[i:], nil
	}
	first := ""
	for j := i; j < len(ups); j++ {
		if ups[j].key != keyMarker && first == "" {
			first = ups[j].key
		}
		if k := ups[j].key; k != keyMarker && k != first {
			break
		}
		if ups[j].id == idMarker {
			return ups[j+1:], nil
		}
	}
	return nil, withFields(errf(ErrInvalidArgument, "Invalid uploadId marker"), "ArgumentName", "upload-id-marker", "ArgumentValue", idMarker)
}

// pageUploads fills res with the first MaxUploads uploads and common
// prefixes of ups; when more follow, the Next markers name the last one
// given (a common prefix, and the upload that made it).
func pageUploads(res *listUploadsResult, ups []pendingUpload) {
	seen := map[string]bool{}
	n := 0
	for _, u := range ups {
		cp := ""
		if res.Delimiter != "" {
			if i := strings.Index(u.key[len(res.Prefix):], res.Delimiter); i >= 0 {
				cp = u.key[:len(res.Prefix)+i+len(res.Delimiter)]
				if seen[cp] {
					continue // given already
				}
			}
		}
		if n == res.MaxUploads {
			res.IsTruncated = true
			return
		}
		n++
		res.NextKeyMarker, res.NextUploadIDMarker = u.key, u.id
		if cp != "" {
			seen[cp] = true
			res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: cp})
			res.NextKeyMarker = cp
			continue
		}
		res.Uploads = append(res.Uploads, uploadEntry{Key: u.key, UploadID: u.id, Initiator: ownerOf("s3"), Owner: ownerOf("s3"),
			StorageClass: "STANDARD", Initiated: xmlTime(u.at), ChecksumAlgorithm: upperAlgo(u.sum.algo), ChecksumType: u.sum.typ})
	}
	res.NextKeyMarker, res.NextUploadIDMarker = "", "" // the last page
}
