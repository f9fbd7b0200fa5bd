package main

// Output of the user and operator commands: aligned tables and
// "Field: value" records for people, one JSON document for programs
// (protobuf JSON for records, arrays for lists), sizes in binary units and
// times as RFC 3339.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/bytesize"
)

// printJSON writes v as one indented JSON document: a proto message with
// protojson, a slice of messages as an array of them, anything else with
// encoding/json.
func printJSON(w io.Writer, v any) error {
	var raw []byte
	var err error
	switch m := v.(type) {
	case proto.Message:
		raw, err = cliJSON(m)
	case []proto.Message:
		raw, err = marshalArray(m)
	default:
		raw, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

func marshalArray(ms []proto.Message) ([]byte, error) {
	parts := make([]json.RawMessage, 0, len(ms))
	for _, m := range ms {
		b, err := cliJSON(m)
		if err != nil {
			return nil, err
		}
		parts = append(parts, b)
	}
	return json.Marshal(parts)
}

// messages converts a typed slice of messages for printJSON.
func messages[T proto.Message](ms []T) []proto.Message {
	out := make([]proto.Message, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// printTable writes rows under header, columns aligned.
func printTable(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if header != nil {
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// field is one line of a record: "Name:  value".
type field struct{ name, value string }

// printFields writes a record, values aligned.
func printFields(w io.Writer, fields []field) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f.name, f.value)
	}
	return tw.Flush()
}

// sizeWithBytes is humanSize with the exact count when they differ:
// "1.5 GiB (1610612736 bytes)".
func sizeWithBytes(n int64) string {
	h := bytesize.Format(n)
	if n < 1024 {
		return h
	}
	return fmt.Sprintf("%s (%d bytes)", h, n)
}

// quota prints a quota, 0 meaning none.
func quota(n int64, bytes bool) string {
	switch {
	case n <= 0:
		return "unlimited"
	case bytes:
		return bytesize.Format(n)
	}
	return strconv.FormatInt(n, 10)
}

// timeMs prints Unix milliseconds as RFC 3339 in the local zone ("-" for
// none).
func timeMs(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).Format(time.RFC3339)
}

// enumName prints a protobuf enum value without its type prefix:
// REPLICATION_THREE → THREE, NODE_HEALTHY → HEALTHY.
func enumName(v fmt.Stringer, prefix string) string {
	return strings.TrimPrefix(v.String(), prefix)
}

// parseEnum finds the value of a protobuf enum from a user's spelling
// (case-insensitive, without the type prefix); the zero "unspecified"
// value is not offered.
func parseEnum(flag, s, prefix string, values map[string]int32) (int32, error) {
	v, ok := values[prefix+strings.ToUpper(strings.TrimSpace(s))]
	if ok && v != 0 {
		return v, nil
	}
	var names []string
	for name, n := range values {
		if n != 0 {
			names = append(names, strings.TrimPrefix(name, prefix))
		}
	}
	slices.Sort(names)
	return 0, usagef("--%s: %q is not one of %s", flag, s, strings.Join(names, ", "))
}

// parseSize parses a size flag (bytesize.Parse: "1048576", "512k",
// "10GB", "1TiB", "1.5g"), as a usage error when it is not one.
func parseSize(flag, s string) (int64, error) {
	n, err := bytesize.Parse(s)
	if err != nil {
		return 0, usagef("--%s: %v", flag, err)
	}
	return n, nil
}

// pct prints a fraction as percentage points, one decimal ("10.0%").
func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }
