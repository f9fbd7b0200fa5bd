package consensus

import (
	"encoding/binary"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Key layout. Consensus owns every key that begins with 0x00; the state
// machine owns all the others.
//
//	0x00 0x01 <index:8 BE>  log entry:     type:1 | term:uvarint | data
//	0x00 0x02               hard state:    term | vote | commit (uvarints)
//	0x00 0x03               truncated:     index:8 BE | term:8 BE of the last compacted entry
//	0x00 0x04               applied state: index:8 BE | term:8 BE | ConfState (protobuf)
//	0x00 0x05               members:       the address book, stratov1.RaftMembers (protobuf)
//	0x00 0x06               removed:       present once a member told this node it was removed
//
// The applied state and the members are written in the same batch whenever
// the configuration changes.
const (
	keyPrefix     = 0x00
	kindLog       = 0x01
	kindHardState = 0x02
	kindTruncated = 0x03
	kindApplied   = 0x04
	kindMembers   = 0x05
	kindRemoved   = 0x06
)

var (
	keyHardState = []byte{keyPrefix, kindHardState}
	keyTruncated = []byte{keyPrefix, kindTruncated}
	keyApplied   = []byte{keyPrefix, kindApplied}
	keyMembers   = []byte{keyPrefix, kindMembers}
	keyRemoved   = []byte{keyPrefix, kindRemoved}
	// The state machine's key range is [stateStart, ∞). A snapshot's
	// install excises it up to an end it must name: stateRangeEnd, or just
	// past the last key at or beyond it (exciseEnd).
	stateStart    = []byte{0x01}
	stateRangeEnd = []byte{0xff}
)

func logKey(index uint64) []byte {
	k := make([]byte, 10)
	k[0], k[1] = keyPrefix, kindLog
	binary.BigEndian.PutUint64(k[2:], index)
	return k
}

func appendLogKey(dst []byte, index uint64) []byte {
	dst = append(dst, keyPrefix, kindLog)
	return binary.BigEndian.AppendUint64(dst, index)
}

func logKeyIndex(k []byte) (uint64, error) {
	if len(k) != 10 || k[0] != keyPrefix || k[1] != kindLog {
		return 0, fmt.Errorf("%w: bad log key %x", ErrCorrupt, k)
	}
	return binary.BigEndian.Uint64(k[2:]), nil
}

func appendEntryValue(dst []byte, e *pb.Entry) []byte {
	dst = append(dst, byte(e.GetType()))
	dst = binary.AppendUvarint(dst, e.GetTerm())
	return append(dst, e.GetData()...)
}

// decodeEntry decodes a log value. The entry's Data aliases nothing: v is copied.
func decodeEntry(index uint64, v []byte) (*pb.Entry, error) {
	if len(v) < 2 {
		return nil, fmt.Errorf("%w: short log entry %d", ErrCorrupt, index)
	}
	typ := pb.EntryType(v[0])
	term, n := binary.Uvarint(v[1:])
	if n <= 0 {
		return nil, fmt.Errorf("%w: bad term in log entry %d", ErrCorrupt, index)
	}
	e := &pb.Entry{Term: new(term), Index: new(index), Type: typ.Enum()}
	if rest := v[1+n:]; len(rest) > 0 {
		e.Data = append([]byte(nil), rest...)
	}
	return e, nil
}

func encodeHardState(hs *pb.HardState) []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, hs.GetTerm())
	b = binary.AppendUvarint(b, hs.GetVote())
	return binary.AppendUvarint(b, hs.GetCommit())
}

func decodeHardState(v []byte) (*pb.HardState, error) {
	var f [3]uint64
	for i := range f {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			return nil, fmt.Errorf("%w: bad hard state", ErrCorrupt)
		}
		f[i], v = x, v[n:]
	}
	return &pb.HardState{Term: new(f[0]), Vote: new(f[1]), Commit: new(f[2])}, nil
}

func encodeIndexTerm(index, term uint64) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, index)
	binary.BigEndian.PutUint64(b[8:], term)
	return b
}

func decodeIndexTerm(v []byte) (index, term uint64, err error) {
	if len(v) < 16 {
		return 0, 0, fmt.Errorf("%w: short index/term value", ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), nil
}

// encodeApplied encodes the applied state; conf is the marshalled ConfState.
func encodeApplied(index, term uint64, conf []byte) []byte {
	b := make([]byte, 16, 16+len(conf))
	binary.BigEndian.PutUint64(b, index)
	binary.BigEndian.PutUint64(b[8:], term)
	return append(b, conf...)
}

func decodeApplied(v []byte) (index, term uint64, cs *pb.ConfState, err error) {
	if index, term, err = decodeIndexTerm(v); err != nil {
		return 0, 0, nil, err
	}
	cs = &pb.ConfState{}
	if err := proto.Unmarshal(v[16:], cs); err != nil {
		return 0, 0, nil, fmt.Errorf("%w: conf state: %w", ErrCorrupt, err)
	}
	return index, term, cs, nil
}

// Proposal data is an 8-byte big-endian proposal sequence number followed by
// the command. Entries with empty data are raft's own (a new leader's empty
// entry) and carry no command.
const proposalHeaderLen = 8
