package consensus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
)

// kvSM is the tests' state machine: a key/value map under the prefix "k/".
// Commands are op:1 | keylen:uvarint | key | value.
type kvSM struct {
	// applyCalls counts Apply calls (re-applies after a restart included).
	applyCalls int
	// restores records the indexes Restore was called with.
	mu       sync.Mutex
	restores []uint64
}

func (s *kvSM) Restore(_ *pebble.DB, index uint64) error {
	s.mu.Lock()
	s.restores = append(s.restores, index)
	s.mu.Unlock()
	return nil
}

func (s *kvSM) restoreCalls() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uint64(nil), s.restores...)
}

const (
	opPut    = 'p' // set key to value; result: the entry's index
	opCreate = 'c' // like put, but errExists if the key is there
	opDelete = 'd' // delete key
	opRaw    = 'r' // set the raw key (no "k/" prefix) to value
	opDelRaw = 'x' // delete the raw key
)

var errExists = errors.New("kv: key exists")

func kvCmd(op byte, key, value string) []byte {
	b := []byte{op}
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	return append(b, value...)
}

func kvKey(key string) []byte { return append([]byte("k/"), key...) }

func (s *kvSM) Apply(index uint64, cmd []byte, b *pebble.Batch) (any, error) {
	s.applyCalls++
	if len(cmd) < 2 {
		return nil, fmt.Errorf("kv: short command")
	}
	op := cmd[0]
	klen, n := binary.Uvarint(cmd[1:])
	if n <= 0 || uint64(len(cmd)-1-n) < klen {
		return nil, fmt.Errorf("kv: bad command")
	}
	key := kvKey(string(cmd[1+n : 1+n+int(klen)]))
	value := cmd[1+n+int(klen):]
	switch op {
	case opDelete:
		if err := b.Delete(key, nil); err != nil {
			return nil, err
		}
		return index, nil
	case opDelRaw:
		if err := b.Delete(key[len("k/"):], nil); err != nil {
			return nil, err
		}
		return index, nil
	case opRaw:
		key = key[len("k/"):]
	case opCreate:
		_, closer, err := b.Get(key)
		if err == nil {
			_ = closer.Close()
			return nil, errExists
		}
		if !errors.Is(err, pebble.ErrNotFound) {
			return nil, err
		}
	case opPut:
	default:
		return nil, fmt.Errorf("kv: unknown op %q", op)
	}
	if err := b.Set(key, value, nil); err != nil {
		return nil, err
	}
	return index, nil
}

// readKV returns the value of key in db, and whether it exists.
func readKV(t testing.TB, db *pebble.DB, key string) (string, bool) {
	t.Helper()
	v, closer, err := db.Get(kvKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", false
	}
	require.NoError(t, err)
	defer closer.Close()
	return string(v), true
}

// dumpKV returns every key/value of the state machine's range in db.
func dumpKV(t testing.TB, db *pebble.DB) map[string]string {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: stateStart})
	require.NoError(t, err)
	defer it.Close()
	m := map[string]string{}
	for valid := it.First(); valid; valid = it.Next() {
		m[string(it.Key())] = string(it.Value())
	}
	require.NoError(t, it.Error())
	return m
}
