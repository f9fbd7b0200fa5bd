package namespace

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Retried requests. A command that carries a RequestID records its reply
// under (client, seq) when it succeeds; the same request again — a client
// retrying after a lost reply or a leader change — gets that reply and
// changes nothing. A client numbers its requests upwards, so each record
// written drops the one requestWindow requests older: the table holds at
// most that many per client.
const requestWindow = 1024

func requestKey(buf []byte, client string, seq uint64) []byte {
	buf = append(tableKey(buf, tagRequest), client...)
	buf = append(buf, 0)
	return binary.BigEndian.AppendUint64(buf, seq)
}

// recordedReply returns the reply recorded for id, if any.
func recordedReply(r pebble.Reader, id *stratov1.RequestID) (proto.Message, bool, error) {
	if id.GetClient() == "" {
		return nil, false, nil
	}
	var rec stratov1.RequestResult
	found, err := get(r, requestKey(nil, id.GetClient(), id.GetSeq()), &rec)
	if err != nil || !found {
		return nil, false, err
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(replyType(rec.Type))
	if err != nil {
		return nil, false, fmt.Errorf("%w: recorded reply of type %q: %w", ErrCorrupt, rec.Type, err)
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(rec.Reply, m); err != nil {
		return nil, false, fmt.Errorf("%w: recorded reply: %w", ErrCorrupt, err)
	}
	return m, true, nil
}

// replyType is the message type of a recorded reply. Replies recorded
// before the API moved to strato.v1 name the package "strato": the
// messages are the same on the wire.
func replyType(name string) protoreflect.FullName {
	if rest, ok := strings.CutPrefix(name, "strato."); ok && !strings.HasPrefix(rest, "v1.") {
		name = "strato.v1." + rest
	}
	return protoreflect.FullName(name)
}

// recordReply records res for id and forgets the request requestWindow
// older.
func (a *applier) recordReply(id *stratov1.RequestID, res proto.Message) error {
	if id.GetClient() == "" || res == nil {
		return nil
	}
	b, err := proto.Marshal(res)
	if err != nil {
		return err
	}
	rec := &stratov1.RequestResult{Type: string(res.ProtoReflect().Descriptor().FullName()), Reply: b}
	if err := put(a.b, requestKey(a.kb, id.GetClient(), id.GetSeq()), rec); err != nil {
		return err
	}
	if id.GetSeq() >= requestWindow {
		return a.b.Delete(requestKey(a.kb, id.GetClient(), id.GetSeq()-requestWindow), nil)
	}
	return nil
}

// RecordedReply returns the reply recorded for a request already applied
// (the leader answers a retry with it before preparing anything).
func (r *Reader) RecordedReply(id *stratov1.RequestID) (proto.Message, bool, error) {
	return recordedReply(r.r, id)
}
