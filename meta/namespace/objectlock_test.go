package namespace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

const (
	governance = stratov1.RetentionMode_RETENTION_GOVERNANCE
	compliance = stratov1.RetentionMode_RETENTION_COMPLIANCE
)

// lockBucket creates volume "vol" (owned by alice) and an OBS bucket with
// object lock, which every authenticated user may use (WORLD ALL).
func (h *harness) lockBucket(bucket string) {
	h.t.Helper()
	if _, err := h.rd().Volume("vol"); err != nil {
		h.must(&stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"})
	}
	res := h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: bucket, Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Owner: "alice", ObjectLock: true, Acls: []*stratov1.Acl{{Type: stratov1.AclType_ACL_WORLD, Rights: RightAll,
			Scope: stratov1.AclScope_ACL_ACCESS}}}).(*stratov1.CreateBucketResponse)
	require.Equal(h.t, enabled, res.Bucket.Versioning, "object lock versions the bucket")
	require.True(h.t, res.Bucket.ObjectLock.GetEnabled())
}

func (h *harness) lockOf(bucket, key, vid string) *stratov1.ObjectLock {
	h.t.Helper()
	ki, err := h.lookupVersion(bucket, key, vid)
	require.NoError(h.t, err)
	return ki.ObjectLock
}

func (h *harness) setRetention(bucket, key, vid string, mode stratov1.RetentionMode, until time.Time, bypass bool) error {
	h.t.Helper()
	var ms int64
	if !until.IsZero() {
		ms = until.UnixMilli()
	}
	_, err := h.do(&stratov1.SetObjectLockRequest{Volume: "vol", Bucket: bucket, Key: key, VersionId: vid,
		SetRetention: true, Mode: mode, RetainUntilUnixMs: ms, BypassGovernance: bypass})
	return err
}

func (h *harness) legalHold(bucket, key, vid string, on bool) {
	h.t.Helper()
	h.must(&stratov1.SetObjectLockRequest{Volume: "vol", Bucket: bucket, Key: key, VersionId: vid, LegalHold: proto.Bool(on)})
}

func (h *harness) deleteVersion(bucket, key, vid string, bypass bool) error {
	h.t.Helper()
	_, err := h.do(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: bucket, Key: key, VersionId: vid, BypassGovernance: bypass})
	return err
}

// TestObjectLockRefusesDeletes: meta, not the gateway, refuses every
// delete of a locked version through the namespace API the CLI and the
// Hadoop connector use (DeleteKey with a version ID), as well as appends,
// truncates and composes of it; a delete without a version makes a
// marker; bucket delete is refused while versions remain.
func TestObjectLockRefusesDeletes(t *testing.T) {
	h := newHarness(t)
	h.lockBucket("worm")
	h.volBucket("plain", stratov1.BucketLayout_LAYOUT_OBS)
	h.fails(ErrWrongLayout, &stratov1.CreateBucketRequest{Volume: "vol", Name: "fsl", ObjectLock: true})
	h.fails(ErrFailedPrecondition, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "worm", Versioning: suspended})

	// Not on a bucket without object lock.
	h.putKey("plain", "k", 1)
	h.fails(ErrNoObjectLock, &stratov1.SetObjectLockRequest{Volume: "vol", Bucket: "plain", Key: "k", LegalHold: proto.Bool(true)})
	h.fails(ErrNoObjectLock, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "plain",
		ObjectLock: &stratov1.BucketObjectLock{Enabled: true, DefaultMode: governance, DefaultDays: 1}})

	// Default retention: GOVERNANCE for a day.
	h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "worm",
		ObjectLock: &stratov1.BucketObjectLock{Enabled: true, DefaultMode: governance, DefaultDays: 1, DefaultYears: 1}})
	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "worm",
		ObjectLock: &stratov1.BucketObjectLock{Enabled: true, DefaultMode: governance, DefaultDays: 1}})
	v1 := h.putKey("worm", "k", 10).VersionId
	l := h.lockOf("worm", "k", v1)
	require.Equal(t, governance, l.Mode)
	require.Equal(t, h.now.Add(24*time.Hour).UnixMilli(), l.RetainUntilUnixMs)

	// A delete by version is refused; a plain delete makes a marker; an
	// overwrite makes a new version (allowed).
	require.ErrorIs(t, h.deleteVersion("worm", "k", v1, false), ErrObjectLocked)
	marker := h.deleteKey("worm", "k", "")
	require.True(t, marker.DeleteMarker)
	v2 := h.putKey("worm", "k", 20).VersionId
	require.ErrorIs(t, h.deleteVersion("worm", "k", v1, false), ErrObjectLocked, "noncurrent, still locked")
	require.ErrorIs(t, h.deleteVersion("worm", "k", v2, false), ErrObjectLocked, "current, locked")
	h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "worm", Key: "k", VersionId: marker.VersionId}) // markers are never locked

	// Appends, truncates and composes would change the data.
	h.fails(ErrObjectLocked, &stratov1.TruncateRequest{Volume: "vol", Bucket: "worm", Path: "k", NewLength: 1})
	h.fails(ErrObjectLocked, &stratov1.AppendFileRequest{Volume: "vol", Bucket: "worm", Path: "k"})

	// Bypass: only for the bucket's owner (or its volume's) and
	// administrators; anyone else's bypass is ignored.
	bob, alice := &Caller{User: "bob"}, &Caller{User: "alice"}
	_, err := h.as(bob, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "worm", Key: "k", VersionId: v1, BypassGovernance: true})
	require.ErrorIs(t, err, ErrObjectLocked)
	_, err = h.as(bob, &stratov1.SetObjectLockRequest{Volume: "vol", Bucket: "worm", Key: "k", VersionId: v1, SetRetention: true,
		BypassGovernance: true})
	require.ErrorIs(t, err, ErrObjectLocked, "removing a governance retention needs the bypass")
	_, err = h.as(alice, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "worm", Key: "k", VersionId: v1, BypassGovernance: true})
	require.NoError(t, err, "the owner bypasses governance")

	// COMPLIANCE: extended only, by anyone; never shortened nor removed,
	// not even with bypass.
	until := h.now.Add(48 * time.Hour)
	require.ErrorIs(t, h.setRetention("worm", "k", v2, compliance, until, false), ErrObjectLocked, "governance to compliance needs the bypass")
	require.NoError(t, h.setRetention("worm", "k", v2, compliance, until, true))
	require.ErrorIs(t, h.setRetention("worm", "k", v2, compliance, until.Add(-time.Hour), true), ErrObjectLocked)
	require.ErrorIs(t, h.setRetention("worm", "k", v2, governance, until.Add(time.Hour), true), ErrObjectLocked)
	require.ErrorIs(t, h.setRetention("worm", "k", v2, stratov1.RetentionMode_RETENTION_UNSPECIFIED, time.Time{}, true), ErrObjectLocked)
	require.NoError(t, h.setRetention("worm", "k", v2, compliance, until, false), "the same date again")
	require.NoError(t, h.setRetention("worm", "k", v2, compliance, until.Add(time.Hour), false), "extended")
	require.ErrorIs(t, h.deleteVersion("worm", "k", v2, true), ErrObjectLocked)
	require.ErrorIs(t, h.setRetention("worm", "k", v2, compliance, h.now.Add(-time.Hour), false), ErrInvalid, "a date in the past")

	// A legal hold keeps a version whatever its retention; the bucket
	// keeps its versions, so it cannot be deleted.
	v3 := h.putKey("worm", "h", 1).VersionId
	h.legalHold("worm", "h", v3, true)
	require.True(t, h.lockOf("worm", "h", v3).LegalHold)
	h.fails(ErrBucketNotEmpty, &stratov1.DeleteBucketRequest{Volume: "vol", Name: "worm"})

	// Time passes (the command's time is the leader's clock): the
	// retentions end, the legal hold stays until taken off.
	h.now = h.now.Add(72 * time.Hour)
	require.ErrorIs(t, h.deleteVersion("worm", "h", v3, true), ErrObjectLocked)
	h.legalHold("worm", "h", v3, false)
	require.NoError(t, h.deleteVersion("worm", "h", v3, false))
	require.NoError(t, h.deleteVersion("worm", "k", v2, false))
	require.Empty(t, h.versions("worm", "", 0))
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol", Name: "worm"})
}

