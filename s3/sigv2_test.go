package s3

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSigV2Vectors: strings to sign and signatures of AWS's Signature
// Version 2 page (its GET example, its query-string example, and the
// /quotes/nelson PUT of its early editions) and of botocore's HmacV1Auth
// (1.44.8, the Date fixed), which signs boto3's SigV2 requests.
func TestSigV2Vectors(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	for _, tc := range []struct {
		name, secret, domain, method, url string
		header                            http.Header
		toSign, sig                       string
	}{
		{name: "AWS: GET, virtual-host style", domain: "us-west-1.s3.amazonaws.com", method: "GET",
			url:    "http://awsexamplebucket1.us-west-1.s3.amazonaws.com/photos/puppy.jpg",
			header: http.Header{"Date": {"Tue, 27 Mar 2007 19:36:42 +0000"}},
			toSign: "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg", sig: "qgk2+6Sv9/oM7G3qLEjTH1a1l1g="},
		{name: "AWS: query string", domain: "s3.amazonaws.com", method: "GET",
			url:    "http://johnsmith.s3.amazonaws.com/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D&Expires=1175139620",
			toSign: "GET\n\n\n1175139620\n/johnsmith/photos/puppy.jpg", sig: "NpgCjnDzrM+WFzoENXmpNDUsSn8="},
		{name: "AWS (2006): PUT with x-amz headers", secret: "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", method: "PUT",
			url: "http://s3.amazonaws.com/quotes/nelson",
			header: http.Header{"Content-Md5": {"c8fdb181845a4ca6b8fec737b3581d76"}, "Content-Type": {"text/html"},
				"Date": {"Thu, 17 Nov 2005 18:49:58 GMT"}, "X-Amz-Meta-Author": {"foo@bar.com"}, "X-Amz-Magic": {"abracadabra"}},
			toSign: "PUT\nc8fdb181845a4ca6b8fec737b3581d76\ntext/html\nThu, 17 Nov 2005 18:49:58 GMT\nx-amz-magic:abracadabra\nx-amz-meta-author:foo@bar.com\n/quotes/nelson",
			sig:    "jZNOcbfWmD/A/f3hSvVzXZjM2HU="},
		{name: "botocore: a header twice", method: "PUT", url: "http://s3.amazonaws.com/static.johnsmith.net/db-backup.dat.gz",
			header: http.Header{"Date": {"Tue, 27 Mar 2007 21:06:08 +0000"}, "Content-Type": {"application/x-download"}, "Content-Md5": {"4gJE4saaMU4BqNR0kLY+lw=="},
				"X-Amz-Acl": {"public-read"}, "X-Amz-Meta-Reviewedby": {"joe@johnsmith.net", " jane@johnsmith.net"},
				"X-Amz-Meta-Filechecksum": {"0x02661779"}, "X-Amz-Meta-Checksumalgorithm": {"crc32"}},
			toSign: "PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\nTue, 27 Mar 2007 21:06:08 +0000\nx-amz-acl:public-read\n" +
				"x-amz-meta-checksumalgorithm:crc32\nx-amz-meta-filechecksum:0x02661779\nx-amz-meta-reviewedby:joe@johnsmith.net,jane@johnsmith.net\n" +
				"/static.johnsmith.net/db-backup.dat.gz",
			sig: "ilyl83RwaSoYIEdixDQcA4OnAnc="},
		{name: "botocore: a subresource", method: "GET", url: "http://s3.amazonaws.com/johnsmith/?acl",
			header: http.Header{"Date": {"Tue, 27 Mar 2007 21:06:08 +0000"}},
			toSign: "GET\n\n\nTue, 27 Mar 2007 21:06:08 +0000\n/johnsmith/?acl", sig: "0q7FrJSlsOQSaRDR7UF7MuxseyA="},
		{name: "botocore: subresources sorted and decoded, other parameters left out", method: "GET",
			header: http.Header{"Date": {"Tue, 27 Mar 2007 21:06:08 +0000"}},
			url:    "http://s3.amazonaws.com/johnsmith/k%20%21?versionId=v1&response-content-disposition=attachment%3B%20filename%3D%22a%20b%22&list-type=2&uploads",
			toSign: "GET\n\n\nTue, 27 Mar 2007 21:06:08 +0000\n/johnsmith/k%20%21?response-content-disposition=attachment; filename=\"a b\"&uploads&versionId=v1",
			sig:    "wQiP57jZYpSyTqbgiVUm+98Hbk4="},
		{name: "AWS's rule: with x-amz-date, the Date line is empty", method: "DELETE", url: "http://s3.amazonaws.com/johnsmith/photos/puppy.jpg",
			header: http.Header{"Date": {"Tue, 27 Mar 2007 21:20:27 +0000"}, "X-Amz-Date": {"Tue, 27 Mar 2007 21:20:26 +0000"}},
			toSign: "DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n/johnsmith/photos/puppy.jpg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			require.NoError(t, err)
			r := &http.Request{Method: tc.method, URL: u, Host: u.Host, Header: tc.header}
			if r.Header == nil {
				r.Header = http.Header{}
			}
			a := &authRequest{v2: true}
			if u.Query().Has("Signature") {
				a, err = parsePresignedV2(u.Query())
				require.NoError(t, err)
			}
			g := &Gateway{opts: Options{Domain: tc.domain}}
			toSign := stringToSignV2(r, a, g.resourceV2(r))
			require.Equal(t, tc.toSign, toSign)
			if tc.sig == "" {
				return
			}
			s := secret
			if tc.secret != "" {
				s = tc.secret
			}
			got := hmacSHA1(s, toSign)
			require.Equal(t, tc.sig, base64.StdEncoding.EncodeToString(got))
			require.True(t, signatureMatchesV2(got, tc.sig))
			require.False(t, signatureMatchesV2(got, tc.sig[1:]))
			require.False(t, signatureMatchesV2(hmacSHA1(s+"x", toSign), tc.sig))
		})
	}
}

