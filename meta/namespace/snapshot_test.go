package namespace

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/strato-io/strato/proto/strato/v1"
)

// snode is what the snapshot model knows of a node: its identity (object),
// its permission and, for a file, its size and block.
type snode struct {
	dir   bool
	obj   int
	perm  uint32
	size  int64
	block uint64
}

type stree map[string]snode

func (t stree) clone() stree {
	c := make(stree, len(t))
	for k, v := range t {
		c[k] = v
	}
	return c
}

// smodel follows identities beside the oracle's model (which decides what
// succeeds).
type smodel struct {
	tree  stree
	next  int
	snaps map[string]stree
	order []string // snapshot names, oldest first
}

func (m *smodel) newObj() int { m.next++; return m.next }

// ensureDirs gives every directory of the oracle model without an identity
// a new one.
func (m *smodel) ensureDirs(o *model) {
	for p, n := range o.nodes {
		if _, ok := m.tree[p]; !ok && n.dir {
			m.tree[p] = snode{dir: true, obj: m.newObj(), perm: DefaultDirPermission}
		}
	}
}

func (m *smodel) remove(p string) {
	for q := range m.tree {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(m.tree, q)
		}
	}
}

func (m *smodel) move(src, target string) {
	moved := stree{}
	for q, n := range m.tree {
		if q == src || strings.HasPrefix(q, src+"/") {
			moved[target+q[len(src):]] = n
			delete(m.tree, q)
		}
	}
	for q, n := range moved {
		m.tree[q] = n
	}
}

// diff is the model's snapdiff from tree a to tree b.
func modelDiff(a, b stree) []string {
	type place struct {
		path string
		n    snode
	}
	byObj := func(t stree) map[int]place {
		out := map[int]place{}
		for p, n := range t {
			out[n.obj] = place{p, n}
		}
		return out
	}
	parentObj := func(t stree, p string) (int, bool) {
		parent, _ := splitLast(p)
		if parent == "" {
			return 0, true
		}
		n, ok := t[parent]
		return n.obj, ok
	}
	ia, ib := byObj(a), byObj(b)
	var out []string
	for obj, pa := range ia {
		pb, ok := ib[obj]
		if !ok {
			// Deleted: reported unless its parent is gone too.
			po, _ := parentObj(a, pa.path)
			if _, alive := ib[po]; po == 0 || alive {
				out = append(out, fmt.Sprintf("- %s", pa.path))
			}
			continue
		}
		poa, _ := parentObj(a, pa.path)
		pob, _ := parentObj(b, pb.path)
		_, na := splitLast(pa.path)
		_, nb := splitLast(pb.path)
		switch {
		case poa != pob || na != nb:
			out = append(out, fmt.Sprintf("R %s -> %s", pa.path, pb.path))
		case pa.n != pb.n:
			out = append(out, fmt.Sprintf("M %s", pb.path))
		}
	}
	for obj, pb := range ib {
		if _, ok := ia[obj]; ok {
			continue
		}
		po, _ := parentObj(b, pb.path)
		if _, existed := ia[po]; po == 0 || existed {
			out = append(out, fmt.Sprintf("+ %s", pb.path))
		}
	}
	sort.Strings(out)
	return out
}

func diffLines(es []*stratov1.SnapshotDiffEntry) []string {
	var out []string
	for _, e := range es {
		switch e.Type {
		case stratov1.SnapshotDiffType_SNAPSHOT_DIFF_CREATE:
			out = append(out, "+ "+e.Path)
		case stratov1.SnapshotDiffType_SNAPSHOT_DIFF_DELETE:
			out = append(out, "- "+e.Path)
		case stratov1.SnapshotDiffType_SNAPSHOT_DIFF_MODIFY:
			out = append(out, "M "+e.Path)
		case stratov1.SnapshotDiffType_SNAPSHOT_DIFF_RENAME:
			out = append(out, "R "+e.Path+" -> "+e.Target)
		}
	}
	sort.Strings(out)
	return out
}

