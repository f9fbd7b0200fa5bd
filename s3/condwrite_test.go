package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/strato-io/strato/s3"
)

// condWriter is an SDK client writing one bucket's keys conditionally,
// by PutObject or by CompleteMultipartUpload.
type condWriter struct {
	t   *testing.T
	c   *awss3.Client
	b   string
	ctx context.Context
}

// writeFunc prepares a write of data to key with If-Match im and
// If-None-Match inm, and returns the request that commits it: for a
// multipart upload, the upload and its part are made first, so that only
// the Complete races.
type writeFunc func(key, data string, im, inm *string) func() error

func (w *condWriter) put(key, data string, im, inm *string) func() error {
	return func() error {
		_, err := w.c.PutObject(w.ctx, &awss3.PutObjectInput{Bucket: &w.b, Key: &key, Body: strings.NewReader(data), IfMatch: im, IfNoneMatch: inm})
		return err
	}
}

func (w *condWriter) complete(key, data string, im, inm *string) func() error {
	up, err := w.c.CreateMultipartUpload(w.ctx, &awss3.CreateMultipartUploadInput{Bucket: &w.b, Key: &key})
	if err != nil {
		w.t.Fatal(err)
	}
	p, err := w.c.UploadPart(w.ctx, &awss3.UploadPartInput{Bucket: &w.b, Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader([]byte(data))})
	if err != nil {
		w.t.Fatal(err)
	}
	return func() error {
		_, err := w.c.CompleteMultipartUpload(w.ctx, &awss3.CompleteMultipartUploadInput{Bucket: &w.b, Key: &key, UploadId: up.UploadId,
			IfMatch: im, IfNoneMatch: inm, MultipartUpload: &types.CompletedMultipartUpload{
				Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: p.ETag}}}})
		return err
	}
}

// read returns key's data and ETag.
func (w *condWriter) read(key string) (string, string) {
	w.t.Helper()
	out, err := w.c.GetObject(w.ctx, &awss3.GetObjectInput{Bucket: &w.b, Key: &key})
	if err != nil {
		w.t.Fatalf("get %s: %v", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return string(data), *out.ETag
}

// race runs the commits at once and returns the index of the one that
// succeeded, failing the test unless exactly one did and every other was
// refused as AWS refuses the losers of conditional writes.
func (w *condWriter) race(commits []func() error) int {
	w.t.Helper()
	errs := make([]error, len(commits))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, commit := range commits {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = commit()
		}()
	}
	start.Done()
	done.Wait()
	winner := -1
	for i, err := range errs {
		switch code := apiCode(err); {
		case err == nil && winner >= 0:
			w.t.Fatalf("writers %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case code != "PreconditionFailed" && code != "ConditionalRequestConflict":
			w.t.Fatalf("writer %d: %v, want PreconditionFailed", i, err)
		}
	}
	if winner < 0 {
		w.t.Fatalf("no writer succeeded: %v", errs)
	}
	return winner
}

// TestConditionalWriteRaces: PutObject's and CompleteMultipartUpload's
// If-None-Match: * and If-Match hold against concurrent writers (meta
// checks them with the commit): of writers racing, exactly one wins and
// the key holds what it wrote; a write landing between the gateway's look
// and its commit makes the conditional write fail.
func TestConditionalWriteRaces(t *testing.T) {
	for _, versioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("versioned=%v", versioned), func(t *testing.T) {
			ctx := context.Background()
			c := sdk(t, false)
			w := &condWriter{t: t, c: c, b: newBucket(t, c), ctx: ctx}
			if versioned {
				if _, err := c.PutBucketVersioning(ctx, &awss3.PutBucketVersioningInput{Bucket: &w.b,
					VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
					t.Fatal(err)
				}
			}
			for name, write := range map[string]writeFunc{"put": w.put, "complete": w.complete} {
				between(t, w, name, write)
			}
			racing(t, w)
		})
	}
}

// between: a write landing between a conditional write's check and its
// commit (the gateway's hook) makes it fail, and the key keeps that write.
func between(t *testing.T, w *condWriter, name string, write writeFunc) {
	key := "between-" + name
	commit := write(key, "mine", nil, aws.String("*"))
	s3.SetAfterPutCheck(env.gw, func() { _ = w.put(key, "other", nil, nil)() })
	err := commit()
	s3.SetAfterPutCheck(env.gw, nil)
	if apiCode(err) != "PreconditionFailed" {
		t.Fatalf("%s If-None-Match: * across a create: %v, want PreconditionFailed", name, err)
	}
	if data, _ := w.read(key); data != "other" {
		t.Fatalf("%s If-None-Match: * across a create: the key holds %q", name, data)
	}

	_, etag := w.read(key)
	commit = write(key, "mine", &etag, nil)
	s3.SetAfterPutCheck(env.gw, func() { _ = w.put(key, "newer", nil, nil)() })
	err = commit()
	s3.SetAfterPutCheck(env.gw, nil)
	if apiCode(err) != "PreconditionFailed" {
		t.Fatalf("%s If-Match across an overwrite: %v, want PreconditionFailed", name, err)
	}
	if data, _ := w.read(key); data != "newer" {
		t.Fatalf("%s If-Match across an overwrite: the key holds %q", name, data)
	}
	// If-Match across a delete: AWS's 409 ConditionalRequestConflict; the
	// key stays deleted.
	_, etag = w.read(key)
	commit = write(key, "mine", &etag, nil)
	s3.SetAfterPutCheck(env.gw, func() { _, _ = w.c.DeleteObject(w.ctx, &awss3.DeleteObjectInput{Bucket: &w.b, Key: &key}) })
	err = commit()
	s3.SetAfterPutCheck(env.gw, nil)
	if apiCode(err) != "ConditionalRequestConflict" {
		t.Fatalf("%s If-Match across a delete: %v, want ConditionalRequestConflict", name, err)
	}
	if _, err := w.c.HeadObject(w.ctx, &awss3.HeadObjectInput{Bucket: &w.b, Key: &key}); apiCode(err) != "NotFound" {
		t.Fatalf("%s If-Match across a delete: the key is back (%v)", name, err)
	}
	_ = w.put(key, "newest", nil, nil)()

	// The stale ETag fails at the look too; the current one succeeds.
	if err := write(key, "mine", &etag, nil)(); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("%s If-Match of a stale ETag: %v, want PreconditionFailed", name, err)
	}
	_, etag = w.read(key)
	if err := write(key, "mine", &etag, nil)(); err != nil {
		t.Fatalf("%s If-Match of the current ETag: %v", name, err)
	}
}

// racing: writers (PUTs and Completes mixed) race for an absent key with
// If-None-Match: *, then with If-Match of the ETag all of them saw;
// exactly one wins each round.
func racing(t *testing.T, w *condWriter) {
	const writers, rounds = 6, 4
	for r := range rounds {
		key := fmt.Sprintf("race-%d", r)
		commits := make([]func() error, writers)
		for i := range commits {
			write := writeFunc(w.put)
			if i%2 == 1 {
				write = w.complete
			}
			commits[i] = write(key, fmt.Sprintf("create-%d", i), nil, aws.String("*"))
		}
		won := w.race(commits)
		data, etag := w.read(key)
		if want := fmt.Sprintf("create-%d", won); data != want {
			t.Fatalf("round %d: the key holds %q, the winner wrote %q", r, data, want)
		}

		for i := range commits {
			write := writeFunc(w.put)
			if i%2 == 0 {
				write = w.complete
			}
			commits[i] = write(key, fmt.Sprintf("replace-%d", i), &etag, nil)
		}
		won = w.race(commits)
		if data, _ := w.read(key); data != fmt.Sprintf("replace-%d", won) {
			t.Fatalf("round %d: the key holds %q, the If-Match winner wrote replace-%d", r, data, won)
		}
	}
}
