package cluster

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/s3"
)

// TestBucketPolicySurvivesMetaFailover: an S3 bucket policy is meta state
// (the bucket's attributes): after the meta leader is lost, a new gateway
// reads it back to the byte and serves the anonymous GET it allows.
func TestBucketPolicySurvivesMetaFailover(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 1 << 20}, stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	creds := s3.StaticCredentials{"AKIDFAILOVER": "failover-secret"}
	gateway := func() string {
		gw, err := s3.New(ctx, s3.Options{Client: f.cl, Credentials: creds, CleanupInterval: -1})
		require.NoError(t, err)
		t.Cleanup(func() { _ = gw.Close() })
		srv := httptest.NewServer(gw)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	url := gateway()
	c := awss3.New(awss3.Options{Region: "us-east-1", BaseEndpoint: aws.String(url), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDFAILOVER", SecretAccessKey: "failover-secret"}, nil
		})})
	_, err := c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("pbk")})
	require.NoError(t, err)
	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String("pbk"), Key: aws.String("k"), Body: bytes.NewReader([]byte("public"))})
	require.NoError(t, err)
	doc := `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::pbk/*"}]}`
	_, err = c.PutBucketPolicy(ctx, &awss3.PutBucketPolicyInput{Bucket: aws.String("pbk"), Policy: aws.String(doc)})
	require.NoError(t, err)
	anonGet := func(url string) (int, string) {
		resp, err := http.Get(url + "/pbk/k")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := anonGet(url)
	require.Equal(t, http.StatusOK, code, body)

	stopMetaLeader(t, f.c)
	url2 := gateway()
	require.Eventually(t, func() bool { code, body = anonGet(url2); return code == http.StatusOK }, 20*time.Second, 100*time.Millisecond, "%d %s", code, body)
	require.Equal(t, "public", body)
	c2 := awss3.New(c.Options(), func(o *awss3.Options) { o.BaseEndpoint = aws.String(url2) })
	out, err := c2.GetBucketPolicy(ctx, &awss3.GetBucketPolicyInput{Bucket: aws.String("pbk")})
	require.NoError(t, err)
	require.Equal(t, doc, aws.ToString(out.Policy))
}
