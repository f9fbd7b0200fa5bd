package namespace

import (
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/strato-io/strato/proto/strato/v1"
)

// TestDeterminism prepares random commands of every kind on one replica and
// applies the same encoded commands on two: replies and database contents
// must be identical.
func TestDeterminism(t *testing.T) {
	moreChecks(t, 200)
	rapid.Check(t, func(rt *rapid.T) {
		p := newReplicas(rt, openDB(t), openDB(t))
		leader, run, do := p.leader, p.run, p.do
		var openIDs []uint64
		var openKeys []string
		name := rapid.SampledFrom([]string{"a", "b", "c/d", "c/e", "f/g/h"})
		bucket := rapid.SampledFrom([]string{"fsb", "obs"})
		do(rt, &stratov1.CreateVolumeRequest{Name: "vol"})
		do(rt, &stratov1.CreateBucketRequest{Volume: "vol", Name: "fsb", QuotaNamespace: 30})
		do(rt, &stratov1.CreateBucketRequest{Volume: "vol", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS, QuotaBytes: 40})

		rt.Repeat(withVersions(p, name, bucket, map[string]func(*rapid.T){
			"open": func(rt *rapid.T) {
				k := name.Draw(rt, "key")
				bk := bucket.Draw(rt, "bucket")
				res := do(rt, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: bk, Key: k, SizeHint: rapid.Int64Range(0, 5).Draw(rt, "hint")})
				if res != nil {
					openIDs = append(openIDs, res.(*stratov1.OpenKeyResponse).OpenId)
					openKeys = append(openKeys, bk+"|"+k)
				}
			},
			"allocate": func(rt *rapid.T) {
				if len(openIDs) == 0 {
					return
				}
				i := rapid.IntRange(0, len(openIDs)-1).Draw(rt, "i")
				bk, k, _ := strings.Cut(openKeys[i], "|")
				do(rt, &stratov1.AllocateBlockRequest{Volume: "vol", Bucket: bk, Key: k, OpenId: openIDs[i]})
			},
			"commit": func(rt *rapid.T) {
				if len(openIDs) == 0 {
					return
				}
				i := rapid.IntRange(0, len(openIDs)-1).Draw(rt, "i")
				bk, k, _ := strings.Cut(openKeys[i], "|")
				var blocks []*stratov1.BlockLocation
				if ok, err := leader.rd().OpenKey(openIDs[i]); err == nil {
					for _, b := range ok.Blocks {
						if rapid.Bool().Draw(rt, "use") {
							blocks = append(blocks, &stratov1.BlockLocation{BlockId: BlockLocation(b).BlockId, Length: rapid.Int64Range(0, 20).Draw(rt, "len")})
						}
					}
				}
				do(rt, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: bk, Key: k, OpenId: openIDs[i], Blocks: blocks})
			},
			"append": func(rt *rapid.T) {
				k := name.Draw(rt, "key")
				bk := bucket.Draw(rt, "bucket")
				res := do(rt, &stratov1.AppendFileRequest{Volume: "vol", Bucket: bk, Path: k, SizeHint: rapid.Int64Range(0, 5).Draw(rt, "hint")})
				if res != nil {
					openIDs = append(openIDs, res.(*stratov1.OpenKeyResponse).OpenId)
					openKeys = append(openKeys, bk+"|"+k)
				}
			},
			"hsync": func(rt *rapid.T) {
				if len(openIDs) == 0 {
					return
				}
				i := rapid.IntRange(0, len(openIDs)-1).Draw(rt, "i")
				bk, k, _ := strings.Cut(openKeys[i], "|")
				do(rt, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: bk, Key: k, OpenId: openIDs[i], Hsync: true})
			},
			"truncate": func(rt *rapid.T) {
				do(rt, &stratov1.TruncateRequest{Volume: "vol", Bucket: bucket.Draw(rt, "bucket"), Path: name.Draw(rt, "path"),
					NewLength: rapid.Int64Range(-1, 30).Draw(rt, "length")})
			},
			"concat": func(rt *rapid.T) {
				do(rt, &stratov1.ConcatRequest{Volume: "vol", Bucket: bucket.Draw(rt, "bucket"), Target: name.Draw(rt, "target"),
					Sources: rapid.SliceOfN(name, 0, 2).Draw(rt, "sources")})
			},
			"recoverLease": func(rt *rapid.T) {
				do(rt, &stratov1.RecoverLeaseRequest{Volume: "vol", Bucket: bucket.Draw(rt, "bucket"), Path: name.Draw(rt, "path")})
			},
			"mkdir": func(rt *rapid.T) {
				do(rt, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: name.Draw(rt, "path")})
			},
			"delete": func(rt *rapid.T) {
				do(rt, &stratov1.DeleteRequest{Volume: "vol", Bucket: bucket.Draw(rt, "bucket"), Path: name.Draw(rt, "path"), Recursive: rapid.Bool().Draw(rt, "r")})
			},
			"rename": func(rt *rapid.T) {
				do(rt, &stratov1.RenameRequest{Volume: "vol", Bucket: bucket.Draw(rt, "bucket"), Src: name.Draw(rt, "src"), Dst: name.Draw(rt, "dst")})
			},
			"tick": func(rt *rapid.T) {
				leader.now = leader.now.Add(time.Duration(rapid.IntRange(1, 4).Draw(rt, "days")) * 24 * time.Hour)
				if cmd, err := leader.ns.PrepareExpiry(leader.db, leader.now, 3); err == nil && cmd != nil {
					run(rt, cmd)
				}
				if cmd, err := leader.ns.PrepareReclaim(leader.db, leader.now, 2); err == nil && cmd != nil {
					run(rt, cmd)
				}
			},
			"attributes": func(rt *rapid.T) {
				attrs := []*stratov1.KeyAttribute{{Name: "t", Value: rapid.StringMatching("[a-z]{0,3}").Draw(rt, "value")}}
				key := name.Draw(rt, "key")
				if rapid.Bool().Draw(rt, "bucket's") {
					key = ""
				}
				do(rt, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket.Draw(rt, "bucket"), Key: key, Attributes: attrs})
			},
			"status": func(rt *rapid.T) {
				b, p := bucket.Draw(rt, "bucket"), name.Draw(rt, "path")
				if rapid.Bool().Draw(rt, "root") {
					p = ""
				}
				switch rapid.IntRange(0, 2).Draw(rt, "which") {
				case 0:
					do(rt, &stratov1.SetPermissionRequest{Volume: "vol", Bucket: b, Path: p, Permission: uint32(rapid.IntRange(0, 0o7777).Draw(rt, "perm"))})
				case 1:
					do(rt, &stratov1.SetOwnerRequest{Volume: "vol", Bucket: b, Path: p, Owner: rapid.SampledFrom([]string{"", "u1"}).Draw(rt, "owner"),
						Group: rapid.SampledFrom([]string{"", "g1"}).Draw(rt, "group")})
				default:
					do(rt, &stratov1.SetTimesRequest{Volume: "vol", Bucket: b, Path: p, ModificationTimeUnixMs: proto.Int64(rapid.Int64Range(-1, 5).Draw(rt, "mtime"))})
				}
			},
			"s3key": func(rt *rapid.T) {
				ak := rapid.SampledFrom([]string{"", "key-a", "key-b"}).Draw(rt, "access key")
				if rapid.Bool().Draw(rt, "revoke") {
					do(rt, &stratov1.RevokeS3KeyRequest{AccessKey: ak})
				} else {
					do(rt, &stratov1.CreateS3KeyRequest{User: "u", AccessKey: ak})
				}
			},
			"purge": func(rt *rapid.T) {
				d := leader.deletedBlocks()
				if len(d) > 0 {
					run(rt, leader.ns.PreparePurge(leader.now, []uint64{d[0].Seq}))
				}
			},
		}))
		p.flush(rt)
		a, b := dump(rt, leader.db), dump(rt, p.follower.db)
		require.Equal(rt, len(a), len(b))
		for i := range a {
			require.Equal(rt, a[i], b[i])
		}
	})
}

