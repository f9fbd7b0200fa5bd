package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// openKey opens key (OpenKey: an S3 PUT's, on either layout) and returns
// its open ID.
func (h *harness) openKey(bucket, key string) uint64 {
	h.t.Helper()
	return h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: bucket, Key: key}).(*stratov1.OpenKeyResponse).OpenId
}

// commitIf commits open key openID with the given preconditions and no
// blocks, returning the commit's error.
func (h *harness) commitIf(bucket, key string, openID, ifObject uint64, ifAbsent bool) (*stratov1.CommitKeyResponse, error) {
	res, err := h.do(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: bucket, Key: key, OpenId: openID,
		IfObjectId: ifObject, IfAbsent: ifAbsent})
	if err != nil {
		return nil, err
	}
	return res.(*stratov1.CommitKeyResponse), nil
}

// latestObject is the object key's latest version is (0: none, or a
// delete marker).
func (h *harness) latestObject(bucket, key string) uint64 {
	h.t.Helper()
	res, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: bucket, Key: key})
	if err != nil {
		require.ErrorIs(h.t, err, ErrNotFound)
		return 0
	}
	return res.GetKey().GetObjectId()
}

// TestCommitConditions: a commit's if_absent and if_object_id are checked
// in its apply against the key's latest version, so that of two writers
// that both looked before either committed only the one the condition
// still holds for commits: on OBS and FSO buckets, unversioned and
// versioned.
func TestCommitConditions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		layout    stratov1.BucketLayout
		versioned bool
	}{
		{"obs", stratov1.BucketLayout_LAYOUT_OBS, false},
		{"versioned", stratov1.BucketLayout_LAYOUT_OBS, true},
		{"fso", stratov1.BucketLayout_LAYOUT_FSO, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.volBucket("bkt", tc.layout)
			if tc.versioned {
				h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Versioning: stratov1.BucketVersioning_VERSIONING_ENABLED})
			}
			key := "d/k"

			// Two writers open the key while it is absent; the first
			// commit wins, the second is refused and changes nothing.
			a, b := h.openKey("bkt", key), h.openKey("bkt", key)
			won, err := h.commitIf("bkt", key, a, 0, true)
			require.NoError(t, err)
			_, err = h.commitIf("bkt", key, b, 0, true)
			require.ErrorIs(t, err, ErrKeyReplaced)
			require.ErrorIs(t, err, ErrFailedPrecondition)
			require.Equal(t, won.GetObjectId(), h.latestObject("bkt", key))

			// If-Match: two writers saw the same version; the second
			// names a version no longer the latest.
			c, d := h.openKey("bkt", key), h.openKey("bkt", key)
			second, err := h.commitIf("bkt", key, c, won.GetObjectId(), false)
			require.NoError(t, err)
			_, err = h.commitIf("bkt", key, d, won.GetObjectId(), false)
			require.ErrorIs(t, err, ErrKeyReplaced)
			require.Equal(t, second.GetObjectId(), h.latestObject("bkt", key))

			// Both conditions at once: invalid, before any apply.
			_, err = h.commitIf("bkt", key, h.openKey("bkt", key), second.GetObjectId(), true)
			require.ErrorIs(t, err, ErrInvalid)

			// Deleted: if_object_id of the deleted object fails; if_absent
			// holds (on a versioned bucket the latest is a delete marker,
			// which is no object).
			h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "bkt", Key: key})
			_, err = h.commitIf("bkt", key, h.openKey("bkt", key), second.GetObjectId(), false)
			require.ErrorIs(t, err, ErrKeyReplaced)
			require.Zero(t, h.latestObject("bkt", key), "a refused commit makes no version")
			third, err := h.commitIf("bkt", key, h.openKey("bkt", key), 0, true)
			require.NoError(t, err)
			require.Equal(t, third.GetObjectId(), h.latestObject("bkt", key))

			// A writer that hsyncs is checked at its first commit; its own
			// hsync is no other version at its last.
			if !tc.versioned {
				hs := h.openKey("bkt", "hs")
				_, err := h.do(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "hs", OpenId: hs, Hsync: true, IfAbsent: true})
				require.NoError(t, err)
				_, err = h.commitIf("bkt", "hs", h.openKey("bkt", "hs"), 0, true)
				require.ErrorIs(t, err, ErrKeyReplaced, "another writer's hsync made the key")
				_, err = h.commitIf("bkt", "hs", hs, 0, true)
				require.NoError(t, err)
			}
		})
	}
}
