package client

import (
	"context"
	"fmt"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Append opens a closed file (or an OBS key) to write more at its end
// (Hadoop's append): the Writer writes new blocks after the file's last
// one, Hflush and Hsync publish the file's new length as after Create, and
// Close commits it. One writer at a time: a file another writer holds is
// ErrPrecondition (RecoverLease closes a file its writer left open).
// Erasure coded keys are refused. o.SizeHint, when positive, has meta
// allocate the first block with the open; the other options are the
// file's own.
func (c *Client) Append(ctx context.Context, path string, o WriteOptions) (*Writer, error) {
	p, err := c.fsPath(path)
	if err != nil {
		return nil, err
	}
	var opened *stratov1.OpenKeyResponse
	open := func(ctx context.Context, sizeHint int64, _ bool) (*stratov1.OpenKeyResponse, error) {
		resp, err := openRetried(c, ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.OpenKeyResponse, error) {
			return n.AppendFile(ctx, &stratov1.AppendFileRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key, SizeHint: max(sizeHint, 0)})
		})
		opened = resp
		return resp, err
	}
	w, err := c.newWriter(ctx, p.Volume, p.Bucket, p.Key, o.SizeHint, open)
	if err != nil {
		return nil, err
	}
	w.appendOffset, w.appending = opened.AppendOffset, true
	// The first Hsync fsyncs the file's blocks too: it promises every byte
	// before it, and the file's writers may have closed it without one.
	for _, bl := range opened.BaseBlocks {
		if bl.Length > 0 {
			w.unsynced = append(w.unsynced, bl)
		}
	}
	return w, nil
}

// AppendOffset is the file's length when Append opened it: where the
// writer's bytes start (0 for a writer from Create).
func (w *Writer) AppendOffset() int64 { return w.appendOffset }

// Truncate cuts a closed file to length bytes (at most its length), as
// Hadoop's truncate. strato does it at once (done is always true: no block
// recovery is needed): the blocks past length are freed and the block it
// falls in ends there; the bytes past it are never read again.
func (c *Client) Truncate(ctx context.Context, path string, length int64) (done bool, err error) {
	ctx = c.idempotent(ctx)
	p, err := c.fsPath(path)
	if err != nil {
		return false, err
	}
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.TruncateResponse, error) {
		return n.Truncate(ctx, &stratov1.TruncateRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key, NewLength: length})
	})
	return resp.GetDone(), err
}

// Concat appends the closed files sources, in order, to the closed file
// target and removes them, in one metadata operation that copies no data
// (Hadoop's concat). All are in one bucket, with the target's redundancy
// and checksums; it returns the target's new length.
func (c *Client) Concat(ctx context.Context, target string, sources []string) (int64, error) {
	ctx = c.idempotent(ctx)
	t, err := c.fsPath(target)
	if err != nil {
		return 0, err
	}
	req := &stratov1.ConcatRequest{Volume: t.Volume, Bucket: t.Bucket, Target: t.Key}
	for _, s := range sources {
		p, err := c.fsPath(s)
		if err != nil {
			return 0, err
		}
		if p.Volume != t.Volume || p.Bucket != t.Bucket {
			return 0, fmt.Errorf("client: concat: %s is not in the bucket of %s: %w", s, target, ErrInvalid)
		}
		req.Sources = append(req.Sources, p.Key)
	}
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ConcatResponse, error) {
		return n.Concat(ctx, req)
	})
	return resp.GetLength(), err
}

// RecoverLease closes a file its writer left open (HDFS's recoverLease)
// at the length its last Hsync or Hflush published; that writer can no
// longer hsync or commit. It returns true once the file is closed (at once
// in strato) and the file's length.
func (c *Client) RecoverLease(ctx context.Context, path string) (closed bool, length int64, err error) {
	ctx = c.idempotent(ctx)
	p, err := c.fsPath(path)
	if err != nil {
		return false, 0, err
	}
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.RecoverLeaseResponse, error) {
		return n.RecoverLease(ctx, &stratov1.RecoverLeaseRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key})
	})
	return resp.GetClosed(), resp.GetLength(), err
}

// IsFileClosed reports whether no writer holds the file open (HDFS's
// isFileClosed).
func (c *Client) IsFileClosed(ctx context.Context, path string) (bool, error) {
	p, err := c.fsPath(path)
	if err != nil {
		return false, err
	}
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.IsFileClosedResponse, error) {
		return n.IsFileClosed(ctx, &stratov1.IsFileClosedRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key})
	})
	return resp.GetClosed(), err
}