// replicas applies each command on a leader, one batch per command, and on
// a follower in groups sharing one batch (what group commit does), and
// checks that both give the same reply or error.
type replicas struct {
	leader, follower *harness
	group, inBatch   int // commands per follower batch, and in this one
	fb               *pebble.Batch
}

func newReplicas(rt *rapid.T, leaderDB, followerDB *pebble.DB) *replicas {
	p := &replicas{leader: newHarnessOn(rt, leaderDB), follower: newHarnessOn(rt, followerDB),
		group: rapid.IntRange(1, 8).Draw(rt, "group")}
	p.fb = p.follower.db.NewIndexedBatch()
	return p
}

// flush commits the follower's batch.
func (p *replicas) flush(rt *rapid.T) {
	require.NoError(rt, p.fb.Commit(pebble.NoSync))
	require.NoError(rt, p.fb.Close())
	p.follower.ns.Committed()
	p.fb, p.inBatch = p.follower.db.NewIndexedBatch(), 0
}

// run applies cmd, encoded, on both and returns the leader's reply.
func (p *replicas) run(rt *rapid.T, cmd *stratov1.NamespaceCommand) proto.Message {
	data, err := proto.Marshal(cmd)
	require.NoError(rt, err)
	var results [2]proto.Message
	var errs [2]string
	c := &stratov1.NamespaceCommand{}
	require.NoError(rt, proto.Unmarshal(data, c))
	results[0], err = p.leader.apply(c)
	if err != nil {
		errs[0] = err.Error()
	}
	c = &stratov1.NamespaceCommand{}
	require.NoError(rt, proto.Unmarshal(data, c))
	before := p.fb.Count()
	results[1], err = p.follower.ns.Apply(c, p.fb)
	if err != nil {
		errs[1] = err.Error()
		require.Equal(rt, before, p.fb.Count(), "a failed command wrote to the shared batch")
	}
	if p.inBatch++; p.inBatch == p.group {
		p.flush(rt)
	}
	require.Equal(rt, errs[0], errs[1])
	require.True(rt, proto.Equal(results[0], results[1]), "%v != %v", results[0], results[1])
	return results[0]
}

