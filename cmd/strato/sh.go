package main

// strato sh: volumes, buckets and keys, as `ozone sh` manages them.

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func init() { extraCommands = append(extraCommands, newShCmd) }

func newShCmd() *cobra.Command {
	o := &cliOptions{}
	cmd := topGroup("sh", "Manage volumes, buckets and keys (object store shell)", o)
	cmd.Long = `Manage volumes, buckets and keys, as "ozone sh" does.

Volumes are named NAME or /NAME, buckets /VOLUME/BUCKET and keys
/VOLUME/BUCKET/KEY. Sizes take binary suffixes (10GB = 10 GiB).`
	cmd.AddCommand(newVolumeCmd(o), newBucketCmd(o), newKeyCmd(o), newSnapshotCmd(o))
	o.addPathCompletion(cmd)
	return cmd
}

// ---- Names ---------------------------------------------------------------------

// volumeArg accepts "vol" and "/vol".
func volumeArg(s string) (string, error) {
	v := strings.Trim(s, "/")
	if v == "" || strings.Contains(v, "/") {
		return "", usagef("%q is not a volume name (want NAME or /NAME)", s)
	}
	return v, nil
}

// bucketArg accepts "/vol/bucket".
func bucketArg(s string) (client.Path, error) {
	p, err := client.ParsePath(s, true)
	if err != nil {
		return p, err
	}
	if p.Key != "" {
		return p, usagef("%q is not a bucket (want /VOLUME/BUCKET)", s)
	}
	return p, nil
}

// keyArg accepts "/vol/bucket/key".
func keyArg(s string) (client.Path, error) {
	p, err := client.ParsePath(s, true)
	if err != nil {
		return p, err
	}
	if p.Key == "" {
		return p, usagef("%q names no key (want /VOLUME/BUCKET/KEY)", s)
	}
	return p, nil
}

// ---- Volumes --------------------------------------------------------------------

func newBucketCmd(o *cliOptions) *cobra.Command {
	cmd := group("bucket", "Create, inspect, list, update and delete buckets and set their quotas")
	cmd.AddCommand(newBucketCreateCmd(o), newBucketInfoCmd(o), newBucketListCmd(o), newBucketDeleteCmd(o), newBucketUpdateCmd(o),
		newBucketLifecycleCmd(o))
	cmd.AddCommand(newQuotaCmds(o, bucketQuota)...)
	cmd.AddCommand(newAclCmds(o, aclBucket)...)
	return cmd
}

// bucketFlags are the flags of `sh bucket create`.
type bucketFlags struct {
	layout, replication, checksum, bpc, blockSize, quotaBytes, owner string
	quotaNS                                                          int64
	objectLock                                                       bool
}

// request turns the flags into the request creating bucket p.
func (b *bucketFlags) request(p client.Path) (*stratov1.CreateBucketRequest, error) {
	req := &stratov1.CreateBucketRequest{Volume: p.Volume, Name: p.Bucket, Owner: b.owner, QuotaNamespace: b.quotaNS, ObjectLock: b.objectLock}
	if b.layout != "" {
		v, err := parseEnum("layout", b.layout, "LAYOUT_", stratov1.BucketLayout_value)
		if err != nil {
			return nil, err
		}
		req.Layout = stratov1.BucketLayout(v)
	}
	var err error
	if b.replication != "" {
		if req.Replication, req.ErasureCoding, err = parseReplication(b.replication); err != nil {
			return nil, err
		}
	}
	if b.checksum != "" {
		v, err := parseEnum("checksum", b.checksum, "CHECKSUM_", stratov1.ChecksumType_value)
		if err != nil {
			return nil, err
		}
		req.ChecksumType = stratov1.ChecksumType(v)
	}
	n, err := optionalSize("bytes-per-checksum", b.bpc)
	if err != nil {
		return nil, err
	}
	if n > 1<<30 {
		return nil, usagef("--bytes-per-checksum: %s is too large", b.bpc)
	}
	req.BytesPerChecksum = int32(n)
	if req.BlockSize, err = optionalSize("block-size", b.blockSize); err != nil {
		return nil, err
	}
	if req.QuotaBytes, err = optionalSize("quota-bytes", b.quotaBytes); err != nil {
		return nil, err
	}
	if b.quotaNS < 0 {
		return nil, usagef("--quota-namespace: %d is negative", b.quotaNS)
	}
	return req, nil
}