// TestObjectLockCommit: a commit's own lock, the default's, and one asked
// for on a bucket without object lock.
func TestObjectLockCommit(t *testing.T) {
	h := newHarness(t)
	h.lockBucket("worm")
	h.volBucket("plain", stratov1.BucketLayout_LAYOUT_OBS)
	commit := func(bucket, key string, l *stratov1.ObjectLock) (*stratov1.CommitKeyResponse, error) {
		open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: bucket, Key: key}).(*stratov1.OpenKeyResponse)
		res, err := h.do(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: bucket, Key: key, OpenId: open.OpenId, ObjectLock: l})
		if err != nil {
			return nil, err
		}
		return res.(*stratov1.CommitKeyResponse), nil
	}
	until := h.now.Add(time.Hour).UnixMilli()
	_, err := commit("plain", "k", &stratov1.ObjectLock{LegalHold: true})
	require.ErrorIs(t, err, ErrNoObjectLock)
	_, err = commit("worm", "k", &stratov1.ObjectLock{Mode: compliance, RetainUntilUnixMs: h.now.UnixMilli() - 1})
	require.ErrorIs(t, err, ErrInvalid)

	res, err := commit("worm", "k", &stratov1.ObjectLock{Mode: compliance, RetainUntilUnixMs: until})
	require.NoError(t, err)
	require.Equal(t, &stratov1.ObjectLock{Mode: compliance, RetainUntilUnixMs: until}, h.lockOf("worm", "k", res.VersionId))
	res, err = commit("worm", "n", nil)
	require.NoError(t, err)
	require.Nil(t, h.lockOf("worm", "n", res.VersionId), "no default retention: none")

	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "worm",
		ObjectLock: &stratov1.BucketObjectLock{Enabled: true, DefaultMode: compliance, DefaultYears: 1}})
	res, err = commit("worm", "y", &stratov1.ObjectLock{LegalHold: true})
	require.NoError(t, err)
	l := h.lockOf("worm", "y", res.VersionId)
	require.True(t, l.LegalHold)
	require.Equal(t, compliance, l.Mode, "a legal hold alone takes the default retention too")
	require.Equal(t, h.now.UTC().AddDate(1, 0, 0).UnixMilli(), l.RetainUntilUnixMs)
	bk, err := h.rd().Bucket("vol", "worm")
	require.NoError(t, err)
	require.Equal(t, int32(1), bk.ObjectLock.DefaultYears)
}