// snapTree reads a whole snapshot (or the bucket now, name "") through
// ListStatus, page by page.
func (h *harness) snapTree(name string) stree {
	h.t.Helper()
	out := stree{}
	root := ""
	if name != "" {
		root = SnapshotDir + "/" + name
	}
	var walk func(p string)
	walk = func(p string) {
		after := ""
		for {
			res, err := h.rd().ListStatus(&stratov1.ListStatusRequest{Volume: "vol", Bucket: "fsb", Path: joinPath(root, p), StartAfter: after, Limit: 2})
			require.NoError(h.t, err, "list %s in %q", p, name)
			for _, st := range res.Statuses {
				rel := strings.TrimPrefix(strings.TrimPrefix(st.Path, root), "/")
				_, after = splitLast(rel)
				n := snode{dir: st.IsDirectory, perm: st.GetPermission(), size: st.Length}
				if !st.IsDirectory {
					lk, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "fsb", Key: joinPath(root, rel)})
					require.NoError(h.t, err)
					if len(lk.Key.Blocks) > 0 {
						n.block = lk.Key.Blocks[0].BlockId.LocalId
					}
				}
				out[rel] = n
				if st.IsDirectory {
					walk(rel)
				}
			}
			if !res.Truncated {
				return
			}
		}
	}
	walk("")
	return out
}

// sameTree compares trees but identities (which the reads do not show).
func sameTree(t *rapid.T, what string, want, got stree) {
	t.Helper()
	strip := func(s stree) map[string]snode {
		out := map[string]snode{}
		for k, v := range s {
			v.obj = 0
			out[k] = v
		}
		return out
	}
	require.Equal(t, strip(want), strip(got), what)
}

// TestSnapshotOracle runs random FSO operations, snapshot creates and
// deletes, reclaim and purge steps against the namespace and a model:
// every live snapshot reads as the bucket did when it was taken, snapdiff
// is the model's diff, no block a snapshot or the bucket holds is ever in
// the deleted-blocks table, and once the snapshots are gone and purged the
// bucket's usage and the deleted blocks are exactly what no one holds.
func TestSnapshotOracle(t *testing.T) {
	moreChecks(t, 300)
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarnessOn(rt, openDB(t))
		h.volBucket("fsb", fso)
		so := &snapOracle{h: h, o: &model{nodes: map[string]mnode{}}, m: &smodel{tree: stree{}, snaps: map[string]stree{}}}
		so.genPath = rapid.Custom(func(rt *rapid.T) string {
			n := rapid.IntRange(1, 3).Draw(rt, "depth")
			parts := make([]string, n)
			for i := range parts {
				parts[i] = rapid.SampledFrom([]string{"a", "b", "c"}).Draw(rt, "name")
			}
			return strings.Join(parts, "/")
		})
		actions := so.treeActions()
		for k, v := range so.snapshotActions() {
			actions[k] = v
		}
		rt.Repeat(actions)
		so.end(rt)
	})
}

// snapOracle is TestSnapshotOracle's state: the namespace, the oracle's
// model and the snapshot model.
type snapOracle struct {
	h         *harness
	o         *model
	m         *smodel
	genPath   *rapid.Generator[string]
	committed int // blocks committed
}

// checkBlocks: no block the bucket or a live snapshot holds was freed.
func (so *snapOracle) checkBlocks(rt *rapid.T) {
	h, m := so.h, so.m
	deleted := map[uint64]bool{}
	for _, id := range blockIDs(h.deletedBlocks()) {
		require.False(rt, deleted[id], "block %d deleted twice", id)
		deleted[id] = true
	}
	for name, tr := range m.snaps {
		for p, n := range tr {
			if n.block != 0 && deleted[n.block] {
				rt.Fatalf("block %d of %s in snapshot %s was freed", n.block, p, name)
			}
		}
	}
	for p, n := range m.tree {
		if n.block != 0 && deleted[n.block] {
			rt.Fatalf("block %d of live %s was freed", n.block, p)
		}
	}
}