func newBucketCreateCmd(o *cliOptions) *cobra.Command {
	var b bucketFlags
	create := &cobra.Command{
		Use:   "create /VOLUME/BUCKET",
		Short: "Create a bucket",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			req, err := b.request(p)
			if err != nil {
				return err
			}
			bk, err := s.c.CreateBucket(s.ctx, req)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, bk)
			}
			return nil
		}),
	}
	f := create.Flags()
	f.StringVar(&b.layout, "layout", "", "FSO (directories, atomic rename; the default) or OBS (flat keys, S3 semantics)")
	f.StringVar(&b.replication, "replication", "", "ONE, THREE (the default), or erasure coding: rs-3-2-1024k, rs-6-3-1024k, rs-10-4-1024k, xor-2-1-1024k")
	f.StringVar(&b.checksum, "checksum", "", "NONE, CRC32, CRC32C, SHA256 or MD5 (default CRC32C)")
	f.StringVar(&b.bpc, "bytes-per-checksum", "", "bytes covered by each checksum, e.g. 16k (default 16 KiB)")
	f.StringVar(&b.blockSize, "block-size", "", "bytes per block, e.g. 256MB (default: the cluster's)")
	f.StringVar(&b.quotaBytes, "quota-bytes", "", "most bytes the bucket's keys may hold, e.g. 1TiB (default: unlimited)")
	f.Int64Var(&b.quotaNS, "quota-namespace", 0, "most keys and directories the bucket may hold (default: unlimited)")
	f.StringVar(&b.owner, "owner", "", "owner of the bucket (default: the current user)")
	f.BoolVar(&b.objectLock, "object-lock", false, "S3 object lock (OBS): the bucket is versioned for good and its versions can be locked")
	return create
}

func newBucketInfoCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "info /VOLUME/BUCKET",
		Short: "Show a bucket",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			b, err := s.c.GetBucket(s.ctx, p.Volume, p.Bucket)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, b)
			}
			return printFields(s.out, []field{
				{"Volume", b.Volume},
				{"Name", b.Name},
				{"ID", strconv.FormatUint(b.Id, 10)},
				{"Layout", enumName(b.Layout, "LAYOUT_")},
				{"Versioning", versioningName(b.Versioning)},
				bucketLockField(b.ObjectLock),
				{"Replication", client.Redundancy(b.Replication, b.ErasureCoding)},
				{"Checksum", enumName(b.ChecksumType, "CHECKSUM_")},
				{"Bytes per checksum", bytesize.Format(int64(b.BytesPerChecksum))},
				{"Block size", bytesize.Format(b.BlockSize)},
				{"Owner", b.Owner},
				{"Created", timeMs(b.CreationTimeUnixMs)},
				{"Modified", timeMs(b.ModificationTimeUnixMs)},
				{"Used", sizeWithBytes(b.UsedBytes)},
				{"Quota", quota(b.QuotaBytes, true)},
				{"Keys and directories", strconv.FormatInt(b.UsedNamespace, 10)},
				{"Namespace quota", quota(b.QuotaNamespace, false)},
			})
		}),
	}

}

func newBucketListCmd(o *cliOptions) *cobra.Command {
	var prefix string
	list := &cobra.Command{
		Use:   "list /VOLUME",
		Short: "List the buckets of a volume",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			vol, err := volumeArg(args[0])
			if err != nil {
				return err
			}
			bs, err := s.c.ListBuckets(s.ctx, vol, prefix)
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, messages(bs))
			}
			rows := make([][]string, 0, len(bs))
			for _, b := range bs {
				rows = append(rows, []string{b.Name, enumName(b.Layout, "LAYOUT_"), client.Redundancy(b.Replication, b.ErasureCoding),
					enumName(b.ChecksumType, "CHECKSUM_"), strconv.FormatInt(b.UsedNamespace, 10), bytesize.Format(b.UsedBytes),
					quota(b.QuotaBytes, true), b.Owner, timeMs(b.CreationTimeUnixMs)})
			}
			return printTable(s.out, []string{"NAME", "LAYOUT", "REPLICATION", "CHECKSUM", "KEYS", "USED", "QUOTA", "OWNER", "CREATED"}, rows)
		}),
	}
	list.Flags().StringVar(&prefix, "prefix", "", "list only buckets whose name starts with this")

	return list
}

func newBucketDeleteCmd(o *cliOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "delete /VOLUME/BUCKET",
		Short: "Delete an empty bucket",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			return s.c.DeleteBucket(s.ctx, p.Volume, p.Bucket)
		}),
	}
}

