package s3

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client is a minimal S3 client of any S3 endpoint (strato's gateway or
// another): requests signed with AWS Signature Version 4 by the same
// canonicalizer the gateway verifies with (itself checked against the AWS
// SDK's signer), payloads sent as UNSIGNED-PAYLOAD and streamed, path-style
// addressing. `strato s3 cp` and `strato bench s3` are built on it; it is
// not a replacement for an SDK (no retries, no multipart). Safe for
// concurrent use.
type Client struct {
	endpoint          *url.URL
	accessKey, secret string
	region            string
	http              *http.Client
	now               func() time.Time
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Endpoint is the S3 endpoint's URL, e.g. http://127.0.0.1:9878.
	// Required.
	Endpoint string
	// AccessKey and Secret sign the requests. Required.
	AccessKey, Secret string
	// Region is the signature's region. Default: "us-east-1".
	Region string
	// HTTP sends the requests. Default: a client of its own with up to 256
	// idle connections per host.
	HTTP *http.Client
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// NewClient returns a client of an S3 endpoint.
func NewClient(o ClientOptions) (*Client, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("s3: endpoint %q is not an http:// or https:// URL", o.Endpoint)
	}
	if o.AccessKey == "" || o.Secret == "" {
		return nil, errors.New("s3: a client needs an access key and a secret")
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.HTTP == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 256
		o.HTTP = &http.Client{Transport: t}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &Client{endpoint: u, accessKey: o.AccessKey, secret: o.Secret, region: o.Region, http: o.HTTP, now: o.Now}, nil
}

// Do sends one signed request for bucket and key (either may be empty)
// with a body of size bytes (-1: unknown, sent chunked; nil: none) and
// returns the response when its status is 2xx; otherwise the S3 error it
// carries, as an *Error. The caller closes the response's body.
func (c *Client) Do(ctx context.Context, method, bucket, key string, query url.Values, header http.Header, body io.Reader, size int64) (*http.Response, error) {
	u := *c.endpoint
	p := u.Path + "/"
	if bucket != "" {
		p += bucket
		if key != "" {
			p += "/" + key
		}
	}
	u.Path, u.RawPath = p, uriEncode(p, true)
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.ContentLength = size
		if size == 0 {
			req.Body = http.NoBody
		}
	}
	c.sign(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb errorBody
	if xml.Unmarshal(data, &eb) != nil || eb.Code == "" {
		eb.Code, eb.Message = http.StatusText(resp.StatusCode), strings.TrimSpace(string(data))
	}
	return nil, &Error{Code: eb.Code, Status: resp.StatusCode, Message: eb.Message}
}

// sign adds the headers of SigV4 with an unsigned payload.
func (c *Client) sign(req *http.Request) {
	t := c.now().UTC()
	req.Header.Set("X-Amz-Date", t.Format(amzDateFormat))
	req.Header.Set("X-Amz-Content-Sha256", unsignedPayload)
	a := &authRequest{accessKey: c.accessKey, date: t.Format("20060102"), region: c.region, service: "s3",
		amzDate: t.Format(amzDateFormat), payloadHash: unsignedPayload,
		signedHeaders: []string{"host", "x-amz-content-sha256", "x-amz-date"}}
	req.Host = req.URL.Host
	key := signingKey(c.secret, a.date, a.region, a.service)
	sig := hmacSHA256(key, stringToSign(a, canonicalRequest(req, a)))
	req.Header.Set("Authorization", fmt.Sprintf("%s Credential=%s/%s, SignedHeaders=%s, Signature=%x",
		algorithm, a.accessKey, a.scope(), strings.Join(a.signedHeaders, ";"), sig))
}

// CreateBucket creates a bucket; one that exists already is no error.
func (c *Client) CreateBucket(ctx context.Context, bucket string) error {
	resp, err := c.Do(ctx, http.MethodPut, bucket, "", nil, nil, nil, 0)
	if errors.Is(err, ErrBucketAlreadyOwnedByYou) {
		return nil
	}
	if err != nil {
		return err
	}
	return drainClose(resp)
}

// PutObject stores size bytes of body as bucket/key and returns its ETag.
func (c *Client) PutObject(ctx context.Context, bucket, key string, body io.Reader, size int64) (string, error) {
	resp, err := c.Do(ctx, http.MethodPut, bucket, key, nil, nil, body, size)
	if err != nil {
		return "", err
	}
	return resp.Header.Get("ETag"), drainClose(resp)
}

// GetObject opens bucket/key for reading; the caller closes it.
func (c *Client) GetObject(ctx context.Context, bucket, key string) (io.ReadCloser, int64, error) {
	resp, err := c.Do(ctx, http.MethodGet, bucket, key, nil, nil, nil, 0)
	if err != nil {
		return nil, 0, err
	}
	return resp.Body, resp.ContentLength, nil
}

// HeadObject returns the size of bucket/key.
func (c *Client) HeadObject(ctx context.Context, bucket, key string) (int64, error) {
	resp, err := c.Do(ctx, http.MethodHead, bucket, key, nil, nil, nil, 0)
	if err != nil {
		return 0, err
	}
	return resp.ContentLength, drainClose(resp)
}

// DeleteObject deletes bucket/key.
func (c *Client) DeleteObject(ctx context.Context, bucket, key string) error {
	return c.DeleteObjectVersion(ctx, bucket, key, "")
}

// DeleteObjectVersion deletes version versionID of bucket/key for good
// ("": deletes the key, as DeleteObject).
func (c *Client) DeleteObjectVersion(ctx context.Context, bucket, key, versionID string) error {
	var q url.Values
	if versionID != "" {
		q = url.Values{"versionId": {versionID}}
	}
	resp, err := c.Do(ctx, http.MethodDelete, bucket, key, q, nil, nil, 0)
	if err != nil {
		return err
	}
	return drainClose(resp)
}

// EnableVersioning turns versioning on in bucket and checks that the
// endpoint says it is on.
func (c *Client) EnableVersioning(ctx context.Context, bucket string) error {
	conf := `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>`
	q := url.Values{"versioning": {""}}
	resp, err := c.Do(ctx, http.MethodPut, bucket, "", q, nil, strings.NewReader(conf), int64(len(conf)))
	if err != nil {
		return err
	}
	if err := drainClose(resp); err != nil {
		return err
	}
	if resp, err = c.Do(ctx, http.MethodGet, bucket, "", q, nil, nil, 0); err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	var res struct{ Status string }
	if err := xml.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&res); err != nil {
		return fmt.Errorf("s3: a versioning configuration that is not XML: %w", err)
	}
	if res.Status != "Enabled" {
		return fmt.Errorf("s3: bucket %s: versioning is %q after it was enabled", bucket, res.Status)
	}
	return nil
}

// ObjectInfo is one key of a listing, or one version of a key.
type ObjectInfo struct {
	Key       string
	Size      int64
	VersionID string // ListObjectVersions' only
}

// ListObjects returns one page (ListObjectsV2) of up to maxKeys keys
// under prefix and the token of the next page ("" at the end).
func (c *Client) ListObjects(ctx context.Context, bucket, prefix, token string, maxKeys int) ([]ObjectInfo, string, error) {
	q := url.Values{"list-type": {"2"}, "max-keys": {strconv.Itoa(maxKeys)}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if token != "" {
		q.Set("continuation-token", token)
	}
	resp, err := c.Do(ctx, http.MethodGet, bucket, "", q, nil, nil, 0)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var res struct {
		Contents []struct {
			Key  string
			Size int64
		}
		IsTruncated           bool
		NextContinuationToken string
	}
	if err := xml.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&res); err != nil {
		return nil, "", fmt.Errorf("s3: a listing that is not XML: %w", err)
	}
	out := make([]ObjectInfo, len(res.Contents))
	for i, o := range res.Contents {
		out[i] = ObjectInfo{Key: o.Key, Size: o.Size}
	}
	if !res.IsTruncated {
		return out, "", nil
	}
	return out, res.NextContinuationToken, nil
}

// VersionPage is one page of ListObjectVersions: the versions and the
// delete markers listed, and the markers of the next page (both "" at the
// end).
type VersionPage struct {
	Versions, DeleteMarkers          []ObjectInfo
	NextKeyMarker, NextVersionMarker string
}

// ListObjectVersions returns one page of up to maxKeys versions and delete
// markers under prefix, from the markers a previous page gave ("": the
// first page).
func (c *Client) ListObjectVersions(ctx context.Context, bucket, prefix, keyMarker, versionMarker string, maxKeys int) (VersionPage, error) {
	q := url.Values{"versions": {""}, "max-keys": {strconv.Itoa(maxKeys)}}
	for k, v := range map[string]string{"prefix": prefix, "key-marker": keyMarker, "version-id-marker": versionMarker} {
		if v != "" {
			q.Set(k, v)
		}
	}
	resp, err := c.Do(ctx, http.MethodGet, bucket, "", q, nil, nil, 0)
	if err != nil {
		return VersionPage{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	type entry struct {
		Key       string
		Size      int64
		VersionID string `xml:"VersionId"`
	}
	var res struct {
		Version             []entry
		DeleteMarker        []entry
		IsTruncated         bool
		NextKeyMarker       string
		NextVersionIDMarker string `xml:"NextVersionIdMarker"`
	}
	if err := xml.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&res); err != nil {
		return VersionPage{}, fmt.Errorf("s3: a listing that is not XML: %w", err)
	}
	var page VersionPage
	for _, v := range res.Version {
		page.Versions = append(page.Versions, ObjectInfo(v))
	}
	for _, v := range res.DeleteMarker {
		page.DeleteMarkers = append(page.DeleteMarkers, ObjectInfo(v))
	}
	if res.IsTruncated {
		page.NextKeyMarker, page.NextVersionMarker = res.NextKeyMarker, res.NextVersionIDMarker
	}
	return page, nil
}

func drainClose(resp *http.Response) error {
	_, err := io.Copy(io.Discard, resp.Body)
	return errors.Join(err, resp.Body.Close())
}