// treeActions are the changes of the tree.
func (so *snapOracle) treeActions() map[string]func(*rapid.T) {
	h, o, m := so.h, so.o, so.m
	genPath := so.genPath
	return map[string]func(*rapid.T){
		"mkdir": func(rt *rapid.T) {
			p := genPath.Draw(rt, "path")
			_, err := h.do(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: p})
			sameClass(rt, o.mkdir(p), err, "mkdir "+p)
			m.ensureDirs(o)
		},
		"create": func(rt *rapid.T) {
			p := genPath.Draw(rt, "path")
			size := rapid.Int64Range(0, 3).Draw(rt, "size")
			want := o.create(p, size, true, true)
			res, err := h.do(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: p, Overwrite: true, Recursive: true, SizeHint: size})
			sameClass(rt, want, err, "create "+p)
			if err != nil {
				return
			}
			m.ensureDirs(o)
			open := res.(*stratov1.OpenKeyResponse)
			var blocks []*stratov1.BlockLocation
			n := snode{obj: m.newObj(), perm: DefaultFilePermission, size: size}
			if size > 0 {
				blocks = append(blocks, &stratov1.BlockLocation{BlockId: open.Blocks[0].BlockId, Length: size})
				n.block = open.Blocks[0].BlockId.LocalId
				so.committed++
			}
			_, err = h.do(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: p, OpenId: open.OpenId, Blocks: blocks})
			sameClass(rt, nil, err, "commit "+p)
			m.tree[p] = n
		},
		"delete": func(rt *rapid.T) {
			p := genPath.Draw(rt, "path")
			_, err := h.do(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: p, Recursive: true})
			sameClass(rt, o.delete(p, true), err, "delete "+p)
			if err == nil {
				m.remove(p)
			}
		},
		"rename": func(rt *rapid.T) {
			src := genPath.Draw(rt, "src")
			dst := genPath.Draw(rt, "dst")
			target := dst
			if d, ok := o.nodes[dst]; ok && d.dir && src != dst {
				_, sn := splitLast(src)
				target = joinPath(dst, sn)
			}
			_, err := h.do(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: src, Dst: dst})
			sameClass(rt, o.rename(src, dst), err, "rename "+src+" "+dst)
			if err == nil && target != src {
				m.move(src, target)
			}
		},
		"chmod": func(rt *rapid.T) {
			p := genPath.Draw(rt, "path")
			perm := rapid.SampledFrom([]uint32{0o700, 0o750, 0o755}).Draw(rt, "perm")
			_, err := h.do(&stratov1.SetPermissionRequest{Volume: "vol", Bucket: "fsb", Path: p, Permission: perm})
			_, werr := o.stat(p)
			sameClass(rt, werr, err, "chmod "+p)
			if err == nil {
				n := m.tree[p]
				n.perm = perm
				m.tree[p] = n
			}
		},
	}
}

// snapshotActions are the snapshots' commands, reads and checks.
func (so *snapOracle) snapshotActions() map[string]func(*rapid.T) {
	h, m := so.h, so.m
	snapNames := []string{"s1", "s2", "s3", "s4"}
	return map[string]func(*rapid.T){
		"snapshot": func(rt *rapid.T) {
			name := rapid.SampledFrom(snapNames).Draw(rt, "snapshot")
			_, err := h.do(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "fsb", Name: name})
			if _, exists := m.snaps[name]; exists {
				sameClass(rt, ErrExists, err, "snapshot "+name)
				return
			}
			sameClass(rt, nil, err, "snapshot "+name)
			m.snaps[name] = m.tree.clone()
			m.order = append(m.order, name)
		},
		"deleteSnapshot": func(rt *rapid.T) {
			name := rapid.SampledFrom(snapNames).Draw(rt, "snapshot")
			_, err := h.do(&stratov1.DeleteSnapshotRequest{Volume: "vol", Bucket: "fsb", Name: name})
			if _, exists := m.snaps[name]; !exists {
				sameClass(rt, ErrNotFound, err, "delete snapshot "+name)
				return
			}
			sameClass(rt, nil, err, "delete snapshot "+name)
			delete(m.snaps, name)
			for i, n := range m.order {
				if n == name {
					m.order = append(m.order[:i], m.order[i+1:]...)
					break
				}
			}
		},
		"reclaim": func(rt *rapid.T) {
			cmd, err := h.ns.PrepareReclaim(h.db, h.now, rapid.IntRange(1, 4).Draw(rt, "limit"))
			require.NoError(rt, err)
			if cmd != nil {
				_, err = h.apply(cmd)
				require.NoError(rt, err)
			}
		},
		"purge": func(rt *rapid.T) {
			cmd, err := h.ns.PreparePurgeSnapshots(h.db, h.now, rapid.IntRange(1, 4).Draw(rt, "limit"))
			require.NoError(rt, err)
			if cmd != nil {
				_, err = h.apply(cmd)
				require.NoError(rt, err)
			}
		},
		"diff": func(rt *rapid.T) {
			if len(m.order) == 0 {
				return
			}
			i := rapid.IntRange(0, len(m.order)-1).Draw(rt, "from")
			j := rapid.IntRange(i, len(m.order)).Draw(rt, "to") // len: now
			from, to, toTree := m.order[i], "", m.tree
			if j < len(m.order) {
				to, toTree = m.order[j], m.snaps[m.order[j]]
			}
			var got []*stratov1.SnapshotDiffEntry
			token := ""
			for {
				res, err := h.rd().SnapshotDiff(&stratov1.SnapshotDiffRequest{Volume: "vol", Bucket: "fsb", From: from, To: to, Token: token, MaxResults: 3})
				require.NoError(rt, err)
				got = append(got, res.Entries...)
				if token = res.NextToken; token == "" {
					break
				}
			}
			require.Equal(rt, modelDiff(m.snaps[from], toTree), diffLines(got), "diff %s..%q", from, to)
		},
		"": func(rt *rapid.T) {
			sameTree(rt, "the bucket now", m.tree, h.snapTree(""))
			for name, tr := range m.snaps {
				sameTree(rt, "snapshot "+name, tr, h.snapTree(name))
			}
			so.checkBlocks(rt)
		},
	}
}

