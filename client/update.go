package client

import (
	"context"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Quotas and updates after creation (Ozone's `sh volume|bucket setquota,
// clrquota, update`).

// Quota is a change of quotas: a nil field is left as it is, a zero one
// clears its quota (no limit).
type Quota struct {
	Bytes     *int64 // logical bytes of the committed keys
	Namespace *int64 // buckets (a volume's); keys and directories (a bucket's)
}

// SetQuota changes the quotas of a volume (bucket "") or of a bucket:
// those q sets, the others stay (administrators only).
func (c *Client) SetQuota(ctx context.Context, volume, bucket string, q Quota) error {
	ctx = c.idempotent(ctx)
	req := &stratov1.SetQuotaRequest{Volume: volume, Bucket: bucket, KeepBytes: q.Bytes == nil, KeepNamespace: q.Namespace == nil}
	if q.Bytes != nil {
		req.QuotaBytes = *q.Bytes
	}
	if q.Namespace != nil {
		req.QuotaNamespace = *q.Namespace
	}
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SetQuotaResponse, error) {
		return n.SetQuota(ctx, req)
	})
	return err
}

// UpdateVolume gives a volume a new owner (administrators only) and
// returns it as changed.
func (c *Client) UpdateVolume(ctx context.Context, name, owner string) (*stratov1.VolumeInfo, error) {
	ctx = c.idempotent(ctx)
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.UpdateVolumeResponse, error) {
		return n.UpdateVolume(ctx, &stratov1.UpdateVolumeRequest{Name: name, Owner: owner})
	})
	return resp.GetVolume(), err
}

// UpdateBucket changes what req sets of a bucket (its owner, the
// redundancy of the keys written later) and returns it as changed.
func (c *Client) UpdateBucket(ctx context.Context, req *stratov1.UpdateBucketRequest) (*stratov1.BucketInfo, error) {
	ctx = c.idempotent(ctx)
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.UpdateBucketResponse, error) {
		return n.UpdateBucket(ctx, req)
	})
	return resp.GetBucket(), err
}
