package web

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	neturl "net/url"
	"path"
	"strconv"
	"strings"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// crumb is one step of a namespace page's breadcrumbs.
type crumb struct {
	Name string
	Link string
}

// entry is one row of a directory or prefix listing.
type entry struct {
	Name        string
	Path        string // from the bucket's root: the link
	Dir         bool
	Size        int64
	Replication stratov1.ReplicationFactor
	Modified    int64
	// Usage is a directory's size, summed when the page asked for it
	// (?du=1); UsagePartial says the walk stopped at its bound.
	Usage        int64
	UsageKnown   bool
	UsagePartial bool
}

// nsView is a namespace page: volumes, a volume's buckets, a directory
// (or prefix) of a bucket, or one key.
type nsView struct {
	Crumbs  []crumb
	Volumes []*stratov1.VolumeInfo
	Volume  *stratov1.VolumeInfo
	Buckets []*stratov1.BucketInfo
	Bucket  *stratov1.BucketInfo
	Dir     string // the directory or prefix listed, from the bucket's root
	Entries []entry
	Key     *stratov1.KeyInfo
	Next    string // after= of the next page
	DU      bool
}

// duBudget bounds the entries one page's disk-usage walks read.
const duBudget = 100_000

func (c *Console) namespacePage(w http.ResponseWriter, r *http.Request) error {
	p := r.PathValue("path")
	q := r.URL.Query()
	after := q.Get("after")
	limit, err := c.limit(r)
	if err != nil {
		return err
	}
	ctx, cancel := c.ctx(r)
	defer cancel()
	vol, rest, _ := strings.Cut(p, "/")
	bucket, key, _ := strings.Cut(rest, "/")
	v := nsView{Crumbs: []crumb{{Name: "volumes", Link: "/ns/"}}, DU: q.Get("du") == "1"}
	switch {
	case vol == "":
		err = c.listVolumes(ctx, &v, after, limit)
	case bucket == "":
		err = c.listBuckets(ctx, &v, vol, after, limit)
	default:
		var redirect string
		redirect, err = c.bucketPath(ctx, &v, vol, bucket, key, after, limit)
		if err == nil && redirect != "" {
			http.Redirect(w, r, redirect, http.StatusFound)
			return nil
		}
	}
	if err != nil {
		return err
	}
	title := "Namespace"
	if len(v.Crumbs) > 1 {
		title = "/" + strings.TrimPrefix(p, "/")
	}
	c.render(w, r, http.StatusOK, "namespace", title, v)
	return nil
}

func (c *Console) listVolumes(ctx context.Context, v *nsView, after string, limit int) error {
	return c.ns(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		resp, err := n.ListVolumes(ctx, &stratov1.ListVolumesRequest{StartAfter: after, Limit: int32(limit)})
		if err != nil {
			return err
		}
		v.Volumes = resp.GetVolumes()
		if resp.GetTruncated() && len(v.Volumes) > 0 {
			v.Next = v.Volumes[len(v.Volumes)-1].GetName()
		}
		return nil
	})
}

func (c *Console) listBuckets(ctx context.Context, v *nsView, vol, after string, limit int) error {
	return c.ns(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		var err error
		if v.Volume, err = n.GetVolume(ctx, &stratov1.GetVolumeRequest{Name: vol}); err != nil {
			return err
		}
		v.Crumbs = append(v.Crumbs, crumb{Name: vol, Link: "/ns/" + seg(vol)})
		resp, err := n.ListBuckets(ctx, &stratov1.ListBucketsRequest{Volume: vol, StartAfter: after, Limit: int32(limit)})
		if err != nil {
			return err
		}
		v.Buckets = resp.GetBuckets()
		if resp.GetTruncated() && len(v.Buckets) > 0 {
			v.Next = v.Buckets[len(v.Buckets)-1].GetName()
		}
		return nil
	})
}