// end deletes every snapshot and runs purge and reclaim to the end: what
// no one holds is freed, and the usage is the live tree's.
func (so *snapOracle) end(rt *rapid.T) {
	h, m := so.h, so.m
	// The end: every snapshot deleted, purged and reclaimed; what no
	// one holds is freed, and the usage is the live tree's.
	for _, name := range m.order {
		h.must(&stratov1.DeleteSnapshotRequest{Volume: "vol", Bucket: "fsb", Name: name})
	}
	m.snaps = map[string]stree{}
	h.reclaimAll(3)
	for i := 0; ; i++ {
		require.Less(rt, i, 100000)
		cmd, err := h.ns.PreparePurgeSnapshots(h.db, h.now, 3)
		require.NoError(rt, err)
		if cmd == nil {
			break
		}
		_, err = h.apply(cmd)
		require.NoError(rt, err)
	}
	h.reclaimAll(3)
	so.checkBlocks(rt)
	var size int64
	live := map[uint64]bool{}
	for _, n := range m.tree {
		size += n.size
		if n.block != 0 {
			live[n.block] = true
		}
	}
	b, names := h.usage("fsb")
	require.Equal(rt, size, b, "bytes usage")
	require.Equal(rt, int64(len(m.tree)), names, "namespace usage")
	deleted := blockIDs(h.deletedBlocks())
	require.Equal(rt, so.committed, len(live)+len(deleted), "every block is live or freed (live %d, freed %d)", len(live), len(deleted))
	// A shared object a live file alone holds keeps its record, at 1.
	rit, err := h.db.NewIter(&pebble.IterOptions{LowerBound: tableKey(nil, tagShared), UpperBound: prefixEnd(tableKey(nil, tagShared))})
	require.NoError(rt, err)
	for ok := rit.First(); ok; ok = rit.Next() {
		so := &stratov1.SharedObject{}
		require.NoError(rt, proto.Unmarshal(rit.Value(), so))
		require.EqualValues(rt, 1, so.Count, "object %x", rit.Key())
	}
	require.NoError(rt, rit.Close())
	for _, p := range []string{"h", "J", "Q"} {
		it, err := h.db.NewIter(nil)
		require.NoError(rt, err)
		k := tableKey(nil, p[0])
		n := 0
		for ok := it.SeekGE(k); ok && strings.HasPrefix(string(it.Key()), string(k)); ok = it.Next() {
			n++
		}
		require.NoError(rt, it.Close())
		require.Zero(rt, n, "table %s left %d entries", p, n)
	}
}

