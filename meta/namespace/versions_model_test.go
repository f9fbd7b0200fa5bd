package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// modelVersion is a version of the model of AWS's versioning: its ID, a
// delete marker or an object of size bytes.
type modelVersion struct {
	id     string
	marker bool
	size   int64
}

// TestVersionsModel runs random writes, deletes, deletes by version and
// versioning changes against AWS's rules kept in a model (per key, its
// versions newest first): after each step, the bucket's versions, their
// latest flags and its usage must be the model's.
func TestVersionsModel(t *testing.T) {
	moreChecks(t, 300)
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarnessOn(rt, openDB(t))
		h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
		state := versioningOff
		model := map[string][]modelVersion{}
		keys := rapid.SampledFrom([]string{"a", "a/b", "b", "c"})
		dropNull := func(k string) {
			var keep []modelVersion
			for _, v := range model[k] {
				if v.id != NullVersionID {
					keep = append(keep, v)
				}
			}
			model[k] = keep
		}
		rt.Repeat(map[string]func(*rapid.T){
			"put": func(rt *rapid.T) {
				k, size := keys.Draw(rt, "key"), rapid.Int64Range(1, 9).Draw(rt, "size")
				vid := h.putKey("obs", k, size).VersionId
				switch state {
				case versioningOff:
					require.Empty(rt, vid)
					model[k] = []modelVersion{{id: NullVersionID, size: size}}
				case versioningEnabled:
					model[k] = append([]modelVersion{{id: vid, size: size}}, model[k]...)
				default:
					require.Equal(rt, NullVersionID, vid)
					dropNull(k)
					model[k] = append([]modelVersion{{id: vid, size: size}}, model[k]...)
				}
			},
			"delete": func(rt *rapid.T) {
				k := keys.Draw(rt, "key")
				res, err := h.do(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: k})
				if state == versioningOff {
					if len(model[k]) == 0 {
						require.ErrorIs(rt, err, ErrKeyNotFound)
					} else {
						require.NoError(rt, err)
					}
					delete(model, k)
					return
				}
				require.NoError(rt, err)
				del := res.(*stratov1.DeleteResponse)
				require.True(rt, del.DeleteMarker)
				if state == versioningSuspended {
					require.Equal(rt, NullVersionID, del.VersionId)
					dropNull(k)
				}
				model[k] = append([]modelVersion{{id: del.VersionId, marker: true}}, model[k]...)
			},
			"deleteVersion": func(rt *rapid.T) {
				k := keys.Draw(rt, "key")
				vs := model[k]
				if len(vs) == 0 || rapid.IntRange(0, 4).Draw(rt, "missing") == 0 {
					_, err := h.do(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: k, VersionId: "00000000000000ff"})
					require.ErrorIs(rt, err, ErrKeyNotFound)
					return
				}
				i := rapid.IntRange(0, len(vs)-1).Draw(rt, "which")
				res := h.deleteKey("obs", k, vs[i].id)
				require.Equal(rt, vs[i].marker, res.DeleteMarker)
				model[k] = append(append([]modelVersion(nil), vs[:i]...), vs[i+1:]...)
			},
			"versioning": func(rt *rapid.T) {
				state = rapid.SampledFrom([]stratov1.BucketVersioning{versioningEnabled, versioningSuspended}).Draw(rt, "state")
				h.setVersioning("obs", state)
			},
			"": func(rt *rapid.T) { checkModel(rt, h, model) },
		})
	})
}

func checkModel(rt *rapid.T, h *harness, model map[string][]modelVersion) {
	var want []string
	var bytes, names int64
	for _, k := range []string{"a", "a/b", "b", "c"} {
		for i, v := range model[k] {
			s := k + "@" + v.id
			if i == 0 {
				s += "*"
			}
			if v.marker {
				s += "!"
			}
			want = append(want, s)
			bytes += v.size
			names++
		}
	}
	got := h.versions("obs", "", rapid.Int32Range(1, 5).Draw(rt, "page"))
	require.Equal(rt, want, got)
	b, n := h.usage("obs")
	require.Equal(rt, []int64{bytes, names}, []int64{b, n})
	for _, k := range []string{"a", "a/b", "b", "c"} {
		res, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: k})
		vs := model[k]
		if len(vs) == 0 || vs[0].marker {
			require.ErrorIs(rt, err, ErrKeyNotFound, k)
			continue
		}
		require.NoError(rt, err)
		require.Equal(rt, vs[0].size, res.Key.Size, k)
	}
}
