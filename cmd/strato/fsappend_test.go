package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

func TestFSAppendTruncateConcatRecoverLease(t *testing.T) {
	h := dataCluster(t)
	local := t.TempDir()
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	a, b := payload(5<<20+3, 1), payload(1000, 2)

	// appendToFile creates a missing file, then appends; stdin too.
	require.Empty(t, h.ok("fs", "appendToFile", writeLocal(t, local, "a", a), "/vol/bkt/f"))
	require.JSONEq(t, `{"path":"/vol/bkt/f","offset":5242883,"appended":2000,"length":5244883}`,
		h.ok("fs", "appendToFile", writeLocal(t, local, "b", b), writeLocal(t, local, "b2", b), "/vol/bkt/f", "--json"))
	r := h.runIn(bytes.NewReader([]byte("tail")), "fs", "appendToFile", "-", "/vol/bkt/f")
	require.Equal(t, 0, r.code, r.stderr)
	want := append(append(append(bytes.Clone(a), b...), b...), "tail"...)
	require.True(t, bytes.Equal(want, []byte(h.ok("fs", "cat", "/vol/bkt/f"))))

	// truncate: mid-block, hdfs's message; --json; errors.
	require.Equal(t, "Truncated /vol/bkt/f to length: 4194400\n", h.ok("fs", "truncate", "-w", "4194400", "/vol/bkt/f"))
	require.True(t, bytes.Equal(a[:4194400], []byte(h.ok("fs", "cat", "/vol/bkt/f"))))
	require.JSONEq(t, `[{"path":"/vol/bkt/f","length":10,"done":true}]`, h.ok("fs", "truncate", "10", "/vol/bkt/f", "--json"))
	require.Contains(t, h.fail(1, "fs", "truncate", "11", "/vol/bkt/f"), "at most its length")
	require.Contains(t, h.fail(2, "fs", "truncate", "x", "/vol/bkt/f"), "is not a length")
	require.Contains(t, h.fail(1, "fs", "truncate", "1", "/vol/bkt/nope"), "not found")

	// concat.
	h.ok("fs", "put", writeLocal(t, local, "c1", []byte("one")), "/vol/bkt/c1")
	h.ok("fs", "put", writeLocal(t, local, "c2", []byte("two")), "/vol/bkt/c2")
	require.Empty(t, h.ok("fs", "concat", "/vol/bkt/f", "/vol/bkt/c1", "/vol/bkt/c2"))
	require.Equal(t, string(a[:10])+"onetwo", h.ok("fs", "cat", "/vol/bkt/f"))
	require.Contains(t, h.fail(1, "fs", "concat", "/vol/bkt/f", "/vol/bkt/c1"), "not found")
	require.Contains(t, h.fail(1, "fs", "concat", "/vol/bkt/f", "/vol/bkt/f"), "named twice")

	// recoverLease on a closed file: closed at once.
	require.Equal(t, "recoverLease SUCCEEDED on /vol/bkt/f (length 16)\n", h.ok("fs", "recoverLease", "/vol/bkt/f"))
	require.JSONEq(t, `{"path":"/vol/bkt/f","closed":true,"length":16}`, h.ok("fs", "recoverLease", "/vol/bkt/f", "--json"))
	require.Contains(t, h.fail(1, "fs", "recoverLease", "/vol/bkt/nope"), "not found")

	// A writer hsyncs and is abandoned: appendToFile is refused until
	// recoverLease closes the file at the hsync.
	cl, err := client.New(client.Options{Meta: []string{h.addr}, NoToken: true})
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	w, err := cl.Create(t.Context(), "/vol/bkt/wal", client.CreateOptions{})
	require.NoError(t, err)
	_, err = w.Write([]byte("edit1"))
	require.NoError(t, err)
	require.NoError(t, w.Hsync())
	_, err = w.Write([]byte("lost"))
	require.NoError(t, err)
	require.Contains(t, h.fail(1, "fs", "appendToFile", writeLocal(t, local, "e2", []byte("edit2")), "/vol/bkt/wal"), "open for writing")
	require.Equal(t, "recoverLease SUCCEEDED on /vol/bkt/wal (length 5)\n", h.ok("fs", "recoverLease", "/vol/bkt/wal"))
	require.Error(t, w.Close(), "the old writer is fenced")
	h.ok("fs", "appendToFile", writeLocal(t, local, "e2", []byte("edit2")), "/vol/bkt/wal")
	require.Equal(t, "edit1edit2", h.ok("fs", "cat", "/vol/bkt/wal"))
}
