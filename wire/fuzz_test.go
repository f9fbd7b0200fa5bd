package wire

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the decoders. They must not panic,
// must fail only with *Error, and whatever decodes must encode back to the
// same bytes (the encoding is canonical). The seed corpus is the test
// vectors.
func FuzzDecode(f *testing.F) {
	names, err := filepath.Glob(filepath.Join("testdata", "*.bin"))
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := DecodeFrame(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("decode error %v is not an *Error", err)
			}
		} else {
			var got []byte
			if e, ok := fr.Msg.(*Error); ok {
				got = AppendErrorFrame(nil, fr.Header.Type, fr.Header.RequestID, e)
			} else if !fr.Context.Empty() {
				var buf bytes.Buffer
				w := NewWriter(&buf, 0)
				w.SetVersion(fr.Header.Version)
				if err := w.WriteMessage(fr.Context.Into(context.Background()), fr.Header.RequestID, fr.Msg, fr.Payload); err != nil {
					t.Fatal(err)
				}
				got = buf.Bytes()
			} else if _, ok := fr.Msg.(*GetBlockResponse); ok {
				got = AppendFrame(nil, fr.Header.RequestID, fr.Msg, nil)
			} else {
				got = AppendFrame(nil, fr.Header.RequestID, fr.Msg, fr.Payload)
			}
			got[4] = fr.Header.Version // PING and errors decode in any version
			if !bytes.Equal(got, b) {
				t.Fatalf("decoded %#v\nre-encodes to %x\nfrom          %x", fr.Msg, got, b)
			}
		}
		// The stream readers must survive the same bytes.
		for _, r := range []*Reader{NewRequestReader(bytes.NewReader(b)), NewResponseReader(bytes.NewReader(b))} {
			for range 4 {
				if _, _, err := r.Next(); err != nil {
					var e *Error
					if !errors.As(err, &e) || e.Code == CodeProtocol {
						break
					}
				}
			}
		}
	})
}