// parseReplication accepts ONE, THREE, 1 and 3, and erasure coding
// configs (rs-6-3-1024k).
func parseReplication(s string) (stratov1.ReplicationFactor, *stratov1.ErasureCoding, error) {
	repl, e, err := client.ParseReplication(s)
	if err != nil {
		return 0, nil, usagef("--replication: %s", strings.TrimPrefix(err.Error(), client.ErrInvalid.Error()+": "))
	}
	return repl, e, nil
}

// ---- Keys -----------------------------------------------------------------------

func newKeyCmd(o *cliOptions) *cobra.Command {
	cmd := group("key", "Write, read, inspect, list, rename and delete keys")
	cmd.AddCommand(newKeyPutCmd(o), newKeyGetCmd(o), newKeyCatCmd(o), newKeyInfoCmd(o), newKeyListCmd(o), newKeyDelCmd(o), newKeyRenameCmd(o),
		newKeyRetentionCmd(o), newKeyLegalHoldCmd(o))
	cmd.AddCommand(newAclCmds(o, aclKey)...)
	return cmd
}

func newKeyPutCmd(o *cliOptions) *cobra.Command {
	var replication string
	put := &cobra.Command{
		Use:   "put /VOLUME/BUCKET/KEY FILE|-",
		Short: "Write a key from a local file (- for stdin); an existing key is replaced",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			var wo client.WriteOptions
			if replication != "" {
				if wo.Replication, wo.ErasureCoding, err = parseReplication(replication); err != nil {
					return err
				}
			}
			src, size, closeSrc, err := openLocal(s, args[1])
			if err != nil {
				return err
			}
			defer closeSrc()
			wo.SizeHint = size
			w, err := s.c.CreateKey(s.ctx, p.Volume, p.Bucket, p.Key, wo)
			if err != nil {
				return err
			}
			return upload(s, w, src)
		}),
	}
	put.Flags().StringVar(&replication, "replication", "", "ONE, THREE or erasure coding, e.g. rs-6-3-1024k (default: the bucket's)")
	return put
}

func newKeyGetCmd(o *cliOptions) *cobra.Command {
	var force bool
	get := &cobra.Command{
		Use:   "get /VOLUME/BUCKET/KEY FILE|-",
		Short: "Read a key into a local file (- for stdout)",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			dst, err := localTarget(args[1], keyBase(p.Key), force)
			if err != nil {
				return err
			}
			r, err := s.c.OpenKey(s.ctx, p.Volume, p.Bucket, p.Key)
			if err != nil {
				return err
			}
			return download(s, r, dst)
		}),
	}
	get.Flags().BoolVarP(&force, "force", "f", false, "replace an existing local file")
	return get
}

func newKeyCatCmd(o *cliOptions) *cobra.Command {
	cat := &cobra.Command{
		Use:   "cat /VOLUME/BUCKET/KEY",
		Short: "Write a key to stdout",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			r, err := s.c.OpenKey(s.ctx, p.Volume, p.Bucket, p.Key)
			if err != nil {
				return err
			}
			return download(s, r, "-")
		}),
	}
	return cat
}

func newKeyInfoCmd(o *cliOptions) *cobra.Command {
	var version string
	info := &cobra.Command{
		Use:   "info /VOLUME/BUCKET/KEY",
		Short: "Show a key (or a version of it) and where its blocks are",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			k, err := s.c.LookupKeyVersion(s.ctx, p.Volume, p.Bucket, p.Key, client.KeyVersion{ID: version})
			if err != nil {
				return err
			}
			if s.json {
				return printJSON(s.out, k)
			}
			return printKeyInfo(s.out, k)
		}),
	}
	info.Flags().StringVar(&version, "version-id", "", "a version of the key (S3 versioning; default: the latest)")
	return info
}

