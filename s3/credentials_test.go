package s3_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/s3"
)

// syncBuffer is a log destination safe for the gateway's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMetaCredentials: a gateway that takes its keys from meta (and from a
// static list besides) serves a new key, refuses it shortly after it is
// revoked, and logs no secret at any level.
func TestMetaCredentials(t *testing.T) {
	ctx := context.Background()
	k, secret, err := env.client.CreateS3Key(ctx, "carol", "", "")
	require.NoError(t, err)
	mc, err := s3.NewMetaCredentials(s3.MetaCredentialsOptions{Client: env.client, TTL: 300 * time.Millisecond, NegativeTTL: 100 * time.Millisecond})
	require.NoError(t, err)
	var logs syncBuffer
	gw, err := s3.New(ctx, s3.Options{Client: env.client, CleanupInterval: -1,
		Credentials: s3.ChainCredentials{s3.StaticCredentials{testKey: testSecret}, mc},
		Logger:      slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()
	sdkWith := func(ak, sk string) *awss3.Client {
		return awss3.New(awss3.Options{Region: region, BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider(ak, sk, "")})
	}
	carol := sdkWith(k.AccessKey, secret)
	b := newBucket(t, carol)
	_, err = carol.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("hello"))})
	require.NoError(t, err)
	require.Equal(t, []byte("hello"), get(t, carol, b, "k"))
	// The static key still works beside it; a wrong secret does not.
	require.Equal(t, []byte("hello"), get(t, sdkWith(testKey, testSecret), b, "k"))
	_, err = sdkWith(k.AccessKey, testSecret).HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(b)})
	require.Error(t, err)

	require.NoError(t, env.client.RevokeS3Key(ctx, k.AccessKey))
	require.Eventually(t, func() bool {
		_, err := carol.ListBuckets(ctx, &awss3.ListBucketsInput{})
		var ae smithy.APIError
		return errors.As(err, &ae) && ae.ErrorCode() == "InvalidAccessKeyId"
	}, 5*time.Second, 50*time.Millisecond)
	// A key made now is taken at once (no unknown-key answer cached), or
	// within the negative TTL.
	k2, secret2, err := env.client.CreateS3Key(ctx, "carol", "", "")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := sdkWith(k2.AccessKey, secret2).ListBuckets(ctx, &awss3.ListBucketsInput{})
		return err == nil
	}, 5*time.Second, 50*time.Millisecond)
	for _, s := range []string{secret, secret2, testSecret} {
		require.NotContains(t, logs.String(), s)
	}
}
