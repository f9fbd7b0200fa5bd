package namespace

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Before v1, meta stored API messages and logged API requests; the records
// and commands that replaced them must read those bytes the same way:
// same field numbers, kinds and cardinalities, recursively.
func TestRecordsKeepTheWireFormatOfTheMessagesTheyReplaced(t *testing.T) {
	for _, c := range []struct{ old, new protoreflect.ProtoMessage }{
		{&stratov1.VolumeInfo{}, &stratov1.VolumeRecord{}},
		{&stratov1.BucketInfo{}, &stratov1.BucketRecord{}},
		{&stratov1.KeyInfo{}, &stratov1.KeyRecord{}},
		{&stratov1.BlockLocation{}, &stratov1.BlockRecord{}},
		{&stratov1.BlockID{}, &stratov1.BlockIDRecord{}},
		{&stratov1.PipelineInfo{}, &stratov1.PipelineRecord{}},
		{&stratov1.ContainerInfo{}, &stratov1.ContainerRecord{}},
		{&stratov1.DeleteVolumeRequest{}, &stratov1.DeleteVolumeCommand{}},
		{&stratov1.SetQuotaRequest{}, &stratov1.SetQuotaCommand{}},
		{&stratov1.DeleteBucketRequest{}, &stratov1.DeleteBucketCommand{}},
		{&stratov1.CommitKeyRequest{}, &stratov1.CommitKeyCommand{}},
		{&stratov1.DeleteRequest{}, &stratov1.DeleteCommand{}},
		{&stratov1.CreateDirectoryRequest{}, &stratov1.CreateDirectoryCommand{}},
	} {
		sameWire(t, c.old.ProtoReflect().Descriptor(), c.new.ProtoReflect().Descriptor())
	}
}

func sameWire(t *testing.T, old, new protoreflect.MessageDescriptor) {
	t.Helper()
	of, nf := old.Fields(), new.Fields()
	if of.Len() != nf.Len() {
		t.Errorf("%s has %d fields, %s %d", old.FullName(), of.Len(), new.FullName(), nf.Len())
	}
	for i := range of.Len() {
		o := of.Get(i)
		n := nf.ByNumber(o.Number())
		switch {
		case n == nil:
			t.Errorf("%s: field %d (%s) is missing", new.FullName(), o.Number(), o.Name())
		case n.Kind() != o.Kind() || n.Cardinality() != o.Cardinality():
			t.Errorf("%s field %d: %v %v, was %v %v", new.FullName(), o.Number(), n.Cardinality(), n.Kind(), o.Cardinality(), o.Kind())
		case o.Kind() == protoreflect.EnumKind && n.Enum().FullName() != o.Enum().FullName():
			t.Errorf("%s field %d: enum %s, was %s", new.FullName(), o.Number(), n.Enum().FullName(), o.Enum().FullName())
		case o.Kind() == protoreflect.MessageKind:
			sameWire(t, o.Message(), n.Message())
		}
	}
}
