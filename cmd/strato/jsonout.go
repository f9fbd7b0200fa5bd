package main

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The CLI's --json (docs/cli.md): a record is a JSON object of its fields
// under their protobuf JSON names, every field present (unset messages
// and optional fields as null); 64-bit integers are JSON numbers, not the
// strings protojson makes of them (a script reads them as numbers; IDs stay
// below 2^53 in practice, and the tables print them the same way); enum
// values are the names the tables print: without the prefix their type's
// values share (REPLICATION_THREE is THREE, CONTAINER_PROBLEM_MISSING is
// MISSING); bytes are base64.

// cliJSON encodes m for --json.
func cliJSON(m proto.Message) ([]byte, error) {
	return json.Marshal(messageValue(m.ProtoReflect()))
}

func messageValue(m protoreflect.Message) any {
	if !m.IsValid() {
		return nil
	}
	fields := m.Descriptor().Fields()
	out := make(orderedObject, 0, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() && !m.Has(fd) {
			continue // an unset oneof member, as protojson leaves it out
		}
		var v any
		switch {
		case fd.HasPresence() && !m.Has(fd) && !fd.IsList() && !fd.IsMap():
			v = nil
		case fd.IsList():
			l := m.Get(fd).List()
			arr := make([]any, l.Len())
			for j := range l.Len() {
				arr[j] = singular(fd, l.Get(j))
			}
			v = arr
		case fd.IsMap():
			mp := map[string]any{}
			m.Get(fd).Map().Range(func(k protoreflect.MapKey, val protoreflect.Value) bool {
				mp[k.String()] = singular(fd.MapValue(), val)
				return true
			})
			v = mp
		default:
			v = singular(fd, m.Get(fd))
		}
		out = append(out, objectField{fd.JSONName(), v})
	}
	return out
}

func singular(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return messageValue(v.Message())
	case protoreflect.EnumKind:
		return enumLabel(fd.Enum(), v.Enum())
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes())
	case protoreflect.BoolKind:
		return v.Bool()
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return f
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return json.Number(strconv.FormatUint(v.Uint(), 10))
	default: // the signed integers
		return json.Number(strconv.FormatInt(v.Int(), 10))
	}
}

var enumPrefixes sync.Map // protoreflect.FullName → string

// enumLabel is an enum value's name without its type's common prefix;
// an unknown number prints as the number.
func enumLabel(ed protoreflect.EnumDescriptor, n protoreflect.EnumNumber) any {
	vd := ed.Values().ByNumber(n)
	if vd == nil {
		return int64(n)
	}
	p, ok := enumPrefixes.Load(ed.FullName())
	if !ok {
		p = enumPrefix(ed)
		enumPrefixes.Store(ed.FullName(), p)
	}
	return strings.TrimPrefix(string(vd.Name()), p.(string))
}

// enumPrefix is the longest prefix ending in "_" that every value name of
// ed shares ("" when there is none, or one value).
func enumPrefix(ed protoreflect.EnumDescriptor) string {
	vals := ed.Values()
	if vals.Len() < 2 {
		return ""
	}
	p := string(vals.Get(0).Name())
	for i := 1; i < vals.Len(); i++ {
		name := string(vals.Get(i).Name())
		for !strings.HasPrefix(name, p) {
			p = p[:len(p)-1]
		}
	}
	if i := strings.LastIndexByte(p, '_'); i >= 0 {
		return p[:i+1]
	}
	return ""
}

// orderedObject is a JSON object whose fields keep their order.
type orderedObject []objectField

type objectField struct {
	name  string
	value any
}

// MarshalJSON writes the fields in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, err := json.Marshal(f.name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, k...), ':'), v...)
	}
	return append(buf, '}'), nil
}