// TestSigV2Presigned: a presigned URL's parameters; botocore's presigned
// URLs carry the Content-Type and x-amz-* headers they signed in the query.
func TestSigV2Presigned(t *testing.T) {
	q := url.Values{"AWSAccessKeyId": {"AK"}, "Signature": {"c2ln"}, "Expires": {"1175139620"}}
	a, err := parsePresignedV2(q)
	require.NoError(t, err)
	require.Equal(t, &authRequest{v2: true, presigned: true, accessKey: "AK", signature: "c2ln", expires: 1175139620, amzDate: "1175139620"}, a)
	for _, bad := range []string{"Signature", "Expires", "AWSAccessKeyId"} {
		b := url.Values{}
		for k, v := range q {
			if k != bad {
				b[k] = v
			}
		}
		_, err := parsePresignedV2(b)
		require.Equal(t, &Error{Code: "AccessDenied", Status: 403,
			Message: "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters"}, err)
	}
	q.Set("Expires", "soon")
	_, err = parsePresignedV2(q)
	require.ErrorIs(t, err, ErrAccessDenied)

	u, _ := url.Parse("http://h/b/k?AWSAccessKeyId=AK&Signature=x&Expires=9&content-type=text%2Fplain&x-amz-meta-a=1")
	r := &http.Request{Method: "PUT", URL: u, Host: "h", Header: http.Header{"X-Amz-Meta-B": {"2"}}}
	a, err = parsePresignedV2(u.Query())
	require.NoError(t, err)
	require.Equal(t, "PUT\n\ntext/plain\n9\nx-amz-meta-a:1\nx-amz-meta-b:2\n/b/k", stringToSignV2(r, a, "/b/k"))
	r.Header.Set("Content-Type", "image/png") // the header, when sent, is what counts
	r.Header.Set("Date", "D")                 // and the Date line is Expires
	require.Equal(t, "PUT\n\nimage/png\n9\nx-amz-meta-a:1\nx-amz-meta-b:2\n/b/k", stringToSignV2(r, a, "/b/k"))
	// A header-signed request's query is no header.
	require.Equal(t, "PUT\n\nimage/png\nD\nx-amz-meta-b:2\n/b/k", stringToSignV2(r, &authRequest{v2: true}, "/b/k"))
}

func TestRequestTimeV2(t *testing.T) {
	for _, d := range []string{"Tue, 27 Mar 2007 19:36:42 +0000", "Tue, 27 Mar 2007 19:36:42 GMT", "Tuesday, 27-Mar-07 19:36:42 GMT",
		"Tue Mar 27 19:36:42 2007"} {
		tm, err := requestTimeV2(http.Header{"Date": {d}})
		require.NoError(t, err, d)
		require.Equal(t, int64(1175024202), tm.Unix(), d)
	}
	tm, err := requestTimeV2(http.Header{"Date": {"Tue, 27 Mar 2007 19:36:42 GMT"}, "X-Amz-Date": {"Wed, 28 Mar 2007 19:36:42 GMT"}})
	require.NoError(t, err)
	require.Equal(t, int64(1175024202+86400), tm.Unix())
	_, err = requestTimeV2(http.Header{"Date": {"yesterday"}})
	require.Equal(t, errMissingDate, err)
	_, err = requestTimeV2(http.Header{})
	require.Equal(t, errMissingDate, err)
}