// bucketPath fills v for a path in a bucket: a directory or prefix
// listing, or a key. It returns a URL to go to instead when the path names
// a prefix without its trailing slash.
func (c *Console) bucketPath(ctx context.Context, v *nsView, vol, bucket, key, after string, limit int) (redirect string, err error) {
	err = c.ns(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		var err error
		v.Bucket, err = n.GetBucket(ctx, &stratov1.GetBucketRequest{Volume: vol, Name: bucket})
		return err
	})
	if err != nil {
		return "", err
	}
	v.Crumbs = append(v.Crumbs, crumb{Name: vol, Link: "/ns/" + seg(vol)}, crumb{Name: bucket, Link: "/ns/" + seg(vol) + "/" + seg(bucket) + "/"})
	link := "/ns/" + seg(vol) + "/" + seg(bucket) + "/"
	parts := strings.Split(strings.TrimSuffix(key, "/"), "/")
	for i, part := range parts {
		if part == "" {
			continue
		}
		link += seg(part)
		if i < len(parts)-1 || strings.HasSuffix(key, "/") {
			link += "/"
		}
		v.Crumbs = append(v.Crumbs, crumb{Name: part, Link: link})
	}
	if v.Bucket.GetLayout() == stratov1.BucketLayout_LAYOUT_OBS {
		return c.obsPath(ctx, v, vol, bucket, key, after, limit)
	}
	return "", c.fsoPath(ctx, v, vol, bucket, strings.Trim(key, "/"), after, limit)
}

func (c *Console) fsoPath(ctx context.Context, v *nsView, vol, bucket, dir, after string, limit int) error {
	return c.ns(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		if dir != "" {
			st, err := n.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: vol, Bucket: bucket, Path: dir, WithBlocks: true})
			if err != nil {
				return err
			}
			if !st.GetStatus().GetIsDirectory() {
				v.Key = st.GetStatus().GetKey()
				return nil
			}
		}
		v.Dir = dir
		resp, err := n.ListStatus(ctx, &stratov1.ListStatusRequest{Volume: vol, Bucket: bucket, Path: dir, StartAfter: after, Limit: int32(limit)})
		if err != nil {
			return err
		}
		budget := duBudget
		for _, st := range resp.GetStatuses() {
			e := entry{Name: path.Base(st.GetPath()), Path: st.GetPath(), Dir: st.GetIsDirectory(), Size: st.GetLength(),
				Replication: st.GetReplication(), Modified: st.GetModificationTimeUnixMs()}
			if e.Dir && v.DU {
				e.Usage, e.UsagePartial, err = c.fsoUsage(ctx, n, vol, bucket, st.GetPath(), &budget)
				if err != nil {
					return err
				}
				e.UsageKnown = true
			}
			v.Entries = append(v.Entries, e)
		}
		if resp.GetTruncated() && len(v.Entries) > 0 {
			v.Next = v.Entries[len(v.Entries)-1].Name
		}
		return nil
	})
}

// fsoUsage sums the sizes of the files under dir, reading at most *budget
// entries (partial when it runs out).
func (c *Console) fsoUsage(ctx context.Context, n stratov1.NamespaceServiceClient, vol, bucket, dir string, budget *int) (int64, bool, error) {
	var total int64
	for after := ""; ; {
		if *budget <= 0 {
			return total, true, nil
		}
		resp, err := n.ListStatus(ctx, &stratov1.ListStatusRequest{Volume: vol, Bucket: bucket, Path: dir, StartAfter: after, Limit: int32(min(*budget, 1000))})
		if err != nil {
			return total, false, err
		}
		*budget -= len(resp.GetStatuses())
		for _, st := range resp.GetStatuses() {
			if st.GetIsDirectory() {
				sub, partial, err := c.fsoUsage(ctx, n, vol, bucket, st.GetPath(), budget)
				total += sub
				if err != nil || partial {
					return total, partial, err
				}
			} else {
				total += st.GetLength()
			}
			after = path.Base(st.GetPath())
		}
		if !resp.GetTruncated() || len(resp.GetStatuses()) == 0 {
			return total, false, nil
		}
	}
}

