package client

import (
	"context"

	"github.com/strato-io/strato/proto/strato/v1"
)

// ContentSummary is what a subtree holds, as Hadoop's ContentSummary
// counts it: a directory counts itself.
type ContentSummary struct {
	DirectoryCount, FileCount int64
	Length                    int64 // the files' bytes
	SpaceConsumed             int64 // on the datanodes: every replica, parity included
}

func (s *ContentSummary) add(o ContentSummary) {
	s.DirectoryCount += o.DirectoryCount
	s.FileCount += o.FileCount
	s.Length += o.Length
	s.SpaceConsumed += o.SpaceConsumed
}

// Summarize adds up the subtree at a path of the rooted view (a file, a
// directory, a bucket, a volume or "/"). Meta does the adding
// (GetContentSummary), a page of pageLimit entries per call (0: meta's
// default); a volume or "/" counts as a directory holding its buckets. A
// subtree that changes meanwhile may be counted partly before and partly
// after the change.
func (c *Client) Summarize(ctx context.Context, path string, pageLimit int) (ContentSummary, error) {
	p, err := ParseRootedPath(path)
	if err != nil {
		return ContentSummary{}, err
	}
	var out ContentSummary
	switch {
	case p.Volume == "":
		vs, err := c.ListVolumes(ctx, "")
		if err != nil {
			return out, err
		}
		out.DirectoryCount = 1
		for _, v := range vs {
			s, err := c.Summarize(ctx, "/"+v.Name, pageLimit)
			if err != nil {
				return out, err
			}
			out.add(s)
		}
		return out, nil
	case p.Bucket == "":
		if _, err := c.GetVolume(ctx, p.Volume); err != nil {
			return out, err
		}
		bs, err := c.ListBuckets(ctx, p.Volume, "")
		if err != nil {
			return out, err
		}
		out.DirectoryCount = 1
		for _, b := range bs {
			s, err := c.summarizeBucket(ctx, p.Volume, b.Name, "", pageLimit)
			if err != nil {
				return out, err
			}
			out.add(s)
		}
		return out, nil
	}
	return c.summarizeBucket(ctx, p.Volume, p.Bucket, p.Key, pageLimit)
}

// summarizeBucket adds up GetContentSummary's pages of key (or the
// bucket) in one bucket.
func (c *Client) summarizeBucket(ctx context.Context, volume, bucket, key string, pageLimit int) (ContentSummary, error) {
	var out ContentSummary
	var cursor []byte
	for {
		resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.GetContentSummaryResponse, error) {
			return n.GetContentSummary(ctx, &stratov1.GetContentSummaryRequest{Volume: volume, Bucket: bucket, Path: key,
				Cursor: cursor, Limit: int32(pageLimit)})
		})
		if err != nil {
			return out, err
		}
		out.add(ContentSummary{DirectoryCount: resp.DirectoryCount, FileCount: resp.FileCount, Length: resp.Length,
			SpaceConsumed: resp.SpaceConsumed})
		if len(resp.Cursor) == 0 {
			return out, nil
		}
		cursor = resp.Cursor
	}
}
