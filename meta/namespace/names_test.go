package namespace

import (
	"errors"
	"strings"
	"testing"
)

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"", "/", "a", "/a/b/", "a//b", "a/./b", "../x", "a/\x00", "\xff", strings.Repeat("x/", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := CleanPath(p)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("CleanPath(%q): unclassified error %v", p, err)
			}
			return
		}
		if strings.HasPrefix(c, "/") || strings.HasSuffix(c, "/") || len(c) > MaxPathLength {
			t.Fatalf("CleanPath(%q) = %q", p, c)
		}
		for _, comp := range strings.Split(c, "/") {
			if c != "" && (comp == "" || comp == "." || comp == ".." || len(comp) > MaxComponentLength) {
				t.Fatalf("CleanPath(%q) = %q has component %q", p, c, comp)
			}
		}
		if again, err := CleanPath(c); err != nil || again != c {
			t.Fatalf("CleanPath not idempotent on %q: %q, %v", c, again, err)
		}
		if again, err := CleanPath("/" + c + "/"); c != "" && (err != nil || again != c) {
			t.Fatalf("CleanPath(/%s/) = %q, %v", c, again, err)
		}
	})
}

func FuzzValidateBucketName(f *testing.F) {
	for _, s := range []string{"abc", "a.b-c", "192.168.0.1", "a..b", "Abc", "xn--a", strings.Repeat("a", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidateBucketName(name)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: unclassified error %v", name, err)
			}
			return
		}
		// Whatever passes is usable in a bucket key: 3-63 bytes of [a-z0-9.-].
		if len(name) < 3 || len(name) > 63 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
			t.Fatalf("%q accepted", name)
		}
	})
}
