package main

// strato s3 cp|ls|rm|mb|rb|presign: an S3 client of any endpoint on
// aws-sdk-go-v2, for machines without the aws cli (make run uses it when
// the aws cli is missing). Uploads above the part size go in parts sent in
// parallel, downloads in ranges fetched in parallel, copies between S3
// keys stay on the server; every request is retried by the SDK's standard
// retryer.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/spf13/cobra"

	"github.com/strato-io/strato/certs"
)

// s3ClientFlags are the endpoint, region and CA of the S3 client commands,
// and --json.
type s3ClientFlags struct {
	endpoint, region, ca string
	json                 bool
}

func (f *s3ClientFlags) add(cmd *cobra.Command) {
	def := os.Getenv("AWS_ENDPOINT_URL")
	if def == "" {
		def = "http://127.0.0.1:9878"
	}
	cmd.Flags().StringVar(&f.endpoint, "endpoint", def, "the S3 endpoint (default: $AWS_ENDPOINT_URL, else strato dev's gateway)")
	cmd.Flags().StringVar(&f.region, "region", "us-east-1", "the region requests are signed for")
	cmd.Flags().StringVar(&f.ca, "tls-ca", os.Getenv("AWS_CA_BUNDLE"), "the CA certificate (PEM) an https endpoint's certificate is checked against (default $AWS_CA_BUNDLE, else the system's)")
}

// s3Retries is how many times the SDK tries a request before giving up.
const s3Retries = 5

// client is an SDK client of the endpoint, path-style, with the keys of
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func (f *s3ClientFlags) client() (*awss3.Client, error) {
	ak, sk := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if ak == "" || sk == "" {
		return nil, errors.New("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (strato admin s3 key create makes a key)")
	}
	hc := awshttp.NewBuildableClient()
	if f.ca != "" {
		pool, err := certs.LoadPool(f.ca)
		if err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		// TLS 1.2 as the SDK allows: S3 endpoints other than strato's
		// may not speak 1.3, which the cluster's own connections require.
		tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
		hc = hc.WithTransportOptions(func(t *http.Transport) { t.TLSClientConfig = tlsConfig })
	}
	return awss3.New(awss3.Options{
		Region:           f.region,
		BaseEndpoint:     aws.String(f.endpoint),
		UsePathStyle:     true,
		Credentials:      credentials.NewStaticCredentialsProvider(ak, sk, os.Getenv("AWS_SESSION_TOKEN")),
		HTTPClient:       hc,
		RetryMode:        aws.RetryModeStandard,
		RetryMaxAttempts: s3Retries,
		// The gateway keeps checksums of its own (CRC32C every 16 KiB):
		// a second one on every part would cost CPU and protect nothing
		// more than TLS or the SigV4 payload hash does.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}), nil
}

// s3Action wraps an S3 client command's body: a failure becomes one line
// naming the command, the S3 error code and its message.
func s3Action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := fn(cmd, args); err != nil {
			return failure(describeCommand(cmd, args), s3Error(err))
		}
		return nil
	}
}

// s3Error shortens the SDK's errors ("operation error S3: GetObject, https
// response error StatusCode: 404, RequestID: …, api error NoSuchKey: …")
// to the S3 error code and message.
func s3Error(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) && !isUsage(err) {
		if msg := ae.ErrorMessage(); msg != "" {
			return fmt.Errorf("%s: %s", ae.ErrorCode(), msg)
		}
		return errors.New(ae.ErrorCode())
	}
	return err
}

// s3Code is the S3 error code of err ("" if it is not an S3 error).
func s3Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// parseS3URL splits s3://BUCKET/KEY.
func parseS3URL(s string) (bucket, key string, ok bool) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return "", "", false
	}
	bucket, key, _ = strings.Cut(rest, "/")
	return bucket, key, bucket != ""
}

// s3Dir makes a non-empty prefix end in "/", so that a recursive command
// on s3://b/dir takes dir/x but not dirt.
func s3Dir(prefix string) string {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		return prefix + "/"
	}
	return prefix
}

func s3ClientCommands() []*cobra.Command {
	return []*cobra.Command{newS3CpCmd(), newS3LsCmd(), newS3RmCmd(), newS3MbCmd(), newS3RbCmd(), newS3PresignCmd()}
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// s3Object is one key of a listing.
type s3Object struct {
	Key  string
	Size int64
}

// s3List calls fn with every key under prefix, in key order.
func s3List(ctx context.Context, c *awss3.Client, bucket, prefix string, fn func(s3Object) error) error {
	p := awss3.NewListObjectsV2Paginator(c, &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			if err := fn(s3Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncProgress is a progress bar that parts moving in parallel may count
// on at once.
type syncProgress struct {
	mu sync.Mutex
	p  *progress
}

func (s *syncProgress) add(n int64) {
	s.mu.Lock()
	s.p.add(n)
	s.mu.Unlock()
}

// Write counts len(b) bytes (io.Writer).
func (s *syncProgress) Write(b []byte) (int, error) {
	s.add(int64(len(b)))
	return len(b), nil
}

func (s *syncProgress) finish(ok bool) {
	s.mu.Lock()
	s.p.finish(ok)
	s.mu.Unlock()
}

// countingWriterAt counts the bytes written through it.
type countingWriterAt struct {
	w io.WriterAt
	p *syncProgress
}

func (c countingWriterAt) WriteAt(b []byte, off int64) (int, error) {
	n, err := c.w.WriteAt(b, off)
	c.p.add(int64(n))
	return n, err
}

// localPath joins a key's path below a prefix to dir, refusing keys that
// would land outside it ("../x", "/etc/x").
func localPath(dir, rel string) (string, error) {
	p := filepath.FromSlash(rel)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("key %q is no path below %s", rel, dir)
	}
	return filepath.Join(dir, p), nil
}
