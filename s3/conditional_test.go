package s3_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/strato-io/strato/s3"
)

// TestConditionalDelete: DeleteObject's If-Match, x-amz-if-match-size and
// x-amz-if-match-last-modified-time delete only while they hold, and a
// write between the check and the delete is not deleted.
func TestConditionalDelete(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	putNow := func() (*awss3.PutObjectOutput, time.Time) {
		out, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: &b, Key: aws.String("k"), Body: bytes.NewReader([]byte("dummy"))})
		if err != nil {
			t.Fatal(err)
		}
		h, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b, Key: aws.String("k")})
		if err != nil {
			t.Fatal(err)
		}
		return out, *h.LastModified
	}
	long := time.Now().AddDate(-1, 0, 0)
	for i, tc := range []struct {
		etag  string // "-": the object's
		size  int64  // -1: none
		mtime *time.Time
		code  string
	}{
		{"-", 5, nil, ""},
		{"", 5, nil, ""},
		{"", -1, nil, ""},
		{"wrong", -1, nil, "PreconditionFailed"},
		{"", 6, nil, "PreconditionFailed"},
		{"", -1, &long, "PreconditionFailed"},
		{"-", 5, &long, "PreconditionFailed"},
	} {
		out, mtime := putNow()
		in := &awss3.DeleteObjectInput{Bucket: &b, Key: aws.String("k"), IfMatch: &tc.etag}
		switch tc.etag {
		case "-":
			in.IfMatch = out.ETag
		case "":
			in.IfMatch = nil
		}
		if tc.size >= 0 {
			in.IfMatchSize = aws.Int64(tc.size)
		}
		in.IfMatchLastModifiedTime = tc.mtime
		if tc.mtime == nil && tc.etag == "" && tc.size < 0 {
			in.IfMatchLastModifiedTime = &mtime
		}
		_, err := c.DeleteObject(ctx, in)
		if got := apiCode(err); got != tc.code {
			t.Fatalf("case %d: got %q (%v), want %q", i, got, err, tc.code)
		}
		_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b, Key: aws.String("k")})
		if deleted := err != nil; deleted != (tc.code == "") {
			t.Fatalf("case %d: deleted %v (%v)", i, deleted, err)
		}
	}

	// A PUT between the check and the delete wins: the new object stays.
	out, _ := putNow()
	s3.SetAfterDeleteCheck(env.gw, func() { putNow() })
	defer s3.SetAfterDeleteCheck(env.gw, nil)
	_, err := c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b, Key: aws.String("k"), IfMatch: out.ETag})
	if apiCode(err) != "PreconditionFailed" {
		t.Fatalf("delete across an overwrite: %v, want PreconditionFailed", err)
	}
	if _, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b, Key: aws.String("k")}); err != nil {
		t.Fatalf("the object written after the check was deleted: %v", err)
	}
}

// TestConditionalWrites: PutObject's and CompleteMultipartUpload's If-Match
// and If-None-Match, as AWS answers them.
func TestConditionalWrites(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	first, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: &b, Key: aws.String("k"), Body: bytes.NewReader([]byte("x"))})
	if err != nil {
		t.Fatal(err)
	}
	etag := *first.ETag
	put := func(key string, im, inm *string) error {
		_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: &b, Key: &key, Body: bytes.NewReader([]byte("x")), IfMatch: im, IfNoneMatch: inm})
		return err
	}
	complete := func(key string, im, inm *string) error {
		up, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: &b, Key: &key})
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: &b, Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(1),
			Body: bytes.NewReader([]byte("x"))})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: &b, Key: &key, UploadId: up.UploadId,
			IfMatch: im, IfNoneMatch: inm, MultipartUpload: &types.CompletedMultipartUpload{
				Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: p.ETag}}}})
		if err == nil {
			h, herr := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b, Key: &key})
			if herr != nil {
				t.Fatal(herr)
			}
			etag = *h.ETag // the next cases match the object as it now is
		}
		return err
	}
	star, wrong := aws.String("*"), aws.String("wrong")
	for _, write := range []func(string, *string, *string) error{put, complete} {
		for i, tc := range []struct {
			key      string
			im, inm  *string
			wantCode string
		}{
			{"k", &etag, nil, ""},
			{"k", wrong, nil, "PreconditionFailed"},
			{"k", nil, star, "PreconditionFailed"},
			{"k", nil, &etag, "NotImplemented"},
			{"k", &etag, star, "NotImplemented"},
			{"k", &etag, wrong, "NotImplemented"},
			{"missing", &etag, nil, "NoSuchKey"},
			{"new", nil, star, ""},
		} {
			if got := apiCode(write(tc.key, tc.im, tc.inm)); got != tc.wantCode {
				t.Fatalf("case %d: got %q, want %q", i, got, tc.wantCode)
			}
			if h, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b, Key: aws.String("k")}); err == nil {
				etag = *h.ETag
			}
		}
		if _, err := c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b, Key: aws.String("new")}); err != nil {
			t.Fatal(err)
		}
	}
}
