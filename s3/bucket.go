package s3

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// timeFormat is S3's timestamps in XML bodies.
const timeFormat = "2006-01-02T15:04:05.000Z"

func xmlTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(timeFormat) }

type owner struct {
	ID          string
	DisplayName string
}

func ownerOf(name string) *owner {
	if name == "" {
		name = "strato"
	}
	return &owner{ID: name, DisplayName: name}
}

type listAllMyBucketsResult struct {
	XMLName           xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListAllMyBucketsResult"`
	Owner             *owner
	Buckets           []bucketEntry `xml:"Buckets>Bucket"`
	ContinuationToken string        `xml:",omitempty"`
	Prefix            string        `xml:",omitempty"`
}

type bucketEntry struct {
	Name         string
	CreationDate string
	BucketRegion string `xml:",omitempty"`
}

// listBuckets serves ListBuckets: every bucket, or with max-buckets a page
// of them, continued by continuation-token (the last name listed,
// base64url); prefix and bucket-region filter.
func (g *Gateway) listBuckets(rq *request) error {
	q := rq.r.URL.Query()
	prefix := q.Get("prefix")
	res := listAllMyBucketsResult{Owner: ownerOf("s3"), Prefix: prefix, Buckets: []bucketEntry{}}
	var (
		bs        []*stratov1.BucketInfo
		truncated bool
		err       error
	)
	if r := q.Get("bucket-region"); r != "" && r != g.opts.Region {
		return rq.writeXML(200, res) // every bucket is in the gateway's region
	}
	if v, paged := q["max-buckets"]; paged {
		limit, perr := strconv.Atoi(v[0])
		if perr != nil || limit < 1 || limit > 10000 {
			return withFields(errf(ErrInvalidArgument, "Argument max-buckets must be an integer between 1 and 10000."),
				"ArgumentName", "max-buckets", "ArgumentValue", v[0])
		}
		after := ""
		if tok := q.Get("continuation-token"); tok != "" {
			raw, derr := base64.RawURLEncoding.DecodeString(tok)
			if derr != nil {
				return errf(ErrInvalidArgument, "The continuation token provided is incorrect")
			}
			after = string(raw)
		}
		bs, truncated, err = g.c.ListBucketsPage(rq.ctx, g.volume, prefix, after, limit)
	} else {
		bs, err = g.c.ListBuckets(rq.ctx, g.volume, prefix)
	}
	if err != nil {
		return fromClient(err, nil)
	}
	for _, b := range bs {
		res.Buckets = append(res.Buckets, bucketEntry{Name: b.Name, CreationDate: xmlTime(b.CreationTimeUnixMs), BucketRegion: g.opts.Region})
	}
	if truncated && len(bs) > 0 {
		res.ContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(bs[len(bs)-1].Name))
	}
	return rq.writeXML(200, res)
}

type createBucketConfiguration struct {
	XMLName            xml.Name `xml:"CreateBucketConfiguration"`
	LocationConstraint string
	Tags               []tag `xml:"Tags>Tag"`
}

// readBucketConfiguration reads a CreateBucket's configuration (none: an
// empty body) and returns its tag set encoded as the bucket's tagging
// attribute stores it ("": none).
func (g *Gateway) readBucketConfiguration(rq *request) (string, error) {
	if rq.body.size == 0 {
		return "", rq.body.drain()
	}
	var cfg createBucketConfiguration
	if err := rq.decodeXML(&cfg, 64<<10); err != nil {
		return "", err
	}
	// The gateway serves one region. us-east-1 is never a constraint:
	// AWS refuses it named, as it does a region it does not serve.
	if lc := cfg.LocationConstraint; lc != "" && (lc != g.opts.Region || lc == "us-east-1") {
		return "", ErrInvalidLocationConstraint
	}
	return taggingBody{TagSet: cfg.Tags}.encode(maxBucketTags)
}

func (g *Gateway) createBucket(rq *request) error {
	tags, err := g.readBucketConfiguration(rq)
	if err != nil {
		return err
	}
	acls, access, err := g.newBucketAccess(rq)
	if err != nil {
		return err
	}
	if tags != "" {
		access[attrTagging] = tags // set with the bucket's access, below
	}
	lock := false
	switch v := strings.ToLower(strings.TrimSpace(rq.r.Header.Get(headerBucketLockOn))); v {
	case "":
	case "true":
		lock = true
	case "false":
	default:
		return withFields(errf(ErrInvalidArgument, "x-amz-bucket-object-lock-enabled must be true or false"),
			"ArgumentName", "x-amz-bucket-object-lock-enabled", "ArgumentValue", v)
	}
	_, err = g.c.CreateBucket(rq.ctx, &stratov1.CreateBucketRequest{Volume: g.volume, Name: rq.bucket,
		Layout: stratov1.BucketLayout_LAYOUT_OBS, Owner: "s3", Acls: acls, ObjectLock: lock})
	if errors.Is(err, client.ErrInvalid) {
		return ErrInvalidBucketName
	}
	if err != nil {
		return fromClient(err, nil)
	}
	if err := g.setBucketAttrs(rq, access); err != nil {
		// A bucket without its ownership would take any ACL: it goes.
		_ = g.c.DeleteBucket(rq.ctx, g.volume, rq.bucket)
		return err
	}
	g.policies.forget(rq.bucket)
	rq.w.Header().Set("Location", "/"+rq.bucket)
	rq.w.Header().Set("x-amz-bucket-arn", "arn:aws:s3:::"+rq.bucket)
	return rq.writeEmpty(200)
}

func (g *Gateway) getBucket(rq *request) (*stratov1.BucketInfo, error) {
	b, err := g.c.GetBucket(rq.ctx, g.volume, rq.bucket)
	if errors.Is(err, client.ErrInvalid) || errors.Is(err, client.ErrNotFound) {
		return nil, ErrNoSuchBucket
	}
	if err != nil {
		return nil, fromClient(err, nil)
	}
	return b, nil
}

func (g *Gateway) headBucket(rq *request) error {
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	rq.w.Header().Set("x-amz-bucket-region", g.opts.Region)
	return rq.writeEmpty(200)
}

func (g *Gateway) deleteBucket(rq *request) error {
	err := g.c.DeleteBucket(rq.ctx, g.volume, rq.bucket)
	if errors.Is(err, client.ErrInvalid) {
		return ErrNoSuchBucket
	}
	if err != nil {
		return fromClient(err, nil)
	}
	// Its uploads in progress go with it, as at AWS: a new bucket of the
	// same name must not list them.
	if err := g.dropUploads(rq.ctx, rq.bucket); err != nil {
		g.opts.Logger.Warn("s3: uploads of a deleted bucket left for the cleanup", "bucket", rq.bucket, "err", err)
	}
	return rq.writeEmpty(http.StatusNoContent)
}

type locationConstraint struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LocationConstraint"`
	Region  string   `xml:",chardata"`
}

func (g *Gateway) getBucketLocation(rq *request) error {
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	region := g.opts.Region
	if region == "us-east-1" {
		region = ""
	}
	return rq.writeXML(200, locationConstraint{Region: region})
}
