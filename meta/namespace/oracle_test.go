package namespace

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/strato-io/strato/proto/strato/v1"
)

// model is the simplest possible file tree: full path → node.
type model struct {
	nodes map[string]mnode
}

type mnode struct {
	dir  bool
	size int64
}

// walkDirs checks that every prefix of p (p included) is a directory.
func (m *model) walkDirs(p string) error {
	if p == "" {
		return nil
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		q := strings.Join(parts[:i+1], "/")
		n, ok := m.nodes[q]
		if !ok {
			return ErrNotFound
		}
		if !n.dir {
			return ErrFailedPrecondition
		}
	}
	return nil
}

func (m *model) mkdirAll(p string) {
	parts := strings.Split(p, "/")
	for i := range parts {
		m.nodes[strings.Join(parts[:i+1], "/")] = mnode{dir: true}
	}
}

func (m *model) hasChildren(p string) bool {
	for q := range m.nodes {
		if p == "" || strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

func (m *model) mkdir(p string) error {
	if p == "" {
		return nil
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		q := strings.Join(parts[:i+1], "/")
		n, ok := m.nodes[q]
		if !ok {
			break
		}
		if !n.dir {
			if i == len(parts)-1 {
				return ErrExists
			}
			return ErrFailedPrecondition
		}
	}
	m.mkdirAll(p)
	return nil
}

func (m *model) create(p string, size int64, overwrite, recursive bool) error {
	parent, _ := splitLast(p)
	if recursive {
		parts := strings.Split(parent, "/")
		for i := range parts {
			if parent == "" {
				break
			}
			n, ok := m.nodes[strings.Join(parts[:i+1], "/")]
			if !ok {
				break
			}
			if !n.dir {
				return ErrFailedPrecondition
			}
		}
	} else if err := m.walkDirs(parent); err != nil {
		return err
	}
	if n, ok := m.nodes[p]; ok {
		if n.dir {
			return ErrFailedPrecondition
		}
		if !overwrite {
			return ErrExists
		}
	}
	if parent != "" {
		m.mkdirAll(parent)
	}
	m.nodes[p] = mnode{size: size}
	return nil
}

func (m *model) delete(p string, recursive bool) error {
	if p == "" {
		return ErrInvalid
	}
	parent, _ := splitLast(p)
	if err := m.walkDirs(parent); err != nil {
		return err
	}
	n, ok := m.nodes[p]
	if !ok {
		return ErrNotFound
	}
	if n.dir && m.hasChildren(p) && !recursive {
		return ErrFailedPrecondition
	}
	for q := range m.nodes {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(m.nodes, q)
		}
	}
	return nil
}

func (m *model) rename(src, dst string) error {
	if src == "" {
		return ErrInvalid
	}
	sp, sn := splitLast(src)
	if err := m.walkDirs(sp); err != nil {
		return err
	}
	n, ok := m.nodes[src]
	if !ok {
		return ErrNotFound
	}
	if src == dst {
		return nil
	}
	target := sn
	if dst != "" {
		dp, _ := splitLast(dst)
		if n.dir && (dp == src || strings.HasPrefix(dp, src+"/")) {
			return ErrInvalid
		}
		if err := m.walkDirs(dp); err != nil {
			return err
		}
		target = dst
		if d, ok := m.nodes[dst]; ok && d.dir {
			target = joinPath(dst, sn)
		}
	}
	if target == src {
		return nil
	}
	if n.dir && strings.HasPrefix(target, src+"/") {
		return ErrInvalid
	}
	if _, ok := m.nodes[target]; ok {
		return ErrExists
	}
	moved := map[string]mnode{}
	for q, n := range m.nodes {
		if q == src || strings.HasPrefix(q, src+"/") {
			moved[target+q[len(src):]] = n
			delete(m.nodes, q)
		}
	}
	for q, n := range moved {
		m.nodes[q] = n
	}
	return nil
}

func (m *model) stat(p string) (mnode, error) {
	if p == "" {
		return mnode{dir: true}, nil
	}
	parent, _ := splitLast(p)
	if err := m.walkDirs(parent); err != nil {
		return mnode{}, err
	}
	n, ok := m.nodes[p]
	if !ok {
		return mnode{}, ErrNotFound
	}
	return n, nil
}

func (m *model) children(p string) []string {
	var out []string
	for q := range m.nodes {
		parent, _ := splitLast(q)
		if parent == p {
			out = append(out, q)
		}
	}
	sort.Strings(out)
	return out
}

// moreChecks raises rapid's number of checks for this test unless the
// command line set it.
func moreChecks(t *testing.T, n int) {
	f := flag.Lookup("rapid.checks")
	if f == nil || f.Value.String() != f.DefValue || testing.Short() {
		return
	}
	require.NoError(t, f.Value.Set(fmt.Sprint(n)))
	t.Cleanup(func() { _ = f.Value.Set(f.DefValue) })
}

func sameClass(t *rapid.T, want, got error, what string) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("%s: want success, got %v", what, got)
		}
		return
	}
	if got == nil || !errors.Is(got, want) {
		t.Fatalf("%s: want %v, got %v", what, want, got)
	}
}