func newKeyListCmd(o *cliOptions) *cobra.Command {
	var listPrefix, delimiter, startAfter string
	var limit int
	list := &cobra.Command{
		Use:   "list /VOLUME/BUCKET",
		Short: "List the keys of a bucket (every page)",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := bucketArg(args[0])
			if err != nil {
				return err
			}
			if len(delimiter) > 1 {
				return usagef("--delimiter: %q is more than one character", delimiter)
			}
			if limit < 0 {
				return usagef("--limit: %d is negative", limit)
			}
			keys, prefixes, err := listKeys(s, p, listPrefix, delimiter, startAfter, limit)
			if err != nil {
				return err
			}
			if s.json {
				out := make([]any, 0, len(keys)+len(prefixes))
				for _, k := range keys {
					raw, err := cliJSON(k)
					if err != nil {
						return err
					}
					out = append(out, rawJSON(raw))
				}
				for _, pre := range prefixes {
					out = append(out, map[string]string{"prefix": pre})
				}
				return printJSON(s.out, out)
			}
			rows := make([][]string, 0, len(keys)+len(prefixes))
			for _, pre := range prefixes {
				rows = append(rows, []string{"PRE", "", "", pre})
			}
			for _, k := range keys {
				rows = append(rows, []string{client.Redundancy(k.Replication, k.ErasureCoding), bytesize.Format(k.Size), timeMs(k.ModificationTimeUnixMs), k.Name})
			}
			return printTable(s.out, []string{"REPLICATION", "SIZE", "MODIFIED", "KEY"}, rows)
		}),
	}
	lf := list.Flags()
	lf.StringVar(&listPrefix, "prefix", "", "list only keys that start with this")
	lf.StringVar(&delimiter, "delimiter", "", `group keys by their prefix up to this character (e.g. "/"), as S3 does`)
	lf.StringVar(&startAfter, "start-after", "", "list keys after this one")
	lf.IntVar(&limit, "limit", 0, "list at most this many keys and prefixes (default: all)")
	return list
}

func newKeyDelCmd(o *cliOptions) *cobra.Command {
	var version string
	var bypass bool
	del := &cobra.Command{
		Use:   "delete /VOLUME/BUCKET/KEY",
		Short: "Delete a key (on a versioned bucket: a delete marker), or a version of it for good",
		Args:  exactArgs(1),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			_, err = s.c.DeleteKeyWith(s.ctx, &stratov1.DeleteKeyRequest{Volume: p.Volume, Bucket: p.Bucket, Key: p.Key,
				VersionId: version, BypassGovernance: bypass})
			return err
		}),
	}
	del.Flags().StringVar(&version, "version-id", "", "delete this version for good (S3 versioning)")
	del.Flags().BoolVar(&bypass, "bypass-governance", false, "delete a version under GOVERNANCE retention (the bucket's owner and administrators)")
	return del
}

func newKeyRenameCmd(o *cliOptions) *cobra.Command {
	rename := &cobra.Command{
		Use:   "rename /VOLUME/BUCKET/KEY NEWKEY",
		Short: "Rename a key within its bucket (NEWKEY: a key name, or /VOLUME/BUCKET/NEWKEY); the new key must not exist",
		Args:  exactArgs(2),
		RunE: o.action(func(s *session, args []string) error {
			p, err := keyArg(args[0])
			if err != nil {
				return err
			}
			to := args[1]
			if strings.HasPrefix(to, "/") {
				q, err := keyArg(to)
				if err != nil {
					return err
				}
				if q.Volume != p.Volume || q.Bucket != p.Bucket {
					return usagef("cannot rename a key into another bucket (%s/%s to %s/%s)", p.Volume, p.Bucket, q.Volume, q.Bucket)
				}
				to = q.Key
			}
			if to == "" {
				return usagef("the new key name is empty")
			}
			return s.c.RenameKey(s.ctx, p.Volume, p.Bucket, p.Key, to)
		}),
	}
	return rename
}

// rawJSON is JSON already encoded (a protojson record inside a list).
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// listKeys pages through ListKeys until the listing ends or limit entries
// (keys and common prefixes) have come.
func listKeys(s *session, p client.Path, prefix, delimiter, startAfter string, limit int) ([]*stratov1.KeyInfo, []string, error) {
	var keys []*stratov1.KeyInfo
	var prefixes []string
	after := startAfter
	for {
		resp, err := s.c.ListKeys(s.ctx, &stratov1.ListKeysRequest{Volume: p.Volume, Bucket: p.Bucket,
			Prefix: prefix, Delimiter: delimiter, StartAfter: after})
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, resp.Keys...)
		prefixes = append(prefixes, resp.CommonPrefixes...)
		if limit > 0 && len(keys)+len(prefixes) >= limit {
			return trimListing(keys, prefixes, limit)
		}
		if !resp.Truncated {
			return keys, prefixes, nil
		}
		next := resp.NextStartAfter
		if next == "" || next == after {
			return nil, nil, errors.New("the meta server's listing did not advance")
		}
		after = next
	}
}

// trimListing keeps the first limit entries in name order.
func trimListing(keys []*stratov1.KeyInfo, prefixes []string, limit int) ([]*stratov1.KeyInfo, []string, error) {
	var k []*stratov1.KeyInfo
	var pre []string
	i, j := 0, 0
	for len(k)+len(pre) < limit && (i < len(keys) || j < len(prefixes)) {
		if j >= len(prefixes) || (i < len(keys) && keys[i].Name < prefixes[j]) {
			k = append(k, keys[i])
			i++
		} else {
			pre = append(pre, prefixes[j])
			j++
		}
	}
	return k, pre, nil
}

