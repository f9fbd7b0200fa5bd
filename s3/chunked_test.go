package s3_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
)

// TestChunkedRefusals: aws-chunked bodies that are not well formed get
// AWS's codes, and none is stored.
func TestChunkedRefusals(t *testing.T) {
	c := sdk(t, false)
	b := newBucket(t, c)
	const unsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	hdr := map[string]string{"X-Amz-Decoded-Content-Length": "10", "X-Amz-Trailer": "x-amz-checksum-crc32",
		"Content-Encoding": "aws-chunked"}
	small := strings.Repeat("a", 100)
	for body, code := range map[string]string{
		"A\ndummy data\r\n0\r\n\r\n":                              "IncompleteBody", // LF alone ends no line
		"A\r\ndummy data0\r\n\r\n":                                "IncompleteBody",
		"A\r\ndummy data\r\n0\r\n":                                "IncompleteBody", // cut before its end
		"A\r\ndummy data\r\n0\r\nx-amz-foo:bar\r\n\r\n":           "MalformedTrailerError",
		"A\r\ndummy data\r\n0\r\n\r\n":                            "MalformedTrailerError", // the trailer x-amz-trailer names is missing
		"64\r\n" + small + "\r\n64\r\n" + small + "\r\n0\r\n\r\n": "InvalidChunkSizeError",
	} {
		h := hdr
		if strings.HasPrefix(body, "64") {
			h = map[string]string{"X-Amz-Decoded-Content-Length": "200", "Content-Encoding": "aws-chunked"}
		}
		require.Equal(t, code, signedCode(t, "PUT", "/"+b+"/k", []byte(body), unsignedTrailer, testSecret, time.Now(), h), "body %q", body)
	}
	// No decoded length; and a body that is not PutObject's or UploadPart's.
	require.Equal(t, "MissingContentLength", signedCode(t, "PUT", "/"+b+"/k", []byte("0\r\n\r\n"), unsignedTrailer, testSecret, time.Now(),
		map[string]string{"Content-Encoding": "aws-chunked"}))
	require.Equal(t, "InvalidRequest", signedCode(t, "PUT", "/"+b+"?tagging", []byte("0\r\n\r\n"), unsignedTrailer, testSecret, time.Now(),
		map[string]string{"X-Amz-Decoded-Content-Length": "0"}))
	_, err := c.HeadObject(context.Background(), &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.Error(t, err, "a refused body was stored")
}
