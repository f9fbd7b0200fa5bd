package walfs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

const memTable = 256 << 10 // small, so that a few thousand commits rotate logs

func open(t *testing.T, fs vfs.FS) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: New(fs, memTable), MemTableSize: memTable, FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db
}

// reopen closes db and opens the database in fs again.
func reopen(t *testing.T, fs vfs.FS, db *pebble.DB) *pebble.DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return open(t, fs)
}

func key(i int) []byte   { return fmt.Appendf(nil, "key-%06d", i) }
func value(i int) []byte { return []byte(strings.Repeat(fmt.Sprint(i), 40)) }

// commit writes keys [from, to) in synced commits of one key each.
func commit(t *testing.T, db *pebble.DB, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := db.Set(key(i), value(i), pebble.Sync); err != nil {
			t.Fatalf("set %d: %v", i, err)
		}
	}
}

// check fails unless keys [0, n) hold their values.
func check(t *testing.T, db *pebble.DB, n int) {
	t.Helper()
	for i := range n {
		v, closer, err := db.Get(key(i))
		if err != nil {
			t.Fatalf("key %d of %d: %v", i, n, err)
		}
		if string(v) != string(value(i)) {
			t.Fatalf("key %d: %q", i, v)
		}
		closer.Close()
	}
}

// logSizes lists the sizes of the database's logs.
func logSizes(t *testing.T, fs vfs.FS) []int64 {
	t.Helper()
	names, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, name := range names {
		if strings.HasSuffix(name, ".log") {
			st, err := fs.Stat(fs.PathJoin("db", name))
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, st.Size())
		}
	}
	return sizes
}

func TestNewLogsStartFilled(t *testing.T) {
	fs := vfs.NewMem()
	db := open(t, fs)
	want := int64(defaultMemTableSize) + 1<<20 // memTable is below the floor
	sizes := logSizes(t, fs)
	if len(sizes) == 0 {
		t.Fatal("no log")
	}
	for _, s := range sizes {
		if s != want {
			t.Fatalf("log sizes %v, want %d each", sizes, want)
		}
	}
	// A few commits, all in the first log: reopening replays them from it,
	// up to its zeros.
	commit(t, db, 0, 100)
	db = reopen(t, fs, db)
	check(t, db, 100)
	commit(t, db, 100, 3000)
	check(t, db, 3000)
	db = reopen(t, fs, db)
	check(t, db, 3000)
	commit(t, db, 3000, 3100)
	check(t, db, 3100)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// Every synced commit survives a crash, whatever part of the unsynced
// writes reached the disk, through log rotations, recycled logs and
// several crashes in a row: Pebble reads a zeroed tail as the log's end.
func TestCrashKeepsEverySyncedCommit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, unsynced := range []int{0, 50, 100} {
		t.Run(fmt.Sprintf("unsynced=%d%%", unsynced), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			n := 0
			for crash := range 4 {
				db := open(t, fs)
				check(t, db, n)
				commit(t, db, n, n+1500)
				n += 1500
				fs = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: unsynced, RNG: rng})
				_ = db.Close() // the original; the clone is what a crash left
				if crash == 0 && len(logSizes(t, fs)) < 2 {
					t.Fatalf("commits of %d bytes rotated no log", n*60)
				}
			}
			db := open(t, fs)
			check(t, db, n)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// failingWriteAt is a file whose WriteAt fails: a disk with no room for
// the zeros.
type failingWriteAt struct{ vfs.File }

func (failingWriteAt) WriteAt([]byte, int64) (int, error) {
	return 0, errors.New("no space left on device")
}

type noFillFS struct{ vfs.FS }

func (fs noFillFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	return failingWriteAt{f}, nil
}

// A log that cannot be filled is used as it is: the database works as it
// would without walfs.
func TestFillFailureLeavesAnEmptyLog(t *testing.T) {
	mem := vfs.NewMem()
	f, err := New(noFillFS{mem}, 0).Create("x.log", walCategory)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != 0 {
		t.Fatalf("after a failed fill: size %v, %v; want an empty file", st, err)
	}
	if _, err := f.Write([]byte("record")); err != nil {
		t.Fatalf("write: %v", err)
	}
	_ = f.Close()

	// Files that are not logs are left as they are.
	g, err := New(mem, 0).Create("000001.sst", "pebble-compaction")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := g.Stat(); err != nil || st.Size() != 0 {
		t.Fatalf("sstable: size %v, %v; want 0", st, err)
	}
	_ = g.Close()
}
