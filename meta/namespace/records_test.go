package namespace

import (
	"os"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Before v1, meta stored API messages and logged API requests; the records
// and commands that replaced them must read those bytes the same way:
// same field numbers, kinds and cardinalities, recursively. The messages
// as they were stored are frozen in testdata/stored-before-records.binpb
// (the API's descriptors at the move to strato.v1); the API messages go on
// growing without the records.
func TestRecordsKeepTheWireFormatOfTheMessagesTheyReplaced(t *testing.T) {
	raw, err := os.ReadFile("testdata/stored-before-records.binpb")
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	stored, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		old string
		new protoreflect.ProtoMessage
	}{
		{"VolumeInfo", &stratov1.VolumeRecord{}},
		{"BucketInfo", &stratov1.BucketRecord{}},
		{"KeyInfo", &stratov1.KeyRecord{}},
		{"BlockLocation", &stratov1.BlockRecord{}},
		{"BlockID", &stratov1.BlockIDRecord{}},
		{"PipelineInfo", &stratov1.PipelineRecord{}},
		{"ContainerInfo", &stratov1.ContainerRecord{}},
		{"DeleteVolumeRequest", &stratov1.DeleteVolumeCommand{}},
		{"SetQuotaRequest", &stratov1.SetQuotaCommand{}},
		{"DeleteBucketRequest", &stratov1.DeleteBucketCommand{}},
		{"CommitKeyRequest", &stratov1.CommitKeyCommand{}},
		{"DeleteRequest", &stratov1.DeleteCommand{}},
		{"CreateDirectoryRequest", &stratov1.CreateDirectoryCommand{}},
	} {
		d, err := stored.FindDescriptorByName(protoreflect.FullName("strato.v1." + c.old))
		if err != nil {
			t.Fatalf("%s: %v", c.old, err)
		}
		sameWire(t, d.(protoreflect.MessageDescriptor), c.new.ProtoReflect().Descriptor())
	}
}

// sameWire checks that every field of old is in new with the same number,
// kind and cardinality (new may have more: fields added since).
func sameWire(t *testing.T, old, new protoreflect.MessageDescriptor) {
	t.Helper()
	of, nf := old.Fields(), new.Fields()
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
