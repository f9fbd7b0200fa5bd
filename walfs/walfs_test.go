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
	want := int64(initialMemTableSize) + 1<<20 // the first memtable's log
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

// Each new log starts with its memtable's worth of zeros and 1 MiB: the
// first memtables of a database just opened are small (256 KiB, doubling
// with each rotation up to the memtable size), and so are their logs'
// fills. A recycled log with fewer bytes than its memtable needs gives way
// to a new one. The next new log is filled beforehand, as a spare beside
// the logs, which Close removes.
func TestLogsFollowTheMemtables(t *testing.T) {
	const memTableSize = 8 << 20
	fs := vfs.NewMem()
	wfs := New(fs, memTableSize)
	type made struct {
		size     int64
		recycled bool
	}
	var logs []made
	el := pebble.EventListener{WALCreated: func(info pebble.WALCreateInfo) {
		m := made{recycled: info.RecycledFileNum != 0}
		if st, err := fs.Stat(info.Path); err == nil {
			m.size = st.Size()
		}
		logs = append(logs, m)
	}}
	db, err := pebble.Open("db", &pebble.Options{FS: wfs, MemTableSize: memTableSize, EventListener: &el,
		FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		t.Fatal(err)
	}
	v := make([]byte, 1000)
	for i := range 40_000 { // 40 MB: rotations up to the full memtable size
		if err := db.Set(key(i), v, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	wfs.mu.Lock()
	s := wfs.spare
	wfs.mu.Unlock()
	if s == nil {
		t.Fatal("no spare log being made")
	}
	<-s.done
	if _, err := fs.Stat("db/" + spareName); err != nil {
		t.Fatalf("no spare log beside the logs: %v", err)
	}
	check := func(n int) {
		t.Helper()
		for i := range n {
			got, closer, err := db.Get(key(i))
			if err != nil || len(got) != len(v) {
				t.Fatalf("key %d: %d bytes, %v", i, len(got), err)
			}
			closer.Close()
		}
	}
	check(40_000)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := wfs.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat("db/" + spareName); err == nil {
		t.Fatal("the spare log outlives Close")
	}
	t.Logf("logs made: %+v", logs)
	created := 0
	for n, m := range logs {
		want := min(int64(initialMemTableSize)<<n+1<<20, int64(memTableSize)+1<<20)
		if m.size < want || !m.recycled && m.size != want {
			t.Fatalf("log %d of %d (recycled: %v) starts with %d bytes, want %d (%+v)", n, len(logs), m.recycled, m.size, want, logs)
		}
		if !m.recycled {
			created++
		}
	}
	if len(logs) < 7 || created < 2 || created == len(logs) {
		t.Fatalf("%d logs made (%d new): the memtables did not reach their size (%+v)", len(logs), created, logs)
	}
	db, err = pebble.Open("db", &pebble.Options{FS: New(fs, memTableSize), MemTableSize: memTableSize,
		FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		t.Fatal(err)
	}
	check(40_000)
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

// openDeferred opens the database in fs on a Deferred.
func openDeferred(t *testing.T, fs vfs.FS) (*pebble.DB, *Deferred) {
	t.Helper()
	d := NewDeferred(fs, memTable)
	db, err := pebble.Open("db", &pebble.Options{FS: d, MemTableSize: memTable, FormatMajorVersion: pebble.FormatNewest})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db, d
}

// has reports whether the database holds key i with its value.
func has(t *testing.T, db *pebble.DB, i int) bool {
	t.Helper()
	v, closer, err := db.Get(key(i))
	if errors.Is(err, pebble.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("key %d: %v", i, err)
	}
	defer closer.Close()
	return string(v) == string(value(i))
}

// TestDeferredSyncs: on a Deferred, a synced commit is in the kernel (a
// crash image that keeps what was written, as after a kill -9, has it) but
// not on the disk (an image of synced data alone lacks it) until a
// Durable sync, which makes every earlier commit durable too, in every
// log written since, including one rotated away in the meantime.
func TestDeferredSyncs(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db, d := openDeferred(t, fs)
	defer db.Close()
	image := func(keepUnsynced bool) *pebble.DB {
		t.Helper()
		pct := 0
		if keepUnsynced {
			pct = 100
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(1, 2))})
		cdb, err := pebble.Open("db", &pebble.Options{FS: clone, MemTableSize: memTable, FormatMajorVersion: pebble.FormatNewest})
		if err != nil {
			t.Fatalf("open a crash image: %v", err)
		}
		t.Cleanup(func() { _ = cdb.Close() })
		return cdb
	}

	commit(t, db, 0, 10)
	if after := image(true); !has(t, after, 9) {
		t.Fatal("a synced commit is not in the kernel")
	}
	if after := image(false); has(t, after, 0) {
		t.Fatal("a commit synced without Durable reached the disk")
	}

	if err := d.Durable(func() error { return db.Set(key(10), value(10), pebble.Sync) }); err != nil {
		t.Fatal(err)
	}
	after := image(false)
	for i := range 11 {
		if !has(t, after, i) {
			t.Fatalf("key %d lost after a durable sync", i)
		}
	}

	// Commits enough to rotate logs, then one durable commit: every key is
	// on the disk, those of the logs closed in between too.
	commit(t, db, 11, 3000)
	if err := d.Durable(func() error { return db.Set(key(3000), value(3000), pebble.Sync) }); err != nil {
		t.Fatal(err)
	}
	after = image(false)
	check(t, after, 3001)
}

// TestDeferredLogsSyncOnClose: a log closed (rotated away) is synced even
// if no Durable call ran, and a Durable sync of one log syncs the others
// written since their last sync.
func TestDeferredLogsSyncOnClose(t *testing.T) {
	fs := vfs.NewCrashableMem()
	d := NewDeferred(fs, memTable)
	if err := fs.MkdirAll("logs", 0o755); err != nil {
		t.Fatal(err)
	}
	create := func(name string) vfs.File {
		f, err := d.Create(name, walCategory)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("record of " + name)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	content := func(fs vfs.FS, name string) string {
		f, err := fs.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		return strings.TrimRight(string(b[:n]), "\x00")
	}
	a, b, c := create("logs/a.log"), create("logs/b.log"), create("logs/c.log")
	for _, name := range []string{"", "logs"} { // the names, as Pebble syncs its directory
		dir, err := fs.OpenDir(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := dir.Sync(); err != nil {
			t.Fatal(err)
		}
		_ = dir.Close()
	}
	onDisk := func() vfs.FS { return fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}) }
	if got := content(onDisk(), "logs/a.log"); got != "" {
		t.Fatalf("a log synced without Durable is on the disk: %q", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := content(onDisk(), "logs/a.log"); got != "record of logs/a.log" {
		t.Fatalf("closed log on the disk: %q", got)
	}
	if err := d.Durable(c.Sync); err != nil {
		t.Fatal(err)
	}
	img := onDisk()
	for _, name := range []string{"logs/b.log", "logs/c.log"} {
		if got := content(img, name); got != "record of "+name {
			t.Fatalf("%s after a durable sync of another log: %q", name, got)
		}
	}
	_ = b.Close()
	_ = c.Close()
}