// do prepares req on the leader and runs the command (nil when Prepare
// refused it).
func (p *replicas) do(rt *rapid.T, req proto.Message) proto.Message {
	cmd, err := p.leader.prepare(req)
	if err != nil {
		return nil
	}
	return p.run(rt, cmd)
}

// withVersions adds to ops the operations of S3 versioning: a bucket's
// versioning set, versions deleted by ID.
func withVersions(p *replicas, name, bucket *rapid.Generator[string], ops map[string]func(*rapid.T)) map[string]func(*rapid.T) {
	leader, do := p.leader, p.do
	for k, f := range map[string]func(*rapid.T){
		"versioning": func(rt *rapid.T) {
			v := rapid.SampledFrom([]stratov1.BucketVersioning{stratov1.BucketVersioning_VERSIONING_ENABLED,
				stratov1.BucketVersioning_VERSIONING_SUSPENDED}).Draw(rt, "versioning")
			do(rt, &stratov1.UpdateBucketRequest{Volume: "vol", Name: bucket.Draw(rt, "bucket"), Versioning: v})
		},
		"deleteVersion": func(rt *rapid.T) {
			k := name.Draw(rt, "key")
			vid := rapid.SampledFrom([]string{"null", "0000000000000000", "bad"}).Draw(rt, "version")
			if res, err := leader.rd().ListKeyVersions(&stratov1.ListKeyVersionsRequest{Volume: "vol", Bucket: "obs", Prefix: k}); err == nil &&
				len(res.Versions) > 0 && rapid.Bool().Draw(rt, "existing") {
				vid = res.Versions[rapid.IntRange(0, len(res.Versions)-1).Draw(rt, "which")].VersionId
			}
			do(rt, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: bucket.Draw(rt, "bucket"), Key: k, VersionId: vid})
		},
		// Object lock (decision 0088): a bucket "lck" made with it, its
		// default retention, locked commits, lock changes and deletes
		// that the locks refuse or the bypass lets through.
		"lockBucket": func(rt *rapid.T) {
			do(rt, &stratov1.CreateBucketRequest{Volume: "vol", Name: "lck", Layout: stratov1.BucketLayout_LAYOUT_OBS, ObjectLock: true})
			mode := rapid.SampledFrom([]stratov1.RetentionMode{stratov1.RetentionMode_RETENTION_UNSPECIFIED,
				stratov1.RetentionMode_RETENTION_GOVERNANCE, stratov1.RetentionMode_RETENTION_COMPLIANCE}).Draw(rt, "mode")
			l := &stratov1.BucketObjectLock{Enabled: true, DefaultMode: mode}
			if mode != stratov1.RetentionMode_RETENTION_UNSPECIFIED {
				l.DefaultDays = int32(rapid.IntRange(1, 3).Draw(rt, "days"))
			}
			do(rt, &stratov1.UpdateBucketRequest{Volume: "vol", Name: rapid.SampledFrom([]string{"lck", "obs"}).Draw(rt, "b"), ObjectLock: l})
		},
		"lockedPut": func(rt *rapid.T) {
			k := name.Draw(rt, "key")
			res := do(rt, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "lck", Key: k})
			if res == nil {
				return
			}
			var l *stratov1.ObjectLock
			if rapid.Bool().Draw(rt, "own") {
				l = &stratov1.ObjectLock{Mode: stratov1.RetentionMode(rapid.IntRange(0, 2).Draw(rt, "mode")),
					LegalHold: rapid.Bool().Draw(rt, "hold")}
				if l.Mode != stratov1.RetentionMode_RETENTION_UNSPECIFIED {
					l.RetainUntilUnixMs = leader.now.Add(time.Duration(rapid.IntRange(-1, 48).Draw(rt, "hours")) * time.Hour).UnixMilli()
				}
			}
			do(rt, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "lck", Key: k, OpenId: res.(*stratov1.OpenKeyResponse).OpenId, ObjectLock: l})
		},
		"setLock": func(rt *rapid.T) {
			k := name.Draw(rt, "key")
			req := &stratov1.SetObjectLockRequest{Volume: "vol", Bucket: "lck", Key: k, BypassGovernance: rapid.Bool().Draw(rt, "bypass")}
			if rapid.Bool().Draw(rt, "retention") {
				req.SetRetention, req.Mode = true, stratov1.RetentionMode(rapid.IntRange(0, 2).Draw(rt, "mode"))
				if req.Mode != stratov1.RetentionMode_RETENTION_UNSPECIFIED {
					req.RetainUntilUnixMs = leader.now.Add(time.Duration(rapid.IntRange(1, 72).Draw(rt, "hours")) * time.Hour).UnixMilli()
				}
			} else {
				req.LegalHold = proto.Bool(rapid.Bool().Draw(rt, "hold"))
			}
			do(rt, req)
		},
		"deleteLocked": func(rt *rapid.T) {
			k := name.Draw(rt, "key")
			res, err := leader.rd().ListKeyVersions(&stratov1.ListKeyVersionsRequest{Volume: "vol", Bucket: "lck", Prefix: k})
			if err != nil || len(res.Versions) == 0 {
				return
			}
			vid := res.Versions[rapid.IntRange(0, len(res.Versions)-1).Draw(rt, "which")].VersionId
			do(rt, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "lck", Key: k, VersionId: vid, BypassGovernance: rapid.Bool().Draw(rt, "bypass")})
		},
	} {
		ops[k] = f
	}
	return ops
}