// TestSnapshotOBS: an OBS bucket's snapshot lists (ListStatus, with "/"
// prefixes as directories, and ListKeys) and reads as the bucket was, and
// its root has the snapshot's time.
func TestSnapshotOBS(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.putKey("obs", "a/x", 1)
	h.putKey("obs", "a/y", 2)
	h.putKey("obs", "b", 3)
	h.must(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "obs", Name: "s"})
	h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/x"})
	h.putKey("obs", "b", 4)

	require.Equal(t, []string{".snapshot/s/a/", ".snapshot/s/b"}, h.list("obs", ".snapshot/s"))
	require.Equal(t, []string{".snapshot/s/a/x", ".snapshot/s/a/y"}, h.list("obs", ".snapshot/s/a"))
	st, err := h.stat("obs", ".snapshot/s/b")
	require.NoError(t, err)
	require.EqualValues(t, 3, st.Length)
	st, err = h.stat("obs", ".snapshot/s")
	require.NoError(t, err)
	require.True(t, st.IsDirectory)
	require.Equal(t, h.now.UnixMilli(), st.ModificationTimeUnixMs)
	lk, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: "obs", Prefix: ".snapshot/s/"})
	require.NoError(t, err)
	var names []string
	for _, k := range lk.Keys {
		names = append(names, k.Name)
	}
	require.Equal(t, []string{".snapshot/s/a/x", ".snapshot/s/a/y", ".snapshot/s/b"}, names)
	_, err = h.do(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: ".snapshot/s/new"})
	require.ErrorIs(t, err, ErrInvalidName)
}

// TestSnapshotPurgeResumes: a purge stopped between two of its commands
// (meta restarted: a new Namespace over the same database, caches empty)
// resumes from its cursor and frees every block only the deleted snapshot
// held, once each.
func TestSnapshotPurgeResumes(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	for i := range 40 {
		h.createFile("fsb", fmt.Sprintf("d/f%d", i), 1)
	}
	h.must(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "fsb", Name: "s"})
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d", Recursive: true})
	h.reclaimAll(7)
	require.Empty(t, h.deletedBlocks(), "the snapshot holds every block")
	h.must(&stratov1.DeleteSnapshotRequest{Volume: "vol", Bucket: "fsb", Name: "s"})

	cmd, err := h.ns.PreparePurgeSnapshots(h.db, h.now, 5)
	require.NoError(t, err)
	res, err := h.apply(cmd)
	require.NoError(t, err)
	require.True(t, res.(*stratov1.PurgeSnapshotsResult).More)
	freed := len(blockIDs(h.deletedBlocks()))
	require.Less(t, freed, 40, "one command frees a bounded part")

	h = newHarnessOn(t, h.db) // meta restarted
	steps := 0
	for {
		cmd, err := h.ns.PreparePurgeSnapshots(h.db, h.now, 5)
		require.NoError(t, err)
		if cmd == nil {
			break
		}
		_, err = h.apply(cmd)
		require.NoError(t, err)
		steps++
		require.Less(t, steps, 1000)
	}
	ids := blockIDs(h.deletedBlocks())
	require.Len(t, ids, 40)
	seen := map[uint64]bool{}
	for _, id := range ids {
		require.False(t, seen[id], "block %d freed twice", id)
		seen[id] = true
	}
	b, n := h.usage("fsb")
	require.Zero(t, b)
	require.Zero(t, n)
}

// TestSnapshotCacheBound: Apply's cache of snapshot states stays within
// Options.SnapshotCacheBytes, and what it answers is the database's (the
// harness's apply cache verifies every hit).
func TestSnapshotCacheBound(t *testing.T) {
	ns, err := New(Options{SnapshotCacheBytes: 200})
	require.NoError(t, err)
	ns.acache.verify = true
	h := newHarness(t)
	h.ns = ns
	for i := range 6 {
		b := fmt.Sprintf("bkt%d", i)
		h.volBucket(b, fso)
		h.must(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: b, Name: "s"})
		h.createFile(b, "f", 1)
		require.LessOrEqual(t, ns.acache.snapBytes, int64(200))
	}
	for i := range 6 {
		h.createFile(fmt.Sprintf("bkt%d", i), "g", 1)
		require.LessOrEqual(t, ns.acache.snapBytes, int64(200))
	}
	require.NotEmpty(t, ns.acache.snaps)
}
