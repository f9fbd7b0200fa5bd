package s3_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
)

// TestSnapshotReadOnlyPrefix: a bucket's snapshot is read through S3 under
// the key prefix .snapshot/NAME/ (GET, HEAD, listing), and nothing can be
// written there.
func TestSnapshotReadOnlyPrefix(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	put := func(key, body string) {
		_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: strings.NewReader(body)})
		require.NoError(t, err)
	}
	get := func(key string) (string, error) {
		out, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key)})
		if err != nil {
			return "", err
		}
		defer out.Body.Close()
		data, err := io.ReadAll(out.Body)
		return string(data), err
	}
	put("docs/a.txt", "first")
	put("docs/b.txt", "kept")
	_, err := env.client.CreateSnapshot(ctx, "s3v", b, "monday")
	require.NoError(t, err)
	put("docs/a.txt", "second")
	_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("docs/b.txt")})
	require.NoError(t, err)

	got, err := get(".snapshot/monday/docs/a.txt")
	require.NoError(t, err)
	require.Equal(t, "first", got)
	got, err = get("docs/a.txt")
	require.NoError(t, err)
	require.Equal(t, "second", got)
	got, err = get(".snapshot/monday/docs/b.txt")
	require.NoError(t, err)
	require.Equal(t, "kept", got)
	_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(".snapshot/monday/docs/b.txt")})
	require.NoError(t, err)

	list, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), Prefix: aws.String(".snapshot/monday/docs/")})
	require.NoError(t, err)
	var keys []string
	for _, o := range list.Contents {
		keys = append(keys, *o.Key)
	}
	require.Equal(t, []string{".snapshot/monday/docs/a.txt", ".snapshot/monday/docs/b.txt"}, keys)

	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(".snapshot/monday/x"), Body: strings.NewReader("no")})
	require.Error(t, err)
	_, err = get(".snapshot/nosuch/docs/a.txt")
	require.Equal(t, "NoSuchKey", apiCode(err))
	require.NoError(t, env.client.DeleteSnapshot(ctx, "s3v", b, "monday"))
}
