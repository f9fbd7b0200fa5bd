package s3

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/strato-io/strato/client"
)

// Tagging: a tag set is stored as the attribute x-amz-tagging (a query
// string) of the key or of the bucket. Changing an object's tags rewrites
// its attributes in meta (SetAttributes) with the object ID it was read
// with, so a tag change never lands on a version of the key written in
// between; a bucket's attributes hold nothing else.

// Tag limits (AWS's).
const (
	maxObjectTags = 10
	maxBucketTags = 50
	maxTagKey     = 128
	maxTagValue   = 256
	maxTaggingXML = 64 << 10
)

// taggingBody is a Tagging document as a client sends it (the namespace
// is not required).
type taggingBody struct {
	TagSet []tag `xml:"TagSet>Tag"`
}

// readTagging reads and checks a request's Tagging document; the tag set
// is returned encoded as the attribute stores it ("" when empty).
func (rq *request) readTagging(limit int) (string, error) {
	var body taggingBody
	if err := rq.decodeXML(&body, maxTaggingXML); err != nil {
		return "", err
	}
	return body.encode(limit)
}

// encode checks a Tagging document's tags and returns them as the
// attribute stores them ("" when none).
func (body taggingBody) encode(limit int) (string, error) {
	if len(body.TagSet) > limit {
		return "", tooManyTags(limit)
	}
	v := url.Values{}
	for _, t := range body.TagSet {
		if err := checkTag(t.Key, t.Value); err != nil {
			return "", err
		}
		if v.Has(t.Key) {
			return "", errf(ErrInvalidTag, "Cannot provide multiple Tags with the same key")
		}
		v.Set(t.Key, t.Value)
	}
	return v.Encode(), nil
}

// tooManyTags is AWS's answer to a tag set over its limit.
func tooManyTags(limit int) error {
	if limit == maxObjectTags {
		return s3err("BadRequest", 400, fmt.Sprintf("Object tags cannot be greater than %d", limit))
	}
	return s3err("BadRequest", 400, fmt.Sprintf("Bucket tag count cannot be greater than %d", limit))
}

// checkTag applies AWS's rules to one tag: a key of 1 to 128 characters
// and a value of up to 256, of letters, digits, spaces and + - = . _ : / @;
// no key may start with "aws:".
func checkTag(k, v string) error {
	switch {
	case k == "" || utf8.RuneCountInString(k) > maxTagKey || !validTagText(k):
		return ErrInvalidTag
	case strings.HasPrefix(strings.ToLower(k), "aws:"):
		return errf(ErrInvalidTag, "Your TagKey cannot be prefixed with aws:")
	case utf8.RuneCountInString(v) > maxTagValue || !validTagText(v):
		return errf(ErrInvalidTag, "The TagValue you have provided is invalid")
	}
	return nil
}

func validTagText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 0x80: // letters of any language (AWS: \p{L}\p{Z}\p{N})
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case strings.ContainsRune(" +-=._:/@", r):
		default:
			return false
		}
	}
	return true
}

// tagSetOf decodes a stored tag set, sorted by key.
func tagSetOf(encoded string) []tag {
	out := []tag{}
	if encoded == "" {
		return out
	}
	v, _ := url.ParseQuery(encoded)
	for k := range v {
		out = append(out, tag{Key: k, Value: v.Get(k)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// setObjectTagging replaces an object's tag set ("": none) in meta, read
// and written again if the key is replaced in between.
func (g *Gateway) setObjectTagging(rq *request, encoded string) error {
	for attempt := 0; ; attempt++ {
		ki, vid, err := g.lookupVersion(rq)
		if err != nil {
			return err
		}
		m := attrsOf(ki)
		if encoded == "" {
			delete(m, attrTagging)
		} else {
			m[attrTagging] = encoded
		}
		err = g.c.SetVersionAttributes(rq.ctx, g.volume, rq.bucket, rq.key, vid, ki.GetObjectId(), m.list())
		switch {
		case err == nil:
			setVersion(rq.w.Header(), ki)
			return nil
		case errors.Is(err, client.ErrKeyReplaced) && attempt < 3:
			continue
		}
		return fromClient(err, nil)
	}
}

func (g *Gateway) putObjectTagging(rq *request) error {
	encoded, err := rq.readTagging(maxObjectTags)
	if err != nil {
		return err
	}
	if err := g.setObjectTagging(rq, encoded); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusOK)
}

func (g *Gateway) deleteObjectTagging(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	if err := g.setObjectTagging(rq, ""); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

func (g *Gateway) getBucketTagging(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	b, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	if v := bucketAttr(b, attrTagging); v != "" {
		return rq.writeXML(http.StatusOK, tagging{TagSet: tagSetOf(v)})
	}
	return ErrNoSuchTagSet
}

func (g *Gateway) putBucketTagging(rq *request) error {
	encoded, err := rq.readTagging(maxBucketTags)
	if err != nil {
		return err
	}
	if err := g.setBucketAttr(rq, attrTagging, encoded); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

func (g *Gateway) deleteBucketTagging(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	if err := g.setBucketAttr(rq, attrTagging, ""); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

type tagging struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ Tagging"`
	TagSet  []tag    `xml:"TagSet>Tag"`
}

type tag struct {
	Key   string
	Value string
}

func (g *Gateway) getObjectTagging(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	ki, _, err := g.lookupVersion(rq)
	if err != nil {
		return err
	}
	setVersion(rq.w.Header(), ki)
	return rq.writeXML(200, tagging{TagSet: tagSetOf(attrsOf(ki)[attrTagging])})
}

// bucketTagging serves GET, PUT and DELETE of a bucket's ?tagging.
func (g *Gateway) bucketTagging(rq *request) error {
	switch rq.r.Method {
	case http.MethodGet:
		rq.op = "GetBucketTagging"
		return g.getBucketTagging(rq)
	case http.MethodPut:
		rq.op = "PutBucketTagging"
		return g.putBucketTagging(rq)
	default:
		rq.op = "DeleteBucketTagging"
		return g.deleteBucketTagging(rq)
	}
}