func printKeyInfo(w io.Writer, k *stratov1.KeyInfo) error {
	fields := []field{
		{"Volume", k.Volume},
		{"Bucket", k.Bucket},
		{"Name", k.Name},
		{"Size", sizeWithBytes(k.Size)},
		{"Replication", client.Redundancy(k.Replication, k.ErasureCoding)},
		{"Checksum", enumName(k.ChecksumType, "CHECKSUM_") + " every " + bytesize.Format(int64(k.BytesPerChecksum))},
		{"Owner", k.Owner},
		{"Created", timeMs(k.CreationTimeUnixMs)},
		{"Modified", timeMs(k.ModificationTimeUnixMs)},
		{"Object ID", strconv.FormatUint(k.ObjectId, 10)},
		{"Blocks", strconv.Itoa(len(k.Blocks))},
	}
	if k.VersionId != "" {
		fields = append(fields, field{"Version", k.VersionId})
	}
	if err := printFields(w, append(fields, lockFields(k.ObjectLock)...)); err != nil {
		return err
	}
	if len(k.Blocks) == 0 {
		return nil
	}
	rows := make([][]string, 0, len(k.Blocks))
	for _, b := range k.Blocks {
		var members []string
		for _, m := range b.GetPipeline().GetMembers() {
			members = append(members, m.Id)
		}
		rows = append(rows, []string{strconv.FormatUint(b.GetBlockId().GetContainerId(), 10), strconv.FormatUint(b.GetBlockId().GetLocalId(), 10),
			strconv.FormatInt(b.Offset, 10), strconv.FormatInt(b.Length, 10), strings.Join(members, ",")})
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return printTable(w, []string{"CONTAINER", "LOCAL ID", "OFFSET", "LENGTH", "DATANODES"}, rows)
}

// keyBase is the last component of a key, the default local file name.
func keyBase(key string) string {
	key = strings.TrimRight(key, "/")
	return key[strings.LastIndexByte(key, '/')+1:]
}

// ---- Data transfers (shared by sh key and fs) ----------------------------------

// openLocal opens the source of an upload: a file, or stdin for "-". size
// is the file's length when known (the writer's size hint), else 0.
func openLocal(s *session, name string) (r io.Reader, size int64, closeFn func(), err error) {
	if name == "-" {
		return s.in, 0, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, nil, err
	}
	if st.IsDir() {
		_ = f.Close()
		return nil, 0, nil, usagef("%s is a directory", name)
	}
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, func() { _ = f.Close() }, nil
}

// upload copies src into w and commits the key. A failure before the end
// leaves the key uncommitted (Close is not called: it would commit what
// was written so far); meta frees its blocks when the open key expires.
func upload(s *session, w *client.Writer, src io.Reader) error {
	s.transferStarted()
	if _, err := io.Copy(w, src); err != nil {
		return err
	}
	return w.Close()
}

// localTarget decides where a download goes: "-" is stdout; an existing
// directory receives the file under base; an existing file is replaced
// only with force.
func localTarget(name, base string, force bool) (string, error) {
	if name == "-" {
		return name, nil
	}
	st, err := os.Stat(name)
	switch {
	case err == nil && st.IsDir():
		if base == "" {
			return "", usagef("%s is a directory", name)
		}
		return localTarget(strings.TrimRight(name, "/")+"/"+base, "", force)
	case err == nil && !force:
		return "", errors.New(name + ": local file exists (use -f to replace it)")
	case err != nil && !os.IsNotExist(err):
		return "", err
	}
	return name, nil
}

// download copies r to dst ("-" for stdout). A file is written under a
// temporary name beside dst and renamed into place when complete, so a
// failed read leaves nothing half-written.
func download(s *session, r *client.Reader, dst string) error {
	defer func() { _ = r.Close() }()
	s.transferStarted()
	if dst == "-" {
		_, err := io.Copy(s.out, r)
		return err
	}
	dir, base := ".", dst
	if i := strings.LastIndexByte(dst, '/'); i >= 0 {
		dir, base = dst[:i+1], dst[i+1:]
	}
	tmp, err := os.CreateTemp(dir, "."+base+".strato-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, r); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	// CreateTemp's 0600 would outlive the rename; a downloaded file is
	// readable like any other the user creates.
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}
