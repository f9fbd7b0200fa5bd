package s3_test

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"
)

// TestAuthErrorFields: the elements AWS adds to some errors' bodies
// (AWSAccessKeyId, HeadersNotSigned, the two payload hashes) are there.
func TestAuthErrorFields(t *testing.T) {
	ctx := context.Background()
	type body struct {
		Code, Message, AWSAccessKeyId, HeadersNotSigned      string
		ClientComputedContentSHA256, S3ComputedContentSHA256 string
	}
	do := func(ak string, method, path, payloadHash string, body0 io.Reader, after func(*http.Request)) (int, body) {
		req, err := http.NewRequestWithContext(ctx, method, env.http.URL+path, body0)
		require.NoError(t, err)
		req.Header.Set("X-Amz-Content-Sha256", payloadHash)
		require.NoError(t, v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: ak, SecretAccessKey: testSecret}, req, payloadHash, "s3", region, time.Now()))
		if after != nil {
			after(req)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var b body
		_ = xml.Unmarshal(data, &b)
		return resp.StatusCode, b
	}
	const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	code, b := do("AKIDNOSUCHKEY", http.MethodGet, "/", empty, nil, nil)
	require.Equal(t, 403, code)
	require.Equal(t, body{Code: "InvalidAccessKeyId", Message: "The AWS Access Key Id you provided does not exist in our records.", AWSAccessKeyId: "AKIDNOSUCHKEY"}, b)

	code, b = do(testKey, http.MethodGet, "/", empty, nil, func(r *http.Request) { r.Header.Set("X-Amz-Tagging", "a=b") })
	require.Equal(t, 403, code)
	require.Equal(t, "AccessDenied", b.Code)
	require.Equal(t, "x-amz-tagging", b.HeadersNotSigned)

	c := sdk(t, false)
	bk := newBucket(t, c)
	code, b = do(testKey, http.MethodPut, "/"+bk+"/k", empty, strings.NewReader("not empty"), nil)
	require.Equal(t, 400, code)
	require.Equal(t, "XAmzContentSHA256Mismatch", b.Code)
	require.Equal(t, empty, b.ClientComputedContentSHA256)
	require.Len(t, b.S3ComputedContentSHA256, 64)
}