// TestOracle runs random FSO operations against the namespace and against
// the model, and checks that they agree on every result and on the tree.
func TestOracle(t *testing.T) {
	moreChecks(t, 500)
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarnessOn(rt, openDB(t))
		// Tiny caches exercise eviction; -1 runs without caches.
		cache := rapid.SampledFrom([]int64{-1, 200, 4000, 0}).Draw(rt, "cache")
		ns, err := New(Options{DirCacheBytes: cache, ApplyCacheBytes: cache})
		require.NoError(rt, err)
		if ns.acache != nil {
			ns.acache.verify = true
		}
		h.ns = ns
		h.volBucket("fsb", fso)
		m := &model{nodes: map[string]mnode{}}
		genPath := rapid.Custom(func(rt *rapid.T) string {
			n := rapid.IntRange(1, 4).Draw(rt, "depth")
			parts := make([]string, n)
			for i := range parts {
				parts[i] = rapid.SampledFrom([]string{"a", "b", "c"}).Draw(rt, "name")
			}
			return strings.Join(parts, "/")
		})
		genAnyPath := rapid.OneOf(genPath, rapid.Just(""))

		rt.Repeat(map[string]func(*rapid.T){
			"mkdir": func(rt *rapid.T) {
				p := genPath.Draw(rt, "path")
				_, err := h.do(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: p})
				sameClass(rt, m.mkdir(p), err, "mkdir "+p)
			},
			"create": func(rt *rapid.T) {
				p := genPath.Draw(rt, "path")
				size := rapid.Int64Range(0, 3).Draw(rt, "size")
				overwrite := rapid.Bool().Draw(rt, "overwrite")
				recursive := rapid.Bool().Draw(rt, "recursive")
				want := m.create(p, size, overwrite, recursive)
				res, err := h.do(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: p, Overwrite: overwrite, Recursive: recursive, SizeHint: size})
				sameClass(rt, want, err, "create "+p)
				if err != nil {
					return
				}
				open := res.(*stratov1.OpenKeyResponse)
				var blocks []*stratov1.BlockLocation
				if size > 0 {
					blocks = append(blocks, &stratov1.BlockLocation{BlockId: open.Blocks[0].BlockId, Length: size})
				}
				_, err = h.do(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: p, OpenId: open.OpenId, Blocks: blocks})
				sameClass(rt, nil, err, "commit "+p)
			},
			"delete": func(rt *rapid.T) {
				p := genAnyPath.Draw(rt, "path")
				recursive := rapid.Bool().Draw(rt, "recursive")
				_, err := h.do(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: p, Recursive: recursive})
				sameClass(rt, m.delete(p, recursive), err, "delete "+p)
			},
			"rename": func(rt *rapid.T) {
				src := genPath.Draw(rt, "src")
				dst := genAnyPath.Draw(rt, "dst")
				_, err := h.do(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: src, Dst: dst})
				sameClass(rt, m.rename(src, dst), err, "rename "+src+" "+dst)
			},
			"stat": func(rt *rapid.T) {
				p := genAnyPath.Draw(rt, "path")
				want, werr := m.stat(p)
				st, err := h.stat("fsb", p)
				sameClass(rt, werr, err, "stat "+p)
				if err == nil && (st.IsDirectory != want.dir || st.Length != want.size) {
					rt.Fatalf("stat %s: got dir=%v len=%d, want %+v", p, st.IsDirectory, st.Length, want)
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
			"": func(rt *rapid.T) {
				// The whole tree, listed page by page, is the model's.
				var walk func(p string)
				seen := 0
				walk = func(p string) {
					var names []string
					for _, n := range h.list("fsb", p) {
						names = append(names, strings.TrimSuffix(n, "/"))
					}
					want := m.children(p)
					if strings.Join(names, ",") != strings.Join(want, ",") {
						rt.Fatalf("list %q: got %v, want %v", p, names, want)
					}
					for _, n := range want {
						seen++
						if m.nodes[n].dir {
							walk(n)
						}
					}
				}
				walk("")
				require.Equal(rt, len(m.nodes), seen)
				pending, err := h.rd().DeletedDirectories(1)
				require.NoError(rt, err)
				if len(pending) == 0 {
					var size int64
					for _, n := range m.nodes {
						size += n.size
					}
					b, n := h.usage("fsb")
					require.Equal(rt, int64(len(m.nodes)), n, "namespace usage")
					require.Equal(rt, size, b, "bytes usage")
				}
			},
		})
	})
}
