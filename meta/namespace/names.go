package namespace

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// Name limits.
const (
	// MaxComponentLength is the longest FSO path component, in bytes (HDFS's
	// default dfs.namenode.fs-limits.max-component-length).
	MaxComponentLength = 255
	// MaxPathLength is the longest FSO path, in bytes.
	MaxPathLength = 4096
	// MaxKeyLength is the longest OBS key name, in bytes (S3's limit).
	MaxKeyLength = 1024
)

func invalidName(kind, name, rule string) error {
	return fmt.Errorf("%w: %s %q: %s", ErrInvalidName, kind, name, rule)
}

// ValidateBucketName checks S3 bucket naming rules; volumes follow them too.
func ValidateBucketName(name string) error { return validateS3Name("bucket", name) }

// ValidateVolumeName checks a volume name (S3 bucket naming rules).
func ValidateVolumeName(name string) error { return validateS3Name("volume", name) }

func validateS3Name(kind, name string) error {
	if len(name) < 3 || len(name) > 63 {
		return invalidName(kind, name, "must be 3 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' || c == '.':
			if i == 0 || i == len(name)-1 {
				return invalidName(kind, name, "must begin and end with a lowercase letter or a digit")
			}
			if c == '.' && name[i-1] == '.' {
				return invalidName(kind, name, "must not contain two adjacent periods")
			}
			if (c == '.' && name[i-1] == '-') || (c == '-' && name[i-1] == '.') {
				return invalidName(kind, name, "must not contain a period next to a hyphen")
			}
		default:
			return invalidName(kind, name, "may contain only lowercase letters, digits, hyphens and periods")
		}
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return invalidName(kind, name, "must not be formatted as an IP address")
	}
	if strings.HasPrefix(name, "xn--") || strings.HasPrefix(name, "sthree-") {
		return invalidName(kind, name, `must not start with "xn--" or "sthree-"`)
	}
	if strings.HasSuffix(name, "-s3alias") || strings.HasSuffix(name, "--ol-s3") {
		return invalidName(kind, name, `must not end with "-s3alias" or "--ol-s3"`)
	}
	return nil
}

// ValidateKeyName checks an OBS key name: 1 to MaxKeyLength bytes of UTF-8
// without NUL. Anything else S3 allows is allowed ("a//b", "./x").
func ValidateKeyName(key string) error {
	if key == "" {
		return invalidName("key", key, "must not be empty")
	}
	if len(key) > MaxKeyLength {
		return invalidName("key", key[:32]+"...", fmt.Sprintf("must be at most %d bytes", MaxKeyLength))
	}
	if !utf8.ValidString(key) {
		return invalidName("key", key, "must be valid UTF-8")
	}
	if strings.IndexByte(key, 0) >= 0 {
		return invalidName("key", key, "must not contain NUL")
	}
	return nil
}

// CleanPath validates an FSO path and returns it without its leading and
// trailing '/'. The bucket's root is "" (given as "" or "/"). Rules: at most
// MaxPathLength bytes of UTF-8, no empty component ("a//b"), no "." or ".."
// component, components at most MaxComponentLength bytes, no NUL.
func CleanPath(p string) (string, error) {
	if len(p) > MaxPathLength {
		return "", invalidName("path", p[:32]+"...", fmt.Sprintf("must be at most %d bytes", MaxPathLength))
	}
	orig := p
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		if len(orig) > 1 {
			return "", invalidName("path", orig, "must not have empty components")
		}
		return "", nil
	}
	if !utf8.ValidString(p) {
		return "", invalidName("path", orig, "must be valid UTF-8")
	}
	for rest := p; ; {
		c, tail, more := strings.Cut(rest, "/")
		switch {
		case c == "":
			return "", invalidName("path", orig, "must not have empty components")
		case c == "." || c == "..":
			return "", invalidName("path", orig, `must not have "." or ".." components`)
		case len(c) > MaxComponentLength:
			return "", invalidName("path", orig, fmt.Sprintf("components must be at most %d bytes", MaxComponentLength))
		case strings.IndexByte(c, 0) >= 0:
			return "", invalidName("path", orig, "must not contain NUL")
		}
		if !more {
			return p, nil
		}
		rest = tail
	}
}

// splitLast splits a clean path into its parent and its last component.
func splitLast(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// joinPath joins a clean parent path and a name.
func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// cleanFilePath is CleanPath for a file to create: not the root, and no
// trailing '/' (an S3 "folder" key on an FSO bucket is a directory, which
// CreateDirectory makes).
func cleanFilePath(p string) (string, error) {
	if strings.HasSuffix(p, "/") && strings.Trim(p, "/") != "" {
		return "", invalidName("path", p, "a file must not end with '/' (a directory: use CreateDirectory)")
	}
	c, err := CleanPath(p)
	if err == nil && c == "" {
		err = invalidName("path", p, "must name a file, not the bucket's root")
	}
	return c, err
}
