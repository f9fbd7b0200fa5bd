package main

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/s3"
)

// TestAdminS3Keys creates, lists and revokes access keys through the
// command line, and a gateway that looks keys up in meta takes a new key
// and refuses it once revoked.
func TestAdminS3Keys(t *testing.T) {
	h := startMeta(t)
	ctx := t.Context()

	out := h.ok("admin", "s3", "key", "create", "--user", "alice")
	fields := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		require.True(t, ok, out)
		fields[k] = strings.TrimSpace(v)
	}
	ak, secret := fields["Access key"], fields["Secret"]
	require.Len(t, ak, 20, out)
	require.Len(t, secret, 40, out)
	require.Equal(t, "alice", fields["User"])
	given := jsonOf[map[string]any](t, execute(strings.NewReader("bobs-secret-value\n"),
		"admin", "s3", "key", "create", "--user", "bob", "--access-key", "bob-key", "--secret-stdin", "--json", "--meta", h.addr).stdout)
	require.Equal(t, "bobs-secret-value", given["secret"])
	require.Equal(t, "bob-key", given["key"].(map[string]any)["accessKey"])
	require.Contains(t, h.fail(1, "admin", "s3", "key", "create", "--access-key", "bob-key"), "already exists")
	require.Contains(t, h.fail(1, "admin", "s3", "key", "create", "--access-key", "a/b"), "access key")

	list := h.ok("admin", "s3", "key", "list")
	require.Contains(t, list, "ACCESS KEY")
	require.Contains(t, list, ak)
	require.Contains(t, list, "bob-key")
	require.NotContains(t, list, secret, "a listing shows no secret")
	require.NotContains(t, list, "bobs-secret-value")
	alice := jsonOf[[]map[string]any](t, h.ok("admin", "s3", "key", "list", "--user", "alice", "--json"))
	require.Len(t, alice, 1)
	require.Equal(t, ak, alice[0]["accessKey"])
	require.NotContains(t, alice[0], "secret")

	// A gateway with the keys in meta (short cache, as a test wants).
	c, err := client.New(client.Options{Meta: []string{h.addr}})
	require.NoError(t, err)
	defer c.Close()
	mc, err := s3.NewMetaCredentials(s3.MetaCredentialsOptions{Client: c, TTL: 200 * time.Millisecond, NegativeTTL: 100 * time.Millisecond})
	require.NoError(t, err)
	gw, err := s3.New(ctx, s3.Options{Client: c, Credentials: mc, CleanupInterval: -1})
	require.NoError(t, err)
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()

	// listBuckets signs GET / with the key and returns the status and the
	// S3 error code, if any.
	listBuckets := func(ak, secret string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/", nil)
		require.NoError(t, err)
		const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		req.Header.Set("X-Amz-Content-Sha256", empty)
		require.NoError(t, v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: ak, SecretAccessKey: secret}, req, empty, "s3", "us-east-1", time.Now()))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var e struct{ Code string }
		_ = xml.Unmarshal(body, &e)
		return resp.StatusCode, e.Code
	}
	code, _ := listBuckets(ak, secret)
	require.Equal(t, http.StatusOK, code)
	code, _ = listBuckets("bob-key", "bobs-secret-value")
	require.Equal(t, http.StatusOK, code)
	code, s3code := listBuckets(ak, "not-the-secret-of-this-key")
	require.Equal(t, http.StatusForbidden, code)
	require.Equal(t, "SignatureDoesNotMatch", s3code)

	require.Equal(t, ak+": revoked\n", h.ok("admin", "s3", "key", "revoke", ak))
	require.Contains(t, h.fail(1, "admin", "s3", "key", "revoke", ak), "not found")
	require.NotContains(t, h.ok("admin", "s3", "key", "list"), ak)
	// Refused once the gateway's cache expires (200 ms here, 5 s by default).
	require.Eventually(t, func() bool {
		code, s3code := listBuckets(ak, secret)
		return code == http.StatusForbidden && s3code == "InvalidAccessKeyId"
	}, 5*time.Second, 50*time.Millisecond)
	code, _ = listBuckets("bob-key", "bobs-secret-value")
	require.Equal(t, http.StatusOK, code, "the other key still works")
}
