package s3

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// AWS's example of a signed aws-chunked upload ("Signature Calculations for
// the Authorization Header: Transferring Payload in Multiple Chunks"):
// 65 KiB of 'a' in chunks of 64 KiB and 1 KiB.
func TestChunkedAWSExample(t *testing.T) {
	key := signingKey("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "20130524", "us-east-1", "s3")
	body := "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n" +
		strings.Repeat("a", 65536) + "\r\n" +
		"400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" +
		strings.Repeat("a", 1024) + "\r\n" +
		"0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"
	seed := "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
	read := func(body string) ([]byte, error) {
		return io.ReadAll(newChunkedReader(strings.NewReader(body), true, false, key, "20130524T000000Z",
			"20130524/us-east-1/s3/aws4_request", seed, nil))
	}
	got, err := read(body)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.Repeat("a", 66560) {
		t.Fatalf("decoded %d bytes", len(got))
	}
	// A byte changed in a chunk, a chunk cut short: refused.
	for _, bad := range []string{strings.Replace(body, "aaaa\r\n400", "aaab\r\n400", 1), body[:len(body)-500]} {
		if _, err := read(bad); err == nil {
			t.Fatal("a bad body was accepted")
		}
	}
}

func FuzzChunkedReader(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n"), false, true)
	f.Add([]byte("3;chunk-signature=00\r\nabc\r\n0;chunk-signature=00\r\n\r\n"), true, false)
	f.Add([]byte("ffffffffffffffff\r\n"), false, false)
	key := signingKey("secret", "20240101", "us-east-1", "s3")
	f.Fuzz(func(t *testing.T, data []byte, signed, trailer bool) {
		r := newChunkedReader(bytes.NewReader(data), signed, trailer, key, "20240101T000000Z", "20240101/us-east-1/s3/aws4_request",
			"seed", func(string, string) error { return nil })
		n, _ := io.Copy(io.Discard, r)
		if n > int64(len(data)) {
			t.Fatalf("decoded %d bytes from %d", n, len(data))
		}
	})
}

func FuzzSigV4Canonical(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AK/20240101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
		"/b/k%20x", "a=1&b=%2F&X-Amz-Signature=x", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=a%2F20240101%2Fr%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00")
	f.Fuzz(func(t *testing.T, authz, path, rawQuery, presign string) {
		a, err := parseAuthorization(authz)
		if err == nil {
			u := &url.URL{Path: path, RawQuery: rawQuery}
			r := &http.Request{Method: "GET", URL: u, Host: "h", Header: http.Header{"X-Amz-Date": {"20240101T000000Z"}}}
			a.payloadHash = unsignedPayload
			_ = stringToSign(a, canonicalRequest(r, a))
			_, _ = requestTime(r, a)
		}
		if q, err := url.ParseQuery(presign); err == nil {
			_, _ = parsePresigned(q)
		}
		_ = canonicalQuery(rawQuery)
		_ = uriEncode(path, true)
	})
}

func FuzzSigV2(f *testing.F) {
	f.Add("AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=", "/photos/puppy.jpg", "acl&versionId=a%20b&uploadId=&list-type=2",
		"AWSAccessKeyId=AK&Signature=c2ln&Expires=1175139620&content-type=text%2Fplain&x-amz-meta-a=1", "Tue, 27 Mar 2007 19:36:42 +0000")
	f.Add("AWS a:b:c", "", "%zz=1&uploads", "Signature=x&Expires=-1", "Tue Mar 27 19:36:42 2007")
	g := &Gateway{opts: Options{Domain: "s3.test"}}
	f.Fuzz(func(t *testing.T, authz, path, rawQuery, presign, date string) {
		r := &http.Request{Method: "PUT", URL: &url.URL{Path: path, RawQuery: rawQuery}, Host: "b.s3.test",
			Header: http.Header{"Date": {date}, "X-Amz-Meta-X": {date}}}
		res := g.resourceV2(r)
		if !strings.HasPrefix(res, "/b") {
			t.Fatalf("resource %q of a request to bucket b", res)
		}
		if sub := subresourcesV2(rawQuery); sub != "" && (sub[0] != '?' || !strings.HasSuffix(res, sub)) {
			t.Fatalf("subresources %q, resource %q", sub, res)
		}
		if a, err := parseAuthorization(authz); err == nil && a.v2 {
			s := stringToSignV2(r, a, res)
			if !strings.HasPrefix(s, "PUT\n") || !strings.HasSuffix(s, res) {
				t.Fatalf("string to sign %q", s)
			}
			_ = signatureMatchesV2(hmacSHA1("secret", s), a.signature)
		}
		if q, err := url.ParseQuery(presign); err == nil {
			if a, err := parsePresignedV2(q); err == nil {
				r.URL.RawQuery = presign
				_ = stringToSignV2(r, a, g.resourceV2(r))
			}
		}
		_, _ = requestTimeV2(r.Header)
	})
}

func FuzzXMLBodies(f *testing.F) {
	f.Add([]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`))
	f.Add([]byte(`<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<CreateBucketConfiguration><LocationConstraint>eu</LocationConstraint></CreateBucketConfiguration>`))
	f.Add([]byte(`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c completeRequest
		_ = xml.Unmarshal(data, &c)
		var d deleteRequest
		_ = xml.Unmarshal(data, &d)
		var b createBucketConfiguration
		_ = xml.Unmarshal(data, &b)
		var tg taggingBody
		if xml.Unmarshal(data, &tg) == nil {
			for _, x := range tg.TagSet {
				_ = checkTag(x.Key, x.Value)
			}
		}
	})
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		h             string
		size          int64
		start, length int64
		ok, bad       bool
	}{
		{"bytes=0-0", 10, 0, 1, true, false},
		{"bytes=5-", 10, 5, 5, true, false},
		{"bytes=-3", 10, 7, 3, true, false},
		{"bytes=-30", 10, 0, 10, true, false},
		{"bytes=8-100", 10, 8, 2, true, false},
		{"bytes=10-", 10, 0, 0, false, true},
		{"bytes=-0", 10, 0, 0, false, true},
		{"bytes=3-1", 10, 0, 0, false, false},
		{"bytes=1-2,4-5", 10, 0, 0, false, false},
		{"items=1-2", 10, 0, 0, false, false},
	} {
		s, l, ok, err := parseRange(tc.h, tc.size)
		if ok != tc.ok || (err != nil) != tc.bad || ok && (s != tc.start || l != tc.length) {
			t.Errorf("%s of %d: %d+%d ok=%v err=%v", tc.h, tc.size, s, l, ok, err)
		}
	}
}

func TestCRC64NVME(t *testing.T) {
	h := newChecksum("crc64nvme")
	h.Write([]byte("123456789"))
	if got := h.Sum(nil); !bytes.Equal(got, []byte{0xae, 0x8b, 0x14, 0x86, 0x0a, 0x79, 0x98, 0x88}) {
		t.Fatalf("CRC-64/NVME check value: %x", got)
	}
}