func (c *Console) obsPath(ctx context.Context, v *nsView, vol, bucket, key, after string, limit int) (string, error) {
	var redirect string
	err := c.ns(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		if key != "" && !strings.HasSuffix(key, "/") {
			resp, err := n.LookupKey(ctx, &stratov1.LookupKeyRequest{Volume: vol, Bucket: bucket, Key: key})
			if err == nil {
				v.Key = resp.GetKey()
				return nil
			}
			if statusOf(err) != http.StatusNotFound {
				return err
			}
			// Not a key: a prefix?
			lr, lerr := n.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: vol, Bucket: bucket, Prefix: key + "/", Limit: 1})
			if lerr != nil || len(lr.GetKeys())+len(lr.GetCommonPrefixes()) == 0 {
				return err
			}
			redirect = "/ns/" + seg(vol) + "/" + seg(bucket) + "/" + seg(key) + "/"
			return nil
		}
		v.Dir = strings.TrimSuffix(key, "/")
		resp, err := n.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: vol, Bucket: bucket, Prefix: key, Delimiter: "/", StartAfter: after, Limit: int32(limit)})
		if err != nil {
			return err
		}
		budget := duBudget
		for _, p := range resp.GetCommonPrefixes() {
			e := entry{Name: strings.TrimSuffix(strings.TrimPrefix(p, key), "/"), Path: strings.TrimSuffix(p, "/"), Dir: true}
			if v.DU {
				e.Usage, e.UsagePartial, err = obsUsage(ctx, n, vol, bucket, p, &budget)
				if err != nil {
					return err
				}
				e.UsageKnown = true
			}
			v.Entries = append(v.Entries, e)
		}
		for _, k := range resp.GetKeys() {
			v.Entries = append(v.Entries, entry{Name: strings.TrimPrefix(k.GetName(), key), Path: k.GetName(), Size: k.GetSize(),
				Replication: k.GetReplication(), Modified: k.GetModificationTimeUnixMs()})
		}
		if resp.GetTruncated() {
			v.Next = resp.GetNextStartAfter()
		}
		return nil
	})
	return redirect, err
}

// obsUsage sums the sizes of the keys under prefix, reading at most
// *budget keys.
func obsUsage(ctx context.Context, n stratov1.NamespaceServiceClient, vol, bucket, prefix string, budget *int) (int64, bool, error) {
	var total int64
	for after := ""; ; {
		if *budget <= 0 {
			return total, true, nil
		}
		resp, err := n.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: vol, Bucket: bucket, Prefix: prefix, StartAfter: after, Limit: int32(min(*budget, 1000))})
		if err != nil {
			return total, false, err
		}
		*budget -= len(resp.GetKeys())
		for _, k := range resp.GetKeys() {
			total += k.GetSize()
		}
		if !resp.GetTruncated() || len(resp.GetKeys()) == 0 {
			return total, false, nil
		}
		after = resp.GetNextStartAfter()
	}
}

// download sends a key's bytes (/download/VOLUME/BUCKET/KEY).
func (c *Console) download(w http.ResponseWriter, r *http.Request) error {
	vol, rest, _ := strings.Cut(r.PathValue("path"), "/")
	bucket, key, _ := strings.Cut(rest, "/")
	if vol == "" || bucket == "" || key == "" || strings.HasSuffix(key, "/") {
		return httpErrorf(http.StatusBadRequest, "download needs /download/VOLUME/BUCKET/KEY, not %s", r.URL.Path)
	}
	// The body may take longer than a page: the request's context only.
	kr, err := c.cl.OpenKey(r.Context(), vol, bucket, key)
	if err != nil {
		return err
	}
	defer func() { _ = kr.Close() }()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(kr.Size(), 10))
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(key)}))
	if _, err := io.Copy(w, kr); err != nil {
		// Headers are out: all we can do is cut the body short.
		c.opts.Logger.Warn("web: download failed", "key", fmt.Sprintf("/%s/%s/%s", vol, bucket, key), "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// seg escapes one path segment.
func seg(s string) string { return neturl.PathEscape(s) }
